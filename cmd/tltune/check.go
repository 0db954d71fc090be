package main

import (
	"fmt"
	"os"

	"tltune/compiler/check"
	"tltune/compiler/diag"
	"tltune/compiler/ir"
	"tltune/compiler/syntax"
)

func init() {
	register(&command{
		name:    "check",
		summary: "parse and verify tensor-language files; print every error",
		usage:   "FILE...",
		run:     runCheck,
	})
}

func runCheck(c *context, args []string) int {
	fs := c.flags()
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() == 0 {
		return c.usageError("no input files")
	}
	status := exitOK
	for _, file := range fs.Args() {
		src, err := os.ReadFile(file)
		if err != nil {
			status = c.fail(err)
			continue
		}
		if _, errs := frontEnd(file, src); len(errs) > 0 {
			if err := diag.Print(c.stderr, file, src, errs); err != nil {
				return c.fail(err)
			}
			status = exitUsage
		}
	}
	return status
}

// frontEnd parses and verifies src.
func frontEnd(file string, src []byte) (*ir.Program, diag.List) {
	return guarded(file, func() (*ir.Program, diag.List) {
		prog, errs := syntax.Parse(src)
		if len(errs) == 0 {
			errs = check.Program(prog, nil)
		}
		return prog, errs
	})
}

// parseOnly parses src without verifying it.
func parseOnly(file string, src []byte) (*ir.Program, diag.List) {
	return guarded(file, func() (*ir.Program, diag.List) { return syntax.Parse(src) })
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
