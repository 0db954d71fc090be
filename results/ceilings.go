package results

import (
	"fmt"
	"strings"

	"tltune/internal/speak"
)

// ComputeRoof is the compute ceiling under which problem p runs, and its
// name: the FMA rate of its element type (complex types compute in their
// real type); for f16 and bf16 the highest of the half FMA, the f32 FMA (a
// target without half arithmetic computes in f32) and the matrix engine;
// for precision tf32 the higher of the f32 FMA and the f16 matrix rate,
// which bounds the tf32 one (tltune peak measures no tf32 ceiling). Zero
// when none was measured.
func (c Ceilings) ComputeRoof(p speak.Problem) (name string, gflops float64) {
	type roof struct {
		name   string
		gflops float64
	}
	var roofs []roof
	switch {
	case p.Dtype == "f64" || p.Dtype == "c64":
		roofs = []roof{{"f64 FMA", c.F64GFLOPS}}
	case p.Dtype == "f16" || p.Dtype == "bf16":
		roofs = []roof{{"f16 FMA", c.F16GFLOPS}, {"f32 FMA", c.F32GFLOPS}, {"f16 matrix", c.MMAGFLOPS}}
	case p.Precision == speak.TF32:
		roofs = []roof{{"f32 FMA", c.F32GFLOPS}, {"f16 matrix", c.MMAGFLOPS}}
	default:
		roofs = []roof{{"f32 FMA", c.F32GFLOPS}}
	}
	for _, r := range roofs {
		if r.gflops > gflops {
			name, gflops = r.name, r.gflops
		}
	}
	return name, gflops
}

// AboveRoof says in one line how a rate measured for problem p lies above
// the ceilings that bound it — the compute roof of its element type and
// the copy bandwidth — or "" when it does not. A point above its roof
// means a ceiling measured too low (a busy device, a kernel that misses
// the peak) or a kernel served from cache rather than memory; either way
// the percentages of peak mean nothing until it is resolved.
func (c Ceilings) AboveRoof(p speak.Problem, gflops, gbs float64) string {
	var over []string
	if name, roof := c.ComputeRoof(p); roof > 0 && gflops > roof {
		over = append(over, fmt.Sprintf("%s is above the %s ceiling %s", speak.Rate(gflops, "FLOP/s"), name, speak.Rate(roof, "FLOP/s")))
	}
	if c.CopyGBS > 0 && gbs > c.CopyGBS {
		over = append(over, fmt.Sprintf("%s is %s of the copy bandwidth %s", speak.Rate(gbs, "B/s"), speak.Percent(gbs/c.CopyGBS), speak.Rate(c.CopyGBS, "B/s")))
	}
	if len(over) == 0 {
		return ""
	}
	return fmt.Sprintf("warning: %s: %s; the ceilings are too low (run 'tltune peak' on an idle device) or the kernel ran from cache",
		p, strings.Join(over, " and "))
}
