// Command interop-bench measures interop-runtime the way an MCP client sees
// it: it builds the runtime and a minimal go-sdk server, spawns each over
// stdio many times, and prints the medians of spawn → initialize, tools/list
// latency and size, trivial-call latency and peak RSS, with every figure's
// ratio to the minimal server measured in the same run; it also measures
// serve-http against stdio and, with -http-load, loads one HTTP server with
// concurrent sessions. See docs/benchmarks.md.
//
//	go run ./cmd/interop-bench [-n 30] [-calls 200] [-profiles minimal,core,...] [-discover] [-http-load] [-json]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agent-interop/runtime/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("interop-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/interop-bench [flags]\n\nBuilds interop-runtime and a minimal go-sdk server, spawns each over stdio and\nprints medians with their ratio to the minimal server. Flags:\n")
		fs.PrintDefaults()
	}
	c := bench.Config{}
	fs.IntVar(&c.N, "n", 30, "measured spawns per configuration")
	fs.IntVar(&c.Warmup, "warmup", 1, "unmeasured spawns per configuration before the measured ones")
	fs.IntVar(&c.Calls, "calls", 200, "trivial tools/call requests per spawn (2000 for the \"after 2,000 calls\" RSS figure)")
	profiles := fs.String("profiles", strings.Join(bench.AllProfiles(), ","), "comma-separated runtime profiles to measure")
	fs.BoolVar(&c.ReadOnly, "read-only", true, "also measure the full profile with --read-only")
	fs.StringVar(&c.Protocol, "protocol", "2025-06-18", "protocolVersion sent in initialize (2026-07-28 with -discover)")
	fs.BoolVar(&c.Discover, "discover", false, "open sessions with server/discover (sessionless 2026-07-28), as a go-sdk v1.8 client does by default")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "how long to wait for each answer")
	fs.BoolVar(&c.InitTrace, "inittrace", true, "one extra GODEBUG=inittrace=1 run of each binary for the package init figure")
	fs.StringVar(&c.Machine, "machine", "", "a description of the machine, printed with the figures")
	fs.BoolVar(&c.HTTP, "http", true, "also measure serve-http (full profile): a new session per round on one server, the same trivial calls, compared with stdio")
	load := fs.Bool("http-load", false, "also run the HTTP load test (-load-sessions concurrent sessions × -load-calls get_work_item calls)")
	fs.IntVar(&c.LoadSessions, "load-sessions", 16, "concurrent sessions of the HTTP load test")
	fs.IntVar(&c.LoadCalls, "load-calls", 1000, "calls per session of the HTTP load test")
	dir := fs.String("C", ".", "a directory inside the module to build")
	jsonOut := fs.Bool("json", false, "print the report as JSON (with every spawn's figures) instead of tables")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	protocolSet := false
	fs.Visit(func(f *flag.Flag) { protocolSet = protocolSet || f.Name == "protocol" })
	if c.Discover && !protocolSet {
		c.Protocol = "2026-07-28"
	}
	if !*load {
		c.LoadSessions, c.LoadCalls = 0, 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "interop-bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	c.Profiles = nil
	for _, p := range strings.Split(*profiles, ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Profiles = append(c.Profiles, p)
		}
	}
	if !*quiet {
		c.Progress = stderr
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "interop-bench: %v\n", err)
		return 2
	}
	root, err := bench.ModuleRoot(ctx, *dir)
	if err != nil {
		fmt.Fprintf(stderr, "interop-bench: %v\n", err)
		return 1
	}
	c.ModuleDir = root

	rep, err := bench.Run(ctx, c)
	if err != nil {
		fmt.Fprintf(stderr, "interop-bench: %v\n", err)
		return 1
	}
	if *jsonOut {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "interop-bench: %v\n", err)
		return 1
	}
	return 0
}
