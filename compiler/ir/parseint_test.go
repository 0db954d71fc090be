package ir

import (
	"strconv"
	"testing"
)

// TestParseInt checks ParseInt, whose short constants skip strconv,
// against strconv's verdict and the language's range.
func TestParseInt(t *testing.T) {
	for _, lit := range []string{"0", "-0", "+0", "7", "+7", "-7", "007", "123456789012345678", "-123456789012345678",
		"9223372036854775807", "-9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"99999999999999999999", "", "-", "+", "1x", "-x1"} {
		v, ok := ParseInt(lit)
		wv, err := strconv.ParseInt(lit, 10, 64)
		wok := err == nil && wv != Dynamic
		if !wok {
			wv = 0
		}
		if v != wv || ok != wok {
			t.Errorf("ParseInt(%q) = %d, %v; strconv and the language's range say %d, %v", lit, v, ok, wv, wok)
		}
	}
}
