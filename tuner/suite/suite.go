// Package suite owns sweep suites: TOML files that list recipes (an op
// with its shapes, element types, transposes, batch layouts, α and β) for
// `tltune sweep` to tune or re-measure in one run. Parse reads a suite
// strictly (an unknown key is an error naming it) and expands every recipe
// into kernels.Spec values, one Case per shape; every error names the file
// and the recipe.
//
// A suite looks like this:
//
//	strategy = "gp"      # search settings for every recipe (flags override)
//	budget = 24
//	time = "2m"          # per shape
//
//	[[recipe]]
//	op = "gemm"
//	square = "16..256*2" # m = n = k = 16, 32, ..., 256
//	dtype = ["f16", "f32"]
//	budget = 32          # this recipe's own setting
//
//	[[recipe]]
//	op = "gemv"
//	m = "32..256*2"      # the Cartesian product of m and n
//	n = [64, 256]
//	trans = ["n", "t"]
//
// A recipe gives its shapes in one of three forms: shapes (a list of
// [m, n, k] or, for gemv and ger, [m, n]), square (sizes s with m = n = k =
// s), or m, n and k (each an integer, a list or a range as search spaces
// write them). dtype, precision, trans and layout take one value or a
// list and multiply the shapes; acc, alpha and beta take one value.
// Omitted: dtype f32, acc by the dtype, exact precision, no transposes,
// strided layout, α = 1, β = 0.
//
// precision is "exact" or "tf32" (f32 inputs rounded to tf32 on the
// matrix engine, kernels.Spec.Precision), or a list of both, which makes
// each shape two problems. tf32 applies to f32 gemm into f32 only, so a
// recipe that asks for it has op gemm, dtype f32 and no other acc; any
// other recipe is an error. WithPrecision sets the precision of a whole
// suite (`tltune sweep --precision`).
package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"tltune/configs"
	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/tuner/search"
	"tltune/tuner/space"
)

// MaxCases bounds the shapes of one suite, so that a range typo fails with
// a message instead of queueing a week of tuning.
const MaxCases = 4096

// A Suite is a parsed suite file.
type Suite struct {
	Name        string // the file it was read from
	Description string
	Cases       []Case // in file order: recipe by recipe, then dtype, precision, trans, layout, shape
}

// A Case is one shape of a recipe to tune.
type Case struct {
	Spec   kernels.Spec
	Recipe int    // the [[recipe]] it came from, counted from 1
	Tuning Tuning // the recipe's settings over the suite's
}

// Tuning are the search settings a suite gives for all its recipes or for
// one; a zero field was not given.
type Tuning struct {
	Strategy string        `toml:"strategy"`
	Budget   *int          `toml:"budget"` // nil: not given (0 means every candidate)
	Time     time.Duration `toml:"time"`   // per shape
}

// over returns t with the fields t lacks taken from d.
func (t Tuning) over(d Tuning) Tuning {
	if t.Strategy == "" {
		t.Strategy = d.Strategy
	}
	if t.Budget == nil {
		t.Budget = d.Budget
	}
	if t.Time == 0 {
		t.Time = d.Time
	}
	return t
}

func (t Tuning) validate() error {
	switch {
	case t.Strategy != "" && !slices.Contains(search.Names, t.Strategy):
		return fmt.Errorf("strategy %q: use one of %s", t.Strategy, strings.Join(search.Names, ", "))
	case t.Budget != nil && *t.Budget < 0:
		return fmt.Errorf("budget %d must be ≥ 0", *t.Budget)
	case t.Time < 0:
		return fmt.Errorf("time %v must not be negative", t.Time)
	}
	return nil
}

// file is the TOML layout of a suite.
type file struct {
	Description string `toml:"description"`
	Tuning
	Recipe []recipe `toml:"recipe"`
}

// recipe is one [[recipe]] table.
type recipe struct {
	Op        string       `toml:"op"`
	Shapes    [][]int      `toml:"shapes"`
	Square    space.Values `toml:"square"`
	M         space.Values `toml:"m"`
	N         space.Values `toml:"n"`
	K         space.Values `toml:"k"`
	DType     words        `toml:"dtype"`
	Acc       string       `toml:"acc"`
	Precision words        `toml:"precision"`
	Trans     words        `toml:"trans"`
	Layout    words        `toml:"layout"`
	Alpha     scalar       `toml:"alpha"`
	Beta      scalar       `toml:"beta"`
	Tuning
}

// Load reads the suite at path. A bare name that is no file ("nightly")
// names a suite shipped in configs/suites.
func Load(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsRune(path, os.PathSeparator) {
		shipped := "suites/" + strings.TrimSuffix(path, ".toml") + ".toml"
		if d, serr := fs.ReadFile(configs.FS, shipped); serr == nil {
			return Parse("configs/"+shipped, d)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the suite: %w", err)
	}
	return Parse(path, data)
}

// Shipped lists the names of the suites in configs/suites.
func Shipped() []string {
	entries, _ := fs.ReadDir(configs.FS, "suites")
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".toml"); ok {
			names = append(names, name)
		}
	}
	return names
}

// Parse decodes and expands the suite in data; name is used in errors.
func Parse(name string, data []byte) (*Suite, error) {
	var f file
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: unknown key %q", name, und[0].String())
	}
	if err := checkTimes(data); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.Tuning.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(f.Recipe) == 0 {
		return nil, fmt.Errorf("%s: no [[recipe]]; a suite lists at least one", name)
	}
	s := &Suite{Name: name, Description: f.Description}
	seen := map[speak.Problem]int{} // recipe of each problem
	for i, r := range f.Recipe {
		cases, err := r.expand(i+1, f.Tuning)
		if err == nil {
			err = checkRepeats(cases, seen)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: recipe %d (%s): %w", name, i+1, r.Op, err)
		}
		s.Cases = append(s.Cases, cases...)
		if len(s.Cases) > MaxCases {
			return nil, fmt.Errorf("%s: more than %d shapes; split the suite", name, MaxCases)
		}
	}
	return s, nil
}

// checkTimes refuses a time given as a bare number: TOML decodes it into
// a duration as nanoseconds, so time = 300 would give each shape 300 ns
// and fail every one of them as if nothing ran correctly.
func checkTimes(data []byte) error {
	var times struct {
		Time   any `toml:"time"`
		Recipe []struct {
			Time any `toml:"time"`
		} `toml:"recipe"`
	}
	if _, err := toml.Decode(string(data), &times); err != nil {
		return err
	}
	bare := func(t any) error {
		if _, ok := t.(string); t == nil || ok {
			return nil
		}
		return fmt.Errorf("time = %v: write a duration string such as \"3m\" or \"90s\"", t)
	}
	if err := bare(times.Time); err != nil {
		return err
	}
	for i, r := range times.Recipe {
		if err := bare(r.Time); err != nil {
			return fmt.Errorf("recipe %d: %w", i+1, err)
		}
	}
	return nil
}

// checkRepeats refuses a problem (what the results store tells apart,
// speak.Problem) that an earlier recipe has: a suite measuring one twice in
// a run would mix two recipes' timings.
func checkRepeats(cases []Case, seen map[speak.Problem]int) error {
	for _, c := range cases {
		k := c.Spec.Problem()
		if first, dup := seen[k]; dup {
			return fmt.Errorf("%s is already in recipe %d; list each problem once", c.Spec.Name(), first)
		}
		seen[k] = c.Recipe
	}
	return nil
}

// WithPrecision returns the suite with precision p (kernels.Spec's: ""
// exact, or speak.TF32) over the recipes' own: every case that can take
// it does, the others stay exact (tf32 applies to f32 gemm into f32 only).
// Cases that become one problem are swept once, in the first's place and
// with its recipe's settings, as a recipe listing both precisions makes
// them. It is an error when no case can take p.
func (s *Suite) WithPrecision(p string) (*Suite, error) {
	out := &Suite{Name: s.Name, Description: s.Description}
	seen := map[speak.Problem]bool{}
	took := false
	for _, c := range s.Cases {
		spec := c.Spec
		spec.Precision = p
		if spec.Validate() == nil {
			c.Spec, took = spec, true
		} else {
			c.Spec.Precision = ""
		}
		if k := c.Spec.Problem(); !seen[k] {
			seen[k] = true
			out.Cases = append(out.Cases, c)
		}
	}
	if !took {
		return nil, fmt.Errorf("no shape of %s can take precision %s, which applies to f32 gemm into f32 only", s.Name, speak.PrecisionName(p))
	}
	return out, nil
}

// expand turns the recipe into its cases: every dtype × precision ×
// trans × layout × shape.
func (r *recipe) expand(index int, defaults Tuning) ([]Case, error) {
	op, err := kernels.ParseOp(r.Op)
	if err != nil {
		return nil, fmt.Errorf("op: %v", err)
	}
	if err := r.Tuning.validate(); err != nil {
		return nil, err
	}
	if err := r.checkPrecision(op); err != nil {
		return nil, err
	}
	shapes, err := r.shapes(op)
	if err != nil {
		return nil, err
	}
	tuning := r.Tuning.over(defaults)
	var cases []Case
	for _, dtype := range r.DType.or("f32") {
		for _, precision := range r.Precision.or(speak.ExactPrecision) {
			for _, trans := range r.Trans.or("") {
				for _, layout := range r.Layout.or("strided") {
					for _, sh := range shapes {
						flags := kernels.Flags{M: sh[0], N: sh[1], K: sh[2], DType: dtype, Acc: r.Acc, Trans: trans,
							Layout: layout, Alpha: r.Alpha.or("1"), Beta: r.Beta.or("0"), Precision: precision}
						spec, err := flags.Spec(op)
						if err != nil {
							// The keys are named as the command-line flags are,
							// so the flag's message reads right without "--".
							return nil, errors.New(strings.TrimPrefix(err.Error(), "--"))
						}
						cases = append(cases, Case{Spec: spec, Recipe: index, Tuning: tuning})
						if len(cases) > MaxCases {
							return nil, fmt.Errorf("more than %d shapes; check the ranges", MaxCases)
						}
					}
				}
			}
		}
	}
	return cases, nil
}

// checkPrecision refuses a precision the recipe's shapes cannot all take:
// tf32 rounds the inputs of an f32 gemm into f32 and nothing else, and a
// recipe is not silently half tf32.
func (r *recipe) checkPrecision(op kernels.Op) error {
	tf32 := false
	for _, p := range r.Precision {
		q, err := kernels.ParsePrecision(p)
		if err != nil {
			return fmt.Errorf("precision: %v", err)
		}
		tf32 = tf32 || q == speak.TF32
	}
	if !tf32 {
		return nil
	}
	const only = "precision tf32 applies to f32 gemm recipes only (op gemm, dtype f32, acc f32)"
	switch dtypes := r.DType.or("f32"); {
	case op != kernels.GEMMOp:
		return fmt.Errorf("%s, not %v; leave precision out", only, op)
	case slices.ContainsFunc(dtypes, func(d string) bool { return d != "f32" }):
		return fmt.Errorf("%s, not dtype %s; give the f32 shapes a recipe of their own", only, strings.Join(dtypes, ", "))
	case r.Acc != "" && r.Acc != "f32":
		return fmt.Errorf("%s, not acc %s; leave acc out or precision out", only, r.Acc)
	}
	return nil
}

// shapes returns [m, n, k] of every shape the recipe names (k = 0 for gemv
// and ger), from whichever of its three forms it uses.
func (r *recipe) shapes(op kernels.Op) ([][3]int, error) {
	dims := 3
	if op != kernels.GEMMOp {
		dims = 2
	}
	product := len(r.M) > 0 || len(r.N) > 0 || len(r.K) > 0
	forms := 0
	for _, given := range []bool{len(r.Shapes) > 0, len(r.Square) > 0, product} {
		if given {
			forms++
		}
	}
	const how = "give shapes = [[m, n%s], ...], square = SIZES, or m, n%s (one form per recipe)"
	kHint := map[bool]string{true: ", k", false: ""}[dims == 3]
	if forms != 1 {
		return nil, fmt.Errorf(how, kHint, kHint)
	}
	switch {
	case len(r.Shapes) > 0:
		return listedShapes(r.Shapes, dims)
	case len(r.Square) > 0:
		out := make([][3]int, len(r.Square))
		for i, s := range r.Square {
			out[i] = [3]int{s, s, s * (dims - 2)} // k is 0 for gemv and ger
		}
		return out, nil
	}
	return productShapes(r.M, r.N, r.K, dims)
}

func listedShapes(list [][]int, dims int) ([][3]int, error) {
	out := make([][3]int, len(list))
	for i, sh := range list {
		if len(sh) != dims {
			return nil, fmt.Errorf("shapes[%d] = %v: want %d numbers (m, n%s)", i, sh, dims, map[bool]string{true: ", k", false: ""}[dims == 3])
		}
		copy(out[i][:], sh)
	}
	return out, nil
}

func productShapes(ms, ns, ks space.Values, dims int) ([][3]int, error) {
	switch {
	case len(ms) == 0 || len(ns) == 0:
		return nil, errors.New("m and n both need values")
	case dims == 3 && len(ks) == 0:
		return nil, errors.New("k needs values (gemm)")
	case dims == 2 && len(ks) > 0:
		return nil, errors.New("k applies only to gemm")
	case len(ms)*len(ns)*max(1, len(ks)) > MaxCases:
		return nil, fmt.Errorf("m × n × k has more than %d shapes; check the ranges", MaxCases)
	}
	if dims == 2 {
		ks = space.Values{0}
	}
	var out [][3]int
	for _, m := range ms {
		for _, n := range ns {
			for _, k := range ks {
				out = append(out, [3]int{m, n, k})
			}
		}
	}
	return out, nil
}

// words is one string or a list of strings.
type words []string

func (w *words) UnmarshalTOML(data any) error {
	switch d := data.(type) {
	case string:
		*w = words{d}
		return nil
	case []any:
		for _, x := range d {
			s, ok := x.(string)
			if !ok {
				return fmt.Errorf("list item %v is not a string", x)
			}
			*w = append(*w, s)
		}
		if len(*w) == 0 {
			return errors.New("empty list; leave the key out for the default")
		}
		return nil
	}
	return fmt.Errorf("want a string or a list of strings, got %T", data)
}

// or is w, or def alone when w is not given.
func (w words) or(def string) []string {
	if len(w) == 0 {
		return []string{def}
	}
	return w
}

// scalar is α or β as written: a number, or a string holding a complex
// number or (β) "atomic".
type scalar string

func (s *scalar) UnmarshalTOML(data any) error {
	switch d := data.(type) {
	case int64, float64:
		*s = scalar(fmt.Sprint(d))
	case string:
		*s = scalar(d)
	default:
		return fmt.Errorf("want a number or a string, got %T", data)
	}
	return nil
}

func (s scalar) or(def string) string {
	if s == "" {
		return def
	}
	return string(s)
}
