package bench

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// GateLimit is one figure of the CI benchmark gate: a ratio to the
// minimal go-sdk server measured in the same run (never an absolute time,
// which moves with the machine and its load).
type GateLimit struct {
	Figure string  // what is compared
	Limit  float64 // the gate fails past this ratio
	// Target is the ratio issue 21 aims at (its absolute goals divided by
	// the minimal server's figures of the same harness); the gate reports
	// it but does not fail on it until the runtime meets it. 0: no target.
	Target float64
	get    func(*Row) Figure
	// report, when set instead of get, reads a figure that is not a row's
	// (the configuration it names, and NaN when the run did not measure it).
	report func(*Report) (string, Figure)
	// calls is the number of calls per spawn the figure needs (0: any).
	calls int
}

// GateLimits are the gate's figures. The limits sit above what the
// runtime measures today on a loaded 2-core machine (spawn → initialize
// 1.5–2.0×, and up to 3.06× in a run at load 35; RSS 2.4–2.6×, and up to
// 3.05× in that run, because the binary's file-backed pages move with
// the page cache; call p50 2.7–3.0×), so the gate catches a regression
// without failing on load — CI must pass with both cores busy; the
// targets are issue 21's. Since both servers are built static
// (CGO_ENABLED=0, see Build) the minimal server no longer pays for its
// dynamic loader, and spawn → initialize measured 3.08–4.41× in three
// runs at load 11–28, so that limit is 15% above the worst of them.
func GateLimits() []GateLimit {
	return []GateLimit{
		{Figure: "spawn → initialize", Limit: 5.1, Target: 1.2, get: func(x *Row) Figure { return x.Ratio.Init }},
		{Figure: "trivial call p50", Limit: 4, Target: 2, get: func(x *Row) Figure { return x.Ratio.CallP50 }},
		{Figure: "peak RSS after initialize", Limit: 3.5, Target: 16 / 9.8, get: func(x *Row) Figure { return x.Ratio.RSSInit }},
		{Figure: "peak RSS idle (after initialized and tools/list)", Limit: 3.5, Target: 16 / 9.8, get: func(x *Row) Figure { return x.Ratio.RSSIdle }},
		{Figure: "peak RSS after 2,000 calls", Limit: 3.5, Target: 24 / 14.3, get: func(x *Row) Figure { return x.Ratio.RSSCalls }, calls: 2000},
		// Anonymous memory (RssAnon: heap, stacks, the Go runtime) does not
		// move with the page cache: 1.45–1.53× after initialize and
		// 1.23–1.25× after 2,000 calls in three runs at load 31–32, so
		// these limits sat about 25% above the worst of them. Built static,
		// the minimal server's RssAnon after initialize fell from 1.5 to
		// 1.3 MiB (no libc) and the ratio rose to 1.61–1.72× (three runs,
		// load 11–28): that limit is now 25% above 1.72×.
		{Figure: "anonymous memory after initialize", Limit: 2.15, get: func(x *Row) Figure { return x.Ratio.AnonInit }},
		{Figure: "anonymous memory after 2,000 calls", Limit: 1.55, get: func(x *Row) Figure { return x.Ratio.AnonCalls }, calls: 2000},
		// HTTP against stdio is the runtime against itself in the same
		// rounds (serve-http's call p50 over the stdio row's), so load falls
		// on both; 1.8–2.2× at load 30–35 with JSON answers and a reused
		// connection (2.5–3.0× before), moving by 0.4× between runs, so
		// the limit leaves room for load and catches a per-request cost of
		// our own (guard, sessions, rate limit) growing to the size of a
		// call. The target is not met yet.
		{Figure: "HTTP call p50 (ratio to stdio, same run)", Limit: 4, Target: 1.2, report: httpCallRatio},
		{Figure: "HTTP p50 ÷ stdio p50, same graph call, worst", Limit: 2, Target: 1.2, report: graphHTTPRatio},
		// The graph shapes (-scale 100000, 30 calls per tool and shape):
		// each call's worst p50 over the four shapes over the minimal
		// server's trivial call p50 of the same run (n/a without -scale).
		// Four runs of the CI step on the 2-core machine at load 11–18
		// (both cores kept busy, other work besides) measured
		// get_work_graph 27.2–36.1×, with workId depth=3 26.0–45.0×,
		// list_work_items limit=100 64.5–90.9×, the minimal server's p50
		// 88–133 µs; each limit is about 15% above the worst of them. The
		// target is issue 21's 5 ms over that p50 in a quiet run (0.15 ms);
		// the absolute 5 ms is checked in the targets (checkGraphs).
		{Figure: "get_work_graph p50, worst shape", Limit: 42, Target: graphTargetRatio, report: graphRatio("get_work_graph")},
		{Figure: "get_work_graph workId depth=3 p50, worst shape", Limit: 52, Target: graphTargetRatio, report: graphRatio("get_work_graph workId depth=3")},
		{Figure: "list_work_items limit=100 p50, worst shape", Limit: 105, Target: graphTargetRatio, report: graphRatio("list_work_items limit=100")},
	}
}

// httpCallRatio is serve-http's call p50 over stdio's, NaN without -http.
func httpCallRatio(r *Report) (string, Figure) {
	if r.HTTP == nil || r.HTTP.Stdio == nil {
		return "", Figure(math.NaN())
	}
	return "HTTP " + r.HTTP.Profile, r.HTTP.Ratio.CallP50
}

// GateResult is one figure's verdict.
type GateResult struct {
	GateLimit
	Config string // the runtime row with the largest ratio
	Ratio  Figure
	Status string // pass, FAIL (past the limit) or n/a
	Met    string // the target: "met", "not met", or "" when not measured
}

// Gate evaluates GateLimits over the runtime's own rows (not the
// baseline, not a -compare build) and reports whether every figure is
// within its limit.
func (r *Report) Gate() ([]GateResult, bool) {
	ok := true
	var out []GateResult
	for _, l := range GateLimits() {
		g := GateResult{GateLimit: l, Status: "n/a", Ratio: Figure(math.NaN())}
		switch {
		case l.report != nil:
			g.Config, g.Ratio = l.report(r)
		case l.calls == 0 || r.Calls >= l.calls:
			g.Config, g.Ratio = r.worst(l.get)
		}
		if !math.IsNaN(float64(g.Ratio)) {
			g.Status, g.Met = "pass", "met"
			if float64(g.Ratio) > l.Limit {
				g.Status, ok = "FAIL", false
			}
			switch {
			case l.Target == 0:
				g.Met = ""
			case float64(g.Ratio) > l.Target:
				g.Met = "not met"
			}
		}
		out = append(out, g)
	}
	return out, ok
}

// WriteGate prints the gate's verdicts as a table.
func WriteGate(w io.Writer, gs []GateResult) error {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ratio to the minimal go-sdk server\tratio\tgate limit\tgate\ttarget\ttarget\tworst config\t\n")
	for _, g := range gs {
		target, met := "-", g.Met
		if g.Target > 0 {
			target = fmt.Sprintf("%.2f×", g.Target)
		} else if met == "" {
			met = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f×\t%s\t%s\t%s\t%s\t\n", g.Figure, times(g.Ratio), g.Limit, g.Status, target, met, g.Config)
	}
	return tw.Flush()
}
