package spv

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Disassemble prints a module as text: a header comment, then one
// instruction per line, "%id = OpName operands". Ids are the module's own,
// so output is stable for a stable builder; enumerants print by name,
// OpenCL.std instructions by name, constants by value.
func Disassemble(module []byte) (string, error) {
	if len(module)%4 != 0 || len(module) < 20 {
		return "", fmt.Errorf("spv: a module is a whole number of words, at least 5 (got %d bytes)", len(module))
	}
	w := make([]uint32, len(module)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(module[4*i:])
	}
	if w[0] != MagicNumber {
		return "", fmt.Errorf("spv: bad magic number %#x", w[0])
	}
	d := &disasm{widths: map[ID]typeWidth{}, sets: map[ID]string{}}
	fmt.Fprintf(&d.out, "; SPIR-V %s, generator %#x, bound %d\n", VersionString(w[1]), w[2], w[3])
	for i := 5; i < len(w); {
		n := int(w[i] >> 16)
		if n == 0 || i+n > len(w) {
			return "", fmt.Errorf("spv: instruction at word %d has a bad length %d", i, n)
		}
		if err := d.inst(Op(w[i]&0xffff), w[i+1:i+n]); err != nil {
			return "", fmt.Errorf("spv: word %d: %w", i, err)
		}
		i += n
	}
	return d.out.String(), nil
}

type typeWidth struct {
	width int
	float bool
}

type disasm struct {
	out    strings.Builder
	widths map[ID]typeWidth // scalar numeric types, for constant literals
	sets   map[ID]string    // imported extended instruction sets
}

func (d *disasm) inst(op Op, ops []uint32) error {
	info := op.Info()
	if info == nil {
		fmt.Fprintf(&d.out, "%s %v\n", op, ops)
		return nil
	}
	d.record(op, ops)
	var result string
	var parts []string
	var resultType ID
	r := &reader{words: ops}
	for _, o := range info.Operands {
		for n := 0; r.more() && (n == 0 || o.Quant == Variadic); n++ {
			switch o.Kind {
			case KindIdResult:
				result = fmt.Sprintf("%%%d = ", r.next())
				continue
			case KindIdResultType:
				resultType = ID(r.peek())
			}
			s, err := d.operand(op, o.Kind, r, resultType)
			if err != nil {
				return err
			}
			parts = append(parts, s)
		}
	}
	if r.more() {
		return fmt.Errorf("%s has %d words left over", op, len(r.words)-r.pos)
	}
	line := result + info.Name
	if len(parts) > 0 {
		line += " " + strings.Join(parts, " ")
	}
	if op == OpFunction || op == OpLabel {
		d.out.WriteByte('\n')
	}
	d.out.WriteString(line + "\n")
	return nil
}

// record remembers what later instructions need to print their literals.
func (d *disasm) record(op Op, ops []uint32) {
	switch op {
	case OpTypeInt:
		d.widths[ID(ops[0])] = typeWidth{width: int(ops[1])}
	case OpTypeFloat:
		d.widths[ID(ops[0])] = typeWidth{width: int(ops[1]), float: true}
	case OpExtInstImport:
		d.sets[ID(ops[0])] = decodeString(ops[1:])
	}
}

type reader struct {
	words []uint32
	pos   int
}

func (r *reader) more() bool   { return r.pos < len(r.words) }
func (r *reader) peek() uint32 { return r.words[r.pos] }
func (r *reader) next() uint32 {
	w := r.words[r.pos]
	r.pos++
	return w
}

func (d *disasm) operand(op Op, k OperandKind, r *reader, resultType ID) (string, error) {
	switch k {
	case KindIdResultType, KindIdRef, KindIdScope, KindIdMemorySemantics:
		return fmt.Sprintf("%%%d", r.next()), nil
	case KindLiteralInteger, KindLiteralSpecConstantOpInteger:
		return strconv.FormatUint(uint64(r.next()), 10), nil
	case KindLiteralString:
		s := decodeString(r.words[r.pos:])
		r.pos += len(s)/4 + 1
		return strconv.Quote(s), nil
	case KindLiteralContextDependentNumber:
		return d.number(r, d.widths[resultType]), nil
	case KindLiteralExtInstInteger:
		n := r.next()
		if op == OpExtInst && d.sets[ID(r.words[r.pos-2])] == "OpenCL.std" {
			return CLExtInst(n).String(), nil
		}
		return strconv.FormatUint(uint64(n), 10), nil
	case KindPairIdRefIdRef, KindPairIdRefLiteralInteger, KindPairLiteralIntegerIdRef:
		return d.pair(k, r), nil
	}
	switch k.Category() {
	case "ValueEnum":
		return d.valueEnum(k, r)
	case "BitEnum":
		return d.bitEnum(k, r)
	}
	return "", fmt.Errorf("operand kind %s is not supported", k)
}

func (d *disasm) number(r *reader, t typeWidth) string {
	lo := r.next()
	v := uint64(lo)
	if t.width == 64 && r.more() {
		v |= uint64(r.next()) << 32
	}
	switch {
	case t.float && t.width == 64:
		return strconv.FormatFloat(math.Float64frombits(v), 'g', -1, 64)
	case t.float && t.width == 32:
		return strconv.FormatFloat(float64(math.Float32frombits(lo)), 'g', -1, 32)
	case t.float:
		return half(uint16(lo))
	}
	return strconv.FormatUint(v, 10)
}

// half spells a 16-bit float as spirv-as reads it back: a finite value in
// decimal (exactly its float32, which rounds back to the same half), an
// infinity or NaN as a hexadecimal float past the largest exponent.
func half(bits uint16) string {
	sign, exp, frac := bits>>15, int(bits>>10&31), uint32(bits&1023)
	if exp == 31 {
		s := "0x1p+16"
		if frac != 0 {
			s = fmt.Sprintf("0x1.%03xp+16", frac<<2)
		}
		if sign != 0 {
			s = "-" + s
		}
		return s
	}
	v := math.Ldexp(float64(frac), -24) // subnormal
	if exp > 0 {
		v = math.Ldexp(float64(frac|1024), exp-25)
	}
	if sign != 0 {
		v = -v
	}
	return strconv.FormatFloat(v, 'g', -1, 32)
}

func (d *disasm) pair(k OperandKind, r *reader) string {
	a, b := r.next(), r.next()
	switch k {
	case KindPairIdRefIdRef:
		return fmt.Sprintf("%%%d %%%d", a, b)
	case KindPairIdRefLiteralInteger:
		return fmt.Sprintf("%%%d %d", a, b)
	}
	return fmt.Sprintf("%d %%%d", a, b)
}

func (d *disasm) valueEnum(k OperandKind, r *reader) (string, error) {
	v := r.next()
	e, ok := Enumerant(k, v)
	if !ok {
		return strconv.FormatUint(uint64(v), 10), nil
	}
	parts := []string{e.Name}
	for _, p := range e.Params {
		s, err := d.operand(OpNop, p, r, 0)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " "), nil
}

func (d *disasm) bitEnum(k OperandKind, r *reader) (string, error) {
	v := r.next()
	if v == 0 {
		if e, ok := Enumerant(k, 0); ok {
			return e.Name, nil
		}
		return "0", nil
	}
	var names []string
	var params []EnumInfo
	for _, e := range Enumerants(k) {
		if e.Value != 0 && v&e.Value == e.Value {
			names = append(names, e.Name)
			v &^= e.Value
			params = append(params, e)
		}
	}
	if v != 0 {
		names = append(names, fmt.Sprintf("%#x", v))
	}
	parts := []string{strings.Join(names, "|")}
	for _, e := range params {
		for _, p := range e.Params {
			s, err := d.operand(OpNop, p, r, 0)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " "), nil
}

func decodeString(w []uint32) string {
	var b []byte
	for _, x := range w {
		for i := range 4 {
			c := byte(x >> (8 * i))
			if c == 0 {
				return string(b)
			}
			b = append(b, c)
		}
	}
	return string(b)
}
