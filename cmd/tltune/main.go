// Command tltune tunes, verifies and benchmarks batched GEMM, GEMV and GER
// kernels written in the tensor language.
//
// main is a thin wrapper over run so that every command can be tested in
// process: run takes the arguments and the two output streams and returns the
// exit status.
package main

import (
	"os"

	"tltune/internal/gcpace"
)

func main() {
	gcpace.Relax()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
