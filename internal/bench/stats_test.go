package bench

import (
	"math"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 9, 7}, 5},
	} {
		in := append([]float64(nil), tc.in...)
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Fatalf("Median modified its input: %v", tc.in)
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100..1, unsorted
	}
	twoHundred := make([]float64, 200)
	for i := range twoHundred {
		twoHundred[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		in   []float64
		p    float64
		want float64
	}{
		{hundred, 50, 50},
		{hundred, 99, 99},
		{hundred, 100, 100},
		{hundred, 1, 1},
		{hundred, 0.5, 1},
		{twoHundred, 99, 198},
		{twoHundred, 50, 100},
		{[]float64{7}, 99, 7},
		{[]float64{1, 2, 3}, 50, 2},
		{[]float64{1, 2, 3, 4}, 50, 2},
	} {
		if got := Percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("Percentile(len %d, %v) = %v, want %v", len(tc.in), tc.p, got, tc.want)
		}
	}
	for _, p := range []float64{0, -1, 101, math.NaN()} {
		if got := Percentile(hundred, p); !math.IsNaN(got) {
			t.Errorf("Percentile(p=%v) = %v, want NaN", p, got)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("Percentile(nil) is not NaN")
	}
	if hundred[0] != 100 {
		t.Error("Percentile modified its input")
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(9, 6); got != 1.5 {
		t.Errorf("Ratio(9, 6) = %v", got)
	}
	for _, tc := range [][2]float64{{1, 0}, {1, -2}, {math.NaN(), 1}, {1, math.NaN()}} {
		if got := Ratio(tc[0], tc[1]); !math.IsNaN(got) {
			t.Errorf("Ratio(%v, %v) = %v, want NaN", tc[0], tc[1], got)
		}
	}
}

func TestUnits(t *testing.T) {
	if got := Millis(1500 * time.Microsecond); got != 1.5 {
		t.Errorf("Millis = %v", got)
	}
	if got := Micros(2500 * time.Nanosecond); got != 2.5 {
		t.Errorf("Micros = %v", got)
	}
	if got := MiB(3 << 19); got != 1.5 {
		t.Errorf("MiB = %v", got)
	}
}
