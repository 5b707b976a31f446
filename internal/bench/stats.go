package bench

import (
	"math"
	"slices"
	"time"
)

// Median is the middle of xs (the mean of the two middle values when len(xs)
// is even), or NaN for no values. xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Percentile is the nearest-rank p-th percentile of xs (0 < p ≤ 100): the
// smallest value that at least p % of the values do not exceed, so p99 of
// 200 calls is the 198th fastest. NaN for no values or p outside (0, 100].
// xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 || p <= 0 || p > 100 || math.IsNaN(p) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(n)))
	return s[max(rank, 1)-1]
}

// Ratio is v/base, or NaN when either is NaN or base is not positive: a
// figure with no baseline has no ratio.
func Ratio(v, base float64) float64 {
	if math.IsNaN(v) || math.IsNaN(base) || base <= 0 {
		return math.NaN()
	}
	return v / base
}

// Millis is d in milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Micros is d in microseconds.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// MiB is n bytes in mebibytes.
func MiB(n int64) float64 { return float64(n) / (1 << 20) }
