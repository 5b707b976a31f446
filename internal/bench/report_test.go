package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestFigureJSON(t *testing.T) {
	b, err := json.Marshal([]Figure{1.23456, Figure(math.NaN()), Figure(math.Inf(1)), 2, 0.0004})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[1.235,null,null,2,0]` {
		t.Errorf("figures = %s", b)
	}
}

func testReport() *Report {
	nan := Figure(math.NaN())
	r := &Report{Date: "2026-01-01T00:00:00Z", Go: "go1.26", OS: "linux/amd64", CPUs: 2, Spawns: 3, Calls: 200, Protocol: "2025-06-18",
		Rows: []Row{
			{Name: "baseline", Baseline: true, Protocol: "2025-06-18", InitMs: 2, ListUs: 100, CallP50Us: 50, CallP99Us: 200, RSSInitMiB: 8, RSSCallsMiB: 10, List: ListingSize{Tools: 1, Bytes: 100, Tokens: 30, MaxToolTokens: 20}},
			{Name: "minimal", Protocol: "2025-06-18", InitMs: 3, ListUs: 150, CallP50Us: 60, CallP99Us: 300, RSSInitMiB: 10, RSSCallsMiB: 12, List: ListingSize{Tools: 9, Bytes: 3000, Tokens: 1300, MaxToolTokens: 180, MaxTool: "x"}},
			{Name: "core", Protocol: "2025-06-18", InitMs: 4, ListUs: 300, CallP50Us: 70, CallP99Us: 800, RSSInitMiB: 11, RSSCallsMiB: 13, List: ListingSize{Tools: 30, Bytes: 7000, Tokens: 3000, MaxToolTokens: 310, MaxTool: "big"}},
			{Name: "full", Protocol: "2025-06-18", InitMs: 3.2, ListUs: 400, CallP50Us: 65, CallP99Us: 400, RSSInitMiB: nan, RSSCallsMiB: 12, List: ListingSize{Tools: 49, Bytes: 10000, Tokens: 4900, MaxToolTokens: 250}},
		},
		InitTrace: &InitTraces{Runtime: InitTrace{Total: 1500 * time.Microsecond, Packages: []PackageInit{{Package: "p", Clock: time.Millisecond}}}},
	}
	r.addRatios()
	r.Check()
	return r
}

func TestRatiosAndChecks(t *testing.T) {
	r := testReport()
	if got := r.Rows[2].Ratio.Init; got != 2 {
		t.Errorf("core init ratio = %v", got)
	}
	if got := r.Rows[0].Ratio.CallP99; got != 1 {
		t.Errorf("baseline ratio to itself = %v", got)
	}
	if !math.IsNaN(float64(r.Rows[3].Ratio.RSSInit)) {
		t.Errorf("ratio of an unmeasured figure = %v", r.Rows[3].Ratio.RSSInit)
	}
	status := map[string]Check{}
	for _, c := range r.Checks {
		status[c.Target] = c
	}
	for target, want := range map[string]struct {
		status, config string
		value          float64
	}{
		"spawn → initialize ≤ 8 ms":                           {"pass", "core", 4},
		"spawn → initialize ≤ 1.8× the minimal go-sdk server": {"FAIL", "core", 2},
		"total package init ≤ 2 ms (GODEBUG=inittrace=1)":     {"pass", "interop-runtime serve", 1.5},
		"trivial call p99 ≤ 700 µs":                           {"FAIL", "core", 800},
		"peak RSS ≤ 16 MiB after initialize":                  {"pass", "core", 11},
		"minimal tools/list ≤ 1,200 o200k tokens":             {"FAIL", "minimal", 1300},
		"full tools/list ≤ 5,300 o200k tokens":                {"pass", "full", 4900},
		"no tool over 300 o200k tokens in the model's view":   {"FAIL", "core", 310},
		"core ≤ 0.8× full in tools/list bytes":                {"pass", "core", 0.7},
	} {
		c, ok := status[target]
		if !ok {
			t.Errorf("no check %q", target)
			continue
		}
		if c.Status != want.status || c.Config != want.config || math.Abs(float64(c.Value)-want.value) > 1e-9 {
			t.Errorf("%s: %s %s %v, want %s %s %v", target, c.Status, c.Config, c.Value, want.status, want.config, want.value)
		}
	}
	if c := status["peak RSS ≤ 24 MiB after 2,000 calls"]; c.Status != "n/a" || !strings.Contains(c.Note, "-calls 2000") {
		t.Errorf("2,000-call RSS check with 200 calls: %+v", c)
	}

	r.Calls = 2000
	r.Check()
	for _, c := range r.Checks {
		if strings.Contains(c.Target, "2,000 calls") && (c.Status != "pass" || c.Value != 13) {
			t.Errorf("2,000-call RSS check: %+v", c)
		}
	}
}

func TestChecksWithoutProfiles(t *testing.T) {
	r := &Report{Rows: []Row{{Name: "baseline", Baseline: true, InitMs: 2}}}
	r.addRatios()
	r.Check()
	for _, c := range r.Checks {
		if c.Status != "n/a" {
			t.Errorf("%s: %s with nothing measured", c.Target, c.Status)
		}
	}
}

func TestWriteTableAndJSON(t *testing.T) {
	r := testReport()
	r.Machine = "test box"
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"test box", "initialize protocolVersion 2025-06-18 (answered 2025-06-18)", "config", "minimal", "1.50×", "2.00×", "package init", "FAIL", "n/a"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimRight(l, " ") != l {
			t.Errorf("trailing blanks in %q", l)
		}
	}

	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("JSON report does not parse: %v\n%s", err, b.String())
	}
	rows := back["rows"].([]any)
	full := rows[3].(map[string]any)
	if full["rssInitMiB"] != nil || full["initMs"] != 3.2 {
		t.Errorf("full row = %v", full)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{N: 1, Calls: 1, Timeout: time.Second, Protocol: "2025-06-18", Profiles: AllProfiles()}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"n":        func(c *Config) { c.N = 0 },
		"calls":    func(c *Config) { c.Calls = 0 },
		"warmup":   func(c *Config) { c.Warmup = -1 },
		"timeout":  func(c *Config) { c.Timeout = 0 },
		"protocol": func(c *Config) { c.Protocol = "" },
		"profile":  func(c *Config) { c.Profiles = []string{"huge"} },
		"nothing":  func(c *Config) { c.Profiles, c.ReadOnly = nil, false },
		"discover": func(c *Config) { c.Discover = true },
	} {
		c := ok
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: invalid config accepted", name)
		}
	}
}

func TestTargets(t *testing.T) {
	ts := Targets(Config{Profiles: []string{"minimal", "legacy"}, ReadOnly: true}, "/b/rt", "/b/min")
	var names []string
	for _, x := range ts {
		names = append(names, x.Name)
	}
	if got := strings.Join(names, ","); got != "baseline,minimal,legacy,full --read-only" {
		t.Errorf("targets = %s", got)
	}
	if !ts[0].Baseline || ts[0].Path != "/b/min" || ts[1].Baseline {
		t.Errorf("baseline = %+v", ts[0])
	}
	if got := strings.Join(ts[3].Args, " "); got != "serve --profile full --read-only" {
		t.Errorf("read-only args = %s", got)
	}
	if got, err := pickTool([]string{"freebuff_status", "x"}, ts[2].Tools); err != nil || got != "freebuff_status" {
		t.Errorf("legacy trivial tool = %q, %v", got, err)
	}
}

// TestCompareRow: -compare adds a row for the other build, measured in
// the same rounds, that the targets leave out.
func TestCompareRow(t *testing.T) {
	ts := Targets(Config{Profiles: []string{"full"}, Compare: "/old/rt"}, "/b/rt", "/b/min")
	if len(ts) != 3 || ts[2].Name != "compare: full" || !ts[2].Compare || ts[2].Path != "/old/rt" ||
		strings.Join(ts[2].Args, " ") != "serve --profile full" {
		t.Fatalf("targets with -compare = %+v", ts)
	}
	r := &Report{Rows: []Row{
		{Name: "baseline", Baseline: true, InitMs: 2},
		{Name: "full", InitMs: 3},
		{Name: "compare: full", Compare: true, InitMs: 9},
	}}
	r.addRatios()
	if got := r.Rows[2].Ratio.Init; got != 4.5 {
		t.Errorf("compare row's ratio to the baseline = %v, want 4.5", got)
	}
	if name, v := r.worst(func(x *Row) Figure { return x.InitMs }); name != "full" || v != 3 {
		t.Errorf("worst = %s %v, want the runtime's own row (full 3)", name, v)
	}
}
