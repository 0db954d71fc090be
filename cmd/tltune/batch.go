package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/device"
	"tltune/tuner/bincache"
	"tltune/tuner/worker"
)

// newBatcher is the tuner's Compiler for a shape of the run: tltune's
// compiler for the device with copts (the shape's precision),
// --kernels-per-program configurations to a program, built in the run's
// worker (on a CPU device when measured), each kernel with its key in the
// binary cache.
func newBatcher(r *tuneRun, copts compiler.Options) *worker.Batcher {
	return &worker.Batcher{
		Client:      r.worker,
		Size:        r.flags.kernelsPerProgram,
		Lazy:        r.info.Type == "cpu",
		CompileMany: formCompiler(r.info, copts),
		CacheKey:    r.kernelKey(copts),
		Quiet:       batchQuiet,
	}
}

// batchQuiet, unless zero, is how long a batch waits for another
// configuration before it is compiled short. Tests that count builds set
// it long: on a loaded machine a few milliseconds between two
// configurations would otherwise split a batch, and the count with it.
var batchQuiet time.Duration

// kernelKey is the binary-cache key of a kernel compiled with copts, by
// the form of its program and the hash of its tensor-language source.
func (r *tuneRun) kernelKey(copts compiler.Options) func(path devcall.Path, hash string) string {
	id := r.compileID(copts)
	return func(path devcall.Path, hash string) string {
		return bincache.Key("kernel", id, string(path), hash)
	}
}

// compileID is what a kernel's binary depends on beyond its source: the
// device, its driver and runtime, the target, this tltune build, and the
// precision, since a tf32 kernel is compiled from the same source.
func (r *tuneRun) compileID(copts compiler.Options) string {
	target := copts.Target
	if target == "" {
		target = "from the device"
	}
	return bincache.Key(r.info.Name, r.info.Driver, r.info.Runtime, target, copts.Precision, executableHash())
}

// formCompiler compiles programs into the form the device builds. Once a
// program has gone the SPIR-V path, later ones are compiled to SPIR-V
// alone: the path depends on the device and the target, which stay, and
// writing the unused OpenCL C cost a third of tltune's compile time. With
// copts.PTX (--ptx), a program the PTX writer covers goes as PTX.
func formCompiler(info device.Info, copts compiler.Options) func(srcs [][]byte, names []string) (devcall.Form, error) {
	var spirvOnly atomic.Bool
	return func(srcs [][]byte, names []string) (devcall.Form, error) {
		o := copts
		o.SPIRVOnly = spirvOnly.Load()
		res, err := compiler.CompileMany(srcs, names, o)
		if err != nil {
			return devcall.Form{}, err
		}
		if copts.PTX {
			if form, err := devcall.PTXForm(res); err == nil {
				return form, nil
			}
		}
		form, err := devcall.FormOf(info, res)
		if err == nil && form.Path == devcall.PathSPIRV {
			spirvOnly.Store(true)
		}
		return form, err
	}
}

// executableHash identifies this tltune build: a kernel's binary depends
// on the compiler that wrote its OpenCL C or SPIR-V, which a rebuilt
// tltune may change under the same version and commit.
var executableHash = sync.OnceValue(func() string {
	h := sha256.New()
	if exe, err := os.Executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			io.Copy(h, f)
			f.Close()
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
})
