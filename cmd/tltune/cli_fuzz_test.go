package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var cliRuns = flag.Int("cli-runs", 25, "random invocations of each command in TestCLIRandomArguments")

// TestCLIRandomArguments feeds every command random sets of its own flags,
// with values of every kind (valid, malformed, out of range, empty, files
// that exist and that do not), and random arguments. Whatever it is given,
// a command answers with a documented status (0, 1 for regress, 2 for bad
// input, 3 for a runtime failure), says why when it fails, and shows no
// panic or stack trace; an unknown flag or a malformed number is status 2
// in one line. It runs in a folder of its own, on a fixed inventory of
// devices that cannot be opened, with a worker that cannot start, so that
// nothing reaches a real device. -cli-runs sets the invocations per
// command.
func TestCLIRandomArguments(t *testing.T) {
	dir := t.TempDir()
	db := fixtureDB(t)
	if err := os.Mkdir(filepath.Join(dir, "tltune"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The inputs, put back before each invocation: a drawn -o may
	// overwrite them.
	inputs := map[string][]byte{}
	for dst, src := range map[string]string{"k.ir": "testdata/run/blas.ir", "suite.toml": "testdata/sweep-tiny.toml",
		"results.db": db, "tltune/results.db": db} { // the last is the default store
		inputs[filepath.Join(dir, dst)] = readFile(t, src)
	}
	restore := func() {
		for path, data := range inputs {
			os.Remove(path + "-wal") // a store's journal would apply to the copy
			os.Remove(path + "-shm")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	withInventory(t, fixedInventory())
	old := workerLauncher
	workerLauncher = func() *exec.Cmd { return exec.Command(filepath.Join(dir, "no-such-tltune")) }
	t.Cleanup(func() { workerLauncher = old })
	t.Setenv("XDG_DATA_HOME", dir)
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Chdir(dir)

	rng := rand.New(rand.NewPCG(11, 7))
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range commands {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		flags := commandFlags(t, name)
		for range *cliRuns {
			restore()
			args, usage := randomInvocation(rng, name, flags)
			status, stdout, stderr := tltune(args...)
			checkAnswer(t, args, usage, status, stdout, stderr)
		}
	}
}

// cliFlag is one flag of a command, as its -h lists it.
type cliFlag struct{ name, kind string }

var flagLine = regexp.MustCompile(`(?m)^  -(\S+)(?: (\S+))?$`)

// commandFlags reads a command's flags from its -h.
func commandFlags(t *testing.T, name string) []cliFlag {
	t.Helper()
	status, stdout, stderr := tltune(name, "-h")
	if status != exitOK {
		t.Fatalf("tltune %s -h: status %d: %s", name, status, stderr)
	}
	var flags []cliFlag
	for _, m := range flagLine.FindAllStringSubmatch(stdout, -1) {
		if m[1] != "h" && m[1] != "help" {
			flags = append(flags, cliFlag{m[1], m[2]})
		}
	}
	return flags
}

// Values drawn for flags and arguments: most from the flag's own
// plausible values (by name), the others by kind, so that commands get
// past their flags and as far as their work.
var (
	valuesByName = map[string][]string{
		"m": {"1", "8", "20", "64"}, "n": {"1", "5", "64"}, "k": {"1", "7", "32"},
		"db":     {"results.db", "tltune/results.db", "x.db", "/nonexistent/x.db"},
		"device": {"", "0", "1", "ref", "opencl:1", "NVIDIA", "pthread", "nosuch", "all", "0,1"},
		"op":     {"gemm", "gemv", "ger", "x"}, "dtype": {"f16", "f32", "f64", "c32", "bf16", "i8"},
		"acc": {"f32", "f64", "c64"}, "trans": {"n", "t", "nn", "tn", "x"}, "layout": {"strided", "group", "x"},
		"run": {"1", "2", "last", "nightly", "99"}, "baseline": {"1", "2", "last", "nightly", "x"},
		"resume": {"1", "last", "x"}, "tag": {"nightly", ""}, "format": {"csv", "json", "md", "x"},
		"o":    {"out.svg", "out.png", "out.pdf", "out.json", "out.csv", "out.md", "out.sbatch", "/nonexistent/d/o"},
		"arg":  {"A=rand", "B=rand", "C=zeros", "alpha=1.5", "beta=0", "x=rand", "y=rand", "A=rand:3", "A=x.npy", "alpha=[1,2]"},
		"func": {"gemm", "gemv", "ger", "@gemm", "nosuch"}, "shape": {"A=20x7x3", "A=2x2", "C=20x5x2", "x"},
		"groups": {"1", "2", "3", "0", "-1", "99999999999"}, "target": {"generic", "intel", "nvidia", "emulated", "amd"},
		"emit": {"opencl", "spirv", "spirv-asm", "x"}, "dialect": {"current", "released", "legacy", "auto", "x"},
		"to": {"current", "released", "legacy"}, "from": {"current", "released", "legacy"},
		"strategy": {"gp", "random", "exhaustive", "x"}, "tuning": {"out.json", "results.db", "k.ir", "missing.json"},
		"shard": {"1/2", "2/2", "0/1", "3/2", "x"}, "threshold": {"5%", "0.05", "x"}, "alpha": {"1", "0.5", "1+2i", "x"},
		"beta": {"0", "1", "x"}, "array": {"1", "4", "0"}, "tolerance": {"1%", "0.1", "x"},
	}
	// By kind: plausible values, and values that must be refused.
	goodValues = map[string][]string{
		"int":      {"0", "1", "2", "3", "8", "64"},
		"float":    {"0", "0.5", "1", "0.01"},
		"duration": {"1ms", "50ms", "2s", "1m"},
		"string":   {"", "1", "gemm", "f32", "results.db", "out.json", "k.ir", "suite.toml", "nightly", "last", "A=rand"},
	}
	badValues = map[string][]string{
		"int":      {"-1", "2147483648", "99999999999999999999", "1e3", "x", ""},
		"float":    {"-1", "1e400", "NaN", "Inf", "abc", ""},
		"duration": {"0s", "-1s", "1h", "5", "x", ""},
		"string": {"ref", "opencl:7", "ze:0", "all:gpu", "/nonexistent/dir/file", "sub/dir/out.csv", "%%%", "é∑", "-1",
			"a,b", "1/4", strings.Repeat("x", 300)},
	}
	positionals = []string{"k.ir", "k.ir", "suite.toml", "nightly", "results.db", "x.db", "missing.ir", "", "-", "1", "--"}
)

// validBase is a command line of each command that does its work, which
// most random invocations start from.
var validBase = map[string][]string{
	"check": {"k.ir"}, "compile": {"k.ir"}, "fmt": {"k.ir"},
	"run": {"k.ir", "--func", "gemm", "--arg", "alpha=1", "--arg", "beta=0", "--arg", "A=rand", "--arg", "B=rand",
		"--arg", "C=zeros", "--groups", "2"},
	"gemm": {"--m", "20", "--n", "5", "--k", "7"}, "gemv": {"--m", "20", "--n", "5"}, "ger": {"--m", "20", "--n", "5"},
	"history": {"--op", "gemm"}, "regress": {"--baseline", "1"}, "replay": {"--run", "1"}, "export": {"--run", "1"},
	"roofline": {"-o", "out.svg"}, "sweep": {"suite.toml"}, "slurm": {"suite.toml", "--array", "2"},
	"merge": {"out.db", "results.db"},
}

// randomInvocation is a random command line of name: a valid one, mostly,
// with a few of its flags with drawn values and a few arguments added. usage says it holds an error
// that must be reported as one usage line (it comes first, so nothing
// else is reached).
func randomInvocation(rng *rand.Rand, name string, flags []cliFlag) (args []string, usage bool) {
	args = []string{name}
	defer func() {
		if !usage && rng.IntN(4) > 0 {
			args = slices.Insert(args, 1, validBase[name]...)
		}
	}()
	switch rng.IntN(10) {
	case 0:
		args, usage = append(args, "--no-such-flag"), true
	case 1:
		if numeric := numericFlags(flags); len(numeric) > 0 {
			f := numeric[rng.IntN(len(numeric))]
			args, usage = append(args, "--"+f.name+"=not-a-number"), true
		}
	}
	for range rng.IntN(4) {
		if len(flags) == 0 || rng.IntN(5) == 0 {
			args = append(args, positionals[rng.IntN(len(positionals))])
			continue
		}
		f := flags[rng.IntN(len(flags))]
		dash := "--"
		if rng.IntN(2) == 0 {
			dash = "-"
		}
		values := valuesOf(rng, f.kind)
		if named := valuesByName[f.name]; named != nil && rng.IntN(5) > 0 {
			values = named
		}
		switch {
		case values == nil: // a boolean
			args = append(args, dash+f.name+[]string{"", "=true", "=false", "=maybe"}[rng.IntN(4)])
		case rng.IntN(2) == 0:
			args = append(args, dash+f.name+"="+values[rng.IntN(len(values))])
		default:
			args = append(args, dash+f.name, values[rng.IntN(len(values))])
		}
	}
	if name == "run" {
		// The last --timeout wins: a drawn --groups can make the interpreter
		// run for hours, and it must stop the test's way, not the user's.
		args = append(args, "--timeout=2s")
	}
	return args, usage
}

func numericFlags(flags []cliFlag) []cliFlag {
	var numeric []cliFlag
	for _, f := range flags {
		if f.kind == "int" || f.kind == "uint" || f.kind == "float" || f.kind == "duration" {
			numeric = append(numeric, f)
		}
	}
	return numeric
}

// valuesOf is the values of a flag of kind: nil for a boolean, bad ones
// one time in six.
func valuesOf(rng *rand.Rand, kind string) []string {
	switch kind {
	case "":
		return nil
	case "uint", "int64", "uint64":
		kind = "int"
	case "int", "float", "duration":
	default:
		kind = "string"
	}
	if rng.IntN(6) == 0 {
		return badValues[kind]
	}
	return goodValues[kind]
}

// stackTrace matches what a panic or a Go runtime error prints.
var stackTrace = regexp.MustCompile(`internal error|panic:|goroutine \d+|runtime error|\.go:\d+`)

// checkAnswer fails the test for an undocumented status, a panic or a
// stack trace, and for a usage error not reported as one.
func checkAnswer(t *testing.T, args []string, usage bool, status int, stdout, stderr string) {
	t.Helper()
	cmdline := fmt.Sprintf("tltune %q", args)
	allowed := []int{exitOK, exitUsage, exitRuntime}
	if args[0] == "regress" {
		allowed = append(allowed, exitRegression)
	}
	switch {
	case !slices.Contains(allowed, status):
		t.Errorf("%s: status %d\nstderr: %s", cmdline, status, stderr)
	case stackTrace.MatchString(stderr) || stackTrace.MatchString(stdout):
		t.Errorf("%s: a panic or stack trace:\n%s%s", cmdline, stdout, stderr)
	case usage && (status != exitUsage || strings.Count(stderr, "\n") != 1):
		t.Errorf("%s: a usage error answered with status %d and %q; want status 2 and one line", cmdline, status, stderr)
	case status != exitOK && stderr == "" && stdout == "": // --json answers on stdout
		t.Errorf("%s: status %d without a word", cmdline, status)
	}
}
