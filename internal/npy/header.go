package npy

import (
	"fmt"
	"strconv"
	"strings"
)

// parseHeader reads the Python dict literal of a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
func parseHeader(s string) (*Array, error) {
	p := &dictParser{s: s}
	fields, err := p.dict()
	if err != nil {
		return nil, fmt.Errorf("bad .npy header %q: %v", strings.TrimSpace(s), err)
	}
	a := &Array{}
	descr, ok := fields["descr"].(string)
	if !ok {
		return nil, fmt.Errorf("bad .npy header: no string 'descr'")
	}
	if a.DType, err = parseDescr(descr); err != nil {
		return nil, err
	}
	if a.Fortran, ok = fields["fortran_order"].(bool); !ok {
		return nil, fmt.Errorf("bad .npy header: no boolean 'fortran_order'")
	}
	if a.Shape, ok = fields["shape"].([]int); !ok {
		return nil, fmt.Errorf("bad .npy header: no tuple 'shape'")
	}
	for _, d := range a.Shape {
		if d < 0 {
			return nil, fmt.Errorf("bad .npy header: negative dimension in shape %v", a.Shape)
		}
	}
	return a, nil
}

func parseDescr(d string) (DType, error) {
	if strings.HasPrefix(d, ">") && d[1:] != "i1" && d[1:] != "b1" {
		return 0, fmt.Errorf("big-endian .npy element type %q is not supported; save the array as little-endian (e.g. arr.astype('<%s'))", d, d[1:])
	}
	body := strings.TrimLeft(d, "<>=|")
	for t, info := range dtypeInfo {
		if info.descr[1:] == body {
			return DType(t), nil
		}
	}
	return 0, fmt.Errorf(".npy element type %q is not supported (want one of b1 i1 i2 i4 i8 f2 f4 f8 c8 c16)", d)
}

// dictParser parses the subset of Python literals .npy headers use: a dict
// with string keys whose values are strings, True/False or tuples of ints.
type dictParser struct {
	s   string
	pos int
}

func (p *dictParser) skipSpace() {
	for p.pos < len(p.s) && strings.ContainsRune(" \t\n\r", rune(p.s[p.pos])) {
		p.pos++
	}
}

// accept consumes tok (after white space) if it comes next.
func (p *dictParser) accept(tok string) bool {
	p.skipSpace()
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *dictParser) dict() (map[string]any, error) {
	if !p.accept("{") {
		return nil, fmt.Errorf("want '{' at offset %d", p.pos)
	}
	fields := map[string]any{}
	for !p.accept("}") {
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.accept(":") {
			return nil, fmt.Errorf("want ':' after key %q", key)
		}
		if fields[key], err = p.value(); err != nil {
			return nil, err
		}
		if !p.accept(",") && !p.accept("}") {
			return nil, fmt.Errorf("want ',' or '}' at offset %d", p.pos)
		} else if p.s[p.pos-1] == '}' {
			break
		}
	}
	return fields, nil
}

func (p *dictParser) value() (any, error) {
	switch {
	case p.accept("True"):
		return true, nil
	case p.accept("False"):
		return false, nil
	case p.accept("("):
		return p.tuple()
	}
	return p.str()
}

func (p *dictParser) str() (string, error) {
	p.skipSpace()
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return "", fmt.Errorf("want a string at offset %d", p.pos)
	}
	q := p.s[p.pos]
	end := strings.IndexByte(p.s[p.pos+1:], q)
	if end < 0 {
		return "", fmt.Errorf("unterminated string at offset %d", p.pos)
	}
	v := p.s[p.pos+1 : p.pos+1+end]
	p.pos += end + 2
	return v, nil
}

// tuple parses the rest of "(d1, d2, ...)" after the opening parenthesis.
func (p *dictParser) tuple() ([]int, error) {
	dims := []int{}
	for !p.accept(")") {
		p.skipSpace()
		start := p.pos
		for p.pos < len(p.s) && (p.s[p.pos] >= '0' && p.s[p.pos] <= '9' || p.s[p.pos] == 'L') {
			p.pos++
		}
		d, err := strconv.Atoi(strings.TrimSuffix(p.s[start:p.pos], "L"))
		if err != nil {
			return nil, fmt.Errorf("want a dimension at offset %d", start)
		}
		dims = append(dims, d)
		if !p.accept(",") && !p.accept(")") {
			return nil, fmt.Errorf("want ',' or ')' at offset %d", p.pos)
		} else if p.s[p.pos-1] == ')' {
			break
		}
	}
	return dims, nil
}
