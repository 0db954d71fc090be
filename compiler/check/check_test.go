package check_test

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"tltune/compiler/check"
	"tltune/compiler/diag"
	"tltune/compiler/syntax"
)

// frontEnd parses src and, if it parses, verifies it: the errors a user of
// `tltune check` sees.
func frontEnd(src []byte, target *check.Target) diag.List {
	prog, errs := syntax.Parse(src)
	if len(errs) > 0 {
		return errs
	}
	return check.Program(prog, target)
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*.tl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no test files in testdata/%s: %v", dir, err)
	}
	return names
}

func TestValidPrograms(t *testing.T) {
	for _, name := range files(t, "valid") {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range frontEnd(src, nil) {
				t.Errorf("%s:%s", name, e)
			}
		})
	}
}

// An invalid program lists the errors it must produce, each as a comment
//
//	; ERROR LINE:COL message substring
//
// and must produce exactly those: one error per annotation, at that
// position, whose message contains the substring.
var annotation = regexp.MustCompile(`(?m)^; ERROR (\d+):(\d+) (.+)$`)

type expected struct {
	pos string
	msg string
}

func TestInvalidPrograms(t *testing.T) {
	names := files(t, "invalid")
	if len(names) < 80 {
		t.Errorf("only %d invalid programs; the suite promises at least 80", len(names))
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var want []expected
			for _, m := range annotation.FindAllSubmatch(src, -1) {
				want = append(want, expected{string(m[1]) + ":" + string(m[2]), string(m[3])})
			}
			if len(want) == 0 {
				t.Fatal("no '; ERROR LINE:COL message' annotation")
			}
			got := frontEnd(src, nil)
			for _, e := range got {
				i := slices.IndexFunc(want, func(w expected) bool {
					return w.pos == e.Pos.String() && strings.Contains(e.Msg, w.msg)
				})
				if i < 0 {
					t.Errorf("unexpected error %s", e)
					continue
				}
				want = slices.Delete(want, i, i+1)
			}
			for _, w := range want {
				t.Errorf("missing error at %s containing %q", w.pos, w.msg)
			}
		})
	}
}

func TestErrorsAreSorted(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*_several_*.tl"))
	if len(names) < 2 {
		t.Fatalf("want the files with several errors, found %v", names)
	}
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		errs := frontEnd(src, nil)
		if len(errs) < 2 || !slices.IsSortedFunc(errs, func(a, b diag.Error) int {
			return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
		}) {
			t.Errorf("%s: want several errors sorted by position, got %v", name, errs)
		}
	}
}
