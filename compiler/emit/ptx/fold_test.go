package ptx_test

import (
	"regexp"
	"strings"
	"testing"

	"tltune/compiler"
)

// foldSource compares a lane (0 to 31) with 32, which the ranges decide,
// and with 16, which they do not, and loops from the lane to 64 by 64,
// which runs exactly once.
const foldSource = `func @fold(%a: memref<f32x64x?>) attributes {subgroup_size=32, work_group_size=[32, 1]} {
    %g = builtin.group_id : index
    %v = subview %a[0:64, %g] : memref<f32x64>
    parallel {
        %id = builtin.subgroup_local_id : i32
        %lane = cast %id : index
        %c16 = constant 16 : index
        %c32 = constant 32 : index
        %c64 = constant 64 : index
        %one = constant 1.0 : f32
        %inside = cmp.lt %lane, %c32 : bool
        if %inside {
            store %one, %v[%lane]
        }
        %low = cmp.lt %lane, %c16 : bool
        if %low {
            %row = arith.add %lane, %c32 : index
            store %one, %v[%row]
        }
        for %i = %lane, %c64, %c64 {
            store %one, %v[%i]
        }
    }
}
`

// TestFoldDecided: the comparison the lane's range decides and the loop's
// tests are not written, the one it leaves open is, with its branch.
func TestFoldDecided(t *testing.T) {
	text := compilePTX(t, "fold", []byte(foldSource), compiler.Options{Target: "nvidia", PTX: true})
	setps := regexp.MustCompile(`(?m)^\tsetp\.[^\n]*$`).FindAllString(text, -1)
	if len(setps) != 1 || !strings.HasSuffix(setps[0], ", 16;") {
		t.Errorf("comparisons %q; want the one with 16 alone", setps)
	}
	branches := strings.Count(text, " bra")
	stores := strings.Count(text, "\tst.global.f32\t")
	if branches != 1 || strings.Contains(text, "bra.uni") || stores != 3 {
		t.Errorf("%d branches (bra.uni: %v), %d stores; want the lane < 16 branch alone and 3 stores\n%s",
			branches, strings.Contains(text, "bra.uni"), stores, text)
	}
}
