package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// Exit statuses shared by every command.
const (
	exitOK    = 0
	exitFail  = 1 // the command ran and found a problem (invalid kernel, regression, runtime error)
	exitUsage = 2 // bad flags or impossible arguments
)

// A command is one verb of the command line. Each lives in its own file and
// registers itself from init, so commands never edit a shared table.
type command struct {
	name    string
	summary string // one line for `tltune help`
	usage   string // argument synopsis, after "tltune NAME "
	run     func(c *context, args []string) int
}

// context carries the output streams of one invocation.
type context struct {
	stdout, stderr io.Writer
	cmd            *command
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("tltune: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// run executes the command line args and returns the exit status. An internal
// fault in a command is recovered and reported as one line, never as a stack
// trace.
func run(args []string, stdout, stderr io.Writer) (status int) {
	if len(args) == 0 {
		printHelp(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		printHelp(stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "tltune", versionString())
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "tltune: unknown command %q; run 'tltune help' for the list\n", name)
		return exitUsage
	}
	ctx := &context{stdout: stdout, stderr: stderr, cmd: c}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tltune %s: internal error: %v (please report it with the command line)\n", name, r)
			if os.Getenv("TLTUNE_TRACE") != "" {
				stderr.Write(debug.Stack())
			}
			status = exitFail
		}
	}()
	return c.run(ctx, args[1:])
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
	fmt.Fprintf(w, "  %-10s %s\n", "help", "print this list; 'tltune COMMAND -h' shows a command's flags")
	fmt.Fprintf(w, "  %-10s %s\n", "version", "print the version and commit")
}

// flags returns a flag set for the command whose errors go to stderr as one
// line; parse reports failures with exitUsage.
func (c *context) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("tltune "+c.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args into fs. It returns ok=false and the exit status when the
// command must stop: -h prints the flags and succeeds, a bad flag is one line
// and exitUsage.
func (c *context) parse(fs *flag.FlagSet, args []string) (status int, ok bool) {
	err := fs.Parse(args)
	if err == nil {
		return exitOK, true
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(c.stdout, "usage: tltune %s %s\n\n%s\n\nflags:\n", c.cmd.name, c.cmd.usage, c.cmd.summary)
		fs.SetOutput(c.stdout)
		fs.PrintDefaults()
		return exitOK, false
	}
	return c.usageError("%v", err), false
}

// usageError prints one line about bad arguments and returns exitUsage.
func (c *context) usageError(format string, a ...any) int {
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintf(c.stderr, "tltune %s: %s (see 'tltune %s -h')\n", c.cmd.name, msg, c.cmd.name)
	return exitUsage
}

// fail prints err as one line and returns exitFail.
func (c *context) fail(err error) int {
	fmt.Fprintf(c.stderr, "tltune %s: %s\n", c.cmd.name, strings.TrimSpace(err.Error()))
	return exitFail
}

func versionString() string {
	version, commit := buildVersion()
	if len(commit) > 12 {
		commit = commit[:12]
	}
	return strings.TrimSpace(version + " " + commit)
}
