package main

import (
	"fmt"
	"io"
	"sort"
)

func init() {
	register(&command{
		name:    "help",
		summary: "print this list; 'tltune help COMMAND' (or 'tltune COMMAND -h') a command's flags",
		usage:   "[COMMAND]",
		run:     helpCmd,
	})
}

// helpCmd is `tltune help [COMMAND]`: the list of commands, or one
// command's usage, flags and notes (what COMMAND -h prints). help and
// version are commands like the others, so it describes them too.
func helpCmd(c *context, args []string) int {
	fs := c.flags()
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	switch {
	case fs.NArg() == 0:
		printHelp(c.stdout)
		return exitOK
	case fs.NArg() > 1:
		return c.usageError("name one command, got %d arguments", fs.NArg())
	}
	name := fs.Arg(0)
	named, ok := commands[name]
	if !ok {
		fmt.Fprintf(c.stderr, "tltune help: unknown command %q; run 'tltune help' for the list\n", name)
		return exitUsage
	}
	return named.run(&context{stdout: c.stdout, stderr: c.stderr, cmd: named}, []string{"-h"})
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "tltune: autotuning benchmark harness for tensor-language GEMM, GEMV and GER kernels")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: tltune COMMAND [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "--device, wherever a command takes it: an index or a name substring from 'tltune devices', opencl:N, ze:N,")
	fmt.Fprintln(w, "or ref (the reference interpreter, for run); commands that read stored results match other machines' devices by name.")
	fmt.Fprintln(w, "Times print as 944.2 ns, 4.100 µs, 1 min 05 s; --json prints what a command reports as JSON (docs/json.md).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, exitHelp)
}
