package measure

import (
	"fmt"
	"strings"
	"time"

	"tltune/internal/speak"
)

// BatchGoal describes what one timed launch must achieve. A batched kernel
// of small matrices finishes in microseconds and its data fits in the cache:
// timed alone, it measures launch overhead and cache bandwidth. So a launch
// runs many batch entries, enough to move several times the cache and to
// last far longer than the launch overhead, and cold measurements rotate
// over several buffer sets so a repeat does not find its inputs cached.
type BatchGoal struct {
	EntryBytes  int64         // bytes one batch entry moves: inputs read once, outputs written once
	EntryTime   time.Duration // device time of one entry, from a probe launch; 0 if unknown
	CacheBytes  int64         // last-level device cache (L2/LLC); 0 if unknown
	MemoryBytes int64         // device memory all buffer sets may take; 0 for no limit
	MinBatch    int           // the batch of the problem itself, at least 1
	MaxBatch    int           // largest batch a launch may have; 0 for no limit
	Hot         bool          // measure with warm caches: one buffer set, no cache goal

	CacheMultiple    float64       // a cold launch moves ≥ this × CacheBytes; default 4
	LaunchOverhead   time.Duration // default 10µs
	OverheadMultiple float64       // a launch lasts ≥ this × LaunchOverhead; default 100
}

// BatchPlan is the batch of one launch and the buffer sets to rotate over.
type BatchPlan struct {
	Batch          int
	Sets           int
	LaunchBytes    int64  // bytes one launch moves
	FootprintBytes int64  // bytes of all sets
	Limited        string // a goal that memory or MaxBatch kept from being met, or ""
}

// MaxBufferSets bounds the buffer sets a plan rotates over. Each is
// allocated and written on the device: a launch capped at a few tiny
// entries (gemv 1×1, --max-batch 8) asked for a million sets to stream
// four times a CPU's cache, and the worker spent minutes and gigabytes
// making them.
const MaxBufferSets = 4096

// PlanBatch sizes the batch and the number of buffer sets for g.
func PlanBatch(g BatchGoal) (BatchPlan, error) {
	if g.EntryBytes <= 0 {
		return BatchPlan{}, fmt.Errorf("batch plan: entry bytes %d must be positive", g.EntryBytes)
	}
	if g.CacheMultiple <= 0 {
		g.CacheMultiple = 4
	}
	if g.LaunchOverhead <= 0 {
		g.LaunchOverhead = 10 * time.Microsecond
	}
	if g.OverheadMultiple <= 0 {
		g.OverheadMultiple = 100
	}
	cacheGoal := int64(0) // bytes a cold measurement must stream between reuses
	if !g.Hot {
		cacheGoal = int64(g.CacheMultiple * float64(g.CacheBytes))
	}
	batch := max(int64(g.MinBatch), 1, ceilDiv64(cacheGoal, g.EntryBytes))
	if g.EntryTime > 0 {
		long := time.Duration(g.OverheadMultiple * float64(g.LaunchOverhead))
		batch = max(batch, ceilDiv64(int64(long), int64(g.EntryTime)))
	}
	var limited []string
	if g.MaxBatch > 0 && batch > int64(g.MaxBatch) {
		batch = int64(g.MaxBatch)
		limited = append(limited, fmt.Sprintf("batch capped at %d", g.MaxBatch))
	}
	if g.MemoryBytes > 0 && batch*g.EntryBytes > g.MemoryBytes {
		batch = max(1, g.MemoryBytes/g.EntryBytes)
		limited = append(limited, fmt.Sprintf("batch capped at %d by %s of memory", batch, speak.Bytes(uint64(g.MemoryBytes))))
	}
	plan := BatchPlan{Batch: int(batch), Sets: 1, LaunchBytes: batch * g.EntryBytes}
	// A launch smaller than the cache goal rotates over enough sets that a
	// set is reused only after the goal's bytes went through the cache.
	if plan.LaunchBytes < cacheGoal {
		plan.Sets = int(min(ceilDiv64(cacheGoal, plan.LaunchBytes), MaxBufferSets))
		if g.MemoryBytes > 0 && int64(plan.Sets)*plan.LaunchBytes > g.MemoryBytes {
			plan.Sets = int(max(1, g.MemoryBytes/plan.LaunchBytes))
		}
		if moved := int64(plan.Sets) * plan.LaunchBytes; moved < cacheGoal {
			limited = append(limited, fmt.Sprintf("%d buffer sets move %s, less than %.0f× the %s cache: repeats may hit the cache",
				plan.Sets, speak.Bytes(uint64(moved)), g.CacheMultiple, speak.Bytes(uint64(g.CacheBytes))))
		}
	}
	plan.FootprintBytes = int64(plan.Sets) * plan.LaunchBytes
	plan.Limited = strings.Join(limited, "; ")
	return plan, nil
}

func ceilDiv64(x, y int64) int64 { return (x + y - 1) / y }
