package bench

import (
	"slices"
	"testing"

	"tltune/compiler/emit/opencl"
	"tltune/compiler/hostcall"
	"tltune/compiler/interp"
	"tltune/compiler/ir"
	"tltune/compiler/tuning"
	"tltune/kernels"
)

// longsOf decodes a const long array or a long scalar of a bound call.
func longsOf(a hostcall.Arg) []int64 {
	data := a.Scalar
	if a.Blob != nil {
		data = a.Blob.Data
	}
	b := &interp.Buffer{Elem: ir.I64, Data: data}
	out := make([]int64, b.Len())
	for i := range out {
		out[i] = b.Int(i)
	}
	return out
}

// Recipe inputs bind to both layouts over the same bytes: the strided
// kernel sees the batch as the last mode with packed strides, the group
// kernel one member per entry, EntryElements apart.
func TestRecipeParamsBind(t *testing.T) {
	const batch = 3
	for _, layout := range []kernels.Layout{kernels.Strided, kernels.Group} {
		r := recipe(t, gemmSpec(layout, 1))
		res := compile(t, r, tuning.Params{})
		in, err := r.Inputs(1, batch)
		if err != nil {
			t.Fatal(err)
		}
		call, err := hostcall.Bind(&res.Kernels[0], InputParams(in), batch)
		if err != nil {
			t.Fatalf("%s: %v", r.Name(), err)
		}
		if len(call.Written()) != len(in.Args) {
			t.Errorf("%s: %d writable blobs, want one per argument (%d)", r.Name(), len(call.Written()), len(in.Args))
		}
		for _, a := range call.Args {
			got := longsOf(a)
			var want []int64
			switch a.Role {
			case opencl.RoleShape:
				want = []int64{batch}
			case opencl.RoleStride:
				want = []int64{int64(in.Args[a.Param].EntryElements())}
			case opencl.RoleGroupOffset:
				n := int64(in.Args[a.Param].EntryElements())
				want = []int64{0, n, 2 * n}
			case opencl.RoleGroupSize:
				want = []int64{batch}
			case opencl.RoleData, opencl.RoleGroupBase:
				if &a.Blob.Data[0] != &in.Args[a.Param].Data[0] {
					t.Errorf("%s: %s does not hold the argument's bytes", r.Name(), a.Name)
				}
				continue
			default:
				t.Errorf("%s: unexpected argument %s (%s)", r.Name(), a.Name, a.Role)
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s (%s) = %v, want %v", r.Name(), a.Name, a.Role, got, want)
			}
		}
	}
}
