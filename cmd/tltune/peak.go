package main

import (
	stdctx "context"
	"fmt"
	"io"

	"tltune/device"
	"tltune/internal/speak"
	"tltune/results"
)

func init() {
	register(&command{
		name:    "peak",
		summary: "measure the device's ceilings: copy bandwidth, FMA throughput (f32, f64, f16) and, on NVIDIA, the tensor cores",
		usage:   "[--device D] [--json] [--copy-mib N] [--repeats N] [--db PATH | --no-store]",
		run:     peakCmd,
	})
}

func peakCmd(c *context, args []string) int {
	fs := c.flags()
	spec := deviceFlag(fs)
	asJSON := fs.Bool("json", false, "print the ceilings and every raw sample as JSON")
	copyMiB := fs.Int("copy-mib", 0, "size of each copy buffer in MiB (default: ≥ 256 MiB and 4× the cache on GPUs, 64 MiB on CPUs)")
	repeats := fs.Int("repeats", 10, "timed launches per ceiling; the median is reported")
	db := dbFlag(fs)
	noStore := fs.Bool("no-store", false, "do not record the ceilings in the results database")
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	if *copyMiB < 0 || *repeats < 1 {
		return c.usageError("--copy-mib must be ≥ 0 and --repeats ≥ 1")
	}
	d, err := openDevice(*spec)
	if isReference(err) {
		return c.usageError("the reference interpreter has no ceilings to measure; pick a device")
	}
	if err != nil {
		return c.fail(err)
	}
	defer d.Close()
	peak, err := device.MeasurePeak(d, device.PeakOptions{CopyBytes: int64(*copyMiB) << 20, Repeats: *repeats})
	if err != nil {
		return c.fail(err)
	}
	if !*noStore {
		path, err := recordCeilings(*db, d.Info(), peak)
		if err != nil {
			return c.fail(err)
		}
		defer fmt.Fprintf(c.stderr, "ceilings recorded in %s\n", path)
	}
	if *asJSON {
		err = speak.WriteJSON(c.stdout, peak)
	} else {
		err = writePeakTable(c.stdout, peak)
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

// recordCeilings stores the measured ceilings for the device's environment,
// where the roofline chart and the reports read them, and returns the
// database's path.
func recordCeilings(db string, info device.Info, p device.Peak) (string, error) {
	st, err := openStore(db, true)
	if err != nil {
		return "", err
	}
	defer st.Close()
	_, err = storeCeilings(st, info, p)
	return st.Path(), err
}

// storeCeilings records p in st for the device's environment and returns
// the ceilings as stored.
func storeCeilings(st *results.Store, info device.Info, p device.Peak) (results.Ceilings, error) {
	var c results.Ceilings
	fields := map[string]*float64{"copy": &c.CopyGBS, "fma_f32": &c.F32GFLOPS, "fma_f64": &c.F64GFLOPS, "fma_f16": &c.F16GFLOPS,
		"mma_f16": &c.MMAGFLOPS}
	for _, m := range p.Ceilings {
		if f, ok := fields[m.Name]; ok {
			*f = m.Value
		}
	}
	return c, st.RecordCeilings(stdctx.Background(), environment(info), c)
}

func writePeakTable(w io.Writer, p device.Peak) error {
	if _, err := fmt.Fprintf(w, "%s (%s, driver %s)\n", p.Device, p.Runtime, p.Driver); err != nil {
		return err
	}
	t := speak.Table{Header: []string{"ceiling", "value", "unit", "fastest launch", "launches", "kernel"}, Right: speak.Columns("lrlrrl")}
	for _, c := range p.Ceilings {
		t.Append(c.Name, speak.Number(c.Value), c.Unit, speak.Duration(c.Work/c.Value), fmt.Sprint(len(c.SamplesNS)), c.Kernel)
	}
	if err := t.Write(w); err != nil {
		return err
	}
	for _, s := range p.Skipped {
		if _, err := fmt.Fprintln(w, "skipped", s); err != nil {
			return err
		}
	}
	return nil
}
