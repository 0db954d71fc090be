package syntax

import (
	"strings"

	"tltune/compiler/ir"
)

// token is the kind of a lexical token.
type token uint8

const (
	tEOF     token = iota
	tIllegal       // a character that starts no token (already reported)
	tWord          // keyword, mnemonic or type name: letters, digits, '_' and '.'
	tLocal         // %name or %123
	tGlobal        // @name
	tInt           // integer constant, optionally signed
	tFloat         // floating constant (decimal or hexadecimal), optionally signed
	tString        // "..."
	tLParen
	tRParen
	tLBrace
	tRBrace
	tLBrack
	tRBrack
	tLess
	tGreater
	tComma
	tColon
	tEqual
	tQuestion
	tArrow     // ->
	tLessEqual // <= (foreach_tile)
	tDef       // $name: a compile-time variable of the released tinytc
)

var tokenNames = [...]string{
	tEOF: "end of file", tIllegal: "illegal character", tWord: "keyword", tLocal: "local identifier",
	tGlobal: "global identifier", tInt: "integer constant", tFloat: "floating constant",
	tString: "string", tLParen: "'('", tRParen: "')'", tLBrace: "'{'", tRBrace: "'}'",
	tLBrack: "'['", tRBrack: "']'", tLess: "'<'", tGreater: "'>'", tComma: "','",
	tColon: "':'", tEqual: "'='", tQuestion: "'?'", tArrow: "'->'", tLessEqual: "'<='",
	tDef: "compile-time variable",
}

func (t token) String() string { return tokenNames[t] }

// scanner splits source into tokens. Besides next, which reads the next
// token, it offers character-level helpers for the few places where the
// grammar glues tokens together ("f32x4x?" in types, "2x%1" in expand
// shapes); the parser calls them while its current token is the one just
// before the glued text.
type scanner struct {
	src      string    // the source, converted once so tokens are substrings, not copies
	off      int       // offset of the next unread byte
	tokStart int       // offset of the token next returned last
	pending  []comment // comments skipped and not yet claimed by the parser
	// header holds the first comments of the source (a kernel's header
	// lines) until the parser claims them, which then takes the
	// following ones from the heap: two allocations a GEMM kernel.
	header    [4]comment
	line      int32
	lineStart int
	err       func(pos ir.Pos, msg string)
}

func (s *scanner) init(src string, err func(ir.Pos, string)) {
	s.src, s.off, s.line, s.lineStart, s.err = src, 0, 1, 0, err
	s.pending = s.header[:0]
}

func (s *scanner) pos() ir.Pos {
	return ir.Pos{Line: s.line, Col: int32(s.off-s.lineStart) + 1}
}

func (s *scanner) peek() byte {
	if s.off < len(s.src) {
		return s.src[s.off]
	}
	return 0
}

func (s *scanner) peekAt(i int) byte {
	if s.off+i < len(s.src) {
		return s.src[s.off+i]
	}
	return 0
}

// skipSpace skips white space and comments. (Locals, not s.off, in the
// loop, as in skipClass: it runs before every token.)
func (s *scanner) skipSpace() {
	src, i := s.src, s.off
	for i < len(src) {
		switch c := src[i]; {
		case classes[c]&cSpace != 0:
			i++
		case c == '\n':
			i++
			s.line++
			s.lineStart = i
		case c == ';':
			s.off = i
			s.comment()
			i = s.off
		default:
			s.off = i
			return
		}
	}
	s.off = i
}

// comment is a comment with its ';', without trailing white space.
type comment struct {
	pos     ir.Pos
	text    string
	ownLine bool // nothing but white space before it on its line
}

func (s *scanner) comment() {
	c := comment{pos: s.pos(), ownLine: strings.TrimLeft(s.src[s.lineStart:s.off], spaces) == ""}
	start := s.off
	if n := strings.IndexByte(s.src[start:], '\n'); n >= 0 {
		s.off += n
	} else {
		s.off = len(s.src)
	}
	c.text = strings.TrimRight(s.src[start:s.off], spaces)
	s.pending = append(s.pending, c)
}

// Character classes, a bit each in classes: the scanner classifies every
// byte of the source, and one table load is cheaper than the comparisons
// of a class.
const (
	cLetter    uint8 = 1 << iota // a-z, A-Z
	cDigit                       // 0-9
	cHexLetter                   // a-f, A-F
	cUnderline                   // _
	cDot                         // .
	cSpace                       // white space but line breaks
	cSkipped                     // what skipSpace skips: white space, line breaks and ';'
	cTypeSpan                    // what ends or nests the span of a composite type (typeSpan)

	cHex   = cDigit | cHexLetter
	cIdent = cLetter | cDigit | cUnderline // the name of %name, @name, $name
	cWord  = cIdent | cDot                 // keywords, mnemonics, types
)

// spaces is the white space of the language but line breaks (cSpace).
const spaces = " \t\r\f\v"

var classes = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			t[c] = cLetter | cHexLetter
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			t[c] = cLetter
		case '0' <= c && c <= '9':
			t[c] = cDigit
		}
	}
	t['_'], t['.'] = cUnderline, cDot
	for _, c := range spaces {
		t[c] = cSpace | cSkipped
	}
	t['\n'], t[';'] = cSkipped, cSkipped
	for _, c := range "<>\n;{}()=$" {
		t[c] |= cTypeSpan
	}
	return t
}()

func isLetter(c byte) bool { return classes[c]&cLetter != 0 }
func isDigit(c byte) bool  { return classes[c]&cDigit != 0 }
func isWord(c byte) bool   { return classes[c]&cWord != 0 }
func isIdent(c byte) bool  { return classes[c]&cIdent != 0 }

// skipClass moves past the bytes of class (a mask of classes) and returns
// how many there were. (Locals, not s.off, in the loop: stores to s.off
// on every byte were a third of scanning.)
func (s *scanner) skipClass(class uint8) int {
	src, i := s.src, s.off
	for i < len(src) && classes[src[i]]&class != 0 {
		i++
	}
	n := i - s.off
	s.off = i
	return n
}

// What the first byte of a token says about it, in starts: one table load
// and a jump table instead of the comparisons of each kind of token.
const (
	sOther  uint8 = iota // no token starts so (unless a case of next says otherwise)
	sLetter              // a word
	sDigit               // a number
	sDot                 // a number if a digit follows
	sSign                // a signed number, ±inf, ±nan, or "->"
	sSigil               // %name, @name, $name
	sBang                // !calc
	sQuote               // a string
	sPunct               // a token of one byte: punctuation[c]
	sLess                // '<' or "<="
)

var starts, punctuation = func() (starts [256]uint8, punct [256]token) {
	for c := range 256 {
		switch {
		case isLetter(byte(c)):
			starts[c] = sLetter
		case isDigit(byte(c)):
			starts[c] = sDigit
		}
	}
	starts['.'], starts['+'], starts['-'], starts['!'], starts['"'], starts['<'] = sDot, sSign, sSign, sBang, sQuote, sLess
	starts['%'], starts['@'], starts['$'] = sSigil, sSigil, sSigil
	for c, t := range map[byte]token{'(': tLParen, ')': tRParen, '{': tLBrace, '}': tRBrace, '[': tLBrack, ']': tRBrack,
		'>': tGreater, ',': tComma, ':': tColon, '=': tEqual, '?': tQuestion} {
		starts[c], punct[c] = sPunct, t
	}
	return starts, punct
}()

// next scans one token and returns its kind, position and text.
func (s *scanner) next() (token, ir.Pos, string) {
	if s.off >= len(s.src) || classes[s.src[s.off]]&cSkipped != 0 {
		s.skipSpace() // (not called for the many tokens that follow another directly)
	}
	pos := s.pos()
	start := s.off
	s.tokStart = start
	if start >= len(s.src) {
		return tEOF, pos, ""
	}
	c := s.src[start]
	switch starts[c] {
	case sLetter:
		s.skipClass(cWord)
		return tWord, pos, s.src[start:s.off]
	case sPunct:
		s.off++
		return punctuation[c], pos, s.src[start:s.off]
	case sDigit:
		return s.number(pos, start)
	case sSigil:
		return s.identifier(pos, c)
	case sDot:
		if isDigit(s.peekAt(1)) {
			return s.number(pos, start)
		}
	case sSign:
		if d := s.peekAt(1); isDigit(d) || d == '.' && isDigit(s.peekAt(2)) {
			s.off++
			return s.number(pos, start)
		}
		if w := s.src[s.off+1 : min(s.off+4, len(s.src))]; (w == "inf" || w == "nan") && !isWord(s.peekAt(4)) {
			s.off += 4
			return tFloat, pos, s.src[start:s.off]
		}
		if c == '-' && s.peekAt(1) == '>' {
			s.off += 2
			return tArrow, pos, "->"
		}
	case sBang:
		if isLetter(s.peekAt(1)) {
			s.off++
			s.skipClass(cIdent)
			return tWord, pos, s.src[start:s.off]
		}
	case sQuote:
		return s.string(pos)
	case sLess:
		s.off++
		if s.peek() == '=' {
			s.off++
			return tLessEqual, pos, "<="
		}
		return tLess, pos, "<"
	}
	s.off++
	s.err(pos, "unexpected character "+quoteByte(c))
	return tIllegal, pos, string(c)
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	const hex = "0123456789abcdef"
	return "byte 0x" + string(hex[c>>4]) + string(hex[c&15])
}

func (s *scanner) identifier(pos ir.Pos, sigil byte) (token, ir.Pos, string) {
	s.off++ // sigil
	start := s.off
	switch c := s.peek(); {
	case isDigit(c):
		s.skipClass(cDigit)
	case isLetter(c):
		s.skipClass(cIdent)
	default:
		s.skipClass(cIdent) // the rest of the bad name
		s.err(pos, "'"+string(sigil)+"' must be followed by a name (a letter, then letters, digits or '_') or a number")
		return tIllegal, pos, string(sigil)
	}
	kind := tLocal
	switch sigil {
	case '@':
		kind = tGlobal
	case '$':
		kind = tDef
	}
	return kind, pos, s.src[start:s.off]
}

// peekToken returns the kind of the token after the current one without
// consuming it (and without reporting its errors).
func (s *scanner) peekToken() token {
	c := *s
	c.pending = nil
	c.err = func(ir.Pos, string) {}
	tok, _, _ := c.next()
	return tok
}

// rawUntil returns the source text up to the next close byte and moves
// past it; ok is false (and nothing moves) when there is none before a
// line break.
func (s *scanner) rawUntil(close byte) (text string, ok bool) {
	for i := s.off; i < len(s.src) && s.src[i] != '\n'; i++ {
		if s.src[i] == close {
			text, s.off = s.src[s.off:i], i+1
			return text, true
		}
	}
	return "", false
}

func (s *scanner) string(pos ir.Pos) (token, ir.Pos, string) {
	s.off++
	start := s.off
	for s.off < len(s.src) {
		c := s.src[s.off]
		if c == '"' {
			s.off++
			return tString, pos, s.src[start : s.off-1]
		}
		if c < 0x20 || c > 0x7e {
			break
		}
		s.off++
	}
	s.err(pos, "string not terminated on its line (strings hold printable ASCII only)")
	return tIllegal, pos, ""
}

// exponent consumes an exponent introduced by one of the letters in marks
// ("eE" or "pP") if a complete one follows; it reports whether it did.
func (s *scanner) exponent(marks string) bool {
	c := s.peek()
	if c == 0 || (c != marks[0] && c != marks[1]) {
		return false
	}
	i := 1
	if d := s.peekAt(1); d == '+' || d == '-' {
		i = 2
	}
	if !isDigit(s.peekAt(i)) {
		return false
	}
	s.off += i
	s.skipClass(cDigit)
	return true
}

// number scans a decimal integer, a decimal float or a hexadecimal float;
// s.off is past the sign, start at it. Hexadecimal integers do not exist in
// the language: "0x8" without "." or "p" is the integer 0 followed by "x8".
func (s *scanner) number(pos ir.Pos, start int) (token, ir.Pos, string) {
	if s.peek() == '0' && (s.peekAt(1) == 'x' || s.peekAt(1) == 'X') {
		save := s.off
		s.off += 2
		n := s.skipClass(cHex)
		frac := false
		if s.peek() == '.' {
			s.off++
			m := s.skipClass(cHex)
			frac = n+m > 0
		}
		if (frac || n > 0) && (s.exponent("pP") || frac) {
			return tFloat, pos, s.src[start:s.off]
		}
		s.off = save
	}
	n := s.skipClass(cDigit)
	switch s.peek() {
	case '.', 'e', 'E':
	default: // an integer, as nearly every number of a kernel
		return tInt, pos, s.src[start:s.off]
	}
	float := false
	if s.peek() == '.' && (n > 0 || isDigit(s.peekAt(1))) {
		s.off++
		s.skipClass(cDigit)
		float = true
	}
	if s.exponent("eE") {
		float = true
	}
	if float {
		return tFloat, pos, s.src[start:s.off]
	}
	return tInt, pos, s.src[start:s.off]
}

// typeSpan returns the end offset (exclusive) of the composite type whose
// keyword starts at start: the '>' that balances its first '<'. It fails
// for spans with line breaks or comments, so that skipping to the end keeps
// line counting right.
func (s *scanner) typeSpan(start int) (int, bool) {
	depth := 0
	src := s.src
	for i := start; i < len(src); i++ {
		c := src[i]
		if classes[c]&cTypeSpan == 0 { // most bytes: one test, not the switch's
			continue
		}
		switch c {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case '\n', ';', '{', '}', '(', ')', '=', '$':
			return 0, false
		}
	}
	return 0, false
}
