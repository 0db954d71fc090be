package syntax

// The released dialect's mnemonics are translated into the current
// dialect's name and modifiers before an instruction is parsed, so both
// share every production that is spelled alike; the few productions that
// differ (for and foreach without a type, attributes after for) check the
// dialect where they are parsed.

// releasedNames maps the instruction names only the released dialect has
// to their translation.
var releasedNames = map[string]func(m *modifiers){}

func init() {
	prefix := func(name string) func(m *modifiers) {
		return func(m *modifiers) { m.rename(name, m.name) }
	}
	for _, op := range []string{"add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "and", "or", "xor",
		"abs", "neg", "not", "conj", "im", "re"} {
		releasedNames[op] = prefix("arith")
	}
	for _, op := range []string{"cos", "sin", "exp", "exp2", "log", "log2",
		"native_cos", "native_sin", "native_exp", "native_exp2", "native_log", "native_log2"} {
		releasedNames[op] = prefix("math")
	}
	for released, cmp := range map[string]string{"equal": "eq", "not_equal": "ne", "greater_than": "gt",
		"greater_than_equal": "ge", "less_than": "lt", "less_than_equal": "le"} {
		releasedNames[released] = func(m *modifiers) { m.rename("cmp", cmp) }
	}
	for released, builtin := range map[string]string{"group_id": "group_id", "num_groups": "group_size",
		"num_subgroups": "num_subgroups", "subgroup_size": "subgroup_size", "subgroup_id": "subgroup_id",
		"subgroup_linear_id": "subgroup_id", "subgroup_local_id": "subgroup_local_id"} {
		releasedNames[released] = func(m *modifiers) { m.rename("builtin", builtin) }
	}
	for _, op := range []string{"add", "max", "min"} {
		for _, scan := range []string{"exclusive_scan", "inclusive_scan", "reduce"} {
			releasedNames["subgroup_"+scan+"_"+op] = func(m *modifiers) { m.rename("subgroup_"+op, scan) }
		}
	}
	releasedNames["hadamard"] = func(m *modifiers) { m.name = "hadamard_product"; m.blas(0) }
	for name, transposes := range map[string]int{"gemm": 2, "gemv": 1, "axpby": 1, "sum": 1, "ger": 0, "cumsum": 0} {
		releasedNames[name] = func(m *modifiers) { m.blas(transposes) }
	}
	releasedNames["cooperative_matrix_load"] = func(m *modifiers) {
		if m.n == 0 || m.parts[0] != "n" && m.parts[0] != "t" {
			m.insert(0, "n")
		}
	}
}

// releasedModifiers returns the modifiers of the current word, a released
// mnemonic, translated. They are made here, not in instruction: passed to
// the translations, a function value each, modifiers escape to the heap,
// and instruction's, on the stack, were an allocation per instruction.
func (p *parser) releasedModifiers() modifiers {
	m := new(modifiers)
	m.init(p, p.lit, p.pos)
	if f, ok := releasedNames[m.name]; ok {
		f(m)
	}
	return *m
}

// rename makes the mnemonic name.first.(old modifiers), e.g. add into
// arith.add and group_id.x into builtin.group_id.x.
func (m *modifiers) rename(name, first string) {
	m.name = name
	m.insert(0, first)
	m.cols[0] = m.start + 1 // at the word's start (pos reports the column before a part)
}

// insert puts part at index i, at the column after the word.
func (m *modifiers) insert(i int, part string) {
	if m.n == maxModifiers {
		return // too many already; done reports the surplus
	}
	copy(m.parts[i+1:m.n+1], m.parts[i:m.n])
	copy(m.cols[i+1:m.n+1], m.cols[i:m.n])
	m.parts[i], m.cols[i] = part, m.end+1
	m.n++
}

func (m *modifiers) remove(i int) {
	copy(m.parts[i:m.n], m.parts[i+1:m.n])
	copy(m.cols[i:m.n], m.cols[i+1:m.n])
	m.n--
}

// blas reorders the modifiers of a BLAS instruction from the released
// order (.atomic, then the transposes, which default to .n) to the
// current one (the transposes, then .atomic).
func (m *modifiers) blas(transposes int) {
	atomic := -1
	for i := range m.n {
		if m.parts[i] == "atomic" {
			atomic = i
		}
	}
	if atomic >= 0 {
		part, col := m.parts[atomic], m.cols[atomic]
		m.remove(atomic)
		m.parts[m.n], m.cols[m.n] = part, col
		m.n++
	}
	for i := 0; i < transposes; i++ {
		if i >= m.n || m.parts[i] != "n" && m.parts[i] != "t" {
			m.insert(i, "n")
		}
	}
}

// sharedNames are the names releasedNames translates that the current
// dialect has too (with other modifiers).
var sharedNames = map[string]bool{"gemm": true, "gemv": true, "axpby": true, "sum": true, "ger": true,
	"cumsum": true, "cooperative_matrix_load": true}

// releasedOnly reports whether name is an instruction name only the
// released dialect has.
func releasedOnly(name string) bool {
	_, ok := releasedNames[name]
	return ok && !sharedNames[name]
}
