package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"sync"
	"time"
)

// HTTPServer is interop-runtime serve-http spawned for the benchmark: a
// free loopback port, a token from the environment, no rate limit (the
// load test makes thousands of requests a minute from one address); or the
// baseline's HTTP mode (StartMinimalHTTPServer).
type HTTPServer struct {
	URL      string
	Token    string
	ListenMs Figure // cmd.Start → the listening line on stderr
	cmd      *exec.Cmd
	stderr   *cappedBuffer
	exited   chan struct{}
}

var listeningRE = regexp.MustCompile(`HTTP listening on (http://\S+/mcp)`)

// listeningURL reads a serve-http's (or minimalserver -http's) stderr from r until its listening
// line and sends the URL it names; it then drains r to its end (the
// server's later lines must not block it). The channel is closed unsent
// when r ends first.
func listeningURL(r io.Reader) <-chan string {
	found := make(chan string, 1)
	go func() {
		defer close(found)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return found
}

// StartHTTPServer spawns bin serve-http with args in its own process group
// and waits (at most timeout) for it to listen.
func StartHTTPServer(ctx context.Context, bin string, args, env []string, dir string, timeout time.Duration) (*HTTPServer, error) {
	return startListening(ctx, "serve-http", bin, append([]string{"serve-http", "--port", "0", "--rate-limit", "0"}, args...), env, dir, timeout)
}

// StartMinimalHTTPServer spawns the baseline (minimalserver) with -http
// on a free loopback port and waits (at most timeout) for it to listen:
// go-sdk's Streamable HTTP handler alone, the floor of serve-http. It
// checks no token; the one the client sends is ignored.
func StartMinimalHTTPServer(ctx context.Context, baselineBin string, env []string, dir string, timeout time.Duration) (*HTTPServer, error) {
	return startListening(ctx, "minimalserver -http", baselineBin, []string{"-http", "127.0.0.1:0"}, env, dir, timeout)
}

// startListening spawns bin with args in its own process group, with a new
// token in AGENT_INTEROP_HTTP_TOKEN, and waits (at most timeout) for the
// listening line on its stderr; name names it in errors.
func startListening(ctx context.Context, name, bin string, args, env []string, dir string, timeout time.Duration) (*HTTPServer, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	s := &HTTPServer{Token: hex.EncodeToString(b), stderr: &cappedBuffer{limit: 1 << 20}, exited: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append([]string{}, env...), "AGENT_INTEROP_HTTP_TOKEN="+s.Token)
	cmd.Dir = dir
	ownProcessGroup(cmd)
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(s.stderr, pw)
	cmd.WaitDelay = time.Second
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", bin, name, err)
	}
	s.cmd = cmd
	go func() { _ = cmd.Wait(); pw.Close(); close(s.exited) }()
	found := listeningURL(pr)
	select {
	case u, ok := <-found:
		if ok {
			s.URL, s.ListenMs = u, Figure(Millis(time.Since(started)))
			return s, nil
		}
		<-s.exited // stderr ended: the process did
		return nil, fmt.Errorf("%s exited before listening: %s", name, s.stderr.Tail(2000))
	case <-s.exited:
		return nil, fmt.Errorf("%s exited before listening: %s", name, s.stderr.Tail(2000))
	case <-time.After(timeout):
	case <-ctx.Done():
	}
	s.Stop()
	return nil, fmt.Errorf("%s did not listen within %v: %s", name, timeout, s.stderr.Tail(2000))
}

// Stop kills the server's process group and reaps it.
func (s *HTTPServer) Stop() {
	_ = killProcessGroup(s.cmd)
	<-s.exited
}

// HTTPSample is one HTTP session of the latency measurement.
type HTTPSample struct {
	InitMs    Figure `json:"initMs"` // initialize POST → its answer read, on the running server
	CallP50Us Figure `json:"callP50Us"`
	CallP99Us Figure `json:"callP99Us"`
}

// MeasureHTTPSession opens one session on s, calls tool calls times, and
// closes it.
func MeasureHTTPSession(ctx context.Context, s *HTTPServer, client *http.Client, protocol, tool string, calls int, timeout time.Duration) (HTTPSample, error) {
	sess := NewHTTPSession(s.URL, s.Token, client)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	ex, err := sess.Initialize(cctx, protocol)
	cancel()
	if err != nil {
		return HTTPSample{}, fmt.Errorf("HTTP initialize: %w", err)
	}
	out := HTTPSample{InitMs: Figure(Millis(ex.Latency()))}
	lat := make([]float64, 0, calls)
	for range calls {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		ex, err := sess.Call(cctx, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		cancel()
		if err != nil {
			return out, fmt.Errorf("HTTP %s: %w", tool, err)
		}
		if err := checkToolResult(ex.Result); err != nil {
			return out, err
		}
		lat = append(lat, Micros(ex.Latency()))
	}
	out.CallP50Us, out.CallP99Us = Figure(Percentile(lat, 50)), Figure(Percentile(lat, 99))
	cctx, cancel = context.WithTimeout(ctx, timeout)
	defer cancel()
	return out, sess.Close(cctx)
}

// LoadReport is the outcome of the HTTP load test: concurrent sessions on
// one server, each making its calls one after the other.
type LoadReport struct {
	Sessions        int            `json:"sessions"`
	CallsPerSession int            `json:"callsPerSession"`
	Tool            string         `json:"tool"`
	Requests        int            `json:"requests"` // every HTTP request, session set-up included
	Status          map[string]int `json:"status"`   // "2xx", "4xx", "5xx" counts
	TransportErrors int            `json:"transportErrors"`
	RPCErrors       int            `json:"rpcErrors"`  // JSON-RPC error answers
	ToolErrors      int            `json:"toolErrors"` // isError answers
	Leaks           int            `json:"leaks"`      // answers carrying another session's work item
	P50Us           Figure         `json:"p50Us"`
	P99Us           Figure         `json:"p99Us"`
	MaxUs           Figure         `json:"maxUs"`
	WallS           Figure         `json:"wallS"`
	CallsPerSecond  Figure         `json:"callsPerSecond"`
	FirstError      string         `json:"firstError,omitempty"`
}

// LoadHTTP runs sessions concurrent sessions of calls calls each. Every
// session first creates a work item of its own, then reads it back with
// get_work_item on every call: an answer naming any other work item is a
// cross-session leak. Nothing here is a pass/fail threshold; the counts
// and percentiles are reported.
func LoadHTTP(ctx context.Context, s *HTTPServer, protocol string, sessions, calls int, timeout time.Duration) (*LoadReport, error) {
	client := &http.Client{Transport: NewHTTPTransport(2 * sessions)}
	defer client.CloseIdleConnections()
	t := &loadTally{rep: &LoadReport{Sessions: sessions, CallsPerSession: calls, Tool: "get_work_item", Status: map[string]int{}}}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.session(ctx, NewHTTPSession(s.URL, s.Token, client), protocol, i, calls, timeout)
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	rep, all := t.rep, t.latencies
	rep.WallS = Figure(wall.Seconds())
	rep.P50Us, rep.P99Us, rep.MaxUs = Figure(Percentile(all, 50)), Figure(Percentile(all, 99)), Figure(Percentile(all, 100))
	rep.CallsPerSecond = Figure(float64(len(all)) / wall.Seconds())
	return rep, ctx.Err()
}

// loadTally collects what LoadHTTP's concurrent sessions observe.
type loadTally struct {
	mu        sync.Mutex
	rep       *LoadReport
	latencies []float64 // of the get_work_item calls, in microseconds
}

// count tallies one request by its outcome: its HTTP status class, a
// JSON-RPC error or a transport error; the first error is kept.
func (t *loadTally) count(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rep := t.rep
	rep.Requests++
	var se *HTTPStatusError
	var re *RPCError
	switch {
	case err == nil:
		rep.Status["2xx"]++
	case errors.As(err, &se):
		rep.Status[fmt.Sprintf("%dxx", se.Status/100)]++
	case errors.As(err, &re):
		rep.Status["2xx"]++
		rep.RPCErrors++
	default:
		rep.TransportErrors++
	}
	if err != nil && rep.FirstError == "" {
		rep.FirstError = err.Error()
	}
}

// add applies fn to the report under the lock.
func (t *loadTally) add(fn func(rep *LoadReport)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn(t.rep)
}

// session is one load session i: initialize, create a work item of its
// own, read it back calls times (an answer naming any other is a leak),
// close.
func (t *loadTally) session(ctx context.Context, sess *HTTPSession, protocol string, i, calls int, timeout time.Duration) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	_, err := sess.Initialize(cctx, protocol)
	cancel()
	t.count(err)
	if err != nil {
		return
	}
	t.count(nil) // notifications/initialized
	objective := fmt.Sprintf("load session %d %s", i, sess.ID())
	cctx, cancel = context.WithTimeout(ctx, timeout)
	ex, err := sess.Call(cctx, "tools/call", map[string]any{"name": "create_work_item", "arguments": map[string]any{"objective": objective, "acceptanceCriteria": []string{"read back"}}})
	cancel()
	t.count(err)
	var work struct{ ID, Objective string }
	if err != nil || json.Unmarshal(structuredOf(ex.Result), &work) != nil || work.ID == "" {
		return
	}
	lat := make([]float64, 0, calls)
	for range calls {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		ex, err := sess.Call(cctx, "tools/call", map[string]any{"name": "get_work_item", "arguments": map[string]any{"workId": work.ID}})
		cancel()
		t.count(err)
		if err != nil {
			continue
		}
		lat = append(lat, Micros(ex.Latency()))
		var res toolResult
		var got struct {
			Work struct{ ID, Objective string }
		}
		if json.Unmarshal(ex.Result, &res) != nil || res.IsError {
			t.add(func(rep *LoadReport) { rep.ToolErrors++ })
			continue
		}
		if json.Unmarshal(res.StructuredContent, &got) != nil || got.Work.ID != work.ID || got.Work.Objective != objective {
			t.add(func(rep *LoadReport) { rep.Leaks++ })
		}
	}
	cctx, cancel = context.WithTimeout(ctx, timeout)
	t.count(sess.Close(cctx))
	cancel()
	t.mu.Lock()
	t.latencies = append(t.latencies, lat...)
	t.mu.Unlock()
}

func structuredOf(result json.RawMessage) json.RawMessage {
	var res toolResult
	if json.Unmarshal(result, &res) != nil {
		return nil
	}
	return res.StructuredContent
}
