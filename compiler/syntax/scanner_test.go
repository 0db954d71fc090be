package syntax

import (
	"testing"

	"tltune/compiler/ir"
)

func TestScannerTokens(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []token
		lits []string
	}{
		{"0x1.8p3 0x.8 0xAp-2 0x1. 1. .5 -2.5e-3 +7 6E2", []token{tFloat, tFloat, tFloat, tFloat, tFloat, tFloat, tFloat, tInt, tFloat},
			[]string{"0x1.8p3", "0x.8", "0xAp-2", "0x1.", "1.", ".5", "-2.5e-3", "+7", "6E2"}},
		// No hexadecimal integers: 0x8 is 0 and the word x8 (as in 2x8).
		{"0x8 2x8 1e", []token{tInt, tWord, tInt, tWord, tInt, tWord}, []string{"0", "x8", "2", "x8", "1", "e"}},
		{"%a_1 %42 @k -> - >", []token{tLocal, tLocal, tGlobal, tArrow, tIllegal, tGreater}, []string{"a_1", "42", "k", "->", "-", ">"}},
		{`"a;b" ; comment "x"` + "\n?", []token{tString, tQuestion}, []string{"a;b", "?"}},
		{"gemm.n.t.atomic memref<f32x4x?>", []token{tWord, tWord, tLess, tWord, tQuestion, tGreater}, []string{"gemm.n.t.atomic", "memref", "<", "f32x4x", "?", ">"}},
	} {
		var s scanner
		var errs []string
		s.init(c.src, func(_ ir.Pos, msg string) { errs = append(errs, msg) })
		for i, want := range c.want {
			tok, _, lit := s.next()
			if tok != want || lit != c.lits[i] {
				t.Errorf("%q: token %d = %v %q, want %v %q", c.src, i, tok, lit, want, c.lits[i])
			}
		}
		if tok, _, lit := s.next(); tok != tEOF {
			t.Errorf("%q: extra token %v %q", c.src, tok, lit)
		}
		illegal := 0
		for _, tok := range c.want {
			if tok == tIllegal {
				illegal++
			}
		}
		if len(errs) != illegal {
			t.Errorf("%q: errors %v, want %d", c.src, errs, illegal)
		}
	}
}

func TestScannerPositions(t *testing.T) {
	var s scanner
	s.init("func @k(\n\t%a: f32) ; c\n}", func(ir.Pos, string) {})
	want := []ir.Pos{{Line: 1, Col: 1}, {Line: 1, Col: 6}, {Line: 1, Col: 8}, {Line: 2, Col: 2}, {Line: 2, Col: 4}, {Line: 2, Col: 6}, {Line: 2, Col: 9}, {Line: 3, Col: 1}}
	for i, w := range want {
		if _, pos, lit := s.next(); pos != w {
			t.Errorf("token %d %q at %v, want %v", i, lit, pos, w)
		}
	}
}
