package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"tltune/compiler/diag"
	"tltune/compiler/printer"
	"tltune/compiler/syntax"
)

func init() {
	register(&command{
		name:    "fmt",
		summary: "print tensor-language files in canonical form, comments kept (-w: rewrite them); convert between dialects",
		usage:   "[-w] [--from D] [--to current|released] FILE...",
		run:     runFmt,
	})
}

func runFmt(c *context, args []string) int {
	fs := c.flags()
	var o fmtOptions
	fs.BoolVar(&o.write, "w", false, "rewrite each file in place instead of printing it")
	o.from = dialectFlag(fs, "from")
	fs.Var(dialectValue{o.from}, "dialect", "the same as --from")
	to := fs.String("to", "current", "the dialect to write: current (tltune's canonical form) or released (tinytc v0.4 and later)")
	files, status, ok := parseInterleaved(c, fs, args)
	if !ok {
		return status
	}
	switch *to {
	case "current":
	case "released":
		o.released = true
	default:
		return c.usageError("--to %s: write current or released (the legacy dialect is only read)", *to)
	}
	if len(files) == 0 {
		return c.usageError("no input files")
	}
	for _, file := range files {
		switch err := formatFile(c, file, o); {
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

type fmtOptions struct {
	write    bool            // rewrite the files
	from     *syntax.Dialect // the dialect to read
	released bool            // write the released dialect
}

// formatFile formats one file. Only syntax matters: fmt formats programs
// the verifier would reject, like gofmt formats code that does not compile.
func formatFile(c *context, file string, o fmtOptions) error {
	src, err := readSource(file)
	if err != nil {
		return err
	}
	prog, errs := parseOnly(file, src, *o.from)
	if len(errs) > 0 {
		if err := diag.Print(c.stderr, file, src, errs); err != nil {
			return err
		}
		return errReported
	}
	text := printer.String(prog)
	if o.released {
		if text, err = printer.Released(prog); err != nil {
			return fmt.Errorf("%s:%w", file, err)
		}
	}
	out := []byte(text)
	if !o.write {
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
