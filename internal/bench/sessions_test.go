package bench

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestListingDurations(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want map[string]Figure
	}{
		{"none", "time=x level=WARN msg=\"something else\"\n", map[string]Figure{}},
		{"two providers, the first listing kept", strings.Join([]string{
			`time=2026-12-03T02:00:00Z level=DEBUG msg="provider listing ended" provider=codex ms=12.5 late=false sessions=0 err=<nil>`,
			`time=2026-12-03T02:00:01Z level=DEBUG msg="provider listing ended" provider=gemini ms=8123.25 late=true sessions=2 err=<nil>`,
			`time=2026-12-03T02:00:02Z level=DEBUG msg="provider listing ended" provider=codex ms=3.1 late=false sessions=0 err=<nil>`,
			`time=2026-12-03T02:00:15Z level=DEBUG msg="provider listing ended" provider=qwen ms=15021 late=true sessions=0 err="initialize: context canceled"`,
		}, "\n"), map[string]Figure{"codex": 12.5, "gemini": 8123.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ListingDurations(tt.log); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ListingDurations = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPerProvider(t *testing.T) {
	samples := []SessionsSample{
		{Listed: map[string]Figure{"codex": 10, "gemini": 9000, "kimi": 1}, Late: []string{"gemini"}, Starting: []string{"gemini"}, Failed: []string{"kimi"}, Arrived: map[string]Figure{"gemini": 9100}},
		{Listed: map[string]Figure{"codex": 30, "kimi": 2}, Late: []string{"gemini"}, Failed: []string{"kimi"}},
		{Listed: map[string]Figure{"codex": 900, "gemini": 7000, "kimi": 3}, Late: []string{"codex", "gemini"}, Starting: []string{"gemini"}, Failed: []string{"kimi"}, Arrived: map[string]Figure{"codex": 950, "gemini": 7100}},
	}
	got := PerProvider(samples)
	want := []ProviderFigures{
		{Provider: "codex", Listed: 2, Late: 1, OwnMs: 30, ArrivedMs: 950},
		{Provider: "gemini", Starting: 2, Late: 1, OwnMs: 8000, ArrivedMs: 8100},
		{Provider: "kimi", Failed: 3, OwnMs: 2, ArrivedMs: Figure(math.NaN())},
	}
	if len(got) != len(want) {
		t.Fatalf("PerProvider = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		nanEq := func(a, b Figure) bool { return a == b || (math.IsNaN(float64(a)) && math.IsNaN(float64(b))) }
		if g.Provider != w.Provider || g.Listed != w.Listed || g.Starting != w.Starting || g.Late != w.Late || g.Failed != w.Failed || !nanEq(g.OwnMs, w.OwnMs) || !nanEq(g.ArrivedMs, w.ArrivedMs) {
			t.Errorf("PerProvider[%d] = %+v, want %+v", i, g, w)
		}
	}
}

func TestTreeCPUCountsTheProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	tree, err := TreeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	own, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree <= 0 || tree < own/2 { // own is read after tree: it only grows
		t.Errorf("TreeCPU = %v, ProcessCPU = %v", tree, own)
	}
}

func TestFirstStop(t *testing.T) {
	tests := []struct{ name, log, want string }{
		{"none", `level=DEBUG msg="provider listing ended" provider=codex ms=1`, ""},
		{"quoted, the first kept", "level=DEBUG msg=\"provider listings awaited\" ms=250.1 stopped=\"start grace\"\nlevel=DEBUG msg=\"provider listings awaited\" ms=1 stopped=\"soft deadline\"", "start grace"},
		{"bare", `level=DEBUG msg="provider listings awaited" ms=3 stopped=canceled`, "canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FirstStop(tt.log); got != tt.want {
				t.Errorf("FirstStop = %q, want %q", got, tt.want)
			}
		})
	}
}
