package main

import (
	stdcontext "context" // the package main type context is the command context
	"io"
	"slices"
	"strings"

	"tltune/results"
)

func init() {
	register(&command{
		name:    "export",
		summary: "write the measurements of a stored run, raw samples included, as CSV or JSON (with the pruned counts)",
		usage:   "[--run RUN|TAG|last] [--format csv|json] [--outcome ok,...] [--db PATH] [-o FILE]",
		run:     exportCmd,
	})
}

func exportCmd(c *context, args []string) int {
	fs := c.flags()
	ref := fs.String("run", "last", "run to export: an id, a tag (its latest run) or last")
	format := fs.String("format", "csv", "output format: "+strings.Join(results.ExportFormats, ", "))
	out := fs.String("o", "", "write to `FILE` (default: stdout)")
	outcomes := fs.String("outcome", "", "only measurements with these outcomes, comma-separated: "+results.OutcomeNames()+" (default: all)")
	db := dbFlag(fs)
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	if !slices.Contains(results.ExportFormats, *format) {
		return c.usageError("--format %q: want one of %s", *format, strings.Join(results.ExportFormats, ", "))
	}
	var only []results.Outcome
	if *outcomes != "" {
		var err error
		if only, err = results.ParseOutcomes(*outcomes); err != nil {
			return c.usageError("--outcome: %v", err)
		}
	}
	store, err := openStore(*db, false)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	ctx := stdcontext.Background()
	run, err := store.ResolveRun(ctx, *ref)
	if err != nil {
		return c.fail(err)
	}
	err = writeOutput(c.stdout, *out, func(w io.Writer) error {
		return store.Export(ctx, w, run.ID, *format, only)
	})
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}
