package worker

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"tltune/device"
)

// TestMain makes the test binary a worker with a fake device when a test's
// client starts it (see launchFake).
func TestMain(m *testing.M) {
	if in, out, err := Pipes(); err == nil {
		faults, err := ParseFaults(os.Getenv(FaultEnv))
		if err != nil {
			panic(err)
		}
		s := &Server{Open: openFake, Faults: faults, Launch: launchFake(fakeBuilderEnv + "=1")}
		if err := s.Serve(in, out); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// launchFake starts this test binary as a worker, with extra environment.
func launchFake(env ...string) Launcher {
	return func() *exec.Cmd {
		cmd := Command(os.Args[0])
		cmd.Env = append(cmd.Env, env...)
		return cmd
	}
}

// The fake device: buffers in host memory, programs whose source says how
// they behave, kernels that do nothing and take 1000 ns.
type fakeDevice struct{}

func openFake(spec string) (device.Device, error) {
	if spec != "fake" {
		return nil, errors.New("no device " + spec)
	}
	return fakeDevice{}, nil
}

func (fakeDevice) Info() device.Info {
	return device.Info{ID: "fake:0", Name: "Fake Device", Type: "gpu", Runtime: device.OpenCL}
}

func (fakeDevice) Alloc(size int64) (device.Buffer, error) {
	return &fakeBuffer{data: make([]byte, size)}, nil
}

// fakeBuilderEnv marks the worker's builder processes, for
// "CRASH_IN_BUILDER".
const fakeBuilderEnv = "TLTUNE_FAKE_BUILDER"

// BuildSource fails for a source containing "BUILD_FAIL", takes 400 ms
// for "SLEEP_BUILD" and forever for "SLOW_BUILD", and crashes the worker
// for "CRASH_BUILD", a builder process for "CRASH_IN_BUILDER".
func (fakeDevice) BuildSource(src, _ string) (device.Program, error) {
	switch {
	case src == warmProgram:
		noteWarmUp()
	case strings.Contains(src, "CRASH_IN_BUILDER") && os.Getenv(fakeBuilderEnv) == "1":
		nullWrite()
	case strings.Contains(src, "BUILD_FAIL"):
		return nil, &device.BuildError{Log: "error: fake build failure", Err: errors.New("CL_BUILD_PROGRAM_FAILURE")}
	case strings.Contains(src, "SLEEP_BUILD"):
		time.Sleep(400 * time.Millisecond)
	case strings.Contains(src, "SLOW_BUILD"):
		time.Sleep(time.Hour)
	case strings.Contains(src, "CRASH_BUILD"):
		nullWrite()
	}
	return fakeProgram{}, nil
}

// fakeWarmEnv names a file to which each fake warm-up build appends a line.
const fakeWarmEnv = "TLTUNE_FAKE_WARM_FILE"

func noteWarmUp() {
	if name := os.Getenv(fakeWarmEnv); name != "" {
		if f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString("warm-up\n")
			f.Close()
		}
	}
}

func (d fakeDevice) BuildSPIRV(spv []byte, opts string) (device.Program, error) {
	return d.BuildSource(string(spv), opts)
}

func (d fakeDevice) BuildSPIR(bc []byte, opts string) (device.Program, error) {
	return d.BuildSource(string(bc), opts)
}

func (d fakeDevice) BuildBinary(bin []byte, opts string) (device.Program, error) {
	return d.BuildSource(string(bin), opts)
}

func (fakeDevice) Close() error { return nil }

type fakeBuffer struct{ data []byte }

func (b *fakeBuffer) Size() int64            { return int64(len(b.data)) }
func (b *fakeBuffer) Write(src []byte) error { copy(b.data, src); return nil }
func (b *fakeBuffer) Read(dst []byte) error  { copy(dst, b.data); return nil }
func (b *fakeBuffer) Fill(p []byte) error {
	for i := range b.data {
		b.data[i] = p[i%len(p)]
	}
	return nil
}
func (b *fakeBuffer) WriteRepeated(p []byte) error { return b.Fill(p) }
func (b *fakeBuffer) Release() error               { return nil }

type fakeProgram struct{}

func (fakeProgram) Log() string                          { return "" }
func (fakeProgram) Binary() ([]byte, error)              { return []byte("fake binary"), nil }
func (fakeProgram) Kernel(string) (device.Kernel, error) { return fakeKernel{}, nil }
func (fakeProgram) Release() error                       { return nil }

type fakeKernel struct{}

func (fakeKernel) SetArgs(...device.Arg) error               { return nil }
func (fakeKernel) Launch([]int, []int) (device.Event, error) { return fakeEvent{}, nil }
func (fakeKernel) Release() error                            { return nil }

type fakeEvent struct{}

func (fakeEvent) Wait() error                 { return nil }
func (fakeEvent) Nanoseconds() (int64, error) { return 1000, nil }
func (fakeEvent) Release() error              { return nil }
