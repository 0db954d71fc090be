package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"tltune/compiler/diag"
	"tltune/compiler/printer"
)

func init() {
	register(&command{
		name:    "fmt",
		summary: "print tensor-language files in canonical form, comments kept (-w: rewrite them)",
		usage:   "[-w] FILE...",
		run:     runFmt,
	})
}

func runFmt(c *context, args []string) int {
	fs := c.flags()
	write := fs.Bool("w", false, "rewrite each file in place instead of printing it")
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() == 0 {
		return c.usageError("no input files")
	}
	status := exitOK
	for _, file := range fs.Args() {
		switch err := formatFile(c, file, *write); {
		case err == errReported:
			status = max(status, exitUsage)
		case err != nil:
			status = max(status, c.fail(err))
		}
	}
	return status
}

// errReported says the diagnostics were already printed.
var errReported = fmt.Errorf("reported")

// formatFile formats one file. Only syntax matters: fmt formats programs
// the verifier would reject, like gofmt formats code that does not compile.
func formatFile(c *context, file string, write bool) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	prog, errs := parseOnly(file, src)
	if len(errs) > 0 {
		if err := diag.Print(c.stderr, file, src, errs); err != nil {
			return err
		}
		return errReported
	}
	out := []byte(printer.String(prog))
	if !write {
		_, err := c.stdout.Write(out)
		return err
	}
	if bytes.Equal(out, src) {
		return nil
	}
	return replaceFile(file, out)
}

// replaceFile writes data to a temporary file next to file and renames it
// over file, so an interrupted write never leaves a truncated kernel.
func replaceFile(file string, data []byte) error {
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tltune-fmt-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
