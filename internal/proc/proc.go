// Package proc tells whether a process of this host, named by its pid and
// its start, still runs. A pid alone does not tell: once a process has
// died, the kernel gives its pid to a later one. The start does: no two
// processes of one pid share it.
//
// Starts are read from /proc (Linux). Elsewhere a process's start is
// untold (""), and a pid that runs is all there is to go by.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Lookup says whether a process pid runs on this host and, where the host
// tells it, its start: on Linux the boot's id and the process's start time
// in clock ticks since that boot. A zombie (a process that ended, not yet
// reaped by its parent) does not run. start is "" where it is untold.
func Lookup(pid int) (start string, running bool) {
	if pid <= 0 {
		return "", false // 0 and negative pids name process groups
	}
	// Signal 0 checks that the process exists; EPERM: it does, another
	// user's.
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return "", false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", true // no /proc, or the process ended just now: untold
	}
	state, ticks, ok := parseStat(stat)
	switch {
	case !ok || bootID() == "":
		return "", true
	case state == "Z" || state == "X": // zombie, or dead
		return "", false
	}
	return bootID() + "/" + ticks, true
}

// parseStat reads the state (field 3) and start time (field 22) of a
// /proc/PID/stat line. Field 2, the command's name in parentheses, may
// hold spaces and parentheses itself: the fields after it are counted
// from the last ')'.
func parseStat(stat []byte) (state, ticks string, ok bool) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return "", "", false
	}
	fields := strings.Fields(string(stat[end+1:]))
	const stateField, startField = 3, 22 // numbered from 1, as proc(5) numbers them
	if len(fields) < startField-stateField+1 {
		return "", "", false
	}
	return fields[0], fields[startField-stateField], true
}

// bootID is the id of this boot of the host: start times count from the
// boot, so a process of a later boot may have the start time and pid of
// one of an earlier boot.
var bootID = sync.OnceValue(func() string {
	id, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(id))
})
