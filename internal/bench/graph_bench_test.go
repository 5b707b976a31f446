package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/app"
	"github.com/agent-interop/runtime/internal/bench/directhttp"
	"github.com/agent-interop/runtime/internal/cli"
	"github.com/agent-interop/runtime/internal/server"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// graphN is the works of each shape's store of BenchmarkWorkGraphShapes
// (go test ./internal/bench -run '^$' -bench WorkGraphShapes -args -graph-n 20000).
var graphN = flag.Int("graph-n", 100000, "works of each shape's store in BenchmarkWorkGraphShapes (at least 100)")

// graphDir keeps BenchmarkWorkGraphShapes' stores between runs: a store
// seeded there by an earlier run (same shape and -graph-n) is used as it
// is, so profiling a change does not seed 100,000 works again.
var graphDir = flag.String("graph-dir", "", "directory of BenchmarkWorkGraphShapes' stores, reused when already seeded (default: a new temporary directory)")

// BenchmarkWorkGraphShapes measures get_work_graph (default arguments and
// a depth-3 neighbourhood) and list_work_items at its largest page on a
// store of each graph shape, answers encoded as the server encodes them.
// Each shape's store is seeded once per run (one bulk transaction per
// chunk) and shared by its sub-benchmarks. Profile with
// go test ./internal/bench -run '^$' -bench WorkGraphShapes -cpuprofile cpu.out.
func BenchmarkWorkGraphShapes(b *testing.B) {
	ctx := context.Background()
	n := *graphN
	if n < 100 {
		b.Fatalf("-graph-n %d: want at least 100", n)
	}
	dir := *graphDir
	if dir == "" {
		dir = b.TempDir()
	}
	for _, shape := range Shapes() {
		b.Run(shape, func(sb *testing.B) {
			var svc *workflow.Service
			var sd Seed
			var cs *mcp.ClientSession // the full server over the same store, opened by mcpCall
			// open seeds and opens the shape's store once; it stays open
			// until the shape's benchmarks end.
			open := func(b *testing.B) {
				if svc != nil {
					return
				}
				loc := filepath.Join(dir, fmt.Sprintf("%s-%d.db", shape, n))
				var err error
				start := time.Now()
				if _, serr := os.Stat(loc); serr == nil && *graphDir != "" {
					sd = seedPlan(shape, n, false)
				} else {
					// Seeded under another name and renamed when whole, so
					// an interrupted seed is never reused.
					part := loc + ".part"
					_ = os.Remove(part)
					if sd, err = SeedShape(ctx, part, shape, n, time.Now(), io.Discard); err != nil {
						b.Fatal(err)
					}
					if err := os.Rename(part, loc); err != nil {
						b.Fatal(err)
					}
					b.Logf("seeded %d works (%s) in %s", n, shape, time.Since(start).Round(time.Millisecond))
				}
				st, err := store.Open(ctx, loc)
				if err != nil {
					b.Fatal(err)
				}
				sb.Cleanup(func() { _ = st.Close() })
				svc = workflow.New(st, workflow.Options{})
			}
			// mcpCall calls a tool of the full profile's server over an
			// in-memory MCP session: decoding, the handler, redaction, the
			// answer budget and the SDK's encoding, as a client meets them.
			mcpCall := func(b *testing.B, name string, args map[string]any) func() (any, error) {
				return func() (any, error) {
					if cs == nil {
						env := map[string]string{"INTEROP_DB": filepath.Join(dir, fmt.Sprintf("%s-%d.db", shape, n)), "HOME": dir, "PATH": ""}
						a, err := app.Open(ctx, app.Config{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
						if err != nil {
							b.Fatal(err)
						}
						sb.Cleanup(func() { _ = a.Close() })
						p, _ := catalogs.LookupProfile("full")
						srv := server.New(server.Options{Profile: p, Version: "bench", Handlers: a.Handlers})
						st, ct := mcp.NewInMemoryTransports()
						sctx, cancel := context.WithCancel(ctx)
						go func() { _ = srv.Run(sctx, st) }()
						if cs, err = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil); err != nil {
							cancel()
							b.Fatal(err)
						}
						sb.Cleanup(func() { _ = cs.Close(); cancel() })
					}
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
					if err == nil && res.IsError {
						err = fmt.Errorf("%s: %s", name, res.Content[0].(*mcp.TextContent).Text)
					}
					return nil, err
				}
			}
			depth := int64(3)
			calls := []struct {
				name string
				call func() (any, error)
			}{
				{"get_work_graph", func() (any, error) { return svc.WorkGraph(ctx, workflow.GraphInput{}) }},
				{"get_work_graph_depth3", func() (any, error) {
					return svc.WorkGraph(ctx, workflow.GraphInput{WorkID: sd.WorkID, Depth: &depth})
				}},
				{"list_work_items_limit100", func() (any, error) {
					return svc.ListWorks(ctx, workflow.ListWorksInput{Limit: 100})
				}},
				{"mcp_list_work_items_limit100", nil},
				{"stdio_list_work_items_limit100", nil},
				{"http_list_work_items_limit100", nil},
			}
			for _, c := range calls {
				sb.Run(c.name, func(b *testing.B) {
					open(b)
					switch {
					case c.call != nil:
					case c.name == "stdio_list_work_items_limit100":
						c.call = stdioCall(ctx, b, sb, filepath.Join(dir, fmt.Sprintf("%s-%d.db", shape, n)), dir,
							`{"name":"list_work_items","arguments":{"limit":100}}`)
					case c.name == "http_list_work_items_limit100":
						c.call = httpCall(ctx, b, sb, filepath.Join(dir, fmt.Sprintf("%s-%d.db", shape, n)), dir,
							"list_work_items", map[string]any{"limit": 100})
					default:
						c.call = mcpCall(b, "list_work_items", map[string]any{"limit": 100})
					}
					b.ReportAllocs()
					for b.Loop() {
						v, err := c.call()
						if err != nil {
							b.Fatal(err)
						}
						if _, err := json.Marshal(v); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// httpCall serves the full profile as interop-runtime serve-http does
// (in this process, on a loopback port), opens a session as interop-bench
// does (directhttp's client) and returns a call of tool with args: with
// stdioCall, the two transports' cost for the same call.
func httpCall(ctx context.Context, b, owner *testing.B, db, home, tool string, args map[string]any) func() (any, error) {
	const token = "graph-bench-token-0123456789abcdef"
	env := map[string]string{"INTEROP_DB": db, "HOME": home, "PATH": "", "AGENT_INTEROP_HTTP_TOKEN": token}
	errR, errW := io.Pipe()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- cli.Do(sctx, []string{"serve-http", "--port", "0", "--rate-limit", "0"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			cli.IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: errW})
		_ = errW.Close()
	}()
	u, ok := <-listeningURL(errR)
	if !ok {
		b.Fatal("serve-http ended before listening")
	}
	owner.Cleanup(func() {
		cancel()
		<-done
	})
	client := &http.Client{Transport: &directhttp.Transport{}}
	sess := NewHTTPSession(u, token, client)
	if _, err := sess.Initialize(ctx, "2025-06-18"); err != nil {
		b.Fatal(err)
	}
	return func() (any, error) {
		ex, err := sess.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": args})
		if err != nil {
			return nil, err
		}
		return nil, checkToolResult(ex.Result)
	}
}

// stdioCall serves the full profile as interop-runtime serve does (the
// guarded stdio transport) over pipes, opens the session with initialize
// at protocol 2025-06-18 as interop-bench scale's client does, and
// returns a call that writes one tools/call line with params and reads
// its answer line. The client only frames lines, so a CPU profile of the
// benchmark is the server's wire path: the one-pass result encoding and
// the JSON-RPC layer included.
func stdioCall(ctx context.Context, b, owner *testing.B, db, home, params string) func() (any, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := map[string]string{"INTEROP_DB": db, "HOME": home, "PATH": ""}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- cli.Do(sctx, []string{"serve"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			cli.IO{Stdin: inR, Stdout: outW, Stderr: io.Discard})
		_ = outW.Close()
	}()
	owner.Cleanup(func() {
		_ = inW.Close()
		<-done
		cancel()
	})
	r := bufio.NewReaderSize(outR, 64<<10)
	var id int
	roundTrip := func(method, params string) ([]byte, error) {
		id++
		if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
			return nil, err
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line[:min(len(line), 200)], []byte(`"error"`)) || bytes.Contains(line, []byte(`"isError":true`)) {
			return nil, fmt.Errorf("%s: %.300s", method, line)
		}
		return line, nil
	}
	if _, err := roundTrip("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		b.Fatal(err)
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	return func() (any, error) {
		_, err := roundTrip("tools/call", params)
		return nil, err
	}
}
