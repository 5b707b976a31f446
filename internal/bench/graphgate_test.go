package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// graphReport is a report whose baseline's call p50 is 100 µs, with the
// graph shapes measured: every shape's calls at p50 µs, and tree's
// list_work_items limit=100 at treeList µs (an error with treeErr).
func graphReport(p50, treeList Figure, treeErr string) *Report {
	r := &Report{Calls: 2000, Rows: []Row{
		{Name: "baseline", Baseline: true, CallP50Us: 100},
		{Name: "full", CallP50Us: 250},
	}}
	r.addRatios()
	r.Scale = &ScaleReport{Calls: 30}
	for _, sh := range Shapes() {
		sz := ScaleSize{Store: StoreSQLite, Shape: sh, N: 100000, SeedSec: 12.5}
		for _, label := range graphLabels() {
			row := ScaleRow{Label: label, P50Us: p50}
			if sh == ShapeTree && label == "list_work_items limit=100" {
				row.P50Us, row.Error = treeList, treeErr
			}
			sz.Rows = append(sz.Rows, row)
		}
		r.Scale.Sizes = append(r.Scale.Sizes, sz)
	}
	return r
}

// TestGraphGate: the graph rows are n/a without -scale, pass within their
// limits, FAIL past them, and a tool error fails however quick it was.
func TestGraphGate(t *testing.T) {
	const graph, depth, list = "get_work_graph p50, worst shape", "get_work_graph workId depth=3 p50, worst shape", "list_work_items limit=100 p50, worst shape"
	noScale := graphReport(0, 0, "")
	noScale.Scale = nil
	cases := []struct {
		name   string
		r      *Report
		ok     bool
		status map[string]string // figure → status
		ratio  map[string]Figure
		config string // list's worst config
	}{
		{"not measured", noScale, true, map[string]string{graph: "n/a", depth: "n/a", list: "n/a"}, nil, ""},
		{"within the limits", graphReport(3000, 6000, ""), true, map[string]string{graph: "pass", depth: "pass", list: "pass"},
			map[string]Figure{graph: 30, depth: 30, list: 60}, "tree: list_work_items limit=100 at 100k"},
		{"get_work_graph past its limit", graphReport(4500, 6000, ""), false, map[string]string{graph: "FAIL", depth: "pass", list: "pass"},
			map[string]Figure{graph: 45, depth: 45, list: 60}, "tree: list_work_items limit=100 at 100k"},
		{"list_work_items past its limit", graphReport(3000, 11000, ""), false, map[string]string{graph: "pass", depth: "pass", list: "FAIL"},
			map[string]Figure{list: 110}, "tree: list_work_items limit=100 at 100k"},
		{"a quick tool error", graphReport(3000, 50, "store refused"), false, map[string]string{graph: "pass", depth: "pass", list: "FAIL"},
			map[string]Figure{list: Figure(math.Inf(1))}, "tree: list_work_items limit=100 at 100k"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := map[string]GateResult{}
			for _, x := range mustGate(t, c.r, c.ok) {
				g[x.Figure] = x
			}
			for fig, want := range c.status {
				if g[fig].Status != want {
					t.Errorf("%s: status %s, want %s (%+v)", fig, g[fig].Status, want, g[fig])
				}
			}
			for fig, want := range c.ratio {
				if g[fig].Ratio != want {
					t.Errorf("%s: ratio %v, want %v", fig, g[fig].Ratio, want)
				}
			}
			if c.config != "" && g[list].Config != c.config {
				t.Errorf("list's worst config %q, want %q", g[list].Config, c.config)
			}
		})
	}
}

// TestGraphChecks: the absolute 5 ms targets over every shape, n/a
// without -scale.
func TestGraphChecks(t *testing.T) {
	const graph, list = "get_work_graph p50 ≤ 5 ms at 100000 works, every shape (ms)", "list_work_items limit=100 p50 ≤ 5 ms at 100000 works, every shape (ms)"
	noScale := graphReport(0, 0, "")
	noScale.Scale = nil
	cases := []struct {
		name                   string
		r                      *Report
		graphStatus, listState string
		listValue              Figure
	}{
		{"not measured", noScale, "n/a", "n/a", Figure(math.NaN())},
		{"met", graphReport(2000, 4900, ""), "pass", "pass", 4.9},
		{"list_work_items over 5 ms", graphReport(2000, 5600, ""), "pass", "FAIL", 5.6},
		{"a tool error", graphReport(2000, 50, "store refused"), "pass", "FAIL", Figure(math.Inf(1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			byTarget := map[string]Check{}
			for _, ck := range c.r.checkGraphs() {
				byTarget[strings.Replace(ck.Target, " N works", " 100000 works", 1)] = ck
			}
			if x := byTarget[graph]; x.Status != c.graphStatus {
				t.Errorf("get_work_graph: %+v", x)
			}
			x := byTarget[list]
			if x.Status != c.listState || (x.Value != c.listValue && !(math.IsNaN(float64(x.Value)) && math.IsNaN(float64(c.listValue)))) {
				t.Errorf("list_work_items: %+v", x)
			}
		})
	}
}

// TestGraphTable: the report's table shows every shape's p50 and its
// ratio to the minimal server, and a tool error beneath; without -scale
// it has no graph section.
func TestGraphTable(t *testing.T) {
	var b bytes.Buffer
	r := graphReport(3000, 6000, "store refused")
	r.Check()
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"graph shapes: 100000 works of each shape", "all shapes seeded in 12.5 s", "(100 µs, same run)",
		"chain p50", "tree p50", "fanin p50", "dense p50", "3000  30.00×", "6000  60.00×",
		"note: list_work_items limit=100 on the tree shape answered a tool error: store refused",
		"FAIL  list_work_items limit=100 p50 ≤ 5 ms at 100000 works, every shape (ms)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	r.Scale = nil
	r.Check()
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "graph shapes:") || !strings.Contains(b.String(), "(not measured (-scale 0))") {
		t.Errorf("without -scale:\n%s", b.String())
	}
}

// TestConfigValidateScale: -scale is 0 or at least 100 works, with calls.
func TestConfigValidateScale(t *testing.T) {
	base := Config{N: 1, Calls: 1, Timeout: 1, Protocol: "2025-06-18", Profiles: []string{"full"}}
	for _, c := range []struct {
		scale, calls, warmup int
		ok                   bool
	}{
		{0, 0, 0, true},
		{100000, 30, 3, true},
		{100, 1, 0, true},
		{-1, 30, 3, false},
		{99, 30, 3, false},
		{1000, 0, 3, false},
		{1000, 30, -1, false},
	} {
		cfg := base
		cfg.Scale, cfg.ScaleCalls, cfg.ScaleWarmup = c.scale, c.calls, c.warmup
		if err := cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("-scale %d -scale-calls %d -scale-warmup %d: %v, want ok %v", c.scale, c.calls, c.warmup, err, c.ok)
		}
	}
	sc := graphScaleConfig(Config{Scale: 1000, ScaleCalls: 30, ScaleWarmup: 3, Timeout: 1})
	if err := sc.Validate(); err != nil || !sc.GraphOnly || len(sc.Shapes) != len(Shapes()) {
		t.Errorf("graph scale config %+v: %v", sc, err)
	}
	sc.Only = []string{"read_conversation"}
	if err := sc.Validate(); err == nil {
		t.Error("a graph-only seed accepted read_conversation")
	}
	if got := strings.Join(graphLabels(), ","); got != "list_work_items limit=100,get_work_graph,get_work_graph workId depth=3" {
		t.Errorf("graph labels = %s", got)
	}
}

// TestGraphHTTPGate: the same graph call over HTTP against stdio is n/a
// without the HTTP twins, its worst ratio over every shape and call is
// the figure, the target fails past 1.2× and the gate past its limit.
func TestGraphHTTPGate(t *testing.T) {
	const figure = "HTTP p50 ÷ stdio p50, same graph call, worst"
	withHTTP := func(http Figure, worstShape string, worst Figure) *Report {
		r := graphReport(3000, 3000, "")
		for i := range r.Scale.Sizes {
			sz := &r.Scale.Sizes[i]
			for j := range sz.Rows {
				sz.Rows[j].HTTPP50Us = http
				if sz.Shape == worstShape && sz.Rows[j].Label == "list_work_items limit=100" {
					sz.Rows[j].HTTPP50Us = worst
				}
			}
		}
		return r
	}
	cases := []struct {
		name        string
		r           *Report
		ratio       Figure // NaN: n/a
		where       string
		check, gate string
	}{
		{"no HTTP twins", graphReport(3000, 3000, ""), Figure(math.NaN()), "", "n/a", "n/a"},
		{"not measured (NaN)", withHTTP(Figure(math.NaN()), "", 0), Figure(math.NaN()), "", "n/a", "n/a"},
		{"within 1.2", withHTTP(3150, ShapeFanIn, 3450), 1.15, "fanin: list_work_items limit=100", "pass", "pass"},
		{"past the target", withHTTP(3150, ShapeDense, 4200), 1.4, "dense: list_work_items limit=100", "FAIL", "pass"},
		{"past the gate", withHTTP(3150, ShapeTree, 6300), 2.1, "tree: list_work_items limit=100", "FAIL", "FAIL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			where, v := c.r.graphHTTPWorst()
			if math.IsNaN(float64(c.ratio)) != math.IsNaN(float64(v)) || (!math.IsNaN(float64(v)) && math.Abs(float64(v-c.ratio)) > 1e-9) || where != c.where {
				t.Errorf("graphHTTPWorst = %q %v, want %q %v", where, v, c.where, c.ratio)
			}
			var check string
			for _, ck := range c.r.checkGraphs() {
				if strings.HasPrefix(ck.Target, "HTTP call p50 ≤ 1.2× stdio") {
					check = ck.Status
				}
			}
			if check != c.check {
				t.Errorf("check status %q, want %q", check, c.check)
			}
			gs, _ := c.r.Gate()
			var gate string
			for _, g := range gs {
				if g.Figure == figure {
					gate = g.Status
				}
			}
			if gate != c.gate {
				t.Errorf("gate status %q, want %q", gate, c.gate)
			}
		})
	}
}

// TestGOMAXPROCSReachesEverySpawn: -gomaxprocs N is validated, set in the
// environment of every spawned stdio server (the baseline's too) and named
// in the report's header; 0 leaves the environment alone.
func TestGOMAXPROCSReachesEverySpawn(t *testing.T) {
	base := Config{N: 1, Calls: 1, Timeout: 1, Protocol: "2025-06-18", Profiles: []string{"full"}}
	if bad := (Config{N: 1, Calls: 1, Timeout: 1, Protocol: "2025-06-18", Profiles: []string{"full"}, GOMAXPROCS: -1}); bad.Validate() == nil {
		t.Error("-gomaxprocs -1 accepted")
	}
	targets := []Target{{Name: "baseline"}, {Name: "full"}}
	for _, n := range []int{0, 1} {
		cfg := base
		cfg.GOMAXPROCS = n
		if err := cfg.Validate(); err != nil {
			t.Fatalf("-gomaxprocs %d: %v", n, err)
		}
		opts, err := spawnOptions(cfg, targets, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range opts {
			got := ""
			for _, kv := range o.Env {
				if v, ok := strings.CutPrefix(kv, "GOMAXPROCS="); ok {
					got = v
				}
			}
			if want := map[int]string{0: "", 1: "1"}[n]; got != want {
				t.Errorf("-gomaxprocs %d: %s spawns with GOMAXPROCS=%q, want %q", n, targets[i].Name, got, want)
			}
		}
		var b strings.Builder
		if err := (&Report{GOMAXPROCS: n}).WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		if named := strings.Contains(b.String(), "servers run with GOMAXPROCS=1"); named != (n == 1) {
			t.Errorf("-gomaxprocs %d: header names it %v:\n%s", n, named, b.String())
		}
	}
}
