package opencl

import (
	"strconv"
	"testing"
)

// isNumber answers as strconv.ParseInt does, which it replaced.
func TestIsNumberAsParseInt(t *testing.T) {
	for _, s := range []string{"", "-", "+", "0", "-0", "+7", "42", "-42", "--1", "+-1", "1-", "v12", "(x)",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"999999999999999999", "0000000000000000000001", "1_000", " 1", "1.0", "0x10"} {
		_, err := strconv.ParseInt(s, 10, 64)
		if got, want := isNumber(s), err == nil; got != want {
			t.Errorf("isNumber(%q) = %v, ParseInt says %v", s, got, want)
		}
	}
}
