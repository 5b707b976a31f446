package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/bench/directhttp"
	"github.com/agent-interop/runtime/internal/httpguard"
)

// benchCall is the tools/call every mode of BenchmarkCall makes.
const benchCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`

// BenchmarkCall measures one tools/call round trip of the echo server, one
// call at a time, and reports the CPU per call of the whole process
// (client and server, less moved by a loaded machine than wall time):
//
//   - stdio: the SDK's IOTransport over a pair of pipes, the client
//     writing a line and reading a line (interop-bench's stdio client);
//
//   - sdk-sse, sdk-json: over loopback HTTP (keep-alive), the SDK's
//     Streamable HTTP handler alone, answering an SSE stream per POST or,
//     with its JSONResponse option, one application/json body;
//
//   - guarded: the whole Handler (the guard, the session table, and a
//     call that sends nothing but its answer answered application/json);
//
//   - floor-pipe, floor-http-direct: no MCP at all, the transport's own
//     floor: the same request answered with a canned answer by a goroutine
//     reading the pipe line by line, or by a net/http handler that reads
//     the body (directhttp.Transport's client); floor-guarded-direct: the
//     Handler in front of a stand-in for the SDK that answers the canned
//     answer as one SSE event (the Handler's own share per request);
//
// each HTTP mode with net/http's client Transport and, suffixed -direct,
// with directhttp.Transport (interop-bench's HTTP client: the request
// written and the answer read in the calling goroutine, as over a pipe).
//
//	go test -run '^$' -bench Call -benchtime 3000x ./internal/httpserve/
func BenchmarkCall(b *testing.B) {
	b.Run("stdio", benchStdio)
	b.Run("floor-pipe", benchFloorPipe)
	b.Run("floor-http-direct", func(b *testing.B) { benchFloorHTTP(b, false) })
	b.Run("floor-guarded-direct", func(b *testing.B) { benchFloorHTTP(b, true) })
	for _, mode := range []string{"sdk-sse", "sdk-json", "guarded"} {
		for _, direct := range []bool{false, true} {
			name := mode
			if direct {
				name += "-direct"
			}
			b.Run(name, func(b *testing.B) { benchHTTP(b, mode, direct) })
		}
	}
}

func benchStdio(b *testing.B) {
	srvR, cliW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cliR, srvW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ss, err := echoServer().Connect(context.Background(), &mcp.IOTransport{Reader: srvR, Writer: srvW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cliW.Close() // the server reads EOF and ends the session
		_ = ss.Wait()
		_ = cliR.Close()
	}()
	r := bufio.NewReaderSize(cliR, 64<<10)
	roundTrip := func(line string, answer bool) []byte {
		if _, err := io.WriteString(cliW, line+"\n"); err != nil {
			b.Fatal(err)
		}
		if !answer {
			return nil
		}
		got, err := r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		return got
	}
	roundTrip(initialize, true)
	roundTrip(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		if got := roundTrip(benchCall, true); !bytes.Contains(got, []byte(":hi")) {
			b.Fatalf("answer %s", got)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// benchAnswer is the canned answer of the floor modes (the echo tool's
// answer, as long).
const benchAnswer = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"s-1764740000000000000:hi"}]}}`

func benchFloorPipe(b *testing.B) {
	srvR, cliW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cliR, srvW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReaderSize(srvR, 64<<10)
		for {
			if _, err := r.ReadBytes('\n'); err != nil {
				return
			}
			if _, err := io.WriteString(srvW, benchAnswer+"\n"); err != nil {
				return
			}
		}
	}()
	defer func() {
		_ = cliW.Close()
		<-done
		_ = srvR.Close()
		_ = srvW.Close()
		_ = cliR.Close()
	}()
	r := bufio.NewReaderSize(cliR, 64<<10)
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		if _, err := io.WriteString(cliW, benchCall+"\n"); err != nil {
			b.Fatal(err)
		}
		if got, err := r.ReadBytes('\n'); err != nil || !bytes.Contains(got, []byte(":hi")) {
			b.Fatalf("answer %s, %v", got, err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// benchFloorHTTP answers every request with benchAnswer, as
// application/json; guarded, through the Handler in front of a stand-in
// for the SDK that opens a session on initialize and answers a call as
// the SDK does, one SSE event flushed (which the Handler turns into
// application/json).
func benchFloorHTTP(b *testing.B, guarded bool) {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(benchAnswer)))
		_, _ = io.WriteString(w, benchAnswer)
	})
	if guarded {
		sdk := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			switch {
			case err != nil:
				http.Error(w, err.Error(), http.StatusBadRequest)
			case r.Method == http.MethodDelete:
				w.WriteHeader(http.StatusNoContent)
			case r.Header.Get(HeaderSessionID) == "":
				w.Header().Set(HeaderSessionID, "s-floor")
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body) // the Handler needs only the header
			default:
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "event: message\ndata: "+benchAnswer+"\n\n")
				_ = http.NewResponseController(w).Flush()
			}
		})
		h = guardedForBench(sdk)
	}
	url := serveForBench(b, h)
	client := &http.Client{Transport: &directhttp.Transport{}}
	defer client.CloseIdleConnections()
	send := func(session, body string) []byte {
		resp := benchRequest(b, client, http.MethodPost, url, session, body)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return got
	}
	send("", initialize)
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		if got := send("s-floor", benchCall); !bytes.Contains(got, []byte(":hi")) {
			b.Fatalf("answer %s", got)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

func benchHTTP(b *testing.B, mode string, direct bool) {
	srv := echoServer()
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true, JSONResponse: mode == "sdk-json"})
	var h http.Handler = sdk
	if mode == "guarded" {
		h = guardedForBench(sdk)
	}
	url := serveForBench(b, h)
	var transport http.RoundTripper = &http.Transport{MaxIdleConnsPerHost: 4}
	if direct {
		transport = &directhttp.Transport{}
	}
	client := &http.Client{Transport: transport}
	defer client.CloseIdleConnections()
	send := func(method, session, body string) *http.Response {
		return benchRequest(b, client, method, url, session, body)
	}
	resp := send(http.MethodPost, "", initialize)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get(HeaderSessionID)
	defer func() { send(http.MethodDelete, id, "").Body.Close() }() // ends the SDK's session
	send(http.MethodPost, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		resp := send(http.MethodPost, id, benchCall)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(body, []byte(":hi")) {
			b.Fatalf("answer %s", body)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// serveForBench serves h on a loopback port until the benchmark ends and
// returns its MCP endpoint's URL.
func serveForBench(b *testing.B, h http.Handler) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := NewHTTPServer(h, ServeOptions{})
	go hs.Serve(ln)
	b.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// guardedForBench is the runtime's Handler in front of sdk, with no rate
// limit a benchmark's thousands of calls would reach.
func guardedForBench(sdk http.Handler) http.Handler {
	return NewHandler(Options{MCP: sdk, RateLimit: -1, Guard: httpguard.New(httpguard.Options{LoopbackHostOnly: true, RateLimit: 1 << 30}), Token: httpguard.NewSecret(testToken)})
}

// benchRequest sends one MCP request of session (none when "") as a
// client does, with the test token, and returns the answer unread.
func benchRequest(b *testing.B, client *http.Client, method, url, session, body string) *http.Response {
	b.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if session != "" {
		req.Header.Set(HeaderSessionID, session)
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return resp
}
