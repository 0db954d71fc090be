package stats

import (
	"slices"
	"testing"
)

func TestQuantile(t *testing.T) {
	sorted := []float64{1, 2, 4, 8}
	for _, c := range []struct{ q, want float64 }{
		{0, 1}, {1, 8}, {0.5, 3}, {0.25, 1.75}, {0.75, 5},
	} {
		if got := Quantile(sorted, c.q); got != c.want {
			t.Errorf("Quantile(%v, %v) = %v, want %v", sorted, c.q, got, c.want)
		}
	}
	if got := Quantile([]float64{7}, 0.9); got != 7 {
		t.Errorf("Quantile of one value = %v, want 7", got)
	}
}

func TestMedian(t *testing.T) {
	odd := []int{9, 1, 5}
	if got := Median(odd); got != 5 {
		t.Errorf("Median(%v) = %v, want 5", odd, got)
	}
	if !slices.Equal(odd, []int{9, 1, 5}) {
		t.Errorf("Median reordered its input: %v", odd)
	}
	if got := Median([]int64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("even count: got %v, want 2.5", got)
	}
	if got := Median([]float64(nil)); got != 0 {
		t.Errorf("no values: got %v, want 0", got)
	}
}
