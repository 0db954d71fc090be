package main

import (
	"fmt"
	"io"
	"strings"

	"tltune/internal/speak"
	"tltune/tuner"
	"tltune/tuner/worker"
)

// throughput is how fast a tuning command evaluated configurations and
// where its wall time went, as printed and as --json (seconds per phase;
// the phases add up to the wall time).
type throughput struct {
	Evaluated            int                `json:"evaluated"` // by this process; resumed ones are not counted
	WallSeconds          float64            `json:"wall_seconds"`
	EvaluationsPerSecond float64            `json:"evaluations_per_second"`
	TimeSplit            map[string]float64 `json:"time_split"`
	// BusySeconds is the time spent in each phase summed over threads:
	// above the wall split where work overlaps (builds while timing).
	BusySeconds map[string]float64 `json:"busy_seconds"`
	// Builds are the programs the driver built (or loaded) for the
	// evaluations, CachedBuilds those whose binaries came from the binary
	// cache, BuilderBuilds those a builder process built;
	// BuilderProcesses is the most builder processes one worker started
	// (they start as builds miss the cache).
	Builds           int `json:"builds"`
	CachedBuilds     int `json:"cached_builds"`
	BuilderBuilds    int `json:"builder_builds"`
	BuilderProcesses int `json:"builder_processes"`
	// PTX: the kernels tltune writes as PTX were built from it (--ptx,
	// the default on NVIDIA devices), the others from OpenCL C or SPIR-V.
	PTX bool `json:"ptx"`
}

// add accounts for one tuned shape and the builds of its worker.
func (t *throughput) add(rep *tuner.Report, builds worker.Stats) {
	t.Builds += builds.Builds
	t.CachedBuilds += builds.CachedBuilds
	t.BuilderBuilds += builds.BuilderBuilds
	t.BuilderProcesses = max(t.BuilderProcesses, builds.BuilderProcs)
	if t.TimeSplit == nil {
		t.TimeSplit, t.BusySeconds = map[string]float64{}, map[string]float64{}
	}
	t.Evaluated += rep.Evaluated()
	t.WallSeconds += rep.Split.Wall.Seconds()
	for phase, s := range rep.Split.Seconds() {
		t.TimeSplit[phase] += s
	}
	for phase, s := range rep.Split.BusySeconds() {
		t.BusySeconds[phase] += s
	}
	t.EvaluationsPerSecond = 0
	if t.WallSeconds > 0 {
		t.EvaluationsPerSecond = float64(t.Evaluated) / t.WallSeconds
	}
}

// write prints the rate and the split in one line, phases in pipeline
// order, those that took no time left out.
func (t *throughput) write(w io.Writer) {
	var parts []string
	for _, p := range tuner.Phases {
		if s := t.TimeSplit[p.String()]; s > 0 {
			parts = append(parts, fmt.Sprintf("%s %s (%.0f%%)", p, speak.Duration(s*1e9), 100*s/t.WallSeconds))
		}
	}
	from := ""
	if t.PTX {
		from = " from tltune's PTX where it writes the kernel"
	}
	fmt.Fprintf(w, "throughput: %d evaluations in %s, %.1f evaluations/s; wall time: %s; driver builds%s: %d (%d from the binary cache, %d by %d builder process(es))\n",
		t.Evaluated, speak.Duration(t.WallSeconds*1e9), t.EvaluationsPerSecond, strings.Join(parts, ", "), from, t.Builds, t.CachedBuilds, t.BuilderBuilds, t.BuilderProcesses)
}
