package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/bench/directhttp"
	"github.com/agent-interop/runtime/internal/store"
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
	// Stores are the store dialects to measure (StoreSQLite,
	// StorePostgres; default SQLite only), every size of each, all in the
	// same rounds.
	Stores []string
	// PostgresURL is the database of an existing server for the
	// PostgreSQL stores (a schema per size, dropped afterwards; the role
	// needs CREATE on the database). Empty starts a throw-away cluster
	// (internal/testutil/pgtest), which needs the server programs.
	PostgresURL string
	// Shapes are the graph shapes of the seeded works (Shapes; default
	// ShapeChain only), every size of each.
	Shapes []string
	// Only keeps the call shapes whose label starts with one of these
	// prefixes (all when empty).
	Only []string
	// HTTP also serves every size's store with serve-http and makes each
	// read call (get_*, list_*) over HTTP too, right after the same call
	// over stdio, so each row has both p50s of the same call: HTTP's cost
	// as a ratio to stdio's for calls that do real work, next to the main
	// run's trivial call. HTTPClient is its client (default
	// directhttp.Transport, as the main run's).
	HTTP       bool
	HTTPClient *http.Client
	// GraphOnly seeds only the works, their evidence and their claims
	// (SeedGraph): enough for get_work_graph and list_work_items, not for
	// the conversation and session-event calls.
	GraphOnly bool
}

// shapes is c.Shapes, ShapeChain when none is named.
func (c ScaleConfig) shapes() []string {
	if len(c.Shapes) == 0 {
		return []string{ShapeChain}
	}
	return c.Shapes
}

// calls are the call shapes the run measures.
func (c ScaleConfig) calls() []scaleCall {
	if len(c.Only) == 0 {
		return scaleCalls()
	}
	var out []scaleCall
	for _, sc := range scaleCalls() {
		for _, p := range c.Only {
			if strings.HasPrefix(sc.label, p) {
				out = append(out, sc)
				break
			}
		}
	}
	return out
}

// stores is c.Stores, SQLite when none is named.
func (c ScaleConfig) stores() []string {
	if len(c.Stores) == 0 {
		return []string{StoreSQLite}
	}
	return c.Stores
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
	sizes := map[int]bool{}
	for _, n := range c.Sizes {
		switch {
		case n < 100:
			return fmt.Errorf("size %d is below 100 records", n)
		case sizes[n]:
			return fmt.Errorf("-sizes: %d is named twice", n)
		}
		sizes[n] = true
	}
	seen := map[string]bool{}
	for _, d := range c.stores() {
		switch {
		case d != StoreSQLite && d != StorePostgres:
			return fmt.Errorf("-store: %q is not a store dialect (%s or %s)", d, StoreSQLite, StorePostgres)
		case seen[d]:
			return fmt.Errorf("-store: %s is named twice", d)
		}
		seen[d] = true
	}
	shapes := map[string]bool{}
	for _, sh := range c.shapes() {
		switch {
		case !validShape(sh):
			return fmt.Errorf("-shapes: %q is not a graph shape (%s)", sh, strings.Join(Shapes(), ", "))
		case shapes[sh]:
			return fmt.Errorf("-shapes: %s is named twice", sh)
		}
		shapes[sh] = true
	}
	if len(c.calls()) == 0 {
		return fmt.Errorf("-only: %q selects no call", strings.Join(c.Only, ","))
	}
	if c.GraphOnly {
		for _, sc := range c.calls() {
			if !slices.Contains(graphOnlyTools, sc.tool) {
				return fmt.Errorf("%s reads records a graph-only seed does not write", sc.label)
			}
		}
	}
	if c.PostgresURL != "" {
		if !store.IsPostgres(c.PostgresURL) {
			return fmt.Errorf("-db: %s is not a postgres:// or postgresql:// URL", store.RedactDSN(c.PostgresURL))
		}
		if !seen[StorePostgres] {
			return fmt.Errorf("-db names a PostgreSQL server but -store does not include %s", StorePostgres)
		}
	}
	return nil
}

// graphOnlyTools are the tools a GraphOnly seed serves: they read only
// works, their dependencies, claims and evidence.
var graphOnlyTools = []string{"get_runtime_status", "list_work_items", "get_work_item", "get_work_graph", "list_evidence", "list_claims"}

// ScaleReport is a scale run's result.
type ScaleReport struct {
	Date    string `json:"date"`
	Machine string `json:"machine,omitempty"`
	Source  string `json:"source,omitempty"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	CPUs    int    `json:"cpus"`
	Calls   int    `json:"calls"`
	HTTP    bool   `json:"http"` // the reads were also made over HTTP (ScaleConfig.HTTP)
	// Postgres describes the PostgreSQL server of the postgres stores.
	Postgres string      `json:"postgres,omitempty"`
	Sizes    []ScaleSize `json:"sizes"` // every dialect's sizes, dialect by dialect
	Checks   []Check     `json:"checks"`
}

// ScaleSize is one store size: how it was seeded and every tool's figures.
type ScaleSize struct {
	Store      string `json:"store"` // StoreSQLite or StorePostgres
	Shape      string `json:"shape"` // the works' graph shape (Shapes)
	N          int    `json:"n"`
	Seed       Seed   `json:"seed"`
	SeedSec    Figure `json:"seedSeconds"`
	StoreMiB   Figure `json:"storeMiB"`
	PeakRSSMiB Figure `json:"peakRssMiB"` // VmHWM after every call of the size
	// AnonMiB is RssAnon then (heap, stacks, SQLite's memory; not a
	// peak): the rest of the resident set is file-backed, the binary's
	// pages that the calls touched.
	AnonMiB Figure     `json:"anonMiB"`
	Rows    []ScaleRow `json:"rows"`

	location string   // what the served runtime's INTEROP_DB names
	dir      string   // its working directory
	env      []string // its environment
}

// name is the size and dialect for messages: "10000 on postgres".
func (sz *ScaleSize) name() string { return fmt.Sprintf("%d on %s", sz.N, sz.group()) }

// group is the table a size belongs to: its dialect, and its shape unless
// that is ShapeChain ("sqlite, tree shape").
func (sz *ScaleSize) group() string {
	if sz.Shape == "" || sz.Shape == ShapeChain {
		return sz.Store
	}
	return sz.Store + ", " + sz.Shape + " shape"
}

// ScaleRow is one tool call shape at one size.
type ScaleRow struct {
	Label string `json:"label"` // tool and the arguments that matter
	Tool  string `json:"tool"`
	P50Us Figure `json:"p50Us"`
	P99Us Figure `json:"p99Us"`
	CPUUs Figure `json:"cpuUsPerCall"` // server CPU (all threads) per call
	// HTTPP50Us is the same call's p50 over HTTP (ScaleConfig.HTTP; null
	// when not measured: writes, and runs without HTTP).
	HTTPP50Us Figure `json:"httpP50Us"`
	// HTTPCPUUs is serve-http's CPU (all threads) per call of those.
	HTTPCPUUs  Figure `json:"httpCpuUsPerCall"`
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
	return runScale(ctx, c, runtimeBin, tmp, progress)
}

// runScale is RunScale with the runtime built: it seeds the stores in
// directories under tmp, measures them and checks the report.
func runScale(ctx context.Context, c ScaleConfig, runtimeBin, tmp string, progress io.Writer) (*ScaleReport, error) {
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
		Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), Calls: c.Calls, HTTP: c.HTTP,
	}
	var pg *pgStores
	for _, d := range c.stores() {
		if d == StorePostgres {
			if pg, err = openPGStores(ctx, c.PostgresURL, progress); err != nil {
				return nil, err
			}
			defer func() {
				if err := pg.close(ctx); err != nil {
					fmt.Fprintf(progress, "clean up the PostgreSQL stores: %v\n", err)
				}
			}()
			rep.Postgres = pg.server
		}
	}
	if rep.Sizes, err = seedSizes(ctx, c, tmp, pg, progress); err != nil {
		return nil, err
	}
	if err := measureSizes(ctx, c, runtimeBin, rep.Sizes, counter, budgets, progress); err != nil {
		return nil, err
	}
	rep.check()
	return rep, nil
}

// seedSizes seeds every store of c, one after the other so that each
// size's seed time is its own; with c.GraphOnly on SQLite (the main run's
// graph shapes, where the seed is a cost, not a figure) the shapes of a
// size share one seed of the works and claims (SeedGraphs), and each
// size's seed time is that of all its shapes together.
func seedSizes(ctx context.Context, c ScaleConfig, tmp string, pg *pgStores, progress io.Writer) ([]ScaleSize, error) {
	var sizes []ScaleSize
	for _, d := range c.stores() {
		for _, shape := range c.shapes() {
			for _, n := range c.Sizes {
				size, err := newSize(ctx, d, shape, n, tmp, pg)
				if err != nil {
					return nil, err
				}
				sizes = append(sizes, size)
			}
		}
	}
	if c.GraphOnly && pg == nil {
		return sizes, seedGraphSizes(ctx, sizes, tmp, progress)
	}
	for i := range sizes {
		if err := seedSize(ctx, &sizes[i], c.GraphOnly, pg, progress); err != nil {
			return nil, err
		}
	}
	return sizes, nil
}

// seedGraphSizes seeds the SQLite sizes of each n with SeedGraphs, the
// shared base store in tmp.
func seedGraphSizes(ctx context.Context, sizes []ScaleSize, tmp string, progress io.Writer) error {
	var ns []int
	for _, sz := range sizes {
		if !slices.Contains(ns, sz.N) {
			ns = append(ns, sz.N)
		}
	}
	for _, n := range ns {
		var idx []int
		var shapes, locs []string
		for i, sz := range sizes {
			if sz.N == n {
				idx, shapes, locs = append(idx, i), append(shapes, sz.Shape), append(locs, sz.location)
			}
		}
		fmt.Fprintf(progress, "seeding %d works with their claims, then the dependencies and evidence of each shape (%s)…\n", n, strings.Join(shapes, ", "))
		start := time.Now()
		seeds, err := SeedGraphs(ctx, filepath.Join(tmp, fmt.Sprintf("graph-base-n%d.db", n)), shapes, locs, n, time.Now(), progress)
		if err != nil {
			return err
		}
		sec := Figure(time.Since(start).Seconds())
		for k, i := range idx {
			sizes[i].Seed, sizes[i].SeedSec = seeds[k], sec
			if fi, err := os.Stat(sizes[i].location); err == nil {
				sizes[i].StoreMiB = Figure(MiB(fi.Size()))
			}
		}
	}
	return nil
}

// newSize is the size of n records on dialect d in shape, unseeded: its
// directory, store location and the environment its served runtime runs
// in (isolated, INTEROP_DB naming the store).
func newSize(ctx context.Context, d, shape string, n int, tmp string, pg *pgStores) (ScaleSize, error) {
	size := ScaleSize{Store: d, Shape: shape, N: n}
	dir := filepath.Join(tmp, fmt.Sprintf("%s-%s-n%d", d, shape, n))
	env, err := IsolatedEnv(dir)
	if err != nil {
		return size, err
	}
	size.location = filepath.Join(dir, "interop.db")
	if d == StorePostgres {
		if size.location, err = pg.location(ctx, shape, n); err != nil {
			return size, err
		}
		// The URL goes into the environment, never onto a command line.
		env = withEnv(env, append(pg.env(), "INTEROP_DB="+size.location)...)
	}
	size.dir, size.env = dir, env
	return size, nil
}

// seedSize seeds the store of size (SeedShape, or SeedGraph with
// graphOnly) and records how long that took and the store's size.
func seedSize(ctx context.Context, size *ScaleSize, graphOnly bool, pg *pgStores, progress io.Writer) error {
	d, shape, n := size.Store, size.Shape, size.N
	fmt.Fprintf(progress, "seeding %d of each record kind on %s…\n", n, size.group())
	start := time.Now()
	seed := SeedShape
	if graphOnly {
		seed = SeedGraph
	}
	var err error
	if size.Seed, err = seed(ctx, size.location, shape, n, time.Now(), progress); err != nil {
		return fmt.Errorf("store %s: %w", size.name(), err)
	}
	size.SeedSec = Figure(time.Since(start).Seconds())
	if d == StorePostgres {
		if err := pg.vacuum(ctx, shape, n); err != nil {
			return err
		}
		mib, err := pg.sizeMiB(ctx, shape, n)
		if err != nil {
			return err
		}
		size.StoreMiB = Figure(mib)
	} else if fi, err := os.Stat(size.location); err == nil {
		size.StoreMiB = Figure(MiB(fi.Size()))
	}
	return nil
}

// scaleServer is the runtime spawned on one size's store, and with
// ScaleConfig.HTTP its serve-http on the same store.
type scaleServer struct {
	size    *ScaleSize
	p       *process
	lat     []float64
	cpu     time.Duration
	last    json.RawMessage
	http    *HTTPSession
	httpPid int
	httpLat []float64
	httpCPU time.Duration
}

// overHTTP reports whether a call shape is also measured over HTTP: the
// reads, which can be made twice with the same arguments.
func overHTTP(tool string) bool {
	return strings.HasPrefix(tool, "get_") || strings.HasPrefix(tool, "list_")
}

// startScaleHTTP serves size's store with serve-http and opens a session.
func startScaleHTTP(ctx context.Context, c ScaleConfig, bin string, size *ScaleSize) (*HTTPServer, *HTTPSession, error) {
	hs, err := StartHTTPServer(ctx, bin, []string{"--profile", "full"}, size.env, size.dir, c.Timeout)
	if err != nil {
		return nil, nil, fmt.Errorf("size %s: %w", size.name(), err)
	}
	client := c.HTTPClient
	if client == nil {
		client = &http.Client{Transport: &directhttp.Transport{}}
	}
	sess := NewHTTPSession(hs.URL, hs.Token, client)
	cctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if _, err := sess.Initialize(cctx, "2025-06-18"); err != nil {
		hs.Stop()
		return nil, nil, fmt.Errorf("size %s: HTTP initialize: %w", size.name(), err)
	}
	return hs, sess, nil
}

// measureSizes spawns one server per size and measures every call shape
// on all of them in turn, one call each per round, so a burst of load from
// elsewhere on the machine falls on every size alike and the ratio of
// sizes stays fair.
func measureSizes(ctx context.Context, c ScaleConfig, bin string, sizes []ScaleSize, counter Counter, budgets map[string]int, progress io.Writer) error {
	servers := make([]*scaleServer, len(sizes))
	for j := range sizes {
		size := &sizes[j]
		t := Target{Name: "full on " + size.name(), Path: bin, Args: []string{"serve", "--profile", "full"}}
		o := SpawnOptions{Env: size.env, Dir: size.dir, Protocol: "2025-06-18", Timeout: c.Timeout}
		p, err := startProcess(t, o)
		if err != nil {
			return err
		}
		defer func() { _ = p.stop(ctx, min(o.Timeout, stopGrace)) }()
		if _, err := p.initialize(ctx, o); err != nil {
			return fmt.Errorf("size %s: initialize: %w%s", size.name(), err, p.diagnosis())
		}
		if err := p.conn.Notify("notifications/initialized", nil); err != nil {
			return err
		}
		servers[j] = &scaleServer{size: size, p: p}
		if c.HTTP {
			hs, sess, err := startScaleHTTP(ctx, c, bin, size)
			if err != nil {
				return err
			}
			defer hs.Stop()
			defer func() {
				cctx, cancel := context.WithTimeout(ctx, c.Timeout)
				defer cancel()
				_ = sess.Close(cctx)
			}()
			servers[j].http, servers[j].httpPid = sess, hs.cmd.Process.Pid
		}
	}
	i := 0
	for _, sc := range c.calls() {
		fmt.Fprintf(progress, "  %s…\n", sc.label)
		for _, s := range servers {
			s.lat, s.cpu, s.last, s.httpLat, s.httpCPU = nil, 0, nil, nil, 0
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
					return fmt.Errorf("size %s: %s: %w%s", s.size.name(), sc.label, err, s.p.diagnosis())
				}
				if k < c.Warmup {
					continue
				}
				s.lat = append(s.lat, Micros(ex.Latency()))
				s.cpu += after - before
				s.last = ex.Result
				if s.http != nil && overHTTP(sc.tool) {
					before, _ := ProcessCPU(s.httpPid)
					hx, err := s.callHTTP(ctx, c.Timeout, sc.tool, args)
					after, _ := ProcessCPU(s.httpPid)
					if err != nil {
						return fmt.Errorf("size %s: %s over HTTP: %w", s.size.name(), sc.label, err)
					}
					s.httpLat = append(s.httpLat, Micros(hx.Latency()))
					s.httpCPU += after - before
				}
			}
		}
		for _, s := range servers {
			row := ScaleRow{Label: sc.label, Tool: sc.tool, Budget: budgets[sc.tool], Provider: sc.provider}
			row.P50Us, row.P99Us = Figure(Percentile(s.lat, 50)), Figure(Percentile(s.lat, 99))
			row.HTTPP50Us, row.HTTPCPUUs = Figure(math.NaN()), Figure(math.NaN())
			if len(s.httpLat) > 0 {
				row.HTTPP50Us = Figure(Percentile(s.httpLat, 50))
				if runtime.GOOS == "linux" {
					row.HTTPCPUUs = Figure(Micros(s.httpCPU) / float64(len(s.httpLat)))
				}
			}
			row.CPUUs = Figure(Micros(s.cpu) / float64(c.Calls))
			if runtime.GOOS != "linux" {
				row.CPUUs = Figure(math.NaN())
			}
			text, isErr, err := toolText(s.last)
			if err != nil {
				return fmt.Errorf("size %s: %s: %w", s.size.name(), sc.label, err)
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
		rss, anon, err := s.p.memory()
		if err != nil {
			return err
		}
		s.size.PeakRSSMiB, s.size.AnonMiB = rss, anon
	}
	return nil
}

// callHTTP makes one tools/call over the size's HTTP session. The answer
// must not be a tool error where the stdio one was not: the same call.
func (s *scaleServer) callHTTP(ctx context.Context, timeout time.Duration, tool string, args map[string]any) (Exchange, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ex, err := s.http.Call(cctx, "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return ex, err
	}
	_, stdioErr, _ := toolText(s.last)
	if _, isErr, err := toolText(ex.Result); err != nil {
		return ex, err
	} else if isErr != stdioErr {
		return ex, fmt.Errorf("isError %v over HTTP, %v over stdio", isErr, stdioErr)
	}
	return ex, nil
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

// byStore groups the sizes by store dialect, in the order they were run.
func (r *ScaleReport) byStore() (names []string, sizes map[string][]ScaleSize) {
	sizes = map[string][]ScaleSize{}
	for _, sz := range r.Sizes {
		g := sz.group()
		if _, ok := sizes[g]; !ok {
			names = append(names, g)
		}
		sizes[g] = append(sizes[g], sz)
	}
	return names, sizes
}

// check evaluates the targets of the issue on every store dialect: at the
// largest size every call p50 ≤ 5 ms and ≤ 2× its own figure at the
// smallest, every default answer within its budget and 1 MiB, peak RSS ≤
// 64 MiB.
func (r *ScaleReport) check() {
	names, sizes := r.byStore()
	for _, name := range names {
		r.checkStore(name, sizes[name], len(names) > 1)
	}
}

func (r *ScaleReport) checkStore(store string, sizes []ScaleSize, label bool) {
	if len(sizes) == 0 {
		return
	}
	on := ""
	if label {
		on = " on " + store
	}
	small, large := sizes[0], sizes[len(sizes)-1]
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
	r.Checks = append(r.Checks, Check{Target: fmt.Sprintf("every store-bound call p50 ≤ 5 ms at %d%s", large.N, on), Source: "issue 8.7",
		Config: name, Value: Figure(p50 / 1000), Note: "ms", Status: status(p50 <= 5000)})
	if len(sizes) > 1 {
		base := map[string]float64{}
		for _, row := range small.Rows {
			base[row.Label] = float64(row.P50Us)
		}
		name, ratio := worst(func(row ScaleRow) float64 { return Ratio(float64(row.P50Us), base[row.Label]) })
		r.Checks = append(r.Checks, Check{Target: fmt.Sprintf("every store-bound call p50 at %d ≤ 2× its p50 at %d%s", large.N, small.N, on), Source: "issue 8.7",
			Config: name, Value: Figure(ratio), Note: "×", Status: status(ratio <= 2)})
	}
	failed, errs := "", 0
	for _, sz := range sizes {
		for _, row := range sz.Rows {
			if row.Error != "" && !row.Provider {
				if errs++; failed == "" {
					failed = fmt.Sprintf("%s at %d: %s", row.Label, sz.N, row.Error)
				}
			}
		}
	}
	// A runtime that refuses its store (another build's schema version, an
	// unreachable server) answers every call with an error, quickly.
	r.Checks = append(r.Checks, Check{Target: "every store-bound call answered without a tool error" + on, Source: "interop-bench",
		Config: failed, Value: Figure(errs), Note: "errors", Status: status(errs == 0)})
	over, maxBytes, maxTok := "", 0, 0
	for _, sz := range sizes {
		for _, row := range sz.Rows {
			if row.Budget > 0 && row.Tokens > row.Budget && over == "" {
				over = fmt.Sprintf("%s at %d: %d > %d", row.Label, sz.N, row.Tokens, row.Budget)
			}
			maxBytes, maxTok = max(maxBytes, row.Bytes), max(maxTok, row.Tokens)
		}
	}
	r.Checks = append(r.Checks, Check{Target: "every answer within its budget (default arguments: ≤ 8,000 o200k)" + on, Source: "issue 8.2",
		Config: over, Value: Figure(maxTok), Note: "largest answer, tokens", Status: status(over == "" && maxTok <= 8000)})
	r.Checks = append(r.Checks, Check{Target: "no answer above 1 MiB" + on, Source: "issue 8.2",
		Value: Figure(maxBytes), Note: "largest answer, bytes", Status: status(maxBytes <= 1<<20)})
	peak := 0.0
	for _, sz := range sizes {
		peak = max(peak, float64(sz.PeakRSSMiB))
	}
	r.Checks = append(r.Checks, Check{Target: "peak RSS ≤ 64 MiB during the run" + on, Source: "issue 8.7",
		Value: Figure(peak), Note: "MiB", Status: status(peak <= 64)})
}

// WriteJSON writes the report as indented JSON.
func (r *ScaleReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteTable writes, per store dialect, one table with a column group per
// size; with two dialects the PostgreSQL/SQLite comparison of p50 and p99;
// then the checks.
func (r *ScaleReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "interop-bench scale %s (%s, %d CPUs, %s)", r.Date, r.OS, r.CPUs, r.Go)
	if r.Machine != "" {
		fmt.Fprintf(ew, ", %s", r.Machine)
	}
	if r.Source != "" {
		fmt.Fprintf(ew, ", source %s", r.Source)
	}
	fmt.Fprintf(ew, "\n%d measured calls per tool and size; p50/p99 µs round trip, server CPU µs per call, answer bytes and o200k tokens (budget)\n", r.Calls)
	if r.Postgres != "" {
		fmt.Fprintf(ew, "%s; cpu and peak RSS are the runtime's, the PostgreSQL server's own are not counted\n", r.Postgres)
	}
	names, bySize := r.byStore()
	for _, name := range names {
		sizes := bySize[name]
		fmt.Fprintf(ew, "\n%s:\n", name)
		for _, sz := range sizes {
			fmt.Fprintf(ew, "n = %d of each kind (%d works, %d evidence, %d active claims, %d messages in %d conversations, %d events in %d sessions); seeded in %.1f s, store %.1f MiB, peak RSS %.1f MiB (RssAnon %.1f MiB after the calls)\n",
				sz.N, sz.Seed.Works, sz.Seed.Evidence, sz.Seed.Claims, sz.Seed.Messages, sz.Seed.Conversations, sz.Seed.Events, sz.Seed.EventSessions,
				float64(sz.SeedSec), float64(sz.StoreMiB), float64(sz.PeakRSSMiB), float64(sz.AnonMiB))
		}
		fmt.Fprintln(ew)
		tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', tabwriter.AlignRight)
		head := "call\t"
		for _, sz := range sizes {
			head += fmt.Sprintf("p50 %s\tp99\tcpu\tbytes\ttokens\t", short(sz.N))
			if r.HTTP {
				head += "HTTP p50\t÷ stdio\tHTTP cpu\t"
			}
		}
		fmt.Fprintln(tw, head+"budget\t")
		for i, row := range sizes[0].Rows {
			fmt.Fprint(tw, rowLabel(row))
			for _, sz := range sizes {
				x := sz.Rows[i]
				fmt.Fprintf(tw, "%.0f\t%.0f\t%.0f\t%d\t%d\t", float64(x.P50Us), float64(x.P99Us), float64(x.CPUUs), x.Bytes, x.Tokens)
				if r.HTTP {
					fmt.Fprintf(tw, "%s\t%s\t%s\t", num(x.HTTPP50Us, 0), times(Figure(Ratio(float64(x.HTTPP50Us), float64(x.P50Us)))), num(x.HTTPCPUUs, 0))
				}
			}
			fmt.Fprintf(tw, "%d\t\n", row.Budget)
		}
		tw.Flush()
	}
	if sq, pg := bySize[StoreSQLite], bySize[StorePostgres]; len(sq) > 0 && len(sq) == len(pg) {
		r.writeComparison(ew, sq, pg)
	}
	for _, sz := range r.Sizes {
		for _, row := range sz.Rows {
			if row.Error != "" {
				fmt.Fprintf(ew, "\nnote: %s at %s answered a tool error: %s", row.Label, sz.name(), row.Error)
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

// writeComparison is the table of p50 and p99 on both dialects per size,
// with the ratio PostgreSQL/SQLite, and the median of those ratios over
// the store-bound calls.
func (r *ScaleReport) writeComparison(ew *errWriter, sq, pg []ScaleSize) {
	fmt.Fprintf(ew, "\nPostgreSQL beside SQLite (µs; × is PostgreSQL/SQLite):\n\n")
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "call\t"
	for _, sz := range sq {
		head += fmt.Sprintf("p50 %s sqlite\tpostgres\t×\tp99 sqlite\tpostgres\t×\t", short(sz.N))
	}
	fmt.Fprintln(tw, head)
	p50Ratios := make([][]float64, len(sq))
	p99Ratios := make([][]float64, len(sq))
	for i, row := range sq[0].Rows {
		fmt.Fprint(tw, rowLabel(row))
		for j := range sq {
			a, b := sq[j].Rows[i], pg[j].Rows[i]
			r50 := Ratio(float64(b.P50Us), float64(a.P50Us))
			r99 := Ratio(float64(b.P99Us), float64(a.P99Us))
			if !row.Provider {
				p50Ratios[j] = append(p50Ratios[j], r50)
				p99Ratios[j] = append(p99Ratios[j], r99)
			}
			fmt.Fprintf(tw, "%.0f\t%.0f\t%.2f\t%.0f\t%.0f\t%.2f\t", float64(a.P50Us), float64(b.P50Us), r50, float64(a.P99Us), float64(b.P99Us), r99)
		}
		fmt.Fprintln(tw)
	}
	line := "median × of the store-bound calls\t"
	for j := range sq {
		line += fmt.Sprintf("\t\t%.2f\t\t\t%.2f\t", Percentile(p50Ratios[j], 50), Percentile(p99Ratios[j], 50))
	}
	fmt.Fprintln(tw, line)
	tw.Flush()
}

func rowLabel(row ScaleRow) string {
	if row.Provider {
		return row.Label + " (provider-bound)\t"
	}
	return row.Label + "\t"
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
