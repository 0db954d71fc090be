package syntax

import (
	"strconv"
	"strings"

	"tltune/compiler/ir"
)

// Compile-time variables of the released tinytc: "$name = rhs" defines a
// variable that stands for a constant, a type, an attribute or another
// variable, in the region (or file) where it is defined and the regions
// nested in it; "!calc(rpn)" computes an integer in reverse Polish
// notation. The parser resolves them as it reads (a use reads as the
// variable's tokens), so they leave no trace in the IR, as in tinytc.

// defToken is one token a variable stands for.
type defToken struct {
	tok token
	lit string
}

// defScopes holds the variables by scope: one map per open brace, the
// file's scope first.
type defScopes struct {
	scopes []map[string][]defToken
}

func (d *defScopes) open() { d.scopes = append(d.scopes, nil) }

func (d *defScopes) close() {
	if len(d.scopes) > 0 {
		d.scopes = d.scopes[:len(d.scopes)-1]
	}
}

func (d *defScopes) lookup(name string) ([]defToken, bool) {
	for i := len(d.scopes) - 1; i >= 0; i-- {
		if toks, ok := d.scopes[i][name]; ok {
			return toks, true
		}
	}
	return nil, false
}

// define records name in the innermost scope; it reports false when the
// name is defined there or in an enclosing scope already.
func (d *defScopes) define(name string, toks []defToken) bool {
	if _, ok := d.lookup(name); ok {
		return false
	}
	if len(d.scopes) == 0 {
		d.open()
	}
	top := &d.scopes[len(d.scopes)-1]
	if *top == nil {
		*top = map[string][]defToken{}
	}
	(*top)[name] = toks
	return true
}

// expandVar replaces the current token, a use of a variable, by the
// variable's tokens; it reports false (the token becomes illegal) for an
// undefined variable.
func (p *parser) expandVar() bool {
	toks, ok := p.defs.lookup(p.lit)
	if !ok {
		p.errs.Add(p.pos, "undefined compile-time variable $%s (define it before its use: $%s = ...)", p.lit, p.lit)
		p.tok = tIllegal
		return false
	}
	p.expansion, p.expandAt = toks, p.pos
	return true
}

// defineVar reads "$name = rhs", the current token being $name, and
// records the variable. Errors are reported; the definition is skipped.
func (p *parser) defineVar() {
	name, pos := p.lit, p.pos
	p.sc.next() // =
	toks, ok := p.defRHS(pos)
	if !ok {
		return
	}
	if !p.defs.define(name, toks) {
		p.errs.Add(pos, "compile-time variable $%s is already defined", name)
	}
}

// defRHS reads the right-hand side of a definition: a constant, a type, an
// array, dictionary or string attribute, another variable, or !calc(...).
func (p *parser) defRHS(at ir.Pos) ([]defToken, bool) {
	tok, pos, lit := p.sc.next()
	switch {
	case tok == tDef:
		toks, ok := p.defs.lookup(lit)
		if !ok {
			p.errs.Add(pos, "undefined compile-time variable $%s", lit)
		}
		return toks, ok
	case tok == tWord && lit == "!calc":
		return p.calc(pos)
	case tok == tLBrack || tok == tLBrace:
		return p.defBalanced(defToken{tok, lit}, tok, map[token]token{tLBrack: tRBrack, tLBrace: tRBrace}[tok])
	case tok == tWord && (lit == "memref" || lit == "group" || lit == "coopmatrix"):
		return p.defBalanced(defToken{tok, lit}, tLess, tGreater)
	case tok == tInt || tok == tFloat || tok == tString || tok == tWord:
		return []defToken{{tok, lit}}, true
	}
	p.errs.Add(pos, "expected a constant, type, attribute or compile-time variable after '$... =' (defined at %s)", at)
	return nil, false
}

// defBalanced reads tokens after first up to the close that balances the
// first open, expanding variables inside.
func (p *parser) defBalanced(first defToken, open, close token) ([]defToken, bool) {
	toks := []defToken{first}
	depth := 0
	if first.tok == open {
		depth = 1
	}
	for {
		tok, pos, lit := p.sc.next()
		switch tok {
		case tEOF:
			p.errs.Add(pos, "definition not closed before the end of the file")
			return nil, false
		case tDef:
			sub, ok := p.defs.lookup(lit)
			if !ok {
				p.errs.Add(pos, "undefined compile-time variable $%s", lit)
				return nil, false
			}
			toks = append(toks, sub...)
			continue
		case open:
			depth++
		case close:
			depth--
		}
		toks = append(toks, defToken{tok, lit})
		if depth == 0 && tok == close {
			return toks, true
		}
	}
}

// calc evaluates "!calc(rpn)", whose items are separated by white space:
// integers, variables standing for integers, and the operators ^ (power),
// - + * / % (integer division and remainder), min and max.
func (p *parser) calc(at ir.Pos) ([]defToken, bool) {
	fail := func(format string, args ...any) ([]defToken, bool) {
		p.errs.Add(at, "!calc: "+format, args...)
		return nil, false
	}
	if tok, _, _ := p.sc.next(); tok != tLParen {
		return fail("expected '(' and an expression in reverse Polish notation")
	}
	text, ok := p.sc.rawUntil(')')
	if !ok {
		return fail("expected ')' on the same line")
	}
	var stack []int64
	for _, item := range strings.Fields(text) {
		if v, ok := p.calcOperand(item); ok {
			stack = append(stack, v)
			continue
		}
		if len(stack) < 2 {
			return fail("%q needs two operands", item)
		}
		a, b := stack[len(stack)-2], stack[len(stack)-1]
		stack = stack[:len(stack)-2]
		v, err := calcOp(item, a, b)
		if err != "" {
			return fail("%s", err)
		}
		stack = append(stack, v)
	}
	if len(stack) != 1 {
		return fail("the expression leaves %d values, want one", len(stack))
	}
	return []defToken{{tInt, strconv.FormatInt(stack[0], 10)}}, true
}

// calcOperand reads an integer or a variable standing for one.
func (p *parser) calcOperand(item string) (int64, bool) {
	if name, ok := strings.CutPrefix(item, "$"); ok {
		toks, ok := p.defs.lookup(name)
		if !ok || len(toks) != 1 || toks[0].tok != tInt {
			return 0, false
		}
		item = toks[0].lit
	}
	v, err := strconv.ParseInt(item, 10, 64)
	return v, err == nil
}

func calcOp(op string, a, b int64) (int64, string) {
	switch op {
	case "+":
		return a + b, ""
	case "-":
		return a - b, ""
	case "*":
		return a * b, ""
	case "/", "%":
		if b == 0 {
			return 0, "division by zero"
		}
		if op == "/" {
			return a / b, ""
		}
		return a % b, ""
	case "^":
		if b < 0 {
			return 0, "negative exponent"
		}
		r := int64(1)
		for i := int64(0); i < b; i++ {
			if r *= a; r == 0 || r == 1 && a == 1 {
				break
			}
			if i > 64 && r != -1 && r != 1 {
				return 0, "the power overflows 64 bits"
			}
		}
		return r, ""
	case "min":
		return min(a, b), ""
	case "max":
		return max(a, b), ""
	}
	return 0, "unknown item " + strconv.Quote(op) + " (integers, $variables, ^ - + * / % min max)"
}
