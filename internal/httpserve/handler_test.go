package httpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/httpguard"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

const testToken = "test-token-0123456789"

// echoServer is an MCP server with one tool, echo, that answers its text
// argument prefixed with the id of the session that called it.
func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, &mcp.ServerOptions{GetSessionID: func() string { return fmt.Sprintf("s-%d", time.Now().UnixNano()) }})
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Session.ID() + ":" + args.Text}}}, nil, nil
	})
	return s
}

type testServer struct {
	url   string
	base  string
	h     *Handler
	clock *quartz.Mock
	stop  context.CancelFunc // ends Serve
	done  chan error         // Serve's result
}

type testOptions struct {
	guard httpguard.Options
	// serve's SweepEvery and ConnIdle default to a day: tests sweep with
	// h.Sweep() unless they test the sweeper, and no idle connection is
	// closed under a test that advances the clock for something else.
	serve   ServeOptions
	clock   *quartz.Mock // a fresh fake clock when nil
	token   string
	noToken bool
	server  *mcp.Server // echoServer() when nil
	// rate is Options.RateLimit (-1, no limit, when 0) and burst
	// Options.RateBurst.
	rate, burst int
	// ownOrigins adds the server's own origins (OwnOrigins) to the
	// guard's allowed origins, as serve-http does.
	ownOrigins bool
}

// start serves h on a loopback port until the test ends.
func start(t *testing.T, o testOptions) *testServer {
	t.Helper()
	clock := o.clock
	if clock == nil {
		clock = testclock.At(t, time.Unix(1_700_000_000, 0))
	}
	if o.serve.SweepEvery == 0 {
		o.serve.SweepEvery = 24 * time.Hour
	}
	if o.serve.ConnIdle == 0 {
		o.serve.ConnIdle = 24 * time.Hour
	}
	if o.guard.RateLimit == 0 {
		o.guard.RateLimit = -1
	}
	if o.guard.Clock == nil {
		o.guard.Clock = clock
	}
	o.guard.LoopbackHostOnly = true
	token := testToken
	if o.token != "" {
		token = o.token
	}
	if o.noToken {
		token = ""
	}
	srv := o.server
	if srv == nil {
		srv = echoServer()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.ownOrigins {
		if o.guard.AllowedOrigins == nil {
			o.guard.AllowedOrigins = httpguard.DefaultAllowedOrigins()
		}
		o.guard.AllowedOrigins = append(o.guard.AllowedOrigins, OwnOrigins("127.0.0.1", ln.Addr().(*net.TCPAddr).Port)...)
	}
	if o.rate == 0 {
		o.rate = -1
	}
	h := NewHandler(Options{
		MCP:       mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true}),
		Guard:     httpguard.New(o.guard),
		Token:     httpguard.NewSecret(token),
		Clock:     clock,
		RateLimit: o.rate,
		RateBurst: o.burst,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, o.serve) }()
	s := &testServer{h: h, clock: clock, stop: cancel, done: make(chan error, 1)}
	go func() { err := <-done; s.done <- err; close(s.done) }()
	t.Cleanup(func() {
		cancel()
		if err := <-s.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	s.base = "http://" + ln.Addr().String()
	s.url = s.base + "/mcp"
	return s
}

// bearer adds the token to every request of an http.Client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func connect(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func echo(t *testing.T, cs *mcp.ClientSession, text string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// raw sends one request and returns the status, headers and body.
func raw(t *testing.T, method, url string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func auth() map[string]string { return map[string]string{"Authorization": "Bearer " + testToken} }

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range h {
		out[a] = b
	}
	out[k] = v
	return out
}

// openRaw opens a session with a raw initialize and returns its id.
func openRaw(t *testing.T, s *testServer) string {
	t.Helper()
	status, h, body := raw(t, http.MethodPost, s.url, auth(), initialize)
	id := h.Get(HeaderSessionID)
	if status != http.StatusOK || id == "" || !strings.Contains(body, `"protocolVersion"`) {
		t.Fatalf("initialize: %d %v %s", status, h, body)
	}
	status, _, body = raw(t, http.MethodPost, s.url, with(auth(), HeaderSessionID, id), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", status, body)
	}
	return id
}

// TestHostileRequests: every request a hostile or broken client can make
// gets 0.3.x's answer, and none reaches the MCP server unauthenticated.
func TestInspect(t *testing.T) {
	tests := []struct {
		name, body string
		want       message
		err        bool
	}{
		{"initialize", initialize, message{JSONRPC: "2.0", ID: json.RawMessage("1"), Method: "initialize"}, false},
		{"a notification", ` {"jsonrpc":"2.0","method":"notifications/initialized"}`, message{JSONRPC: "2.0", Method: "notifications/initialized"}, false},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, message{batch: true}, false},
		{"a field of the wrong type", `{"jsonrpc":2,"id":1,"method":"initialize"}`, message{ID: json.RawMessage("1"), Method: "initialize"}, false},
		{"a scalar", `"initialize"`, message{}, false},
		{"null", `null`, message{}, false},
		{"not JSON", `{"jsonrpc":`, message{}, true},
		{"trailing data", `{} {}`, message{}, true},
		{"a bad batch", `[{"id":1},`, message{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := inspect([]byte(tc.body))
			if (err != nil) != tc.err {
				t.Fatalf("inspect error = %v, want error %v", err, tc.err)
			}
			if err != nil {
				var raw json.RawMessage
				if want := json.Unmarshal([]byte(tc.body), &raw); want == nil || err.Error() != want.Error() {
					t.Errorf("inspect error %q, want json.Unmarshal's %v", err, want)
				}
				return
			}
			if got.JSONRPC != tc.want.JSONRPC || string(got.ID) != string(tc.want.ID) || got.Method != tc.want.Method || got.batch != tc.want.batch {
				t.Errorf("inspect = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestHostileRequests(t *testing.T) {
	s := start(t, testOptions{guard: httpguard.Options{MaxBodyBytes: 2_000_000}})
	live := openRaw(t, s)
	closed := openRaw(t, s)
	if status, _, body := raw(t, http.MethodDelete, s.url, with(auth(), HeaderSessionID, closed), ""); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 2_000_000) + `"}}}`
	tests := []struct {
		name       string
		method     string
		path       string
		header     map[string]string
		body       string
		wantStatus int
		wantError  string
	}{
		{"no token", "POST", "/mcp", nil, initialize, 401, "unauthorized"},
		{"wrong token", "POST", "/mcp", map[string]string{"Authorization": "Bearer " + testToken + "x"}, initialize, 401, "unauthorized"},
		{"token in another scheme", "POST", "/mcp", map[string]string{"Authorization": "Basic " + testToken}, initialize, 401, "unauthorized"},
		{"no token on DELETE", "DELETE", "/mcp", map[string]string{HeaderSessionID: live}, "", 401, "unauthorized"},
		{"foreign origin", "POST", "/mcp", with(auth(), "Origin", "https://evil.example"), initialize, 403, "invalid_origin"},
		{"foreign origin before the token", "POST", "/mcp", map[string]string{"Origin": "https://evil.example"}, initialize, 403, "invalid_origin"},
		{"rebinding host", "POST", "/mcp", with(auth(), "Host", "evil.example"), initialize, 403, "invalid_host"},
		{"GET /mcp", "GET", "/mcp", auth(), "", 405, "method_not_allowed"},
		{"PUT /mcp", "PUT", "/mcp", auth(), "{}", 405, "method_not_allowed"},
		{"unknown path", "POST", "/other", auth(), "{}", 404, "not_found"},
		{"POST /healthz", "POST", "/healthz", auth(), "{}", 404, "not_found"},
		{"oversized body", "POST", "/mcp", auth(), big, 400, "Request too large"},
		{"malformed JSON", "POST", "/mcp", auth(), `{"jsonrpc":`, 400, "unexpected end of JSON input"},
		{"no session, not initialize", "POST", "/mcp", auth(), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, "mcp_session_required"},
		{"no session, a batch with initialize", "POST", "/mcp", auth(), "[" + initialize + "]", 400, "mcp_session_required"},
		{"unknown session", "POST", "/mcp", with(auth(), HeaderSessionID, "no-such-session"), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 404, "unknown_session"},
		{"initialize with an unknown session", "POST", "/mcp", with(auth(), HeaderSessionID, "no-such-session"), initialize, 404, "unknown_session"},
		{"closed session", "POST", "/mcp", with(auth(), HeaderSessionID, closed), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 404, "unknown_session"},
		{"session id with a space", "POST", "/mcp", with(auth(), HeaderSessionID, "no such session"), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, "invalid_session_id"},
		{"session id over 256 bytes", "POST", "/mcp", with(auth(), HeaderSessionID, strings.Repeat("a", 257)), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, "invalid_session_id"},
		{"DELETE unknown session", "DELETE", "/mcp", with(auth(), HeaderSessionID, "no-such-session"), "", 404, "unknown_session"},
		{"DELETE without session", "DELETE", "/mcp", auth(), "", 400, "mcp_session_required"},
		{"DELETE malformed session id", "DELETE", "/mcp", with(auth(), HeaderSessionID, "a\tb"), "", 400, "invalid_session_id"},
		{"DELETE closed session", "DELETE", "/mcp", with(auth(), HeaderSessionID, closed), "", 404, "unknown_session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := raw(t, tt.method, s.base+tt.path, tt.header, tt.body)
			var got struct{ Error string }
			if status != tt.wantStatus || json.Unmarshal([]byte(body), &got) != nil || !strings.Contains(got.Error, tt.wantError) {
				t.Fatalf("%d %s, want %d {\"error\":%q}", status, body, tt.wantStatus, tt.wantError)
			}
			if status == 401 && h.Get("WWW-Authenticate") != "Bearer" {
				t.Fatalf("401 without WWW-Authenticate: Bearer: %v", h)
			}
			if status == 405 && h.Get("Allow") != "POST, DELETE" {
				t.Fatalf("405 Allow = %q", h.Get("Allow"))
			}
		})
	}
	// The live session is untouched by all of that.
	status, _, body := raw(t, http.MethodPost, s.url, with(auth(), HeaderSessionID, live), `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	if status != http.StatusOK || !strings.Contains(body, live+":still here") {
		t.Fatalf("live session after the hostile requests: %d %s", status, body)
	}
}

func TestNoTokenConfiguredRefusesEverything(t *testing.T) {
	s := start(t, testOptions{noToken: true})
	for _, header := range []map[string]string{nil, {"Authorization": "Bearer "}, {"Authorization": "Bearer " + testToken}} {
		if status, _, body := raw(t, http.MethodPost, s.url, header, initialize); status != http.StatusUnauthorized {
			t.Fatalf("header %v: %d %s, want 401", header, status, body)
		}
	}
}

func TestHealthz(t *testing.T) {
	s := start(t, testOptions{})
	status, _, body := raw(t, http.MethodGet, s.base+"/healthz", nil, "")
	if status != http.StatusOK || body != `{"ok":true,"readOnly":false}` {
		t.Fatalf("healthz: %d %s", status, body)
	}
}

// TestClientsShareOneServerWithoutLeaks: go-sdk clients over HTTP each get
// their own session of the one server, and every answer goes to the
// session that asked.
func TestClientsShareOneServerWithoutLeaks(t *testing.T) {
	s := start(t, testOptions{})
	const clients, calls = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, clients*calls)
	for c := range clients {
		cs := connect(t, s.url, testToken)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				text := fmt.Sprintf("client %d call %d", c, i)
				got, err := echo(t, cs, text)
				if err != nil {
					errs <- err
					return
				}
				if got != cs.ID()+":"+text {
					errs <- fmt.Errorf("session %s asked %q and got %q", cs.ID(), text, got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.h.Sessions(); n != clients {
		t.Fatalf("%d sessions open, want %d", n, clients)
	}
}

// TestIdleSessionsAreClosed: a session unseen for 30 minutes (on the
// injected clock) is closed by the sweep, and its next request is told so.
func TestIdleSessionsAreClosed(t *testing.T) {
	s := start(t, testOptions{})
	cs := connect(t, s.url, testToken)
	other := openRaw(t, s)
	if _, err := echo(t, cs, "hello"); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(29 * time.Minute)
	if closed := quietSweep(t, s.h); len(closed) != 0 {
		t.Fatalf("closed %v after 29 minutes", closed)
	}
	if _, err := echo(t, cs, "still in use"); err != nil { // seen again at 29 min
		t.Fatal(err)
	}
	s.clock.Advance(time.Minute)
	closed := quietSweep(t, s.h)
	if len(closed) != 1 || closed[0] != other {
		t.Fatalf("after 30 minutes closed %v, want only the idle raw session %s", closed, other)
	}
	status, _, body := raw(t, http.MethodPost, s.url, with(auth(), HeaderSessionID, other), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if status != http.StatusNotFound || !strings.Contains(body, "unknown_session") {
		t.Fatalf("request on the closed session: %d %s, want 404 unknown_session", status, body)
	}
	s.clock.Advance(30 * time.Minute)
	if closed := quietSweep(t, s.h); len(closed) != 1 || closed[0] != cs.ID() {
		t.Fatalf("closed %v, want the go-sdk session %s", closed, cs.ID())
	}
	if _, err := echo(t, cs, "after close"); err == nil {
		t.Fatal("a call on a closed session succeeded")
	}
	if n := s.h.Sessions(); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
}

// quietSweep sweeps once no request is in flight. A client has its answer
// a moment before the server's handler returns and releases the session;
// on a loaded machine the sweep can run in that moment and rightly keep a
// session that is still busy.
func quietSweep(t *testing.T, h *Handler) []string {
	t.Helper()
	awaitNoRequestInFlight(t, h)
	return h.Sweep()
}

// TestSlowClientsAreCutOff: a client that never finishes its headers, or
// stalls in its body, loses its connection within the configured bounds
// (slowloris); the server keeps serving others.
func TestSlowClientsAreCutOff(t *testing.T) {
	s := start(t, testOptions{
		serve: ServeOptions{HeaderTimeout: 200 * time.Millisecond},
		guard: httpguard.Options{BodyTimeout: 200 * time.Millisecond},
	})
	addr := strings.TrimPrefix(s.base, "http://")
	tests := []struct {
		name, send, wantPrefix string
	}{
		{"headers never finished", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\n", ""},
		{"body stalls", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":", "HTTP/1.1 408"},
		{"body stalls on a route that never reads it", "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\nContent-Length: 500\r\n\r\nxx", "HTTP/1.1 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.send); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // safety bound only
			reply, err := io.ReadAll(bufio.NewReader(conn))
			if err != nil {
				t.Fatalf("the connection stayed open: %v (read %q)", err, reply)
			}
			if !strings.HasPrefix(string(reply), tt.wantPrefix) {
				t.Fatalf("reply %q, want prefix %q", reply, tt.wantPrefix)
			}
		})
	}
	if status, _, _ := raw(t, http.MethodGet, s.base+"/healthz", nil, ""); status != http.StatusOK {
		t.Fatalf("healthz after the slow clients: %d", status)
	}
}

func TestNewHTTPServerBoundsReads(t *testing.T) {
	srv := NewHTTPServer(http.NotFoundHandler(), ServeOptions{})
	if srv.ReadHeaderTimeout != DefaultHeaderTimeout || srv.IdleTimeout != DefaultConnIdle || srv.MaxHeaderBytes != DefaultMaxHeaderSize {
		t.Fatalf("server bounds %v %v %v", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	if srv.WriteTimeout != 0 || srv.ReadTimeout != 0 {
		t.Fatalf("WriteTimeout/ReadTimeout would cut off streamed answers: %v %v", srv.WriteTimeout, srv.ReadTimeout)
	}
}

// TestShutdownDrainsInFlightCalls: when Serve's context ends, it stops
// accepting connections but lets a call in flight finish and deliver its
// answer before it returns.
func TestShutdownDrainsInFlightCalls(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		close(started)
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finished"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	s := start(t, testOptions{server: srv})
	cs := connect(t, s.url, testToken)
	answer := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		answer <- res.Content[0].(*mcp.TextContent).Text
	}()
	<-started
	s.stop()
	// The listener closes: a new connection is refused (polled, bounded).
	addr := strings.TrimPrefix(s.base, "http://")
	wait.For(t, "the server to refuse new connections after shutdown began", wait.InProcess, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	select {
	case err := <-s.done:
		t.Fatalf("Serve returned (%v) while a call was in flight", err)
	default:
	}
	close(release)
	if got := <-answer; got != "finished" {
		t.Fatalf("the in-flight call got %q, want its answer", got)
	}
	if err := <-s.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestServeSweepsOnTheClock: Serve sweeps every SweepEvery on the
// handler's clock, so a session idle for 30 minutes is closed by the first
// sweep after that, and not before.
func TestServeSweepsOnTheClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clock := testclock.At(t, time.Unix(1_700_000_000, 0))
	trap := clock.Trap().TickerFunc("httpserve", "sweep")
	defer trap.Close()
	s := start(t, testOptions{clock: clock, serve: ServeOptions{SweepEvery: time.Minute}})
	if call := trap.MustWait(ctx); call.Duration != time.Minute {
		t.Fatalf("sweeper ticks every %v, want 1m", call.Duration)
	} else {
		call.MustRelease(ctx)
	}
	id := openRaw(t, s)
	awaitNoRequestInFlight(t, s.h) // the session's last use is stamped on release
	for minute := 1; minute < 30; minute++ {
		clock.Advance(time.Minute).MustWait(ctx) // returns once that sweep ran
		if n := s.h.Sessions(); n != 1 {
			t.Fatalf("%d sessions after %d idle minutes, want 1", n, minute)
		}
	}
	clock.Advance(time.Minute).MustWait(ctx)
	if n := s.h.Sessions(); n != 0 {
		t.Fatalf("%d sessions after 30 idle minutes, want 0", n)
	}
	status, _, body := raw(t, http.MethodPost, s.url, with(auth(), HeaderSessionID, id), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if status != http.StatusNotFound || !strings.Contains(body, "unknown_session") {
		t.Fatalf("request on the swept session: %d %s, want 404 unknown_session", status, body)
	}
}

// awaitNoRequestInFlight waits until every handler has released its
// session: a client has its answer a moment before the handler returns and
// stamps the session's last use.
func awaitNoRequestInFlight(t *testing.T, h *Handler) {
	t.Helper()
	wait.For(t, "every request in flight to release its session", wait.InProcess, func() bool {
		h.sessions.mu.Lock()
		defer h.sessions.mu.Unlock()
		for _, s := range h.sessions.live {
			if s.active != 0 {
				return false
			}
		}
		return true
	})
}
