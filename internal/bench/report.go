package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Figure is a measured number; NaN (not measured) encodes as JSON null.
type Figure float64

// MarshalJSON writes f with at most three decimals, or null for NaN and
// infinities.
func (f Figure) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, math.Round(v*1000)/1000, 'f', -1, 64), nil
}

// Report is one run's result.
type Report struct {
	Date    string `json:"date"`
	Machine string `json:"machine,omitempty"`
	Source  string `json:"source,omitempty"` // the commit that was built
	Go      string `json:"go"`
	OS      string `json:"os"`
	CPUs    int    `json:"cpus"`
	Spawns  int    `json:"spawns"`
	Warmup  int    `json:"warmup"`
	Calls   int    `json:"calls"`
	// GOMAXPROCS is what the stdio servers were run with (0: the default).
	GOMAXPROCS int         `json:"gomaxprocs,omitempty"`
	Protocol   string      `json:"protocol"`
	Discover   bool        `json:"discover,omitempty"`
	Rows       []Row       `json:"rows"`
	InitTrace  *InitTraces `json:"initTrace,omitempty"`
	HTTP       *HTTPReport `json:"http,omitempty"`
	// Sessions is the first list_agent_sessions benchmark (-sessions).
	Sessions *SessionsReport `json:"sessions,omitempty"`
	// Scale is the graph shapes' get_work_graph and list_work_items
	// (-scale); their ratios divide by the baseline row's call p50.
	Scale  *ScaleReport `json:"scale,omitempty"`
	Checks []Check      `json:"checks"`
}

// HTTPReport is serve-http against stdio, in the same run.
type HTTPReport struct {
	Profile   string       `json:"profile"`
	Sessions  int          `json:"sessions"`  // measured sessions, one per round
	ListenMs  Figure       `json:"listenMs"`  // spawn → listening line, once
	InitMs    Figure       `json:"initMs"`    // a new session's initialize round trip on the running server
	CallP50Us Figure       `json:"callP50Us"` // per session, then the median over sessions
	CallP99Us Figure       `json:"callP99Us"`
	Stdio     *HTTPStdio   `json:"stdio,omitempty"`
	Ratio     HTTPRatios   `json:"ratioToStdio"`
	Samples   []HTTPSample `json:"samples"`
	Load      *LoadReport  `json:"load,omitempty"`
	// Minimal is the baseline's HTTP mode measured in the same rounds:
	// go-sdk's Streamable HTTP handler alone, the floor of serve-http.
	Minimal *HTTPFloor `json:"minimal,omitempty"`
}

// HTTPFloor is the minimal go-sdk server over HTTP (minimalserver -http,
// the SDK's handler with its default options, nothing in front), one
// session per round like serve-http's, with the same client and calls: how
// much of serve-http's cost over stdio any go-sdk server pays (Floor), and
// how much is the runtime's own (Ours).
type HTTPFloor struct {
	ListenMs  Figure `json:"listenMs"`
	InitMs    Figure `json:"initMs"`
	CallP50Us Figure `json:"callP50Us"`
	CallP99Us Figure `json:"callP99Us"`
	// Stdio are the baseline row's figures (the same server over stdio).
	Stdio *HTTPStdio `json:"stdio,omitempty"`
	// Floor is minimal HTTP ÷ minimal stdio: go-sdk's HTTP transport and
	// net/http on loopback against the SDK's stdio.
	Floor HTTPRatios `json:"floor"`
	// Ours is serve-http ÷ minimal HTTP: the runtime's share of its HTTP
	// cost beyond the floor.
	Ours HTTPRatios `json:"oursToMinimal"`
	// OursPairedCallP50 is the median over rounds of serve-http's call p50
	// ÷ the minimal server's in the same round (the two sessions run back
	// to back, so a round's load falls on both).
	OursPairedCallP50 Figure       `json:"oursPairedCallP50"`
	Samples           []HTTPSample `json:"samples"`
}

// HTTPStdio are the stdio figures HTTP is compared with.
type HTTPStdio struct {
	Row       string `json:"row"`
	InitMs    Figure `json:"initMs"` // spawn → initialize answered
	CallP50Us Figure `json:"callP50Us"`
	CallP99Us Figure `json:"callP99Us"`
}

// HTTPRatios are HTTP's medians divided by stdio's.
type HTTPRatios struct {
	Init    Figure `json:"init"`
	CallP50 Figure `json:"callP50"`
	CallP99 Figure `json:"callP99"`
}

// Row is one configuration: the medians over its spawns.
type Row struct {
	Name         string      `json:"name"`
	Baseline     bool        `json:"baseline,omitempty"`
	Compare      bool        `json:"compare,omitempty"`
	Spawns       int         `json:"spawns"`
	Protocol     string      `json:"protocol"` // as the server answered initialize
	Tool         string      `json:"tool"`     // the trivial tool called
	InitMs       Figure      `json:"initMs"`
	ListUs       Figure      `json:"listUs"`
	ListWarmUs   Figure      `json:"listWarmUs"`
	CallP50Us    Figure      `json:"callP50Us"`
	CallP99Us    Figure      `json:"callP99Us"`
	RSSInitMiB   Figure      `json:"rssInitMiB"`
	RSSIdleMiB   Figure      `json:"rssIdleMiB"`
	RSSCallsMiB  Figure      `json:"rssCallsMiB"`
	AnonInitMiB  Figure      `json:"anonInitMiB"`
	AnonIdleMiB  Figure      `json:"anonIdleMiB"`
	AnonCallsMiB Figure      `json:"anonCallsMiB"`
	List         ListingSize `json:"list"`
	Ratio        Ratios      `json:"ratioToBaseline"`
	Samples      []Sample    `json:"samples"`
}

// Ratios are a row's medians divided by the baseline's.
type Ratios struct {
	Init      Figure `json:"init"`
	List      Figure `json:"list"`
	CallP50   Figure `json:"callP50"`
	CallP99   Figure `json:"callP99"`
	RSSInit   Figure `json:"rssInit"`
	RSSIdle   Figure `json:"rssIdle"`
	RSSCalls  Figure `json:"rssCalls"`
	AnonInit  Figure `json:"anonInit"`
	AnonIdle  Figure `json:"anonIdle"`
	AnonCalls Figure `json:"anonCalls"`
}

// InitTraces are the GODEBUG=inittrace=1 sums of one run of each binary.
type InitTraces struct {
	Runtime  InitTrace `json:"runtime"`
	Baseline InitTrace `json:"baseline"`
}

// Check is one target of DESIGN.md §3 or §7 against this run.
type Check struct {
	Target string `json:"target"`
	Source string `json:"source"`
	Config string `json:"config,omitempty"` // the configuration with the worst value
	Value  Figure `json:"value"`
	Status string `json:"status"` // pass, FAIL or n/a
	Note   string `json:"note,omitempty"`
}

func (r *Report) baseline() *Row {
	for i := range r.Rows {
		if r.Rows[i].Baseline {
			return &r.Rows[i]
		}
	}
	return nil
}

func (r *Report) row(name string) *Row {
	for i := range r.Rows {
		if r.Rows[i].Name == name && !r.Rows[i].Baseline && !r.Rows[i].Compare {
			return &r.Rows[i]
		}
	}
	return nil
}

func (r *Report) addRatios() {
	b := r.baseline()
	if b == nil {
		return
	}
	ratio := func(v, base Figure) Figure { return Figure(Ratio(float64(v), float64(base))) }
	for i := range r.Rows {
		x := &r.Rows[i]
		x.Ratio = Ratios{
			Init:      ratio(x.InitMs, b.InitMs),
			List:      ratio(x.ListUs, b.ListUs),
			CallP50:   ratio(x.CallP50Us, b.CallP50Us),
			CallP99:   ratio(x.CallP99Us, b.CallP99Us),
			RSSInit:   ratio(x.RSSInitMiB, b.RSSInitMiB),
			RSSIdle:   ratio(x.RSSIdleMiB, b.RSSIdleMiB),
			RSSCalls:  ratio(x.RSSCallsMiB, b.RSSCallsMiB),
			AnonInit:  ratio(x.AnonInitMiB, b.AnonInitMiB),
			AnonIdle:  ratio(x.AnonIdleMiB, b.AnonIdleMiB),
			AnonCalls: ratio(x.AnonCallsMiB, b.AnonCallsMiB),
		}
	}
}

// worst is the largest value of f over the runtime's rows.
func (r *Report) worst(f func(*Row) Figure) (string, Figure) {
	name, v := "", Figure(math.NaN())
	for i := range r.Rows {
		x := &r.Rows[i]
		if x.Baseline || x.Compare {
			continue
		}
		if y := f(x); !math.IsNaN(float64(y)) && (name == "" || y > v) {
			name, v = x.Name, y
		}
	}
	return name, v
}

// Check evaluates the targets of DESIGN.md §7 (performance) and §3
// (catalog budgets) against the report and stores them in r.Checks.
func (r *Report) Check() {
	const s7, s3 = "DESIGN.md §7", "DESIGN.md §3"
	var cs []Check
	atMost := func(target, source string, limit float64, name string, v Figure, note string) {
		c := Check{Target: target, Source: source, Config: name, Value: v, Note: note, Status: "n/a"}
		if !math.IsNaN(float64(v)) {
			c.Status = "pass"
			if float64(v) > limit {
				c.Status = "FAIL"
			}
		}
		cs = append(cs, c)
	}
	worst := func(target string, limit float64, f func(*Row) Figure) {
		name, v := r.worst(f)
		atMost(target, s7, limit, name, v, "")
	}
	worst("spawn → initialize ≤ 8 ms", 8, func(x *Row) Figure { return x.InitMs })
	worst("spawn → initialize ≤ 1.8× the minimal go-sdk server", 1.8, func(x *Row) Figure { return x.Ratio.Init })
	if r.InitTrace != nil {
		atMost("total package init ≤ 2 ms (GODEBUG=inittrace=1)", s7, 2, "interop-runtime serve", Figure(Millis(r.InitTrace.Runtime.Total)), "one run")
	} else {
		atMost("total package init ≤ 2 ms (GODEBUG=inittrace=1)", s7, 2, "", Figure(math.NaN()), "not measured (-inittrace=false)")
	}
	worst("tools/list ≤ 1 ms (first call, µs shown)", 1000, func(x *Row) Figure { return x.ListUs })
	worst("trivial call p50 ≤ 150 µs", 150, func(x *Row) Figure { return x.CallP50Us })
	worst("trivial call p99 ≤ 700 µs", 700, func(x *Row) Figure { return x.CallP99Us })
	worst("peak RSS ≤ 16 MiB after initialize", 16, func(x *Row) Figure { return x.RSSInitMiB })
	worst("peak RSS ≤ 16 MiB idle (after initialized and tools/list, start-up work done)", 16, func(x *Row) Figure { return x.RSSIdleMiB })
	name, v := r.worst(func(x *Row) Figure { return x.RSSCallsMiB })
	if r.Calls >= 2000 {
		atMost("peak RSS ≤ 24 MiB after 2,000 calls", s7, 24, name, v, fmt.Sprintf("%d calls", r.Calls))
	} else {
		atMost("peak RSS ≤ 24 MiB after 2,000 calls", s7, 24, "", Figure(math.NaN()),
			fmt.Sprintf("not measured: this run made %d calls per spawn; run with -calls 2000", r.Calls))
	}

	budget := func(target string, limit float64, profile string, f func(*Row) float64) {
		if x := r.row(profile); x != nil {
			atMost(target, s3, limit, profile, Figure(f(x)), "")
		} else {
			atMost(target, s3, limit, "", Figure(math.NaN()), "profile "+profile+" not measured")
		}
	}
	// spec/profiles.yaml: 5,000 in DESIGN.md §3, raised to 5,300 for the
	// paging arguments of 15 collection tools (issue 8).
	budget("full tools/list ≤ 5,300 o200k tokens", 5300, "full", func(x *Row) float64 { return float64(x.List.Tokens) })
	budget("minimal tools/list ≤ 1,200 o200k tokens", 1200, "minimal", func(x *Row) float64 { return float64(x.List.Tokens) })
	name, v = r.worst(func(x *Row) Figure { return Figure(x.List.MaxToolTokens) })
	note := ""
	if x := r.row(name); x != nil {
		note = x.List.MaxTool
	}
	atMost("no tool over 300 o200k tokens in the model's view", s3, 300, name, v, note)
	if core, full := r.row("core"), r.row("full"); core != nil && full != nil {
		atMost("core ≤ 0.8× full in tools/list bytes", s3, 0.8, "core", Figure(Ratio(float64(core.List.Bytes), float64(full.List.Bytes))), "")
	} else {
		atMost("core ≤ 0.8× full in tools/list bytes", s3, 0.8, "", Figure(math.NaN()), "core and full not both measured")
	}
	if r.Sessions != nil {
		name, v := "", Figure(math.NaN())
		for _, row := range r.Sessions.Rows {
			if row.Programs && !strings.HasPrefix(row.Name, "compare") && (math.IsNaN(float64(v)) || row.FirstMs > v) {
				name, v = row.Name, row.FirstMs
			}
		}
		atMost("first list_agent_sessions ≤ 1 s with the real programs (ms)", "issue 21", 1000, name, v, fmt.Sprintf("median of %d spawns", r.Sessions.spawns()))
	} else {
		atMost("first list_agent_sessions ≤ 1 s with the real programs (ms)", "issue 21", 1000, "", Figure(math.NaN()), "not measured (-sessions 0)")
	}
	r.Checks = append(cs, r.checkGraphs()...)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write the JSON report: %w", err)
	}
	return nil
}

// WriteTable writes the medians, the ratios to the baseline, the init
// trace and the target checks as aligned text.
func (r *Report) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	machine := ""
	if r.Machine != "" {
		machine = r.Machine + ", "
	}
	fmt.Fprintf(ew, "interop-bench %s (%s%s, %d CPUs, %s)", r.Date, machine, r.OS, r.CPUs, r.Go)
	if r.Source != "" {
		fmt.Fprintf(ew, ", source %s", r.Source)
	}
	fmt.Fprintf(ew, "\nmedians of %d spawns per configuration (+%d warm-up), %d trivial calls per spawn, %s",
		r.Spawns, r.Warmup, r.Calls, r.handshake())
	if r.GOMAXPROCS > 0 {
		fmt.Fprintf(ew, ", servers run with GOMAXPROCS=%d", r.GOMAXPROCS)
	}
	fmt.Fprint(ew, "\n\n")

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "config\ttools\tinit ms\tlist µs\tlist warm µs\tlist bytes\tlist tokens\tmax tool tokens\tcall p50 µs\tcall p99 µs\tRSS init MiB\tRSS idle MiB\tRSS %d calls MiB\tanon init MiB\tanon idle MiB\tanon %d calls MiB\t\n", r.Calls, r.Calls)
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Name, x.List.Tools,
			num(x.InitMs, 2), num(x.ListUs, 0), num(x.ListWarmUs, 0), x.List.Bytes, x.List.Tokens, x.List.MaxToolTokens,
			num(x.CallP50Us, 0), num(x.CallP99Us, 0), num(x.RSSInitMiB, 1), num(x.RSSIdleMiB, 1), num(x.RSSCallsMiB, 1),
			num(x.AnonInitMiB, 1), num(x.AnonIdleMiB, 1), num(x.AnonCallsMiB, 1))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write the table: %w", err)
	}

	if b := r.baseline(); b != nil {
		fmt.Fprintf(ew, "\nratio to the baseline (minimal go-sdk server, same run)\n\n")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "config\tinit\tlist\tcall p50\tcall p99\tRSS init\tRSS idle\tRSS %d calls\tanon init\tanon idle\tanon %d calls\t\n", r.Calls, r.Calls)
		for _, x := range r.Rows {
			if x.Baseline {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Name, times(x.Ratio.Init), times(x.Ratio.List),
				times(x.Ratio.CallP50), times(x.Ratio.CallP99), times(x.Ratio.RSSInit), times(x.Ratio.RSSIdle), times(x.Ratio.RSSCalls),
				times(x.Ratio.AnonInit), times(x.Ratio.AnonIdle), times(x.Ratio.AnonCalls))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write the table: %w", err)
		}
	}

	if t := r.InitTrace; t != nil {
		fmt.Fprintf(ew, "\npackage init (GODEBUG=inittrace=1, one run): interop-runtime %.2f ms over %d inits (%d allocs, %d bytes); baseline %.2f ms over %d inits\n",
			Millis(t.Runtime.Total), len(t.Runtime.Packages), t.Runtime.Allocs, t.Runtime.Bytes, Millis(t.Baseline.Total), len(t.Baseline.Packages))
		var top []string
		for _, p := range t.Runtime.Top(5) {
			top = append(top, fmt.Sprintf("%s %.3f ms", p.Package, Millis(p.Clock)))
		}
		fmt.Fprintf(ew, "slowest: %s\n", strings.Join(top, ", "))
	}

	if h := r.HTTP; h != nil {
		writeHTTP(ew, h, r.Calls)
	}

	writeGraphScale(ew, r)

	if r.Sessions != nil {
		fmt.Fprintln(ew)
		if err := r.Sessions.WriteTable(ew); err != nil {
			return fmt.Errorf("write the sessions table: %w", err)
		}
	}

	if len(r.Checks) > 0 {
		fmt.Fprintf(ew, "\ntargets\n\n")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, c := range r.Checks {
			val := "-"
			if !math.IsNaN(float64(c.Value)) {
				val = strconv.FormatFloat(math.Round(float64(c.Value)*100)/100, 'f', -1, 64)
			}
			where := c.Config
			if c.Note != "" {
				where = strings.TrimSpace(where + " " + "(" + c.Note + ")")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Status, c.Target, val, where)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write the table: %w", err)
		}
	}
	return ew.err
}

// handshake describes how sessions were opened and what the servers chose.
func (r *Report) handshake() string {
	if r.Discover {
		return "server/discover at protocol " + r.Protocol + " (sessionless, no initialize)"
	}
	var answered []string
	for _, x := range r.Rows {
		if !slices.Contains(answered, x.Protocol) {
			answered = append(answered, x.Protocol)
		}
	}
	return fmt.Sprintf("initialize protocolVersion %s (answered %s)", r.Protocol, strings.Join(answered, ", "))
}

func num(f Figure, decimals int) string {
	if math.IsNaN(float64(f)) {
		return "-"
	}
	return strconv.FormatFloat(float64(f), 'f', decimals, 64)
}

func times(f Figure) string {
	if math.IsNaN(float64(f)) {
		return "-"
	}
	return strconv.FormatFloat(float64(f), 'f', 2, 64) + "×"
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func writeHTTP(w io.Writer, h *HTTPReport, calls int) {
	fmt.Fprintf(w, "\nHTTP: serve-http --profile %s, one server for the run (listening %s ms after spawn), %d sessions one per round, %d trivial calls each; medians\n\n",
		h.Profile, num(h.ListenMs, 1), h.Sessions, calls)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	stdio := func(f func(*HTTPStdio) Figure) Figure { return stdioFigure(h.Stdio, f) }
	fmt.Fprintf(tw, "\tstdio\tHTTP\tHTTP/stdio\t\n")
	fmt.Fprintf(tw, "initialize ms\t%s\t%s\t%s\t\n", num(stdio(func(s *HTTPStdio) Figure { return s.InitMs }), 2), num(h.InitMs, 2), times(h.Ratio.Init))
	fmt.Fprintf(tw, "call p50 µs\t%s\t%s\t%s\t\n", num(stdio(func(s *HTTPStdio) Figure { return s.CallP50Us }), 0), num(h.CallP50Us, 0), times(h.Ratio.CallP50))
	fmt.Fprintf(tw, "call p99 µs\t%s\t%s\t%s\t\n", num(stdio(func(s *HTTPStdio) Figure { return s.CallP99Us }), 0), num(h.CallP99Us, 0), times(h.Ratio.CallP99))
	_ = tw.Flush()
	fmt.Fprintln(w, "(stdio initialize: spawn → answer, a new process per session; HTTP initialize: POST → answer, a new session on the running server)")
	if m := h.Minimal; m != nil {
		writeHTTPFloor(w, h, m)
	}
	if l := h.Load; l != nil {
		fmt.Fprintf(w, "\nHTTP load: %d concurrent sessions × %d %s calls on one server: %d requests; 2xx %d, 4xx %d, 5xx %d, transport errors %d, JSON-RPC errors %d, tool errors %d, cross-session leaks %d\n",
			l.Sessions, l.CallsPerSession, l.Tool, l.Requests, l.Status["2xx"], l.Status["4xx"], l.Status["5xx"], l.TransportErrors, l.RPCErrors, l.ToolErrors, l.Leaks)
		fmt.Fprintf(w, "call latency p50 %s µs, p99 %s µs, max %s µs; %s s wall, %s calls/s\n", num(l.P50Us, 0), num(l.P99Us, 0), num(l.MaxUs, 0), num(l.WallS, 1), num(l.CallsPerSecond, 0))
		if l.FirstError != "" {
			fmt.Fprintf(w, "first error: %s\n", l.FirstError)
		}
	}
}

// writeHTTPFloor writes the minimal server's HTTP figures beside
// serve-http's: the floor (minimal HTTP ÷ minimal stdio) and ours
// (serve-http ÷ minimal HTTP).
func writeHTTPFloor(w io.Writer, h *HTTPReport, m *HTTPFloor) {
	fmt.Fprintf(w, "\nHTTP floor: minimalserver -http (go-sdk's Streamable HTTP handler alone, default options), listening %s ms after spawn, %d sessions in the same rounds; medians\n\n",
		num(m.ListenMs, 1), len(m.Samples))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	stdio := func(f func(*HTTPStdio) Figure) Figure { return stdioFigure(m.Stdio, f) }
	fmt.Fprintf(tw, "\tminimal stdio\tminimal HTTP\tfloor: minimal HTTP/stdio\tserve-http\tours: serve-http/minimal HTTP\t\n")
	fmt.Fprintf(tw, "initialize ms\t%s\t%s\t%s\t%s\t%s\t\n", num(stdio(func(s *HTTPStdio) Figure { return s.InitMs }), 2), num(m.InitMs, 2), times(m.Floor.Init), num(h.InitMs, 2), times(m.Ours.Init))
	fmt.Fprintf(tw, "call p50 µs\t%s\t%s\t%s\t%s\t%s\t\n", num(stdio(func(s *HTTPStdio) Figure { return s.CallP50Us }), 0), num(m.CallP50Us, 0), times(m.Floor.CallP50), num(h.CallP50Us, 0), times(m.Ours.CallP50))
	fmt.Fprintf(tw, "call p99 µs\t%s\t%s\t%s\t%s\t%s\t\n", num(stdio(func(s *HTTPStdio) Figure { return s.CallP99Us }), 0), num(m.CallP99Us, 0), times(m.Floor.CallP99), num(h.CallP99Us, 0), times(m.Ours.CallP99))
	_ = tw.Flush()
	fmt.Fprintf(w, "serve-http/minimal HTTP call p50, paired by round: %s (median of the rounds' ratios)\n", times(m.OursPairedCallP50))
}

// stdioFigure is f of the stdio figures an HTTP table compares with, or
// NaN (shown as "-") when there are none.
func stdioFigure(s *HTTPStdio, f func(*HTTPStdio) Figure) Figure {
	if s == nil {
		return Figure(math.NaN())
	}
	return f(s)
}
