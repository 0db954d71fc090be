package main

import (
	"os"
	"runtime/debug"
	"strings"

	"tltune/device"
	"tltune/results"
)

// compilerVersion names the tensor-language compiler that produced the
// kernels. It is tltune's own compiler, so its version is tltune's; the
// field exists so that a regression report can tell a compiler change from a
// driver change once they are released separately.
const compilerVersion = "tltune-tlc/1"

// environment is the fingerprint of measurements taken on the device info
// describes: device, driver, runtime, host, and this binary's version and
// commit.
func environment(info device.Info) results.Environment {
	host, _ := os.Hostname()
	version, commit := buildVersion()
	return results.Environment{
		Device:          info.Name,
		Vendor:          info.Vendor,
		Driver:          info.Driver,
		Runtime:         strings.ToLower(info.Runtime),
		Host:            host,
		Version:         version,
		Commit:          commit,
		CompilerVersion: compilerVersion,
		CoreClockMHz:    info.ClockMHz,
	}
}

// buildVersion returns the module version and the VCS revision the binary
// was built from ("" when the build carries none, as in tests).
func buildVersion() (version, commit string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)", ""
	}
	version = info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			commit = s.Value
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			commit += "+dirty"
		}
	}
	return version, commit
}
