package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// peers is the real-program fixture of providers_test.go: one fake model
// server answering every provider's API, one password-protected `opencode
// serve`, and one interop-runtime (the built binary, over stdio) whose
// environment points OpenCode, Codex and Claude Code at them. A program
// that is not installed is left unconfigured; the subtests that need it
// skip (or fail when CI=true) through realpeers.Require.
type peers struct {
	fm       *fakemodel.Server
	oc       *realpeers.OpenCodeServer // nil when opencode is not installed
	env      *realpeers.Env            // the runtime's environment
	cs       *mcp.ClientSession
	progress *progressLog
}

// openCodePassword protects the test's opencode server; the runtime gets it
// through OPENCODE_SERVER_PASSWORD.
const openCodePassword = "e2e-s3cret"

// peerOptions change how the fixture configures the programs.
type peerOptions struct {
	// openCodePermission is the "permission" of OpenCode's config (nil:
	// OpenCode's default, which asks for nothing).
	openCodePermission map[string]any
}

func startPeers(t *testing.T) *peers {
	t.Helper()
	return startPeersWith(t, peerOptions{})
}

func startPeersWith(t *testing.T, opts peerOptions) *peers {
	t.Helper()
	p := &peers{fm: fakemodel.New(t), progress: newProgressLog()}
	p.fm.SetDefault(fakemodel.Text("Hello from fake model."))
	t.Cleanup(func() { p.diagnose(t) })

	env := realpeers.NewEnv(t)
	env.Set("INTEROP_DB", filepath.Join(env.Root(), "interop.db"))
	if program, err := realpeers.Find(realpeers.OpenCode); err == nil {
		ocEnv := realpeers.NewEnv(t)
		ocConfig := realpeers.OpenCodeConfig(p.fm.BaseURL())
		if opts.openCodePermission != nil {
			ocConfig["permission"] = opts.openCodePermission
		}
		if err := realpeers.SetOpenCode(ocEnv, ocConfig); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
		srv, err := realpeers.StartOpenCode(ctx, realpeers.OpenCodeOptions{Program: program, Env: ocEnv, Password: openCodePassword})
		cancel()
		if err != nil {
			t.Fatalf("starting opencode: %v", err)
		}
		t.Cleanup(srv.Close)
		p.oc = srv
		env.Set("OPENCODE_SERVER_URL", srv.URL).Set("OPENCODE_SERVER_PASSWORD", openCodePassword).Set("OPENCODE_AUTO_START", "false")
	}
	if program, err := realpeers.Find(realpeers.Codex); err == nil {
		codexHome := filepath.Join(env.Home(), ".codex")
		if err := realpeers.WriteCodexHome(codexHome, p.fm.BaseURL()); err != nil {
			t.Fatal(err)
		}
		env.Set("CODEX_HOME", codexHome).
			Set("CODEX_APP_SERVER_COMMAND", program+" app-server --disable plugins").
			// Make codex ask before it runs a command (the runtime's knob).
			Set("CODEX_APPROVAL_POLICY", "untrusted").
			Set("CODEX_SANDBOX_MODE", "workspace-write")
	}
	if program, err := realpeers.Find(realpeers.ClaudeACP); err == nil {
		env.Set("CLAUDE_ACP_COMMAND", program).
			Set("IS_SANDBOX", "1").
			Set("DISABLE_AUTOUPDATER", "1").
			Set("DISABLE_TELEMETRY", "1").
			Set("DISABLE_ERROR_REPORTING", "1").
			Set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1").
			Set("ANTHROPIC_BASE_URL", p.fm.URL()).
			Set("ANTHROPIC_API_KEY", "test")
	}
	if program, err := realpeers.Find(realpeers.QwenCode); err == nil {
		// The built-in qwen entry runs `qwen` from PATH.
		env.Set("PATH", filepath.Dir(program)+string(os.PathListSeparator)+env.Get("PATH"))
		if err := realpeers.SetQwen(env, p.fm.BaseURL()); err != nil {
			t.Fatal(err)
		}
	}
	p.env = env
	p.cs = connectWith(t, []string{"serve"}, env.Environ(), &mcp.ClientOptions{ProgressNotificationHandler: p.progress.handle})
	return p
}

// diagnose logs what the fake model saw and opencode's output when the
// test failed.
func (p *peers) diagnose(t *testing.T) {
	if !t.Failed() {
		return
	}
	for _, r := range p.fm.Requests() {
		t.Logf("model request %d: %s last-user=%.120q rule=%s status=%d continuation=%v side=%v note=%s",
			r.Seq, r.API, r.LastUser, r.Rule, r.Status, r.Continuation, r.Side, r.Note)
	}
	if p.oc != nil {
		out := p.oc.Output()
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		t.Logf("opencode output (tail):\n%s", out)
	}
}

// connectWith starts the binary with args and env and connects a go-sdk
// client with opts.
func connectWith(t *testing.T, args, env []string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	client := newClient(t, "e2e-peers", args, env, opts)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect %v: %v", args, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

var uniqueN atomic.Int64

// unique returns a word no other step uses (the fake model matches on it).
func unique(word string) string {
	return fmt.Sprintf("%s-%d-%d", word, time.Now().UnixNano()%1e9, uniqueN.Add(1))
}

// callTimeout bounds one tool call. Creating a session may start a
// provider program on a shared, busy machine.
const callTimeout = wait.Process

// callTool makes one tool call and returns whether it succeeded and the
// answer's text.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: answer without content", name)
	}
	return !res.IsError, res.Content[0].(*mcp.TextContent).Text
}

// call makes a tool call that must succeed and decodes its answer into out
// (when not nil).
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	ok, text := callTool(t, cs, name, args)
	if !ok {
		t.Fatalf("%s(%v) failed: %s", name, brief(args), text)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, text, err)
		}
	}
	return text
}

// callFail makes a tool call that must be a tool error and returns its text.
func callFail(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ok, text := callTool(t, cs, name, args)
	if ok {
		t.Fatalf("%s(%v) succeeded, want a tool error: %s", name, brief(args), text)
	}
	return text
}

// brief shortens long argument values for messages.
func brief(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if s, ok := v.(string); ok && len(s) > 80 {
			v = s[:80] + "…"
		}
		out[k] = v
	}
	return out
}

// receipt is the answer of the delivery-logged session writes.
type receipt struct {
	Provider       string          `json:"provider"`
	NativeID       string          `json:"nativeId"`
	Operation      string          `json:"operation"`
	Accepted       bool            `json:"accepted"`
	Status         string          `json:"status"`
	ProviderState  string          `json:"providerState"`
	Detail         json.RawMessage `json:"detail"`
	OperationID    string          `json:"operationId"`
	IdempotencyKey string          `json:"idempotencyKey"`
	NativeTurnID   string          `json:"nativeTurnId"`
	Liveness       struct {
		State      string `json:"state"`
		ObservedAt string `json:"observedAt"`
	} `json:"liveness"`
}

// session is create_session's answer.
type session struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	NativeID string `json:"nativeId"`
	CWD      string `json:"cwd"`
	Title    string `json:"title"`
}

func createSession(t *testing.T, cs *mcp.ClientSession, provider, cwd, title string) session {
	t.Helper()
	var s session
	call(t, cs, "create_session", map[string]any{"provider": provider, "cwd": cwd, "title": title}, &s)
	if s.NativeID == "" || s.Provider != provider || s.ID != provider+":"+s.NativeID {
		t.Fatalf("create_session answered %+v", s)
	}
	return s
}

func send(t *testing.T, cs *mcp.ClientSession, provider, nativeID, text, key string) receipt {
	t.Helper()
	args := map[string]any{"provider": provider, "nativeId": nativeID, "text": text}
	if key != "" {
		args["idempotencyKey"] = key
	}
	var r receipt
	call(t, cs, "send_session_message", args, &r)
	return r
}

// sessionEvent is one event of read_session_events.
type sessionEvent struct {
	Sequence int64           `json:"sequence"`
	Epoch    int64           `json:"epoch"`
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data"`
}

type eventPage struct {
	Events  []sessionEvent `json:"events"`
	Next    int64          `json:"next"`
	Epoch   int64          `json:"epoch"`
	Warning string         `json:"warning"`
}

func readEvents(t *testing.T, cs *mcp.ClientSession, provider, nativeID string, after int64, timeout time.Duration) eventPage {
	t.Helper()
	var page eventPage
	call(t, cs, "read_session_events", map[string]any{
		"provider": provider, "nativeId": nativeID, "afterSequence": after, "limit": 100, "timeoutMs": timeout.Milliseconds(),
	}, &page)
	return page
}

// openEvents makes the runtime open the session's shared event
// subscription and returns the cursor once the provider stream is live: a
// first read returns after at most 3 s even when the stream is still
// connecting (no warning then), and events a provider emits before its
// stream is connected are not replayed. The page's epoch turns 1 when the
// stream opened, so the read is repeated until it does.
func openEvents(t *testing.T, cs *mcp.ClientSession, provider, nativeID string) int64 {
	t.Helper()
	var page eventPage
	wait.For(t, provider+" event stream of "+nativeID+" to open", wait.Process, func() bool {
		page = readEvents(t, cs, provider, nativeID, 0, 0)
		if page.Warning != "" {
			t.Fatalf("%s event stream of %s did not open: %s", provider, nativeID, page.Warning)
		}
		return page.Epoch >= 1
	})
	return page.Next
}

// awaitEvent reads the session's events after the cursor, each read waiting
// up to 10 s (passing next back), until one matches or within passes. It
// returns the event; its sequence is the cursor after it.
func awaitEvent(t *testing.T, cs *mcp.ClientSession, provider, nativeID string, after int64, within time.Duration, what string, match func(sessionEvent) bool) sessionEvent {
	t.Helper()
	deadline := time.Now().Add(within)
	var seen []string
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("no %s event of %s:%s within %s (saw %v)", what, provider, nativeID, within, seen)
		}
		page := readEvents(t, cs, provider, nativeID, after, min(left, 10*time.Second))
		for _, ev := range page.Events {
			if match(ev) {
				return ev
			}
			if len(seen) < 60 {
				seen = append(seen, fmt.Sprintf("%d/%d:%s", ev.Epoch, ev.Sequence, ev.Type))
			}
		}
		after = page.Next
	}
}

func ofType(typ string) func(sessionEvent) bool {
	return func(ev sessionEvent) bool { return ev.Type == typ }
}

// permission is one entry of list_permission_requests.
type permission struct {
	Provider  string `json:"provider"`
	RequestID string `json:"requestId"`
	NativeID  string `json:"nativeId"`
	Method    string `json:"method"`
	Title     string `json:"title"`
	Options   []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Kind string `json:"kind"`
	} `json:"options"`
	Paths        []string `json:"paths"`
	PathsUnknown bool     `json:"pathsUnknown"`
	Conflicts    []struct {
		ClaimID  string `json:"claimId"`
		WorkID   string `json:"workId"`
		Holder   string `json:"holder"`
		Resource string `json:"resource"`
		Path     string `json:"path"`
	} `json:"conflicts"`
}

// awaitPermission polls list_permission_requests until the session has a
// pending request.
func awaitPermission(t *testing.T, cs *mcp.ClientSession, provider, nativeID string, within time.Duration) permission {
	t.Helper()
	var found permission
	wait.For(t, "a pending "+provider+" permission request", within, func() bool {
		var list struct {
			Pending []permission `json:"pending"`
		}
		call(t, cs, "list_permission_requests", map[string]any{}, &list)
		for _, p := range list.Pending {
			if p.Provider == provider && p.NativeID == nativeID {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// gitRepo returns a fresh directory with an empty git repository in it.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return dir
}

// step runs one named step of a sequence, logs its duration, and stops the
// sequence when it failed (later steps depend on earlier ones).
func step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	start := time.Now()
	ok := t.Run(name, f)
	t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond))
	if !ok {
		t.FailNow()
	}
}

// progressLog records the MCP progress notifications the client receives,
// by progress token.
type progressLog struct {
	mu      sync.Mutex
	notes   map[string][]*mcp.ProgressNotificationParams
	changed chan struct{}
}

func newProgressLog() *progressLog {
	return &progressLog{notes: map[string][]*mcp.ProgressNotificationParams{}, changed: make(chan struct{})}
}

func (l *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	token := fmt.Sprint(req.Params.ProgressToken)
	l.mu.Lock()
	l.notes[token] = append(l.notes[token], req.Params)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *progressLog) get(token string) []*mcp.ProgressNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), l.notes[token]...)
}

// await waits until token has at least n notifications or within passes.
func (l *progressLog) await(token string, n int, within time.Duration) bool {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		l.mu.Lock()
		have, changed := len(l.notes[token]), l.changed
		l.mu.Unlock()
		if have >= n {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		}
	}
}

// containsAll reports whether s contains every fragment.
func containsAll(s string, fragments ...string) bool {
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
}
