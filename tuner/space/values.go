package space

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxValues bounds one dimension so that a range typo ("1..1000000") fails
// with a message instead of enumerating for hours.
const maxValues = 4096

// Values is one integer dimension of a space: the candidate values in
// ascending order, without duplicates.
//
// In TOML and on the command line a dimension is written as a list
// ([1, 2, 4] or "1,2,4"), an arithmetic range ("1..8": 1 to 8 step 1,
// "8..64+8": step 8) or a geometric range ("1..64*2": 1, 2, 4, ..., 64).
type Values []int

// ParseValues parses the command-line form: comma-separated items, each an
// integer or a range.
func ParseValues(s string) (Values, error) {
	var vs []int
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		got, err := parseItem(item)
		if err != nil {
			return nil, err
		}
		vs = append(vs, got...)
		if len(vs) > maxValues {
			return nil, fmt.Errorf("%q has more than %d values", s, maxValues)
		}
	}
	return normalize(vs), nil
}

// parseItem parses one integer or range.
func parseItem(item string) ([]int, error) {
	from, rest, isRange := strings.Cut(item, "..")
	if !isRange {
		v, err := strconv.Atoi(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer or a range like 1..8, 8..64+8, 1..64*2", item)
		}
		return []int{v}, nil
	}
	to, step, geometric := rest, "1", false
	if i := strings.IndexAny(rest, "+*"); i >= 0 {
		to, step, geometric = rest[:i], rest[i+1:], rest[i] == '*'
	}
	lo, err1 := strconv.Atoi(from)
	hi, err2 := strconv.Atoi(to)
	st, err3 := strconv.Atoi(step)
	switch {
	case err1 != nil || err2 != nil || err3 != nil:
		return nil, fmt.Errorf("range %q: want FROM..TO, FROM..TO+STEP or FROM..TO*FACTOR with integers", item)
	case lo > hi:
		return nil, fmt.Errorf("range %q is empty: %d > %d", item, lo, hi)
	case geometric && (lo <= 0 || st < 2):
		return nil, fmt.Errorf("range %q: a geometric range needs FROM > 0 and FACTOR >= 2", item)
	case !geometric && st < 1:
		return nil, fmt.Errorf("range %q: STEP must be positive", item)
	}
	var vs []int
	for v := lo; v <= hi; {
		vs = append(vs, v)
		if len(vs) > maxValues {
			return nil, fmt.Errorf("range %q has more than %d values", item, maxValues)
		}
		if geometric {
			v *= st
		} else {
			v += st
		}
	}
	return vs, nil
}

// UnmarshalTOML accepts an integer, a list of integers, or a string in the
// command-line form.
func (v *Values) UnmarshalTOML(data any) error {
	switch d := data.(type) {
	case int64:
		*v = Values{int(d)}
		return nil
	case string:
		got, err := ParseValues(d)
		*v = got
		return err
	case []any:
		vs := make([]int, 0, len(d))
		for _, x := range d {
			i, ok := x.(int64)
			if !ok {
				return fmt.Errorf("list item %v is not an integer", x)
			}
			vs = append(vs, int(i))
		}
		*v = normalize(vs)
		return nil
	}
	return fmt.Errorf("want an integer, a list of integers or a range string, got %T", data)
}

func normalize(vs []int) Values {
	slices.Sort(vs)
	return Values(slices.Compact(vs))
}

// String is the command-line form.
func (v Values) String() string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// Bools is the boolean dimension (staging in local memory).
type Bools []bool

// ParseBools parses "off,on", "false,true" and the like.
func ParseBools(s string) (Bools, error) {
	var fs []bool
	for item := range strings.SplitSeq(s, ",") {
		switch strings.ToLower(strings.TrimSpace(item)) {
		case "on", "true", "yes", "1":
			fs = append(fs, true)
		case "off", "false", "no", "0":
			fs = append(fs, false)
		default:
			return nil, fmt.Errorf("%q is not on/off or true/false", item)
		}
	}
	return normalizeBools(fs), nil
}

// normalizeBools orders false before true and drops duplicates.
func normalizeBools(fs []bool) Bools {
	var out Bools
	for _, want := range []bool{false, true} {
		if slices.Contains(fs, want) {
			out = append(out, want)
		}
	}
	return out
}

// UnmarshalTOML accepts a boolean or a list of booleans.
func (f *Bools) UnmarshalTOML(data any) error {
	switch d := data.(type) {
	case bool:
		*f = Bools{d}
		return nil
	case []any:
		var fs []bool
		for _, x := range d {
			b, ok := x.(bool)
			if !ok {
				return fmt.Errorf("list item %v is not a boolean", x)
			}
			fs = append(fs, b)
		}
		*f = normalizeBools(fs)
		return nil
	}
	return fmt.Errorf("want a boolean or a list of booleans, got %T", data)
}
