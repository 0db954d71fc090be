package main

import (
	"fmt"
	"strings"
)

func init() {
	register(&command{
		name:    "version",
		summary: "print the version and commit",
		run:     versionCmd,
	})
}

// versionCmd is `tltune version` (or --version). It takes no arguments:
// one given by mistake is refused rather than ignored.
func versionCmd(c *context, args []string) int {
	fs := c.flags()
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintln(c.stdout, "tltune", versionString())
	return exitOK
}

// versionString is the version, and the commit when known, e.g.
// "v0.3.0 (commit 0123456789ab+dirty)".
func versionString() string {
	version, commit := buildVersion()
	if commit == "" {
		return version
	}
	short, dirty := strings.CutSuffix(commit, "+dirty")
	if len(short) > 12 {
		short = short[:12]
	}
	if dirty {
		short += "+dirty"
	}
	return fmt.Sprintf("%s (commit %s)", version, short)
}
