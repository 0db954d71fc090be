package suite

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tltune/kernels"
)

// A ShardSpec names one of N shards of a suite, counted from 1: what
// `tltune sweep --shard I/N` runs, one per task of a job array.
type ShardSpec struct{ I, N int }

// ParseShard reads "I/N" with 1 ≤ I ≤ N.
func ParseShard(s string) (ShardSpec, error) {
	i, n, ok := strings.Cut(s, "/")
	si, erri := strconv.Atoi(strings.TrimSpace(i))
	sn, errn := strconv.Atoi(strings.TrimSpace(n))
	if !ok || erri != nil || errn != nil || sn < 1 || si < 1 || si > sn {
		return ShardSpec{}, fmt.Errorf("shard %q: want I/N with 1 ≤ I ≤ N, e.g. 2/8 for the second of eight shards", s)
	}
	return ShardSpec{I: si, N: sn}, nil
}

func (sh ShardSpec) String() string { return fmt.Sprintf("%d/%d", sh.I, sh.N) }

// Shard returns the suite with only the cases of shard sh, in file order.
//
// The split depends on the set of cases alone, never on their order in the
// file: cases are dealt out heaviest first (by Cost, ties broken by the
// problem's name), each to the shard with the least estimated work so far
// (ties to the lowest shard). Every case lands in exactly one shard, and the
// heaviest shard exceeds the mean by less than the heaviest case.
func (s *Suite) Shard(sh ShardSpec) *Suite {
	owner := s.assignShards(sh.N)
	out := &Suite{Name: s.Name, Description: s.Description}
	for i, c := range s.Cases {
		if owner[i] == sh.I-1 {
			out.Cases = append(out.Cases, c)
		}
	}
	return out
}

// assignShards returns the shard (from 0) of each case.
func (s *Suite) assignShards(n int) []int {
	type weighted struct {
		index int
		cost  float64
		name  string
	}
	order := make([]weighted, len(s.Cases))
	for i, c := range s.Cases {
		order[i] = weighted{i, c.Cost(), c.Spec.Name()}
	}
	slices.SortFunc(order, func(a, b weighted) int {
		if c := cmp.Compare(b.cost, a.cost); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	load := make([]float64, n)
	owner := make([]int, len(s.Cases))
	for _, w := range order {
		least := 0
		for j := range load {
			if load[j] < load[least] {
				least = j
			}
		}
		owner[w.index] = least
		load[least] += w.cost
	}
	return owner
}

// Cost estimates the work of tuning the case, in units of one evaluation of
// a tiny problem. An evaluation costs a fixed part (generate, compile,
// build, verify, warm up) and a part that grows with the work of one batch
// entry; a case costs its budget in evaluations. Only the ratios between
// cases matter, so the weights are rough.
func (c Case) Cost() float64 {
	evaluations := float64(DefaultBudget)
	switch b := c.Tuning.Budget; {
	case b == nil:
	case *b == 0: // every candidate: more than any budget a suite gives
		evaluations = unboundedBudget
	default:
		evaluations = float64(*b)
	}
	work := 0.0
	if r, err := kernels.New(c.Spec); err == nil {
		work = float64(r.FLOPs(1)+r.Bytes(1)) / workUnit
	}
	return evaluations * (1 + work)
}

// DefaultBudget is the evaluations a tuning run makes unless told
// otherwise: the --budget default of tltune gemm, gemv, ger and sweep, and
// what tltune replay asks a strategy to find the optimum within. The split
// uses it for cases whose suite gives none, whatever the flags: they may
// differ between the tasks of an array by mistake.
//
// It is 80, not the 48 it was: the GP found its best in evaluations 29-47
// of 48 in every one of 14 runs of gemv.n 1024² on an H100, so it was still
// improving, and 3 of them ended below 90 % of copy (all 14 reached 92 % with
// 96). Replayed over stored H100 measurements (11 in flight), the share of
// runs within 1 % of the optimum grows from 48 to 80 evaluations thus: a
// gemv.n bf16 sample 70 → 100 %, a 256³ f16 sample 42.5 → 95 %, a 64×64×32
// f32 sample 20 → 47.5 % (within 3 %: 80 → 95 %), exhaustive 16³ f32
// 97.5 → 100 %. A cold run then takes 1.7 times as long: seconds on a GPU.
const DefaultBudget = 80

const (
	// unboundedBudget stands for budget = 0 (every candidate).
	unboundedBudget = 1000
	// workUnit is the work (FLOPs plus bytes moved) of one batch entry
	// that costs as much as an evaluation's fixed part: a 128³ GEMM.
	workUnit = 2 * 128 * 128 * 128
)
