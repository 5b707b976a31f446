package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/syncbuf"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// httpRuntime is the built binary serving HTTP on a free loopback port.
type httpRuntime struct {
	url       string // http://127.0.0.1:PORT/mcp
	base      string // http://127.0.0.1:PORT
	token     string
	tokenFile string // "" when the token came from the environment
	cmd       *exec.Cmd
	stderr    *syncbuf.Buffer
	exited    chan error
}

var (
	listeningLine = regexp.MustCompile(`agent-interop-runtime HTTP listening on (http://\S+/mcp)`)
	tokenFileLine = regexp.MustCompile(`agent-interop-runtime HTTP token written to (.+?) \(mode 0600`)
)

// startHTTP runs `interop-runtime serve-http --port 0 args...` and waits for
// its listening line. The token is the environment's
// AGENT_INTEROP_HTTP_TOKEN, else read from the file the server names.
func startHTTP(t *testing.T, args, env []string) *httpRuntime {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve-http", "--port", "0"}, args...)...)
	cmd.Env = env
	pr, pw := io.Pipe()
	r := &httpRuntime{cmd: cmd, stderr: &syncbuf.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = io.MultiWriter(r.stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { r.stop(t) })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, pr)
		close(lines)
	}()
	deadline := time.After(wait.Process)
	for r.url == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve-http exited before listening: %s", r.stderr)
			}
			if m := tokenFileLine.FindStringSubmatch(line); m != nil {
				r.tokenFile = m[1]
			}
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				r.url = m[1]
			}
		case <-deadline:
			t.Fatalf("serve-http did not listen within %v: %s", wait.Process, r.stderr)
		}
	}
	r.base = strings.TrimSuffix(r.url, "/mcp")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AGENT_INTEROP_HTTP_TOKEN="); ok {
			r.token = v
		}
	}
	if r.tokenFile != "" {
		b, err := os.ReadFile(r.tokenFile)
		if err != nil {
			t.Fatal(err)
		}
		r.token = strings.TrimSpace(string(b))
	}
	return r
}

// stop sends SIGTERM and waits for the exit (bounded), then kills.
func (r *httpRuntime) stop(t *testing.T) error {
	if r.cmd.ProcessState != nil {
		return nil
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	if err, ok := wait.RecvWithin(wait.Process, r.exited); ok {
		r.exited <- err
		return err
	}
	_ = r.cmd.Process.Kill()
	err := <-r.exited
	r.exited <- err
	t.Errorf("serve-http did not exit within %v of SIGTERM: %s", wait.Process, r.stderr)
	return err
}

type bearerTransport struct {
	token string
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (r *httpRuntime) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	return r.connectWith(t, nil)
}

func (r *httpRuntime) connectWith(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := newClient(t, "e2e-http", r.cmd.Args, r.cmd.Env, opts)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: &http.Client{Transport: bearerTransport{r.token}}}, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v\n%s", err, r.stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (r *httpRuntime) get(t *testing.T, path string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.base+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func structured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("structuredContent %s: %v", raw, err)
	}
}

// TestHTTPGoSDKClient: a go-sdk client (which probes with server/discover
// first) opens a session over HTTP; the server's profile and read-only
// mode apply; the token file is 0600, never logged, and removed on exit.
func TestHTTPGoSDKClient(t *testing.T) {
	env := isolatedEnv(t)
	r := startHTTP(t, []string{"--profile", "core", "--read-only"}, env)
	if r.tokenFile == "" {
		t.Fatalf("no token configured, but no token file was named: %s", r.stderr)
	}
	if fi, err := os.Stat(r.tokenFile); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Fatalf("token file %s: %v %v", r.tokenFile, fi.Mode(), err)
	}
	cs := r.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	core, _ := catalogs.LookupProfile("core")
	var got, want []string
	for _, tool := range list.Tools {
		got = append(got, tool.Name)
	}
	for _, e := range core.Entries(true) {
		want = append(want, e.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tools over HTTP = %v\nwant core read-only %v", got, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_runtime_status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_runtime_status: %v %+v", err, res)
	}
	var st struct {
		Profile  string `json:"toolsetProfile"`
		ReadOnly bool   `json:"readOnly"`
	}
	structured(t, res, &st)
	if st.Profile != "core" || !st.ReadOnly {
		t.Fatalf("status %+v, want core read-only", st)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_work_item", Arguments: map[string]any{"objective": "x", "acceptanceCriteria": []string{"y"}}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("a write tool on a read-only server: %v", err)
	}
	if status, body := r.get(t, "/healthz", nil); status != 200 || body != `{"ok":true,"readOnly":true}` {
		t.Fatalf("healthz %d %s", status, body)
	}
	cs.Close()
	if err := r.stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, r.stderr)
	}
	if strings.Contains(r.stderr.String(), r.token) {
		t.Fatal("the token appeared in the server's log")
	}
	if _, err := os.Stat(r.tokenFile); !os.IsNotExist(err) {
		t.Fatalf("token file left after exit: %v", err)
	}
}

// TestHTTPTypeScriptSDKClient: the official TypeScript SDK's Streamable
// HTTP client connects, lists, calls, gets a tool error for bad input,
// terminates its session; without the token it cannot connect. A go-sdk
// client on the same server sees the work item the TypeScript one made.
func TestHTTPTypeScriptSDKClient(t *testing.T) {
	modules := realpeers.Require(t, realpeers.MCPTypeScriptSDK)
	node, err := exec.LookPath("node")
	if err != nil {
		if realpeers.InCI() {
			t.Fatal("node not on PATH; CI=true never skips")
		}
		t.Skip("node not on PATH")
	}
	const token = "e2e-http-token-ts"
	r := startHTTP(t, nil, isolatedEnv(t, "AGENT_INTEROP_HTTP_TOKEN="+token))
	if r.tokenFile != "" || strings.Contains(r.stderr.String(), "token written") {
		t.Fatalf("a token was configured, yet a token file was written: %s", r.stderr)
	}
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "ts-http-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "client.mjs"), script, 0o600); err != nil {
		t.Fatal(err)
	}
	// Bare imports resolve from the script's folder up: link the SDK's
	// node_modules beside it.
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	objective := unique("made by the TypeScript client")
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "MCP_URL=" + r.url, "MCP_TOKEN=" + token, "WORK_OBJECTIVE=" + objective}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstdout %s\nstderr %s\nserver %s", err, out, stderr.String(), r.stderr)
	}
	var got struct {
		Unauthenticated string
		SessionID       string
		ProtocolVersion string
		Server          struct{ Name string }
		Tools           []string
		Status          struct {
			Profile  string `json:"toolsetProfile"`
			ReadOnly bool   `json:"readOnly"`
		}
		StatusIsError bool
		Created       struct{ ID, Objective string }
		CreatedText   string
		BadIsError    bool
		BadText       string
		Terminated    bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	full, _ := catalogs.LookupProfile("full")
	var want []string
	for _, e := range full.Entries(false) {
		want = append(want, e.Name)
	}
	switch {
	case !strings.Contains(got.Unauthenticated, `{"error":"unauthorized"}`):
		t.Errorf("connect without the token: %q, want the 401 answer", got.Unauthenticated)
	case !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(got.SessionID):
		t.Errorf("session id %q is not a UUID", got.SessionID)
	case got.Server.Name != "agent-interop-runtime":
		t.Errorf("server %+v", got.Server)
	case !slices.Equal(got.Tools, want):
		t.Errorf("tools %v\nwant %v", got.Tools, want)
	case got.StatusIsError || got.Status.Profile != "full" || got.Status.ReadOnly:
		t.Errorf("status %+v (error %v)", got.Status, got.StatusIsError)
	case got.Created.ID == "" || got.Created.Objective != objective:
		t.Errorf("create_work_item answered %s", got.CreatedText)
	case !got.BadIsError || !strings.Contains(got.BadText, "workId"):
		t.Errorf("bad arguments: isError %v text %q", got.BadIsError, got.BadText)
	case !got.Terminated:
		t.Error("terminateSession left a session id")
	}
	// Another client of the same server shares its store.
	cs := r.connect(t)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_work_item", Arguments: map[string]any{"workId": got.Created.ID}})
	if err != nil || res.IsError {
		t.Fatalf("the go-sdk client cannot read the TypeScript client's work item %s: %v %+v", got.Created.ID, err, res.Content[0])
	}
	status, body := postRaw(t, r, map[string]string{"Mcp-Session-Id": got.SessionID}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != 404 || !strings.Contains(body, "unknown_session") {
		t.Fatalf("the terminated session still answers: %d %s", status, body)
	}
}

func postRaw(t *testing.T, r *httpRuntime, header map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+r.token)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPBinaryLimits: the binary's own limits: the
// 2,000,000-byte body boundary, the rules before the token, the server's
// own origin, and the rate limit (per session or credential, never
// /healthz).
func TestHTTPBinaryLimits(t *testing.T) {
	r := startHTTP(t, nil, isolatedEnv(t, "AGENT_INTEROP_HTTP_TOKEN=limits-token"))
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	pad := func(n int) string { // an initialize of exactly n bytes
		return initialize[:len(initialize)-1] + `,"pad":"` + strings.Repeat("x", n-len(initialize)-9) + `"}`
	}
	if status, body := postRaw(t, r, nil, pad(2_000_000)); status != 200 || !strings.Contains(body, `"protocolVersion"`) {
		t.Fatalf("a 2,000,000-byte initialize: %d %.200s", status, body)
	}
	if status, body := postRaw(t, r, nil, pad(2_000_001)); status != 400 || body != `{"error":"Request too large"}` {
		t.Fatalf("a 2,000,001-byte body: %d %.200s", status, body)
	}
	if status, body := postRaw(t, r, map[string]string{"Origin": "http://evil.example"}, initialize); status != 403 || body != `{"error":"invalid_origin"}` {
		t.Fatalf("bad origin: %d %s", status, body)
	}
	if status, body := postRaw(t, r, map[string]string{"Authorization": "Bearer nope"}, initialize); status != 401 || body != `{"error":"unauthorized"}` {
		t.Fatalf("bad token: %d %s", status, body)
	}
	if status, body := r.get(t, "/mcp", map[string]string{"Authorization": "Bearer limits-token"}); status != 405 || body != `{"error":"method_not_allowed"}` {
		t.Fatalf("GET /mcp: %d %s", status, body)
	}
	// The server's own origin is accepted (the MCP conformance suite's
	// dns-rebinding-protection check sends Host and Origin naming the
	// server); another name for 127.0.0.1 is refused.
	own := strings.TrimPrefix(r.base, "http://")
	if status, body := postRaw(t, r, map[string]string{"Host": own, "Origin": "http://" + own}, initialize); status != 200 || !strings.Contains(body, `"protocolVersion"`) {
		t.Fatalf("own origin: %d %.200s", status, body)
	}
	if status, body := postRaw(t, r, map[string]string{"Host": "evil.example.com", "Origin": "http://evil.example.com"}, initialize); status != 403 || body != `{"error":"invalid_host"}` {
		t.Fatalf("rebinding host: %d %s", status, body)
	}
	// /healthz is never rate limited.
	for i := range 400 {
		if status, body := r.get(t, "/healthz", nil); status != 200 {
			t.Fatalf("healthz %d: %d %s", i+1, status, body)
		}
	}
	// The limit counts per session, or per credential without one: with
	// --rate-limit 3 the 4th initialize of the minute is refused, and
	// /healthz still answers.
	limited := startHTTP(t, []string{"--rate-limit", "3"}, isolatedEnv(t, "AGENT_INTEROP_HTTP_TOKEN=limits-token"))
	for i := range 3 {
		if status, body := postRaw(t, limited, nil, initialize); status != 200 {
			t.Fatalf("initialize %d under --rate-limit 3: %d %.200s", i+1, status, body)
		}
	}
	if status, body := postRaw(t, limited, nil, initialize); status != 429 || body != `{"error":"rate_limited"}` {
		t.Fatalf("4th initialize under --rate-limit 3: %d %s, want 429", status, body)
	}
	if status, body := limited.get(t, "/healthz", nil); status != 200 {
		t.Fatalf("healthz after the limit: %d %s", status, body)
	}
}

// TestHTTPHostRules: a host that is not exactly 127.0.0.1, localhost or
// ::1 is refused with 0.3.x's message unless ALLOW_REMOTE is 1 (here
// 127.0.0.2, which 0.3.x's rule counts as remote but never leaves the
// machine); then /healthz needs the token too. The FREEBUFF_MCP_* aliases
// are read.
func TestHTTPHostRules(t *testing.T) {
	cmd := exec.Command(binary, "serve-http", "--port", "0", "--host", "127.0.0.2")
	cmd.Env = isolatedEnv(t)
	out, err := cmd.CombinedOutput()
	const msg = "Refusing non-loopback HTTP host; set AGENT_INTEROP_HTTP_ALLOW_REMOTE=1 only behind trusted HTTPS and authentication.\n"
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || string(out) != msg {
		t.Fatalf("non-loopback host: %v %q, want exit 2 and %q", err, out, msg)
	}
	if runtime.GOOS != "linux" {
		t.Skip("127.0.0.2 answers without configuration only on Linux (all of 127/8 is loopback there)")
	}
	r := startHTTP(t, nil, isolatedEnv(t, "FREEBUFF_MCP_HOST=127.0.0.2", "FREEBUFF_MCP_ALLOW_REMOTE=1", "FREEBUFF_MCP_TOKEN=alias-token"))
	if !strings.HasPrefix(r.url, "http://127.0.0.2:") {
		t.Fatalf("listening on %s, want FREEBUFF_MCP_HOST's 127.0.0.2", r.url)
	}
	r.token = "alias-token"
	if status, _ := r.get(t, "/healthz", nil); status != 401 {
		t.Fatalf("healthz without the token on a remote host: %d, want 401", status)
	}
	if status, body := r.get(t, "/healthz", map[string]string{"Authorization": "Bearer alias-token"}); status != 200 {
		t.Fatalf("healthz with FREEBUFF_MCP_TOKEN's token: %d %s", status, body)
	}
	r.connect(t)
}

// TestHTTPSessionsShareProviderProcesses: two HTTP sessions that both ask
// Codex for its sessions at once are served by one Codex app-server
// process, because every session shares the server's one App; a Codex
// session one client creates is read by the other, with MCP progress
// notifications arriving on the call's own SSE stream while it waits.
func TestHTTPSessionsShareProviderProcesses(t *testing.T) {
	codex := realpeers.Require(t, realpeers.Codex)
	fm := fakemodel.New(t)
	env := realpeers.NewEnv(t)
	codexHome := filepath.Join(env.Home(), ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(realpeers.CodexConfig(fm.BaseURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	spawns := filepath.Join(env.Root(), "codex-spawns.log")
	wrapper := filepath.Join(env.Root(), "codex-counted")
	script := fmt.Sprintf("#!/bin/sh\necho $$ >> %q\nexec %q \"$@\"\n", spawns, codex)
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	env.Set("INTEROP_DB", filepath.Join(env.Root(), "interop.db")).
		Set("CODEX_HOME", codexHome).
		Set("CODEX_APP_SERVER_COMMAND", wrapper+" app-server --disable plugins").
		Set("AGENT_INTEROP_HTTP_TOKEN", "shared-token")
	r := startHTTP(t, nil, env.Environ())
	progress := newProgressLog()
	a, b := r.connect(t), r.connectWith(t, &mcp.ClientOptions{ProgressNotificationHandler: progress.handle})
	if a.ID() == b.ID() {
		t.Fatalf("two clients got one session %s", a.ID())
	}
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 2)
	errs := make([]error, 2)
	for i, cs := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
			defer cancel()
			results[i], errs[i] = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_agent_sessions", Arguments: map[string]any{"provider": "codex"}})
		}()
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i].IsError {
			t.Fatalf("session %d: %v %+v\n%s", i, errs[i], results[i], r.stderr)
		}
		var list struct {
			ProviderErrors []any `json:"providerErrors"`
		}
		structured(t, results[i], &list)
		if len(list.ProviderErrors) > 0 {
			t.Fatalf("session %d: codex failed: %v", i, list.ProviderErrors)
		}
	}
	b2, err := os.ReadFile(spawns)
	if err != nil {
		t.Fatalf("codex never started: %v", err)
	}
	if n := len(strings.Fields(string(b2))); n != 1 {
		t.Fatalf("codex app-server started %d times for two HTTP sessions, want 1", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	created, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "create_session", Arguments: map[string]any{"provider": "codex", "cwd": t.TempDir(), "title": "http e2e"}})
	if err != nil || created.IsError {
		t.Fatalf("create_session: %v %+v", err, created)
	}
	var s struct{ NativeID string }
	structured(t, created, &s)
	cursor := openEvents(t, b, "codex", s.NativeID) // through the other session
	params := &mcp.CallToolParams{Name: "read_session_events", Arguments: map[string]any{"provider": "codex", "nativeId": s.NativeID, "afterSequence": cursor, "timeoutMs": 1500}}
	params.SetProgressToken("http-wait")
	page, err := b.CallTool(ctx, params)
	if err != nil || page.IsError {
		t.Fatalf("read_session_events through the other session: %v %+v", err, page)
	}
	if !progress.await("http-wait", 1, wait.Process) {
		t.Fatal("no progress notification reached the HTTP client while read_session_events waited")
	}
	b3, _ := os.ReadFile(spawns)
	if n := len(strings.Fields(string(b3))); n != 1 {
		t.Fatalf("codex app-server started %d times in all, want 1", n)
	}
}
