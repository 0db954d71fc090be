package suite

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// shardNames returns the problem names of each of n shards of s.
func shardNames(s *Suite, n int) [][]string {
	out := make([][]string, n)
	for i := range n {
		for _, c := range s.Shard(ShardSpec{I: i + 1, N: n}).Cases {
			out[i] = append(out[i], c.Spec.Name())
		}
		slices.Sort(out[i])
	}
	return out
}

// TestShardCoversOnce checks that the shards of the nightly suite hold
// every case exactly once, keep file order, and are balanced within the
// heaviest case.
func TestShardCoversOnce(t *testing.T) {
	s, err := Load("nightly")
	if err != nil {
		t.Fatal(err)
	}
	heaviest, total := 0.0, 0.0
	for _, c := range s.Cases {
		heaviest, total = max(heaviest, c.Cost()), total+c.Cost()
	}
	for _, n := range []int{1, 2, 3, 8, 31, 40} {
		seen := map[string]int{}
		for i := range n {
			shard := s.Shard(ShardSpec{I: i + 1, N: n})
			load := 0.0
			for _, c := range shard.Cases {
				seen[c.Spec.Name()]++
				load += c.Cost()
			}
			if load > total/float64(n)+heaviest {
				t.Errorf("shard %d/%d: estimated cost %.0f, more than the mean %.0f plus the heaviest case %.0f", i+1, n, load, total/float64(n), heaviest)
			}
			if !slices.IsSortedFunc(shard.Cases, func(a, b Case) int { return indexOf(s, a) - indexOf(s, b) }) {
				t.Errorf("shard %d/%d is not in file order", i+1, n)
			}
		}
		if len(seen) != len(s.Cases) {
			t.Errorf("%d shards hold %d distinct cases, want %d", n, len(seen), len(s.Cases))
		}
		for name, k := range seen {
			if k != 1 {
				t.Errorf("%d shards: %s is in %d shards", n, name, k)
			}
		}
	}
}

func indexOf(s *Suite, c Case) int {
	return slices.IndexFunc(s.Cases, func(x Case) bool { return x.Spec.Name() == c.Spec.Name() })
}

// TestShardIgnoresOrder checks that reordering the suite, within a file
// or across recipes, gives every shard the same cases.
func TestShardIgnoresOrder(t *testing.T) {
	const gemm = "[[recipe]]\nop = \"gemm\"\nsquare = \"16..128*2\"\ndtype = [\"f16\", \"f32\"]\n"
	const gemv = "[[recipe]]\nop = \"gemv\"\nm = [32, 64, 96]\nn = [8, 200]\nbudget = 7\n"
	const gemmSwapped = "[[recipe]]\nop = \"gemm\"\nsquare = [128, 32, 64, 16]\ndtype = [\"f32\", \"f16\"]\n"
	a, err := Parse("a.toml", []byte(gemm+gemv))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("b.toml", []byte(gemv+gemmSwapped))
	if err != nil {
		t.Fatal(err)
	}
	shuffled := &Suite{Cases: slices.Clone(a.Cases)}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled.Cases), func(i, j int) {
		shuffled.Cases[i], shuffled.Cases[j] = shuffled.Cases[j], shuffled.Cases[i]
	})
	for _, n := range []int{2, 3, 5} {
		want := shardNames(a, n)
		for _, other := range []*Suite{b, shuffled} {
			if got := shardNames(other, n); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%d shards of a reordered suite: %v, want %v", n, got, want)
			}
		}
	}
}

func TestShardCost(t *testing.T) {
	s, err := Parse("c.toml", []byte("[[recipe]]\nop = \"gemm\"\nsquare = [16, 256]\n"+
		"[[recipe]]\nop = \"gemm\"\nsquare = 16\ndtype = \"f16\"\nbudget = 4\n"+
		"[[recipe]]\nop = \"gemm\"\nsquare = 16\ndtype = \"f64\"\nbudget = 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	small, large, budget4, every := s.Cases[0].Cost(), s.Cases[1].Cost(), s.Cases[2].Cost(), s.Cases[3].Cost()
	if !(small < large && budget4 < small && every > large) {
		t.Errorf("costs: 16³ %g, 256³ %g, 16³ budget 4 %g, 16³ budget 0 %g; want larger shapes and budgets to cost more", small, large, budget4, every)
	}
}

func TestParseShard(t *testing.T) {
	if sh, err := ParseShard("2/8"); err != nil || sh != (ShardSpec{2, 8}) || sh.String() != "2/8" {
		t.Errorf("ParseShard(2/8) = %v, %v", sh, err)
	}
	for _, bad := range []string{"", "1", "0/2", "3/2", "1/0", "a/2", "1/2/3", "-1/2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}
