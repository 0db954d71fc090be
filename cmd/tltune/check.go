package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"

	"tltune/compiler/check"
	"tltune/compiler/diag"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
	"tltune/internal/speak"
)

func init() {
	register(&command{
		name:    "check",
		summary: "parse and verify tensor-language files; print every error",
		usage:   "[--dialect D] [--json] FILE...",
		run:     runCheck,
	})
}

func runCheck(c *context, args []string) int {
	fs := c.flags()
	dialect := dialectFlag(fs, "dialect")
	asJSON := fs.Bool("json", false, "print the errors as JSON on stdout (docs/json.md): {\"errors\": [{file, line, column, message}]}")
	files, status, ok := parseInterleaved(c, fs, args)
	if !ok {
		return status
	}
	if len(files) == 0 {
		return c.usageError("no input files")
	}
	all := []diag.JSON{}
	for _, file := range files {
		src, err := readSource(file)
		switch {
		case err != nil && *asJSON:
			all = append(all, diag.JSON{File: file, Message: err.Error()})
			status = max(status, exitStatus(err))
			continue
		case err != nil:
			status = max(status, c.fail(err))
			continue
		}
		_, errs := frontEnd(file, src, *dialect)
		if len(errs) == 0 {
			continue
		}
		status = max(status, exitUsage)
		if *asJSON {
			all = append(all, diag.JSONOf(file, errs)...)
		} else if err := diag.Print(c.stderr, file, src, errs); err != nil {
			return c.fail(err)
		}
	}
	if *asJSON {
		if err := speak.WriteJSON(c.stdout, struct {
			Errors []diag.JSON `json:"errors"`
		}{all}); err != nil {
			return c.fail(err)
		}
		if status != exitOK {
			// A failing command always says so on stderr, also when the
			// errors themselves go to stdout.
			fmt.Fprintf(c.stderr, "tltune check: %d errors, as JSON on standard output\n", len(all))
		}
	}
	return status
}

// dialectFlag adds the flag that chooses the dialect files are read in
// (default auto: by their spellings, syntax.Detect).
func dialectFlag(fs *flag.FlagSet, name string) *syntax.Dialect {
	d := syntax.Auto
	fs.Var(dialectValue{&d}, name, "the dialect of the input: current (tltune's), released (tinytc v0.4 and later), legacy, or auto (detected from the spellings)")
	return &d
}

type dialectValue struct{ d *syntax.Dialect }

func (v dialectValue) String() string {
	if v.d == nil {
		return syntax.Auto.String()
	}
	return v.d.String()
}

func (v dialectValue) Set(s string) error {
	d, err := syntax.DialectByName(strings.ToLower(s))
	if err == nil {
		*v.d = d
	}
	return err
}

// frontEnd parses src in dialect d and verifies it.
func frontEnd(file string, src []byte, d syntax.Dialect) (*ir.Program, diag.List) {
	return guarded(file, func() (*ir.Program, diag.List) {
		prog, errs := syntax.Read(src, d)
		if len(errs) == 0 {
			errs = check.Program(prog, nil)
		}
		return prog, errs
	})
}

// readSource reads a tensor-language file. A binary file (one holding a
// NUL byte) is refused in one line: parsed, it would give an error for
// nearly every byte.
func readSource(file string) ([]byte, error) {
	src, err := os.ReadFile(file)
	if err == nil && bytes.IndexByte(src, 0) >= 0 {
		err = inputError{fmt.Errorf("%s is not tensor-language source: it holds NUL bytes (a binary file?)", file)}
	}
	return src, err
}

// parseOnly parses src in dialect d without verifying it.
func parseOnly(file string, src []byte, d syntax.Dialect) (*ir.Program, diag.List) {
	return guarded(file, func() (*ir.Program, diag.List) { return syntax.Read(src, d) })
}

// guarded runs a front-end step. An internal fault is recovered and
// reported as an error at the start of the file, so that a compiler bug
// never turns into a stack trace for the user.
func guarded(file string, step func() (*ir.Program, diag.List)) (prog *ir.Program, errs diag.List) {
	defer func() {
		if r := recover(); r != nil {
			prog = nil
			errs = diag.List{{Pos: ir.Pos{Line: 1, Col: 1}, Msg: fmt.Sprintf("internal compiler error while reading %s: %v (please report it with this file)", file, r)}}
		}
	}()
	return step()
}
