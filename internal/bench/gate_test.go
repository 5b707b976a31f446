package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestGate: a ratio past its limit fails the gate, a -compare row is left
// out, the 2,000-call figure needs 2,000 calls, and a figure between its
// target and its limit passes with the target "not met".
func TestGate(t *testing.T) {
	report := func(calls int, initMs, rssInit, rssCalls Figure) *Report {
		r := &Report{Calls: calls, Rows: []Row{
			{Name: "baseline", Baseline: true, InitMs: 10, CallP50Us: 100, RSSInitMiB: 10, RSSCallsMiB: 10},
			{Name: "full", InitMs: initMs, CallP50Us: 250, RSSInitMiB: rssInit, RSSCallsMiB: rssCalls},
			{Name: "compare: full", Compare: true, InitMs: 1000, CallP50Us: 1000, RSSInitMiB: 100, RSSCallsMiB: 100},
		}}
		r.addRatios()
		return r
	}
	byFigure := func(gs []GateResult) map[string]GateResult {
		m := map[string]GateResult{}
		for _, g := range gs {
			m[g.Figure] = g
		}
		return m
	}

	gs, ok := report(2000, 15, 20, 22).Gate()
	g := byFigure(gs)
	if !ok {
		t.Fatalf("gate failed within its limits: %+v", gs)
	}
	if x := g["spawn → initialize"]; x.Status != "pass" || x.Met != "not met" || x.Ratio != 1.5 || x.Config != "full" {
		t.Errorf("initialize = %+v", x)
	}
	if x := g["peak RSS after 2,000 calls"]; x.Status != "pass" || x.Ratio != 2.2 {
		t.Errorf("RSS after calls = %+v", x)
	}

	gs, ok = report(2000, 60, 20, 40).Gate()
	g = byFigure(gs)
	if ok || g["spawn → initialize"].Status != "FAIL" || g["peak RSS after 2,000 calls"].Status != "FAIL" || g["peak RSS after initialize"].Status != "pass" {
		t.Errorf("gate past its limits: ok %v, %+v", ok, gs)
	}

	gs, ok = report(200, 12, 15, 99).Gate()
	g = byFigure(gs)
	if !ok || g["peak RSS after 2,000 calls"].Status != "n/a" || g["spawn → initialize"].Met != "met" {
		t.Errorf("200 calls: ok %v, %+v", ok, gs)
	}
	var b bytes.Buffer
	if err := WriteGate(&b, gs); err != nil || !strings.Contains(b.String(), "peak RSS after 2,000 calls") {
		t.Errorf("WriteGate: %v\n%s", err, b.String())
	}

	// Anonymous memory has its own limits and no target.
	for _, c := range []struct {
		anonInit, anonCalls Figure
		ok                  bool
		failed              string
	}{
		{1.5, 6.2 * 1.3, true, ""},
		{1.5 * 2.5, 6.2 * 1.3, false, "anonymous memory after initialize"},
		{1.5, 6.2 * 1.6, false, "anonymous memory after 2,000 calls"},
	} {
		r := report(2000, 15, 20, 22)
		r.Rows[0].AnonInitMiB, r.Rows[0].AnonCallsMiB = 1.5, 6.2
		r.Rows[1].AnonInitMiB, r.Rows[1].AnonCallsMiB = c.anonInit, c.anonCalls
		r.addRatios()
		gs, ok := r.Gate()
		g := byFigure(gs)
		if ok != c.ok || (c.failed != "" && g[c.failed].Status != "FAIL") {
			t.Errorf("anonymous %v / %v MiB: ok %v, %+v", c.anonInit, c.anonCalls, ok, gs)
		}
		if x := g["anonymous memory after initialize"]; x.Met != "" || x.Status == "n/a" {
			t.Errorf("anonymous memory after initialize = %+v, want measured with no target", x)
		}
	}

	// HTTP against stdio: n/a without -http, pass within the limit (target
	// not met above 1.2×), FAIL past it.
	const httpFigure = "HTTP call p50 (ratio to stdio, same run)"
	if g := byFigure(mustGate(t, report(2000, 15, 20, 22), true)); g[httpFigure].Status != "n/a" {
		t.Errorf("no HTTP run: %+v", g[httpFigure])
	}
	for _, c := range []struct {
		ratio      Figure
		ok         bool
		status     string
		targetMet  string
		configName string
	}{
		{1.1, true, "pass", "met", "HTTP full"},
		{2.5, true, "pass", "not met", "HTTP full"},
		{4.5, false, "FAIL", "not met", "HTTP full"},
	} {
		r := report(2000, 15, 20, 22)
		r.HTTP = &HTTPReport{Profile: "full", Stdio: &HTTPStdio{Row: "full"}, Ratio: HTTPRatios{CallP50: c.ratio}}
		x := byFigure(mustGate(t, r, c.ok))[httpFigure]
		if x.Status != c.status || x.Met != c.targetMet || x.Config != c.configName || x.Ratio != c.ratio {
			t.Errorf("HTTP %v×: %+v", c.ratio, x)
		}
	}
}

// mustGate evaluates r's gate and fails the test unless it passes or fails
// as ok says.
func mustGate(t *testing.T, r *Report, ok bool) []GateResult {
	t.Helper()
	gs, got := r.Gate()
	if got != ok {
		t.Errorf("gate ok = %v, want %v: %+v", got, ok, gs)
	}
	return gs
}
