package compare

// An Env describes where a side was measured. A changed field does not
// change the verdict; it is listed so a regression can be traced to a driver
// or compiler update rather than to tltune's own kernels.
type Env struct {
	Device   string // e.g. "NVIDIA H200"
	Driver   string // e.g. "580.159.04"
	Runtime  string // "opencl" or "levelzero"
	Compiler string // version of the compiler that built the kernels
	Version  string // tltune version and commit
}

// An EnvChange is one field of Env that differs between baseline and current.
type EnvChange struct {
	Field    string // lower-case field name: "device", "driver", ...
	Old, New string
}

// Diff lists the fields that differ from e to cur, in field order.
func (e Env) Diff(cur Env) []EnvChange {
	var out []EnvChange
	next := cur.fields()
	for i, f := range e.fields() {
		if n := next[i]; f.value != n.value {
			out = append(out, EnvChange{Field: f.name, Old: f.value, New: n.value})
		}
	}
	return out
}

type envField struct{ name, value string }

func (e Env) fields() []envField {
	return []envField{
		{"device", e.Device},
		{"driver", e.Driver},
		{"runtime", e.Runtime},
		{"compiler", e.Compiler},
		{"version", e.Version},
	}
}
