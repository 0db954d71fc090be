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

// divideSource divides multiples of a lane by constants, which the PTX
// writes without div or rem: by powers of two and by others (3, 7, 10),
// whose multiply-high TestPTXOnDevice checks against the interpreter
// (TestMagic32 checks the arithmetic over all of 32 bits).
const divideSource = `func @divide(%q: memref<i32x32x4x?>) attributes {subgroup_size=32, work_group_size=[32, 1]} {
    %g = builtin.group_id : index
    %v = subview %q[0:32, 0:4, %g] : memref<i32x32x4>
    parallel {
        %id = builtin.subgroup_local_id : i32
        %lane = cast %id : index
        %c3 = constant 3 : index
        %c7 = constant 7 : index
        %c16 = constant 16 : index
        %c10 = constant 10 : index
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c2 = constant 2 : index
        %cs = constant 1234567 : index
        %x = arith.mul %lane, %cs : index
        %a = arith.div %x, %c3 : index
        %b = arith.rem %x, %c7 : index
        %c = arith.div %x, %c10 : index
        %d = arith.rem %x, %c16 : index
        %ai = cast %a : i32
        %bi = cast %b : i32
        %ci = cast %c : i32
        %di = cast %d : i32
        store %ai, %v[%lane, %c0]
        store %bi, %v[%lane, %c1]
        store %ci, %v[%lane, %c2]
        store %di, %v[%lane, %c3]
    }
}
`

// TestDivideByImm: ptxas would write each div and rem by an immediate as
// the reciprocal routine, so none is left for it.
func TestDivideByImm(t *testing.T) {
	text := compilePTX(t, "divide", []byte(divideSource), compiler.Options{Target: "nvidia", PTX: true})
	if regexp.MustCompile(`\t(div|rem)\.`).MatchString(text) {
		t.Errorf("a div or rem is left:\n%s", text)
	}
	if n := strings.Count(text, "\tmul.hi.u32\t"); n != 3 {
		t.Errorf("%d multiply-highs; want 3 (by 3, 7 and 10)\n%s", n, text)
	}
}
