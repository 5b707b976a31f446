package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-interop/runtime/catalogs"
)

// ScaleConfig is one `interop-bench scale` run.
type ScaleConfig struct {
	ModuleDir string
	Sizes     []int         // records of each kind to seed, one store per size
	Calls     int           // measured calls per tool and size
	Warmup    int           // unmeasured calls per tool first
	Timeout   time.Duration // per request
	Machine   string
	Progress  io.Writer
}

// Validate checks the figures a run depends on.
func (c ScaleConfig) Validate() error {
	switch {
	case len(c.Sizes) == 0:
		return errors.New("-sizes names no size")
	case c.Calls < 1:
		return fmt.Errorf("-calls must be at least 1, not %d", c.Calls)
	case c.Warmup < 0:
		return errors.New("-warmup must not be negative")
	case c.Timeout <= 0:
		return errors.New("-timeout must be positive")
	}
	for _, n := range c.Sizes {
		if n < 100 {
			return fmt.Errorf("size %d is below 100 records", n)
		}
	}
	return nil
}

// ScaleReport is a scale run's result.
type ScaleReport struct {
	Date    string      `json:"date"`
	Machine string      `json:"machine,omitempty"`
	Source  string      `json:"source,omitempty"`
	Go      string      `json:"go"`
	OS      string      `json:"os"`
	CPUs    int         `json:"cpus"`
	Calls   int         `json:"calls"`
	Sizes   []ScaleSize `json:"sizes"`
	Checks  []Check     `json:"checks"`
}

// ScaleSize is one store size: how it was seeded and every tool's figures.
type ScaleSize struct {
	N          int        `json:"n"`
	Seed       Seed       `json:"seed"`
	SeedSec    Figure     `json:"seedSeconds"`
	StoreMiB   Figure     `json:"storeMiB"`
	PeakRSSMiB Figure     `json:"peakRssMiB"` // VmHWM after every call of the size
	Rows       []ScaleRow `json:"rows"`
}

// ScaleRow is one tool call shape at one size.
type ScaleRow struct {
	Label      string `json:"label"` // tool and the arguments that matter
	Tool       string `json:"tool"`
	P50Us      Figure `json:"p50Us"`
	P99Us      Figure `json:"p99Us"`
	CPUUs      Figure `json:"cpuUsPerCall"`            // server CPU (all threads) per call
	Bytes      int    `json:"bytes"`                   // the text content of the last answer
	Tokens     int    `json:"tokens"`                  // its o200k tokens
	Budget     int    `json:"budget"`                  // the tool's answer budget (spec)
	Provider   bool   `json:"providerBound,omitempty"` // cost is the provider programs', not the store's
	NextCursor bool   `json:"nextCursor"`              // the answer offered another page
	Error      string `json:"error,omitempty"`
}

// scaleCall is one measured call shape; args may depend on the call index
// (writes need fresh resources and keys).
type scaleCall struct {
	label string
	tool  string
	args  func(sd Seed, i int) map[string]any
	// provider marks a call whose cost is asking the provider programs
	// (none is installed in the benchmark's environment), not the store.
	provider bool
}

func fixed(m map[string]any) func(Seed, int) map[string]any {
	return func(Seed, int) map[string]any { return m }
}

// scaleCalls are every read tool the store's size can affect, with default
// arguments (the budgets are for those) plus the filters and scopes that
// use other indexes, and the three writes the issue names.
func scaleCalls() []scaleCall {
	return []scaleCall{
		{"get_runtime_status", "get_runtime_status", fixed(nil), false},
		{"list_providers", "list_providers", fixed(nil), true},
		{"list_agent_sessions", "list_agent_sessions", fixed(nil), true},
		{"list_permission_requests", "list_permission_requests", fixed(nil), true},
		{"list_work_items", "list_work_items", fixed(nil), false},
		{"list_work_items status", "list_work_items", fixed(map[string]any{"status": "blocked"}), false},
		{"list_work_items session", "list_work_items", func(sd Seed, _ int) map[string]any { return map[string]any{"session": sd.Session} }, false},
		{"list_work_items limit=100", "list_work_items", fixed(map[string]any{"limit": 100}), false},
		{"get_work_item", "get_work_item", func(sd Seed, _ int) map[string]any { return map[string]any{"workId": sd.WorkID} }, false},
		{"get_work_graph", "get_work_graph", fixed(nil), false},
		{"get_work_graph workId depth=3", "get_work_graph", func(sd Seed, _ int) map[string]any {
			return map[string]any{"workId": sd.WorkID, "depth": 3}
		}, false},
		{"list_evidence", "list_evidence", fixed(nil), false},
		{"list_claims", "list_claims", fixed(nil), false},
		{"list_claims activeOnly", "list_claims", fixed(map[string]any{"activeOnly": true}), false},
		{"list_conversations", "list_conversations", fixed(nil), false},
		{"read_conversation", "read_conversation", func(sd Seed, _ int) map[string]any {
			return map[string]any{"conversationId": sd.ConversationID}
		}, false},
		{"read_session_events", "read_session_events", func(sd Seed, _ int) map[string]any {
			return map[string]any{"provider": sd.EventProvider, "nativeId": sd.EventSession}
		}, false},
		{"acquire_claim", "acquire_claim", func(sd Seed, i int) map[string]any {
			return map[string]any{"workId": sd.WorkID, "sessionId": "codex:bench", "resource": fmt.Sprintf("src/pkg0000/bench-%d/file.go", i)}
		}, false},
		{"create_work_item", "create_work_item", fixed(map[string]any{"objective": "Benchmark work", "acceptanceCriteria": []string{"it is stored"}}), false},
		{"send_conversation_message", "send_conversation_message", func(sd Seed, i int) map[string]any {
			return map[string]any{"conversationId": sd.ConversationID, "sender": sd.Sender, "recipient": sd.Recipient,
				"text": "Please look at the change.", "idempotencyKey": fmt.Sprintf("bench-%d", i)}
		}, false},
	}
}

// RunScale seeds one store per size, spawns the built runtime on each (full
// profile, isolated environment, no provider program on PATH) and
// measures every call shape through MCP.
func RunScale(ctx context.Context, c ScaleConfig) (*ScaleReport, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	progress := c.Progress
	if progress == nil {
		progress = io.Discard
	}
	tmp, err := os.MkdirTemp("", "interop-bench-scale-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "building %s…\n", runtimePkg)
	runtimeBin, _, err := Build(ctx, c.ModuleDir, filepath.Join(tmp, "bin"))
	if err != nil {
		return nil, err
	}
	counter, err := NewO200kCounter()
	if err != nil {
		return nil, err
	}
	budgets := map[string]int{}
	for _, e := range catalogs.All() {
		budgets[e.Name] = e.Budget
	}
	rep := &ScaleReport{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: c.Machine, Source: sourceRevision(ctx, c.ModuleDir),
		Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), Calls: c.Calls,
	}
	for _, n := range c.Sizes {
		dir := filepath.Join(tmp, fmt.Sprint("n", n))
		fmt.Fprintf(progress, "seeding %d of each record kind…\n", n)
		start := time.Now()
		sd, err := SeedStore(ctx, filepath.Join(dir, "interop.db"), n, time.Now(), progress)
		if err != nil {
			return nil, err
		}
		size := ScaleSize{N: n, Seed: sd, SeedSec: Figure(time.Since(start).Seconds())}
		if fi, err := os.Stat(filepath.Join(dir, "interop.db")); err == nil {
			size.StoreMiB = Figure(MiB(fi.Size()))
		}
		rep.Sizes = append(rep.Sizes, size)
	}
	if err := measureSizes(ctx, c, runtimeBin, tmp, rep.Sizes, counter, budgets, progress); err != nil {
		return nil, err
	}
	rep.check()
	return rep, nil
}

// scaleServer is the runtime spawned on one size's store.
type scaleServer struct {
	size *ScaleSize
	p    *process
	lat  []float64
	cpu  time.Duration
	last json.RawMessage
}

// measureSizes spawns one server per size and measures every call shape
// on all of them in turn, one call each per round, so a burst of load from
// elsewhere on the machine falls on every size alike and the ratio of
// sizes stays fair.
func measureSizes(ctx context.Context, c ScaleConfig, bin, tmp string, sizes []ScaleSize, counter Counter, budgets map[string]int, progress io.Writer) error {
	servers := make([]*scaleServer, len(sizes))
	for j := range sizes {
		size := &sizes[j]
		dir := filepath.Join(tmp, fmt.Sprint("n", size.N))
		env, err := IsolatedEnv(dir)
		if err != nil {
			return err
		}
		t := Target{Name: fmt.Sprintf("full on %d", size.N), Path: bin, Args: []string{"serve", "--profile", "full"}}
		o := SpawnOptions{Env: env, Dir: dir, Protocol: "2025-06-18", Timeout: c.Timeout}
		p, err := startProcess(t, o)
		if err != nil {
			return err
		}
		defer func() { _ = p.stop(ctx, min(o.Timeout, stopGrace)) }()
		if _, err := p.initialize(ctx, o); err != nil {
			return fmt.Errorf("size %d: initialize: %w%s", size.N, err, p.diagnosis())
		}
		if err := p.conn.Notify("notifications/initialized", nil); err != nil {
			return err
		}
		servers[j] = &scaleServer{size: size, p: p}
	}
	i := 0
	for _, sc := range scaleCalls() {
		fmt.Fprintf(progress, "  %s…\n", sc.label)
		for _, s := range servers {
			s.lat, s.cpu, s.last = nil, 0, nil
		}
		for k := 0; k < c.Warmup+c.Calls; k++ {
			i++
			for _, s := range servers {
				args := sc.args(s.size.Seed, i)
				if args == nil {
					args = map[string]any{}
				}
				pid := s.p.cmd.Process.Pid
				before, _ := ProcessCPU(pid)
				ex, err := s.p.call(ctx, c.Timeout, "tools/call", map[string]any{"name": sc.tool, "arguments": args})
				after, _ := ProcessCPU(pid)
				if err != nil {
					return fmt.Errorf("size %d: %s: %w%s", s.size.N, sc.label, err, s.p.diagnosis())
				}
				if k < c.Warmup {
					continue
				}
				s.lat = append(s.lat, Micros(ex.Latency()))
				s.cpu += after - before
				s.last = ex.Result
			}
		}
		for _, s := range servers {
			row := ScaleRow{Label: sc.label, Tool: sc.tool, Budget: budgets[sc.tool], Provider: sc.provider}
			row.P50Us, row.P99Us = Figure(Percentile(s.lat, 50)), Figure(Percentile(s.lat, 99))
			row.CPUUs = Figure(Micros(s.cpu) / float64(c.Calls))
			if runtime.GOOS != "linux" {
				row.CPUUs = Figure(math.NaN())
			}
			text, isErr, err := toolText(s.last)
			if err != nil {
				return fmt.Errorf("size %d: %s: %w", s.size.N, sc.label, err)
			}
			if isErr {
				row.Error = truncate([]byte(text), 160)
			}
			row.Bytes = len(text)
			if row.Tokens, err = counter.Count(text); err != nil {
				return err
			}
			row.NextCursor = strings.Contains(text, `"nextCursor":`)
			s.size.Rows = append(s.size.Rows, row)
		}
	}
	for _, s := range servers {
		rss, err := s.p.peakRSS()
		if err != nil {
			return err
		}
		s.size.PeakRSSMiB = rss
	}
	return nil
}

// toolText is the text content of a tools/call result and its isError.
func toolText(result json.RawMessage) (string, bool, error) {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(result, &r); err != nil || len(r.Content) == 0 {
		return "", false, fmt.Errorf("decode tools/call result: %v (%s)", err, truncate(result, 200))
	}
	return r.Content[0].Text, r.IsError, nil
}

// check evaluates the targets of the issue: at the largest size every
// call p50 ≤ 5 ms and ≤ 2× its own figure at the smallest, every default
// answer within its budget and 1 MiB, peak RSS ≤ 64 MiB.
func (r *ScaleReport) check() {
	if len(r.Sizes) == 0 {
		return
	}
	small, large := r.Sizes[0], r.Sizes[len(r.Sizes)-1]
	status := func(ok bool) string {
		if ok {
			return "pass"
		}
		return "FAIL"
	}
	worst := func(f func(ScaleRow) float64) (string, float64) {
		name, v := "", math.Inf(-1)
		for _, row := range large.Rows {
			if row.Provider {
				continue
			}
			if x := f(row); x > v {
				name, v = row.Label, x
			}
		}
		return name, v
	}
	name, p50 := worst(func(row ScaleRow) float64 { return float64(row.P50Us) })
	r.Checks = append(r.Checks, Check{Target: fmt.Sprintf("every store-bound call p50 ≤ 5 ms at %d", large.N), Source: "issue 8.7",
		Config: name, Value: Figure(p50 / 1000), Note: "ms", Status: status(p50 <= 5000)})
	if len(r.Sizes) > 1 {
		base := map[string]float64{}
		for _, row := range small.Rows {
			base[row.Label] = float64(row.P50Us)
		}
		name, ratio := worst(func(row ScaleRow) float64 { return Ratio(float64(row.P50Us), base[row.Label]) })
		r.Checks = append(r.Checks, Check{Target: fmt.Sprintf("every store-bound call p50 at %d ≤ 2× its p50 at %d", large.N, small.N), Source: "issue 8.7",
			Config: name, Value: Figure(ratio), Note: "×", Status: status(ratio <= 2)})
	}
	over, maxBytes, maxTok := "", 0, 0
	for _, sz := range r.Sizes {
		for _, row := range sz.Rows {
			if row.Budget > 0 && row.Tokens > row.Budget && over == "" {
				over = fmt.Sprintf("%s at %d: %d > %d", row.Label, sz.N, row.Tokens, row.Budget)
			}
			maxBytes, maxTok = max(maxBytes, row.Bytes), max(maxTok, row.Tokens)
		}
	}
	r.Checks = append(r.Checks, Check{Target: "every answer within its budget (default arguments: ≤ 8,000 o200k)", Source: "issue 8.2",
		Config: over, Value: Figure(maxTok), Note: "largest answer, tokens", Status: status(over == "" && maxTok <= 8000)})
	r.Checks = append(r.Checks, Check{Target: "no answer above 1 MiB", Source: "issue 8.2",
		Value: Figure(maxBytes), Note: "largest answer, bytes", Status: status(maxBytes <= 1<<20)})
	peak := 0.0
	for _, sz := range r.Sizes {
		peak = max(peak, float64(sz.PeakRSSMiB))
	}
	r.Checks = append(r.Checks, Check{Target: "peak RSS ≤ 64 MiB during the run", Source: "issue 8.7",
		Value: Figure(peak), Note: "MiB", Status: status(peak <= 64)})
}

// WriteJSON writes the report as indented JSON.
func (r *ScaleReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteTable writes one table with a column group per size, then the
// checks.
func (r *ScaleReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "interop-bench scale %s (%s, %d CPUs, %s)", r.Date, r.OS, r.CPUs, r.Go)
	if r.Machine != "" {
		fmt.Fprintf(ew, ", %s", r.Machine)
	}
	if r.Source != "" {
		fmt.Fprintf(ew, ", source %s", r.Source)
	}
	fmt.Fprintf(ew, "\n%d measured calls per tool and size; p50/p99 µs round trip, server CPU µs per call, answer bytes and o200k tokens (budget)\n\n", r.Calls)
	for _, sz := range r.Sizes {
		fmt.Fprintf(ew, "n = %d of each kind (%d works, %d evidence, %d active claims, %d messages in %d conversations, %d events in %d sessions); seeded in %.1f s, store %.1f MiB, peak RSS %.1f MiB\n",
			sz.N, sz.Seed.Works, sz.Seed.Evidence, sz.Seed.Claims, sz.Seed.Messages, sz.Seed.Conversations, sz.Seed.Events, sz.Seed.EventSessions,
			float64(sz.SeedSec), float64(sz.StoreMiB), float64(sz.PeakRSSMiB))
	}
	fmt.Fprintln(ew)
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "call\t"
	for _, sz := range r.Sizes {
		head += fmt.Sprintf("p50 %s\tp99\tcpu\tbytes\ttokens\t", short(sz.N))
	}
	fmt.Fprintln(tw, head+"budget\t")
	if len(r.Sizes) > 0 {
		for i, row := range r.Sizes[0].Rows {
			line := row.Label
			if row.Provider {
				line += " (provider-bound)"
			}
			line += "\t"
			for _, sz := range r.Sizes {
				x := sz.Rows[i]
				line += fmt.Sprintf("%.0f\t%.0f\t%.0f\t%d\t%d\t", float64(x.P50Us), float64(x.P99Us), float64(x.CPUUs), x.Bytes, x.Tokens)
			}
			fmt.Fprintln(tw, line+fmt.Sprintf("%d\t", row.Budget))
		}
	}
	tw.Flush()
	for _, sz := range r.Sizes {
		for _, row := range sz.Rows {
			if row.Error != "" {
				fmt.Fprintf(ew, "\nnote: %s at %d answered a tool error: %s", row.Label, sz.N, row.Error)
			}
		}
	}
	fmt.Fprintln(ew, "\n\nchecks:")
	for _, c := range r.Checks {
		fmt.Fprintf(ew, "  %-5s %s: %.2f %s", c.Status, c.Target, float64(c.Value), c.Note)
		if c.Config != "" {
			fmt.Fprintf(ew, " (%s)", c.Config)
		}
		fmt.Fprintln(ew)
	}
	return ew.err
}

func short(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return fmt.Sprintf("%dM", n/1000000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
