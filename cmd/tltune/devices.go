package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"tltune/device"
)

func init() {
	register(&command{
		name:    "devices",
		summary: "list the OpenCL and Level Zero devices and their properties",
		usage:   "[--json] [-v]",
		run:     devicesCmd,
	})
}

// enumerateDevices is the inventory the commands see; tests replace it with
// a fixed one so that golden files do not depend on the machine.
var enumerateDevices = device.Enumerate

// deviceUsage describes the one --device syntax of every command.
const deviceUsage = "the device: index or name substring from 'tltune devices', opencl:N, ze:N, or ref (reference interpreter); default: the first GPU, else the first CPU"

// deviceFlag declares --device on a command's flag set.
func deviceFlag(fs *flag.FlagSet) *string {
	return fs.String("device", "", deviceUsage)
}

// openDevice opens the device spec names; spec "ref" returns
// device.ErrReference for the caller to branch on.
func openDevice(spec string) (device.Device, error) {
	info, err := device.Select(enumerateDevices(), spec)
	if err != nil {
		return nil, err
	}
	return info.Open()
}

func devicesCmd(c *context, args []string) int {
	fs := c.flags()
	asJSON := fs.Bool("json", false, "print the devices and runtimes as JSON, with every property")
	verbose := fs.Bool("v", false, "also list each device's extensions")
	if status, ok := c.parse(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", fs.Arg(0))
	}
	inv := enumerateDevices()
	var err error
	if *asJSON {
		err = writeDevicesJSON(c.stdout, inv)
	} else {
		err = writeDevicesTable(c.stdout, inv, *verbose)
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

func writeDevicesJSON(w io.Writer, inv device.Inventory) error {
	type runtime struct {
		device.Status
		Install string `json:"install,omitempty"`
	}
	out := struct {
		Devices  []device.Info `json:"devices"`
		Runtimes []runtime     `json:"runtimes"`
	}{Devices: inv.Devices}
	if out.Devices == nil {
		out.Devices = []device.Info{}
	}
	for _, st := range inv.Runtimes {
		out.Runtimes = append(out.Runtimes, runtime{st, st.Install()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

var deviceColumns = []string{"#", "id", "name", "type", "vendor", "driver", "CUs", "MHz",
	"global", "local", "cache", "max WG", "subgroups", "fp16", "fp64", "OpenCL C", "IL"}

func writeDevicesTable(w io.Writer, inv device.Inventory, verbose bool) error {
	if len(inv.Devices) > 0 {
		t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
		t.Header(deviceColumns)
		for _, d := range inv.Devices {
			if err := t.Append(deviceRow(d)); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	for _, st := range inv.Runtimes {
		if _, err := fmt.Fprintln(w, runtimeLine(st)); err != nil {
			return err
		}
	}
	if verbose {
		for _, d := range inv.Devices {
			if _, err := fmt.Fprintf(w, "%s extensions: %s\n", d.ID, strings.Join(d.Extensions, " ")); err != nil {
				return err
			}
		}
	}
	return nil
}

func deviceRow(d device.Info) []string {
	return []string{
		strconv.Itoa(d.Index), d.ID, d.Name, d.Type, d.Vendor, d.Driver,
		strconv.Itoa(d.ComputeUnits), strconv.Itoa(d.ClockMHz),
		bytesString(d.GlobalMemBytes), bytesString(d.LocalMemBytes), bytesString(d.CacheBytes),
		strconv.Itoa(d.MaxWorkGroupSize), intsString(d.SubgroupSizes),
		yesNo(d.FP16), yesNo(d.FP64), orDash(strings.TrimSpace(strings.TrimPrefix(d.OpenCLC, "OpenCL C "))),
		orDash(strings.Join(d.ILVersions, " ")),
	}
}

// runtimeLine is one line per runtime under the table, e.g.
// "Level Zero: loader found, no driver or device (install intel-level-zero-gpu)".
func runtimeLine(st device.Status) string {
	name := map[string]string{device.OpenCL: "OpenCL", device.LevelZero: "Level Zero"}[st.Runtime]
	line := fmt.Sprintf("%s: %s", name, st.Note)
	if len(st.Extra) > 0 {
		line += ", through " + strings.Join(st.Extra, ", ") + " directly (no .icd file names it)"
	}
	if pkg := st.Install(); pkg != "" {
		line += " (install " + pkg + ")"
	}
	return line
}

// bytesString prints a size in the largest binary unit that keeps it whole
// enough to read: "80 GiB", "48 KiB", "-" when unknown.
func bytesString(n uint64) string {
	if n == 0 {
		return "-"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

func intsString(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isReference reports whether err is the reference-interpreter selection.
func isReference(err error) bool { return errors.Is(err, device.ErrReference) }
