package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"tltune/device"
	"tltune/internal/speak"
	"tltune/results"
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

// storedDeviceFlag declares --device on a command that reads stored
// results: the same syntax, resolved by storedDevice.
func storedDeviceFlag(fs *flag.FlagSet, all string) *string {
	return fs.String("device", "", "the device: index or name substring from 'tltune devices', opencl:N or ze:N (an index names this machine's device; a substring also matches devices of other machines); default: "+all)
}

// storedDevice turns --device into the selection of stored results: ""
// every device, a name substring the devices whose names contain it, and
// an index, opencl:N or ze:N the device of exactly that name on this
// machine (the same syntax as the commands that open a device).
func storedDevice(spec string) (results.DeviceMatch, error) {
	switch {
	case strings.TrimSpace(spec) == device.Reference:
		return results.DeviceMatch{}, errors.New("--device ref: the reference interpreter has no stored results; name a device")
	case !device.ByPosition(spec):
		return results.DeviceMatch{Name: strings.TrimSpace(spec)}, nil
	}
	info, err := device.Select(enumerateDevices(), spec)
	if err != nil {
		return results.DeviceMatch{}, fmt.Errorf("--device %s: %w", spec, err)
	}
	return results.ThisDevice(info.Name), nil
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
	return speak.WriteJSON(w, out)
}

var deviceColumns = []string{"#", "id", "name", "type", "vendor", "driver", "CUs", "MHz",
	"global", "local", "cache", "max WG", "subgroups", "fp16", "fp64", "OpenCL C", "IL"}

func writeDevicesTable(w io.Writer, inv device.Inventory, verbose bool) error {
	if len(inv.Devices) > 0 {
		t := speak.Table{Header: deviceColumns}
		for _, d := range inv.Devices {
			t.Append(deviceRow(d)...)
		}
		if err := t.Write(w); err != nil {
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
		speak.Bytes(d.GlobalMemBytes), speak.Bytes(d.LocalMemBytes), speak.Bytes(d.CacheBytes),
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
