// Package stats holds the order statistics that several layers need: the
// measurement protocol's quartiles, the comparison of runs, a replay's
// median count of evaluations and the peak probe's sanity check. One
// definition, so that a median means the same thing everywhere.
package stats

import "slices"

// Quantile interpolates linearly between the order statistics of sorted,
// which must be in increasing order and not empty (Hyndman and Fan's type
// 7, the default of R and NumPy).
func Quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + frac*(sorted[i+1]-sorted[i])
}

// Median is the middle value of xs, in any order (the mean of the two
// middle ones for an even count), without reordering xs; 0 for none.
func Median[T ~int | ~int64 | ~float64](xs []T) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := make([]float64, len(xs))
	for i, x := range xs {
		s[i] = float64(x)
	}
	slices.Sort(s)
	return Quantile(s, 0.5)
}
