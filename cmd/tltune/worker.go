package main

import (
	"os"
	"os/exec"

	"tltune/tuner/worker"
)

func init() {
	register(&command{
		name:    "worker",
		summary: "internal: the driver process of a tuning run (builds, launches, timing), started by gemm, gemv, ger and sweep; not for use by hand",
		usage:   "(no arguments; the tuning commands start it with its pipes)",
		run:     workerCmd,
	})
}

// workerLauncher runs tltune itself in its worker mode; tests replace it,
// since there the executable is the test binary.
var workerLauncher worker.Launcher = func() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return worker.Command(exe, "worker")
}

func workerCmd(c *context, args []string) int {
	fs := c.flags()
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	requests, replies, err := worker.Pipes()
	if err != nil {
		return c.usageError("%v", err)
	}
	faults, err := worker.ParseFaults(os.Getenv(worker.FaultEnv))
	if err != nil {
		return c.usageError("%v", err)
	}
	s := &worker.Server{Open: openDevice, Faults: faults, Launch: workerLauncher}
	if err := s.Serve(requests, replies); err != nil {
		return c.fail(err)
	}
	return exitOK
}
