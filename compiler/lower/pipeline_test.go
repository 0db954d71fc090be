package lower

import "testing"

// TestSwizzleShift: the permutation follows the column where a column
// fills 128 bytes or more (so 8 neighbouring columns' same chunk spread
// over the banks), else the 128-byte row.
func TestSwizzleShift(t *testing.T) {
	for _, c := range []struct{ ld, want int64 }{{16, 7}, {32, 7}, {128, 7}, {192, 7}, {256, 8}, {512, 9}, {1024, 10}} {
		if got := swizzleShift(c.ld); got != c.want {
			t.Errorf("swizzleShift(%d) = %d, want %d", c.ld, got, c.want)
		}
	}
}
