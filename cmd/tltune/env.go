package main

import (
	"cmp"
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

// stampedVersion and stampedCommit are set by the Makefile's build
// (-ldflags "-X main.stampedVersion=... -X main.stampedCommit=..."): Go's own
// VCS stamping is missing from builds without .git, with -buildvcs=false,
// and from `go run` and tests, and it has no version for the main module.
var stampedVersion, stampedCommit string

// buildVersion returns the version and the commit the binary was built
// from: the Makefile's stamps, else what Go recorded ("(devel)" and the VCS
// revision), else "(devel)" and "".
func buildVersion() (version, commit string) {
	version, commit = stampedVersion, stampedCommit
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return cmp.Or(version, "(devel)"), commit
	}
	version = cmp.Or(version, info.Main.Version, "(devel)")
	if commit != "" {
		return version, commit
	}
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
