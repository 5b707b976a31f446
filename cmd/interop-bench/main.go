// Command interop-bench measures interop-runtime the way an MCP client sees
// it: it builds the runtime and a minimal go-sdk server, spawns each over
// stdio many times, and prints the medians of spawn → initialize, tools/list
// latency and size, trivial-call latency and peak RSS, with every figure's
// ratio to the minimal server measured in the same run; it also measures
// serve-http against stdio and, with -http-load, loads one HTTP server with
// concurrent sessions; with -scale, get_work_graph and list_work_items on
// stores of every graph shape. See docs/benchmarks.md.
//
//	go run ./cmd/interop-bench [-n 30] [-calls 200] [-profiles minimal,core,...] [-discover] [-http-load] [-sessions 5] [-scale 100000] [-compare BIN] [-gate] [-json]
//	go run ./cmd/interop-bench scale [-sizes 1000,10000,100000] [-shapes chain,tree,fanin,dense|all] [-only get_work_graph] [-calls 30] [-store sqlite,postgres] [-db postgres://…] [-json]
//	go run ./cmd/interop-bench handoff [-json]   |   go run ./cmd/interop-bench check
//	go run ./cmd/interop-bench sessions [-n 5] [-think 0s] [-compare BIN] [-json]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agent-interop/runtime/internal/bench"
	"github.com/agent-interop/runtime/internal/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "scale":
			return runScale(ctx, args[1:], stdout, stderr)
		case "handoff":
			return runHandoff(ctx, args[1:], stdout, stderr, false)
		case "check":
			return runHandoff(ctx, args[1:], stdout, stderr, true)
		case "sessions":
			return runSessions(ctx, args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("interop-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/interop-bench [flags]\n\nBuilds interop-runtime and a minimal go-sdk server, spawns each over stdio and\nprints medians with their ratio to the minimal server. Flags:\n")
		fs.PrintDefaults()
	}
	c := bench.Config{}
	f := defineRunFlags(fs, &c)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	protocolSet := false
	fs.Visit(func(f *flag.Flag) { protocolSet = protocolSet || f.Name == "protocol" })
	if c.Discover && !protocolSet {
		c.Protocol = "2026-07-28"
	}
	if !*f.load {
		c.LoadSessions, c.LoadCalls = 0, 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "interop-bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	c.Profiles = nil
	for _, p := range strings.Split(*f.profiles, ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Profiles = append(c.Profiles, p)
		}
	}
	if !*f.quiet {
		c.Progress = stderr
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "interop-bench: %v\n", err)
		return 2
	}
	rep, ok := runAndReport(ctx, "interop-bench", *f.dir, *f.jsonOut, stdout, stderr, func(root string) (*bench.Report, error) {
		c.ModuleDir = root
		return bench.Run(ctx, c)
	})
	if !ok {
		return 1
	}
	if *f.gate {
		gs, ok := rep.Gate()
		fmt.Fprintln(stdout)
		if err := bench.WriteGate(stdout, gs); err != nil {
			fmt.Fprintf(stderr, "interop-bench: %v\n", err)
			return 1
		}
		if !ok {
			fmt.Fprintln(stderr, "interop-bench: the benchmark gate failed: a ratio to the minimal go-sdk server is past its limit (above)")
			return 1
		}
	}
	return 0
}

// runFlags are run's flags that are not fields of bench.Config.
type runFlags struct {
	profiles, dir              *string
	load, jsonOut, quiet, gate *bool
}

// defineRunFlags defines run's flags on fs, the configuration's into c.
func defineRunFlags(fs *flag.FlagSet, c *bench.Config) runFlags {
	var f runFlags
	fs.IntVar(&c.N, "n", 30, "measured spawns per configuration")
	fs.IntVar(&c.Warmup, "warmup", 1, "unmeasured spawns per configuration before the measured ones")
	fs.IntVar(&c.Calls, "calls", 200, "trivial tools/call requests per spawn (2000 for the \"after 2,000 calls\" RSS figure)")
	fs.IntVar(&c.GOMAXPROCS, "gomaxprocs", 0, "run every spawned stdio server with GOMAXPROCS=N (1: one P, as on a machine whose cores are busy); 0 leaves it unset")
	f.profiles = fs.String("profiles", strings.Join(bench.AllProfiles(), ","), "comma-separated runtime profiles to measure")
	fs.BoolVar(&c.ReadOnly, "read-only", true, "also measure the full profile with --read-only")
	fs.BoolVar(&c.NewStore, "new-store", true, "also measure the full profile on a new store (no store file before each spawn, as on first use)")
	fs.StringVar(&c.Protocol, "protocol", "2025-06-18", "protocolVersion sent in initialize (2026-07-28 with -discover)")
	fs.BoolVar(&c.Discover, "discover", false, "open sessions with server/discover (sessionless 2026-07-28), as a go-sdk v1.8 client does by default")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "how long to wait for each answer")
	fs.BoolVar(&c.InitTrace, "inittrace", true, "one extra GODEBUG=inittrace=1 run of each binary for the package init figure")
	fs.StringVar(&c.Machine, "machine", "", "a description of the machine, printed with the figures")
	fs.BoolVar(&c.HTTP, "http", true, "also measure serve-http (full profile): a new session per round on one server, the same trivial calls, compared with stdio")
	fs.BoolVar(&c.HTTPNetClient, "http-net-client", false, "measure HTTP calls with net/http's client Transport (a writer and a reader goroutine per connection) instead of one connection read and written in the caller's goroutine")
	f.load = fs.Bool("http-load", false, "also run the HTTP load test (-load-sessions concurrent sessions × -load-calls get_work_item calls)")
	fs.IntVar(&c.LoadSessions, "load-sessions", 16, "concurrent sessions of the HTTP load test")
	fs.IntVar(&c.LoadCalls, "load-calls", 1000, "calls per session of the HTTP load test")
	fs.StringVar(&c.Compare, "compare", "", "another interop-runtime binary (an earlier build, made with CGO_ENABLED=0 as this run builds the runtime) to measure as \"compare: full\" in the same rounds, for a before/after figure")
	fs.IntVar(&c.Sessions, "sessions", 0, "also run the first list_agent_sessions benchmark (interop-bench sessions) with this many spawns per configuration, the real programs of INTEROP_PROVIDER_CACHE on PATH (0: not run)")
	fs.IntVar(&c.Scale, "scale", 0, "also seed every graph shape ("+strings.Join(bench.Shapes(), ", ")+") with this many works, their claims and evidence, "+
		"and measure get_work_graph and list_work_items limit=100 as ratios to the minimal server's trivial call p50 (0: not run)")
	fs.IntVar(&c.ScaleCalls, "scale-calls", 30, "measured calls per tool and shape of -scale")
	fs.IntVar(&c.ScaleWarmup, "scale-warmup", 3, "unmeasured calls per tool and shape of -scale first")
	f.dir = fs.String("C", ".", "a directory inside the module to build")
	f.jsonOut = fs.Bool("json", false, "print the report as JSON (with every spawn's figures) instead of tables")
	f.quiet = fs.Bool("q", false, "no progress lines on stderr")
	f.gate = fs.Bool("gate", false, "after the report, check the CI gate (ratios to the minimal go-sdk server of this run, see docs/benchmarks.md) and exit 1 past a limit")
	return f
}

// runScale is `interop-bench scale`: seed stores of each size, spawn the
// runtime on each and measure every read tool and three writes through MCP.
func runScale(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("interop-bench scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/interop-bench scale [flags]\n\nSeeds a store per size (work items, active claims, conversation messages and\nsession events, n of each), spawns the built runtime on it and measures every\nread tool and acquire_claim, create_work_item, send_conversation_message.\nProgress on stderr, the table (or -json) on stdout. Flags:\n")
		fs.PrintDefaults()
	}
	c := bench.ScaleConfig{}
	sizes := fs.String("sizes", "1000,10000,100000", "comma-separated store sizes (records of each kind)")
	fs.IntVar(&c.Calls, "calls", 30, "measured calls per tool and size")
	fs.IntVar(&c.Warmup, "warmup", 3, "unmeasured calls per tool and size first")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "how long to wait for each answer")
	fs.StringVar(&c.Machine, "machine", "", "a description of the machine, printed with the figures")
	stores := fs.String("store", bench.StoreSQLite, "comma-separated store dialects, measured in the same rounds: sqlite, postgres "+
		"(a throw-away PostgreSQL cluster unless -db names a server)")
	fs.StringVar(&c.PostgresURL, "db", "", "postgres://user@host/db of an existing server for -store postgres (a schema per size, dropped afterwards; "+
		"no password here: PGPASSWORD or a password file)")
	shapes := fs.String("shapes", bench.ShapeChain, "comma-separated graph shapes of the seeded works, a table each: "+strings.Join(bench.Shapes(), ", ")+
		" (chains of ten; one binary dependency tree; blocks of 1,000 where the newest depends on the rest; chains with evidence on every work); all names every one")
	only := fs.String("only", "", "comma-separated prefixes of the call labels to measure (all when empty), e.g. get_work_graph,list_work_items")
	fs.BoolVar(&c.HTTP, "http", false, "also serve each store with serve-http and make every read call over HTTP right after the same call over stdio (an HTTP p50 per row)")
	dir := fs.String("C", ".", "a directory inside the module to build")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of a table")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *shapes == "all" {
		c.Shapes = bench.Shapes()
	} else {
		c.Shapes = splitList(*shapes)
	}
	c.Only = splitList(*only)
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "interop-bench scale: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if c.PostgresURL != "" && store.HasPassword(c.PostgresURL) {
		fmt.Fprintf(stderr, "interop-bench scale: -db: %s carries a password, which the process list would show; "+
			"leave it out and set PGPASSWORD or use a password file (~/.pgpass, PGPASSFILE)\n", store.RedactDSN(c.PostgresURL))
		return 2
	}
	for _, s := range strings.Split(*stores, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.Stores = append(c.Stores, s)
		}
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(stderr, "interop-bench scale: -sizes: %q is not a number\n", s)
			return 2
		}
		c.Sizes = append(c.Sizes, n)
	}
	if !*quiet {
		c.Progress = stderr
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "interop-bench scale: %v\n", err)
		return 2
	}
	_, ok := runAndReport(ctx, "interop-bench scale", *dir, *jsonOut, stdout, stderr, func(root string) (*bench.ScaleReport, error) {
		c.ModuleDir = root
		return bench.RunScale(ctx, c)
	})
	if !ok {
		return 1
	}
	return 0
}

// report is what every mode prints: a table, or JSON with -json.
type report interface {
	WriteJSON(io.Writer) error
	WriteTable(io.Writer) error
}

// runAndReport finds the module root from dir, runs one mode with it and
// prints its report; a failure is printed under name and ok is false.
func runAndReport[R report](ctx context.Context, name, dir string, jsonOut bool, stdout, stderr io.Writer, run func(root string) (R, error)) (rep R, ok bool) {
	root, err := bench.ModuleRoot(ctx, dir)
	if err == nil {
		rep, err = run(root)
	}
	if err == nil {
		if jsonOut {
			err = rep.WriteJSON(stdout)
		} else {
			err = rep.WriteTable(stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return rep, false
	}
	return rep, true
}

// splitList is a comma-separated flag's non-empty items, trimmed.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// runHandoff is `interop-bench handoff` (the report) and `interop-bench
// check` (the same run as a gate: exit 1 on any duplicate provider send,
// delivery or event read, or a task that failed; in CI also on a task
// skipped for a missing provider program).
func runHandoff(ctx context.Context, args []string, stdout, stderr io.Writer, gate bool) int {
	name := "interop-bench handoff"
	if gate {
		name = "interop-bench check"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/%s [flags]\n\nRuns three handoff tasks (implement-and-hand-off codex → claude-code,\nreview-hotfix opencode → claude-code, blocked-then-resume codex → claude-code)\nthrough the built runtime against the real provider programs on the fake\nmodel, and reports steps, payload bytes and o200k tokens, prompts at the model\nand duplicates. check exits 1 on any duplicate. Flags:\n", strings.ReplaceAll(name, " ", " "))
		fs.PrintDefaults()
	}
	c := bench.HandoffConfig{}
	fs.DurationVar(&c.TurnTimeout, "turn-timeout", 60*time.Second, "how long one provider turn may take")
	dir := fs.String("C", ".", "a directory inside the module to build")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of a table")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !*quiet {
		c.Progress = stderr
	}
	rep, ok := runAndReport(ctx, name, *dir, *jsonOut, stdout, stderr, func(root string) (*bench.HandoffReport, error) {
		c.ModuleDir = root
		return bench.RunHandoff(ctx, c)
	})
	if !ok {
		return 1
	}
	if gate {
		if fails := rep.Gate(); len(fails) > 0 {
			fmt.Fprintf(stderr, "%s: FAIL\n  %s\n", name, strings.Join(fails, "\n  "))
			return 1
		}
	}
	return 0
}

// runSessions is `interop-bench sessions`: the first list_agent_sessions of
// a spawned serve with the real provider programs on PATH.
func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("interop-bench sessions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/interop-bench sessions [flags]\n\nSpawns serve --profile full in a fresh isolated environment with the real\nprovider programs of the install cache (INTEROP_PROVIDER_CACHE) on PATH and\nwith none, round-robin, and times initialize, the first list_agent_sessions\nand a second one. Flags:\n")
		fs.PrintDefaults()
	}
	c := bench.SessionsConfig{}
	fs.IntVar(&c.N, "n", 5, "measured spawns per configuration")
	fs.DurationVar(&c.Timeout, "timeout", 60*time.Second, "how long to wait for each answer")
	fs.StringVar(&c.Compare, "compare", "", "another interop-runtime binary (an earlier build) measured in the same rounds")
	fs.DurationVar(&c.Think, "think", 0, "how long the client waits after notifications/initialized before its first list_agent_sessions")
	dir := fs.String("C", ".", "a directory inside the module to build")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of a table")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "interop-bench sessions: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if !*quiet {
		c.Progress = stderr
	}
	_, ok := runAndReport(ctx, "interop-bench sessions", *dir, *jsonOut, stdout, stderr, func(root string) (*bench.SessionsReport, error) {
		c.ModuleDir = root
		return bench.RunSessions(ctx, c)
	})
	if !ok {
		return 1
	}
	return 0
}
