package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/bench/directhttp"
	"github.com/agent-interop/runtime/internal/store"
)

// AllProfiles returns the runtime's tool profiles, in the order they are
// reported.
func AllProfiles() []string { return []string{"minimal", "core", "freebuff", "legacy", "full"} }

// Package paths of the two binaries, relative to the module root.
const (
	runtimePkg  = "./cmd/interop-runtime"
	baselinePkg = "./internal/bench/minimalserver"
)

// runtimeTools returns the runtime's trivial tools: get_runtime_status, or
// its 0.3.x name in the legacy profile.
func runtimeTools() []string { return []string{"get_runtime_status", "freebuff_status"} }

// Config is one benchmark run.
type Config struct {
	ModuleDir string   // the module root holding both packages
	N         int      // measured spawns per configuration
	Warmup    int      // unmeasured spawns per configuration first
	Calls     int      // trivial tools/call requests per spawn
	Profiles  []string // runtime profiles to measure
	ReadOnly  bool     // also measure full --read-only
	// NewStore also measures the full profile on a new store: the state
	// directory starts empty and is emptied after each of its spawns, so
	// every server starts as on a machine that never ran the runtime (no
	// store file).
	NewStore  bool
	Protocol  string        // protocolVersion sent in initialize
	Discover  bool          // server/discover instead of initialize (go-sdk v1.8 client default)
	Timeout   time.Duration // per request
	InitTrace bool          // one extra GODEBUG=inittrace=1 run of each binary
	// GOMAXPROCS, when above 0, is set for every spawned stdio server (the
	// baseline's too): how a call fares when the server has one P, as on
	// a machine whose cores are busy.
	GOMAXPROCS int
	Machine    string    // a description of the machine for the report
	Progress   io.Writer // progress lines (stderr); nil for none
	// HTTP also measures serve-http (full profile): one server for the
	// whole run, one new session per round, and the same trivial calls.
	HTTP bool
	// HTTPNetClient measures HTTP calls with net/http's Transport instead
	// of directhttp.Transport.
	HTTPNetClient bool
	// LoadSessions × LoadCalls is the HTTP load test (0: not run).
	LoadSessions, LoadCalls int
	// Compare is another interop-runtime binary (an earlier build, say)
	// measured as "compare: full" in the same rounds as the rest, so a
	// before/after pair shares the machine's load; empty for none.
	Compare string
	// Sessions is the spawns per configuration of the first
	// list_agent_sessions benchmark (RunSessions, the real provider
	// programs of the install cache on PATH) run after the rest, so one
	// run reports every figure; 0: not run.
	Sessions int
	// Scale is the works of each graph shape (Shapes) of the graph
	// benchmark run after the rest: get_work_graph and list_work_items
	// limit=100 through MCP on stores seeded with SeedGraph, divided by
	// the baseline's trivial call p50 (see graphgate.go); 0: not run.
	Scale int
	// ScaleCalls and ScaleWarmup are its measured and unmeasured calls
	// per tool and shape.
	ScaleCalls, ScaleWarmup int
}

// Validate checks the figures a run depends on.
func (c Config) Validate() error {
	switch {
	case c.N < 1:
		return fmt.Errorf("-n must be at least 1, not %d", c.N)
	case c.Calls < 1:
		return fmt.Errorf("-calls must be at least 1, not %d", c.Calls)
	case c.Warmup < 0:
		return fmt.Errorf("-warmup must not be negative")
	case c.GOMAXPROCS < 0:
		return fmt.Errorf("-gomaxprocs must be 0 (unset) or positive, not %d", c.GOMAXPROCS)
	case c.Timeout <= 0:
		return fmt.Errorf("-timeout must be positive")
	case c.Protocol == "":
		return errors.New("-protocol must not be empty")
	case c.Discover && c.Protocol < "2026-07-28":
		return fmt.Errorf("-discover needs -protocol 2026-07-28 or later, not %s", c.Protocol)
	case len(c.Profiles) == 0 && !c.ReadOnly:
		return errors.New("no configuration to measure: give -profiles or -read-only")
	case c.LoadSessions < 0 || c.LoadCalls < 0 || (c.LoadSessions > 0) != (c.LoadCalls > 0):
		return fmt.Errorf("-load-sessions and -load-calls must both be positive (or both 0), not %d and %d", c.LoadSessions, c.LoadCalls)
	case c.LoadSessions > 0 && !c.HTTP:
		return errors.New("the HTTP load test needs -http")
	case c.Scale < 0 || (c.Scale > 0 && c.Scale < 100):
		return fmt.Errorf("-scale must be 0 (not run) or at least 100 works, not %d", c.Scale)
	case c.Scale > 0 && (c.ScaleCalls < 1 || c.ScaleWarmup < 0):
		return fmt.Errorf("-scale-calls must be at least 1 and -scale-warmup not negative, not %d and %d", c.ScaleCalls, c.ScaleWarmup)
	}
	for _, p := range c.Profiles {
		if !slices.Contains(AllProfiles(), p) {
			return fmt.Errorf("unknown profile %q (profiles: %s)", p, strings.Join(AllProfiles(), ", "))
		}
	}
	return nil
}

// ModuleRoot finds the root of the module that holds dir, with `go env GOMOD`.
func ModuleRoot(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("%s is not inside a Go module; run interop-bench from the agent-interop runtime checkout", dir)
	}
	return filepath.Dir(gomod), nil
}

// Build compiles the runtime and the baseline into binDir in one go build,
// drops both from the page cache (see dropPageCache) and returns their
// paths. Both are built with CGO_ENABLED=0, as the README tells users to
// build the runtime: the program needs no C (modernc's SQLite is pure
// Go), and without cgo the binary is static, so no libc or ld.so is
// mapped into each of the servers a user runs (about 1.3 MiB of RSS).
//
// When $INTEROP_BENCH_BIN (BinDirEnv) names a folder, Build builds nothing:
// it returns the two binaries in that folder, built beforehand the same way
// (scripts/test.sh builds them once for its three benchmark steps, which
// would otherwise link them four times), and drops those from the page
// cache.
func Build(ctx context.Context, moduleDir, binDir string) (runtimeBin, baselineBin string, err error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return prebuilt(dir)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", binDir+string(filepath.Separator), runtimePkg, baselinePkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("go build %s %s in %s: %w\n%s", runtimePkg, baselinePkg, moduleDir, err, strings.TrimSpace(out.String()))
	}
	return prebuilt(binDir)
}

// BinDirEnv is the environment variable naming a folder that holds
// interop-runtime and minimalserver built as Build builds them
// (`CGO_ENABLED=0 go build -o DIR/ ./cmd/interop-runtime
// ./internal/bench/minimalserver`); Build then uses those.
const BinDirEnv = "INTEROP_BENCH_BIN"

// prebuilt returns the paths of the runtime and the baseline in binDir,
// each checked to exist and dropped from the page cache.
func prebuilt(binDir string) (runtimeBin, baselineBin string, err error) {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	runtimeBin, baselineBin = filepath.Join(binDir, "interop-runtime"+exe), filepath.Join(binDir, "minimalserver"+exe)
	for _, bin := range []string{runtimeBin, baselineBin} {
		if _, err := os.Stat(bin); err != nil {
			return "", "", fmt.Errorf("the benchmark's binaries (%s=%s): %w", BinDirEnv, binDir, err)
		}
		if err := dropPageCache(bin); err != nil {
			return "", "", err
		}
	}
	return runtimeBin, baselineBin, nil
}

// Targets lists the configurations of one run: the baseline first, then
// each runtime profile, then full --read-only.
func Targets(c Config, runtimeBin, baselineBin string) []Target {
	ts := []Target{{Name: "baseline", Path: baselineBin, Tools: []string{"ping"}, Baseline: true}}
	for _, p := range c.Profiles {
		ts = append(ts, Target{Name: p, Path: runtimeBin, Args: []string{"serve", "--profile", p}, Tools: runtimeTools()})
	}
	if c.Compare != "" {
		ts = append(ts, Target{Name: "compare: full", Path: c.Compare, Args: []string{"serve", "--profile", "full"}, Tools: runtimeTools(), Compare: true})
	}
	if c.ReadOnly {
		ts = append(ts, Target{Name: "full --read-only", Path: runtimeBin, Args: []string{"serve", "--profile", "full", "--read-only"}, Tools: runtimeTools()})
	}
	if c.NewStore {
		ts = append(ts, Target{Name: "full, new store", Path: runtimeBin, Args: []string{"serve", "--profile", "full"}, Tools: runtimeTools(), NewStore: true})
	}
	return ts
}

// Run builds both binaries into a temporary directory, measures every
// configuration c.N times (spawns interleaved round-robin, so that load
// from other processes on the machine falls on all of them alike) and
// returns the medians with their ratios to the baseline.
func Run(ctx context.Context, c Config) (*Report, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	started := time.Now()
	progress := c.Progress
	if progress == nil {
		progress = io.Discard
	}
	tmp, err := os.MkdirTemp("", "interop-bench-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	fmt.Fprintf(progress, "building %s and %s…\n", runtimePkg, baselinePkg)
	runtimeBin, baselineBin, err := Build(ctx, c.ModuleDir, filepath.Join(tmp, "bin"))
	if err != nil {
		return nil, err
	}
	if c.Compare != "" {
		if err := checkCompare(c.Compare); err != nil {
			return nil, err
		}
		// The same page-cache state as the two binaries just built.
		if err := dropPageCache(c.Compare); err != nil {
			return nil, err
		}
	}
	targets := Targets(c, runtimeBin, baselineBin)
	opts, err := spawnOptions(c, targets, filepath.Join(tmp, "state"))
	if err != nil {
		return nil, err
	}
	if err := seedStores(ctx, targets, opts); err != nil {
		return nil, err
	}

	var httpSrv, minimalSrv *HTTPServer
	var pair httpPair
	if c.HTTP {
		if httpSrv, err = startFullHTTPServer(ctx, c, runtimeBin, filepath.Join(tmp, "state", "http"), progress); err != nil {
			return nil, err
		}
		defer httpSrv.Stop()
		if minimalSrv, err = startMinimalHTTPServer(ctx, c, baselineBin, filepath.Join(tmp, "state", "http-minimal"), progress); err != nil {
			return nil, err
		}
		defer minimalSrv.Stop()
		pair = httpPair{ours: httpSrv, minimal: minimalSrv, oursClient: latencyClient(c), minimalClient: latencyClient(c)}
		defer pair.oursClient.CloseIdleConnections()
		defer pair.minimalClient.CloseIdleConnections()
	}

	samples, httpSamples, minimalSamples, err := measureRounds(ctx, c, targets, opts, pair, progress)
	if err != nil {
		return nil, err
	}

	fmt.Fprintln(progress, "counting o200k tokens…")
	counter, err := NewO200kCounter()
	if err != nil {
		return nil, err
	}
	rep := newReport(ctx, c, started)
	for i, t := range targets {
		row, err := summarize(t, samples[i], counter)
		if err != nil {
			return nil, err
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.addRatios()
	if httpSrv != nil {
		rep.HTTP = summarizeHTTP(rep, httpSrv, httpSamples)
		rep.HTTP.Minimal = summarizeHTTPFloor(rep.HTTP, rep.baseline(), minimalSrv.ListenMs, minimalSamples)
		if c.LoadSessions > 0 {
			fmt.Fprintf(progress, "HTTP load: %d sessions × %d calls…\n", c.LoadSessions, c.LoadCalls)
			if rep.HTTP.Load, err = LoadHTTP(ctx, httpSrv, c.Protocol, c.LoadSessions, c.LoadCalls, c.Timeout); err != nil {
				return nil, fmt.Errorf("HTTP load test: %w", err)
			}
		}
	}

	if c.InitTrace {
		fmt.Fprintln(progress, "GODEBUG=inittrace=1 runs…")
		if rep.InitTrace, err = initTraces(ctx, c, runtimeBin, baselineBin, filepath.Join(tmp, "state", "inittrace")); err != nil {
			return nil, err
		}
	}
	if c.Scale > 0 {
		if rep.Scale, err = runGraphScale(ctx, c, runtimeBin, filepath.Join(tmp, "scale"), progress); err != nil {
			return nil, err
		}
	}
	if c.Sessions > 0 {
		fmt.Fprintln(progress, "the first list_agent_sessions with the real programs…")
		if rep.Sessions, err = RunSessions(ctx, SessionsConfig{ModuleDir: c.ModuleDir, N: c.Sessions, Timeout: c.Timeout, Progress: c.Progress}); err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
	}
	rep.Check()
	return rep, nil
}

// startFullHTTPServer starts runtimeBin's serve-http with the full
// profile on an isolated state directory dir.
func startFullHTTPServer(ctx context.Context, c Config, runtimeBin, dir string, progress io.Writer) (*HTTPServer, error) {
	env, err := IsolatedEnv(dir)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	fmt.Fprintln(progress, "starting serve-http --profile full…")
	return StartHTTPServer(ctx, runtimeBin, []string{"--profile", "full"}, env, dir, c.Timeout)
}

// startMinimalHTTPServer starts the baseline's HTTP mode on an isolated
// state directory dir.
func startMinimalHTTPServer(ctx context.Context, c Config, baselineBin, dir string, progress io.Writer) (*HTTPServer, error) {
	env, err := IsolatedEnv(dir)
	if err != nil {
		return nil, fmt.Errorf("minimal http: %w", err)
	}
	fmt.Fprintln(progress, "starting minimalserver -http…")
	return StartMinimalHTTPServer(ctx, baselineBin, env, dir, c.Timeout)
}

// spawnOptions gives every target its own isolated state directory
// under stateDir and the configured protocol, discovery and calls.
func spawnOptions(c Config, targets []Target, stateDir string) ([]SpawnOptions, error) {
	opts := make([]SpawnOptions, len(targets))
	for i, t := range targets {
		dir := filepath.Join(stateDir, fmt.Sprint(i))
		env, err := IsolatedEnv(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		if c.GOMAXPROCS > 0 {
			env = append(env, fmt.Sprintf("GOMAXPROCS=%d", c.GOMAXPROCS))
		}
		opts[i] = SpawnOptions{Env: env, Dir: dir, Protocol: c.Protocol, Discover: c.Discover, Calls: c.Calls, Timeout: c.Timeout}
	}
	return opts, nil
}

// httpPair are the two HTTP servers of a run, serve-http (ours) and the
// baseline's HTTP mode (minimal), each with its own client (a
// directhttp.Transport keeps one connection, to the first server it
// dials); all nil without -http.
type httpPair struct {
	ours, minimal             *HTTPServer
	oursClient, minimalClient *http.Client
}

// latencyClient is the client of the HTTP latency figures:
// directhttp.Transport (see its comment), or net/http's Transport with
// HTTPNetClient.
func latencyClient(c Config) *http.Client {
	var rt http.RoundTripper = &directhttp.Transport{}
	if c.HTTPNetClient {
		rt = NewHTTPTransport(4)
	}
	return &http.Client{Transport: rt}
}

// measureRounds runs c.Warmup unrecorded rounds, then c.N recorded ones;
// each round spawns every target once, in the order roundOrder gives, and,
// with the HTTP servers, measures one HTTP session on each (serve-http
// first in even rounds, the minimal server first in odd ones).
func measureRounds(ctx context.Context, c Config, targets []Target, opts []SpawnOptions, srv httpPair, progress io.Writer) (samples [][]Sample, ours, minimal []HTTPSample, err error) {
	samples = make([][]Sample, len(targets))
	for round := -c.Warmup; round < c.N; round++ {
		if round < 0 {
			fmt.Fprintf(progress, "warm-up %d/%d\n", round+c.Warmup+1, c.Warmup)
		} else {
			fmt.Fprintf(progress, "round %d/%d\n", round+1, c.N)
		}
		for _, i := range roundOrder(round+c.Warmup, len(targets)) {
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, err
			}
			s, err := Spawn(ctx, targets[i], opts[i])
			if err != nil {
				if round < 0 {
					return nil, nil, nil, fmt.Errorf("warm-up spawn: %w", err)
				}
				return nil, nil, nil, fmt.Errorf("spawn %d of %d: %w", round+1, c.N, err)
			}
			if targets[i].NewStore {
				// Emptied for its next spawn now, not right before it: the
				// files just deleted left the kernel work (freeing the
				// store's blocks, the journal) that the next spawn's
				// measurement took on, about 0.1 ms on an idle machine
				// (docs/benchmarks.md, seventeenth stop). Its first spawn
				// finds the directory IsolatedEnv made.
				if err := emptyState(opts[i].Dir); err != nil {
					return nil, nil, nil, err
				}
			}
			s.Stderr = "" // only the inittrace runs read it
			if round >= 0 {
				samples[i] = append(samples[i], s)
			}
		}
		if srv.ours == nil {
			continue
		}
		sessions := []struct {
			srv    *HTTPServer
			client *http.Client
			name   string
			tool   string
			out    *[]HTTPSample
		}{
			{srv.ours, srv.oursClient, "serve-http", "get_runtime_status", &ours},
			{srv.minimal, srv.minimalClient, "minimalserver -http", "ping", &minimal},
		}
		for _, k := range roundOrder(round+c.Warmup, len(sessions)) {
			s := sessions[k]
			if s.srv == nil {
				continue
			}
			hs, err := MeasureHTTPSession(ctx, s.srv, s.client, c.Protocol, s.tool, c.Calls, c.Timeout)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("round %d: %w\n%s stderr:\n%s", round+1, err, s.name, s.srv.stderr.Tail(2000))
			}
			if round >= 0 {
				*s.out = append(*s.out, hs)
			}
		}
	}
	return samples, ours, minimal, nil
}

// seedStores creates the store of every row of this build that keeps its
// store (not the baseline, a new-store row or -compare's binary, which
// may predate this schema), as a runtime that was used once leaves it. A
// serve that is only asked for its status or its tool list never creates
// its store (docs/store.md), so the warm-up's calls, which are
// get_runtime_status, would leave those rows measuring an empty file.
// The warm-up spawn then finds a store no pass has swept, and its
// settlement reads it once, as the first serve after the store was made
// does on any machine.
func seedStores(ctx context.Context, targets []Target, opts []SpawnOptions) error {
	for i, t := range targets {
		if t.Baseline || t.NewStore || t.Compare {
			continue
		}
		path := filepath.Join(opts[i].Dir, "interop.db")
		st, err := store.Open(ctx, path)
		if err != nil {
			return fmt.Errorf("%s: create its store: %w", t.Name, err)
		}
		if err := st.Close(); err != nil {
			return fmt.Errorf("%s: create its store: %w", t.Name, err)
		}
	}
	return nil
}

// emptyState empties the isolated state directory dir (IsolatedEnv) of a
// new-store target after each of its spawns: the store and everything the
// server left go, the directories of the environment stay.
func emptyState(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("empty the state directory: %w", err)
	}
	if _, err := IsolatedEnv(dir); err != nil {
		return fmt.Errorf("empty the state directory: %w", err)
	}
	return nil
}

// roundOrder is the order in which round r (from 0) spawns n targets: each
// round starts one target later than the one before, so every target
// takes every place in the rounds alike. A fixed order favoured a place:
// the target spawned right after another's 2,000 calls (the -compare
// binary, always last) measured 0.5–1 ms slower to its initialize answer
// than the same binary spawned second, on an idle machine (2026-12-03).
func roundOrder(r, n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = (r + k) % n
	}
	return order
}

// newReport is the report header: when, where and how the run measured.
func newReport(ctx context.Context, c Config, started time.Time) *Report {
	return &Report{
		Date:       started.UTC().Format(time.RFC3339),
		Machine:    c.Machine,
		Source:     sourceRevision(ctx, c.ModuleDir),
		Go:         runtime.Version(),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		Spawns:     c.N,
		Warmup:     c.Warmup,
		Calls:      c.Calls,
		GOMAXPROCS: c.GOMAXPROCS,
		Protocol:   c.Protocol,
		Discover:   c.Discover,
	}
}

// sourceRevision names the checkout that was built: the commit, and
// whether the working tree differs from it. Empty without git.
func sourceRevision(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += " + uncommitted changes"
	}
	return rev
}

// initTraces runs the baseline and `interop-runtime serve` (the default
// profile) once more each with GODEBUG=inittrace=1, through initialize
// and one call, and sums their init lines.
func initTraces(ctx context.Context, c Config, runtimeBin, baselineBin, dir string) (*InitTraces, error) {
	env, err := IsolatedEnv(dir)
	if err != nil {
		return nil, err
	}
	o := SpawnOptions{Env: append(env, "GODEBUG=inittrace=1"), Dir: dir, Protocol: c.Protocol, Discover: c.Discover, Calls: 1, Timeout: c.Timeout}
	trace := func(t Target) (InitTrace, error) {
		s, err := Spawn(ctx, t, o)
		if err != nil {
			return InitTrace{}, fmt.Errorf("inittrace run: %w", err)
		}
		tr, err := ParseInitTrace(strings.NewReader(s.Stderr))
		if err != nil {
			return InitTrace{}, fmt.Errorf("%s: %w", t.Name, err)
		}
		if len(tr.Packages) == 0 {
			return InitTrace{}, fmt.Errorf("%s printed no inittrace lines on stderr", t.Name)
		}
		return tr, nil
	}
	base, err := trace(Target{Name: "baseline", Path: baselineBin, Tools: []string{"ping"}})
	if err != nil {
		return nil, err
	}
	rt, err := trace(Target{Name: "interop-runtime serve", Path: runtimeBin, Args: []string{"serve"}, Tools: runtimeTools()})
	if err != nil {
		return nil, err
	}
	return &InitTraces{Runtime: rt, Baseline: base}, nil
}

// summarize takes the medians of one configuration's spawns and sizes its
// tools/list answer.
func summarize(t Target, ss []Sample, counter Counter) (Row, error) {
	col := func(f func(Sample) Figure) Figure {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = float64(f(s))
		}
		return Figure(Median(xs))
	}
	r := Row{
		Name:         t.Name,
		Baseline:     t.Baseline,
		Compare:      t.Compare,
		Spawns:       len(ss),
		Protocol:     ss[0].Protocol,
		Tool:         ss[0].Tool,
		InitMs:       col(func(s Sample) Figure { return s.InitMs }),
		ListUs:       col(func(s Sample) Figure { return s.ListUs }),
		ListWarmUs:   col(func(s Sample) Figure { return s.ListWarmUs }),
		CallP50Us:    col(func(s Sample) Figure { return s.CallP50Us }),
		CallP99Us:    col(func(s Sample) Figure { return s.CallP99Us }),
		RSSInitMiB:   col(func(s Sample) Figure { return s.RSSInitMiB }),
		RSSIdleMiB:   col(func(s Sample) Figure { return s.RSSIdleMiB }),
		RSSCallsMiB:  col(func(s Sample) Figure { return s.RSSCallsMiB }),
		AnonInitMiB:  col(func(s Sample) Figure { return s.AnonInitMiB }),
		AnonIdleMiB:  col(func(s Sample) Figure { return s.AnonIdleMiB }),
		AnonCallsMiB: col(func(s Sample) Figure { return s.AnonCallsMiB }),
		Samples:      ss,
	}
	for _, s := range ss[1:] {
		if !bytes.Equal(s.ListResult, ss[0].ListResult) {
			return Row{}, fmt.Errorf("%s: tools/list answered differently across spawns", t.Name)
		}
	}
	size, err := MeasureToolsList(ss[0].ListResult, counter)
	if err != nil {
		return Row{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	r.List = size
	return r, nil
}

// summarizeHTTP takes the medians of the HTTP sessions and compares them
// with the stdio row of the same profile (full), measured in the same run.
func summarizeHTTP(rep *Report, srv *HTTPServer, ss []HTTPSample) *HTTPReport {
	med := sessionMedians(ss)
	h := &HTTPReport{
		Profile:   "full",
		Sessions:  len(ss),
		ListenMs:  srv.ListenMs,
		InitMs:    med.init,
		CallP50Us: med.p50,
		CallP99Us: med.p99,
		Samples:   ss,
	}
	if x := rep.row("full"); x != nil {
		h.Stdio = stdioOf(x)
		h.Ratio = med.over(rowFigures(x))
	}
	return h
}

// summarizeHTTPFloor takes the medians of the minimal server's HTTP
// sessions and divides them by the baseline's stdio row (the floor) and
// divides serve-http's by them (ours); nil without samples. Ratios with a
// figure missing are NaN.
func summarizeHTTPFloor(ours *HTTPReport, baseline *Row, listen Figure, ss []HTTPSample) *HTTPFloor {
	if len(ss) == 0 {
		return nil
	}
	med := sessionMedians(ss)
	m := &HTTPFloor{ListenMs: listen, InitMs: med.init, CallP50Us: med.p50, CallP99Us: med.p99, Samples: ss}
	nan := Figure(math.NaN())
	m.Floor = HTTPRatios{Init: nan, CallP50: nan, CallP99: nan}
	if baseline != nil {
		m.Stdio = stdioOf(baseline)
		m.Floor = med.over(rowFigures(baseline))
	}
	m.Ours = httpFigures{ours.InitMs, ours.CallP50Us, ours.CallP99Us}.over(med)
	m.OursPairedCallP50 = nan
	if len(ours.Samples) == len(ss) {
		xs := make([]float64, len(ss))
		for i := range ss {
			xs[i] = Ratio(float64(ours.Samples[i].CallP50Us), float64(ss[i].CallP50Us))
		}
		m.OursPairedCallP50 = Figure(Median(xs))
	}
	return m
}

// httpFigures are the three figures an HTTP comparison divides:
// initialize, call p50 and call p99.
type httpFigures struct{ init, p50, p99 Figure }

// sessionMedians are the medians of HTTP sessions' figures.
func sessionMedians(ss []HTTPSample) httpFigures {
	col := func(f func(HTTPSample) Figure) Figure {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = float64(f(s))
		}
		return Figure(Median(xs))
	}
	return httpFigures{
		init: col(func(s HTTPSample) Figure { return s.InitMs }),
		p50:  col(func(s HTTPSample) Figure { return s.CallP50Us }),
		p99:  col(func(s HTTPSample) Figure { return s.CallP99Us }),
	}
}

// rowFigures are a stdio row's figures, as an HTTP comparison reads them.
func rowFigures(r *Row) httpFigures { return httpFigures{r.InitMs, r.CallP50Us, r.CallP99Us} }

// stdioOf is a stdio row as an HTTP figure is compared with it.
func stdioOf(r *Row) *HTTPStdio {
	return &HTTPStdio{Row: r.Name, InitMs: r.InitMs, CallP50Us: r.CallP50Us, CallP99Us: r.CallP99Us}
}

// over divides f by base, figure by figure.
func (f httpFigures) over(base httpFigures) HTTPRatios {
	ratio := func(v, b Figure) Figure { return Figure(Ratio(float64(v), float64(b))) }
	return HTTPRatios{Init: ratio(f.init, base.init), CallP50: ratio(f.p50, base.p50), CallP99: ratio(f.p99, base.p99)}
}
