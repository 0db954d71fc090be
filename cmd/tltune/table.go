package main

import (
	stdcontext "context" // the package main type context is the command context
	"fmt"
	"slices"
	"strings"

	"tltune/results"
)

func init() {
	register(&command{
		name:    "table",
		summary: "export the best verified configuration per shape and device as the compiler's tuning table",
		usage:   "[-o tuning.json] [--db PATH] [--device D] [--op gemm|gemv|ger]",
		run:     tableCmd,
	})
}

// tunedOps are the operations a tuning table has entries for.
var tunedOps = []string{"gemm", "gemv", "ger"}

func tableCmd(c *context, args []string) int {
	fs := c.flags()
	out := fs.String("o", "", "write the table to `FILE` (default: stdout)")
	db := dbFlag(fs)
	device := storedDeviceFlag(fs, "every device")
	op := fs.String("op", "", "only this operation: "+strings.Join(tunedOps, ", "))
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	if *op != "" && !slices.Contains(tunedOps, *op) {
		return c.usageError("--op %q: want one of %s", *op, strings.Join(tunedOps, ", "))
	}
	devices, err := storedDevice(*device)
	if err != nil {
		return c.usageError("%v", err)
	}
	store, err := openStore(*db, false)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	table, err := store.TuningTable(stdcontext.Background(), results.Filter{Device: devices, Op: *op})
	if err != nil {
		return c.fail(err)
	}
	if len(table.Entries) == 0 {
		return c.fail(inputError{fmt.Errorf("no verified measurement in %s matches%s; nothing written", store.Path(), describeFilter(devices, *op))})
	}
	if err := writeOutput(c.stdout, *out, table.Encode); err != nil {
		return c.fail(err)
	}
	if *out != "" {
		fmt.Fprintf(c.stdout, "%s: %d entries\n", *out, len(table.Entries))
	}
	return exitOK
}

// describeFilter names the filters in a "nothing found" message; the
// message must say whether a filter or the database is the reason.
func describeFilter(device results.DeviceMatch, op string) string {
	var w strings.Builder
	if device.Name != "" {
		fmt.Fprintf(&w, " --device %q", device.Name)
	}
	if op != "" {
		fmt.Fprintf(&w, " --op %s", op)
	}
	if w.Len() == 0 {
		return " (it holds no ok measurement yet)"
	}
	return w.String()
}
