package main

import (
	stdctx "context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"tltune/device"
	"tltune/results"
)

// Exit statuses, the same for every command; `tltune help` lists them
// (exitHelp).
const (
	exitOK          = 0
	exitRegression  = 1   // regress only: a statistically confirmed regression
	exitUsage       = 2   // bad flags or arguments, or bad input: a kernel with errors, a missing database or run, a space with nothing to run
	exitRuntime     = 3   // the device, driver, store or system failed, or nothing ran correctly
	exitInterrupted = 130 // interrupted (Ctrl-C, or SIGTERM); a tuning run can be resumed
)

// exitHelp is the exit-status legend of `tltune help`.
const exitHelp = `exit status (every command):
  0    ok
  1    regress only: a statistically confirmed regression
  2    usage or input error: bad flags or arguments, a kernel with errors, a missing database, run or file,
       or a search space that leaves nothing to evaluate
  3    runtime failure: the device, driver, store or system failed, or no configuration ran correctly
  130  interrupted (Ctrl-C, or SIGTERM as timeout and Slurm send); a tuning run continues with --resume`

// interruptible is the context of a tuning run or sweep, cancelled by
// Ctrl-C or SIGTERM (what timeout, Slurm's scancel and a job's time limit
// send): the run is then recorded as interrupted, to be resumed, and the
// command exits with exitInterrupted.
func interruptible() (stdctx.Context, stdctx.CancelFunc) {
	return signal.NotifyContext(stdctx.Background(), os.Interrupt, syscall.SIGTERM)
}

// A command is one verb of the command line. Each lives in its own file and
// registers itself from init, so commands never edit a shared table.
type command struct {
	name    string
	summary string // one line for `tltune help`
	usage   string // argument synopsis, after "tltune NAME "
	more    string // printed after the flags by -h and `tltune help NAME`, e.g. a legend
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
	case "-h", "-help", "--help":
		name = "help"
	case "--version":
		name = "version"
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
			status = exitRuntime
		}
	}()
	return c.run(ctx, args[1:])
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
		synopsis := strings.TrimSpace("tltune " + c.cmd.name + " " + c.cmd.usage) // version has no usage
		fmt.Fprintf(c.stdout, "usage: %s\n\n%s\n", synopsis, c.cmd.summary)
		if hasFlags(fs) {
			fmt.Fprintf(c.stdout, "\nflags:\n")
			fs.SetOutput(c.stdout)
			fs.PrintDefaults()
		}
		if c.cmd.more != "" {
			fmt.Fprintf(c.stdout, "\n%s", c.cmd.more)
		}
		return exitOK, false
	}
	return c.usageError("%v", err), false
}

// hasFlags reports whether fs defines any flag: help and version define
// none, and their -h lists none.
func hasFlags(fs *flag.FlagSet) bool {
	found := false
	fs.VisitAll(func(*flag.Flag) { found = true })
	return found
}

// usageError prints one line about bad arguments and returns exitUsage.
func (c *context) usageError(format string, a ...any) int {
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintf(c.stderr, "tltune %s: %s (see 'tltune %s -h')\n", c.cmd.name, msg, c.cmd.name)
	return exitUsage
}

// fail prints err as one line and returns its exit status (exitStatus).
func (c *context) fail(err error) int {
	fmt.Fprintf(c.stderr, "tltune %s: %s\n", c.cmd.name, strings.TrimSpace(err.Error()))
	return exitStatus(err)
}

// An inputError is an error in what the user gave a command (a file, a
// suite, the contents of the store it names) rather than a failure of the
// device or the system.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

// exitStatus is exitUsage for an error in the input — an inputError, a
// file that cannot be read, a folder given for a file or a file for a
// folder, a device, database or run that does not exist or cannot be used
// — and exitRuntime for anything else.
func exitStatus(err error) int {
	var in inputError
	for _, input := range []error{results.ErrNoDatabase, results.ErrNotDatabase, results.ErrNewerSchema, results.ErrNoRun,
		device.ErrNoMatch, device.ErrSpec, fs.ErrNotExist, fs.ErrPermission, syscall.EISDIR, syscall.ENOTDIR} {
		if errors.Is(err, input) {
			return exitUsage
		}
	}
	if errors.As(err, &in) {
		return exitUsage
	}
	return exitRuntime
}
