package acp_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
	"github.com/agent-interop/runtime/internal/testutil/acpsim"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

var simBinary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "acp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	simBinary, err = acpsim.BuildTo(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(leakcheck.Main(m, func() { _ = os.RemoveAll(dir) }))
}

// events collects a session's events.
type events struct {
	mu   sync.Mutex
	list []providers.NativeEvent
	done chan struct{}
}

func collect(t *testing.T, c *acp.Client, sid string) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := c.Subscribe(ctx, sid)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	e := &events{done: make(chan struct{})}
	go func() {
		defer close(e.done)
		for ev := range ch {
			e.mu.Lock()
			e.list = append(e.list, ev)
			e.mu.Unlock()
		}
	}()
	return e
}

func (e *events) all() []providers.NativeEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]providers.NativeEvent(nil), e.list...)
}

func (e *events) since(n int) []providers.NativeEvent {
	all := e.all()
	if n > len(all) {
		return nil
	}
	return all[n:]
}

func (e *events) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.list)
}

// text joins the text of the message chunks of a kind among evs.
func text(evs []providers.NativeEvent, kind string) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type != kind {
			continue
		}
		var u struct {
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(ev.Data, &u) == nil && u.Content.Type == "text" {
			b.WriteString(u.Content.Text)
		}
	}
	return b.String()
}

func kinds(evs []providers.NativeEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func has(evs []providers.NativeEvent, kind string) bool {
	for _, ev := range evs {
		if ev.Type == kind {
			return true
		}
	}
	return false
}

// peer is one ACP agent the conformance table runs against.
type peer struct {
	name      string
	argv      []string
	env       []string
	workspace string
	auth      string
	fm        *fakemodel.Server

	hello, helloReply string // a prompt and text its reply contains
	slow              string // a prompt whose reply never comes until cancelled
	permission        string // a prompt that makes the agent ask permission
	// permitted reports whether the permitted action happened.
	permitted func() bool
	// unsupportedInbound is a prompt that makes the agent send a request
	// this client does not serve ("" when the agent never does).
	unsupportedInbound    string
	unsupportedMethodWant string // the method we expect to answer -32601

	trace *acpsim.Recorder
}

func (p *peer) start(t *testing.T) *acp.Client {
	t.Helper()
	// The start costs most under load: opencode's 185 MB binary answered
	// initialize after 80 s at load 36 on two cores.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p.trace = acpsim.NewRecorder()
	c, err := acp.Start(ctx, acp.Config{
		Provider: providers.ID(p.name), Argv: p.argv, Env: p.env, Dir: p.workspace,
		ClientVersion: "test", AuthMethod: p.auth,
		Trace: func(d acp.Direction, line []byte) { p.trace.Record(string(d), line) },
	})
	if err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func simPeer(t *testing.T) *peer {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &peer{
		name: "cursor-sim", argv: []string{simBinary, "acp"}, workspace: ws, auth: "cursor_login",
		env:   []string{"HOME=" + filepath.Join(root, "home"), "PATH=" + os.Getenv("PATH"), "FAKECURSOR_NOW=2026-11-30T00:00:00Z"},
		hello: "hello", helloReply: "Hello from fake cursor.",
		slow: "SLOWREPLY", permission: "PERMISSION please",
		unsupportedInbound: "BOGUSREQUEST", unsupportedMethodWant: "cursor/not_a_real_method",
	}
	return p
}

func claudePeer(t *testing.T) *peer {
	t.Helper()
	bin := realpeers.Require(t, realpeers.ClaudeACP)
	fm := fakemodel.New(t)
	env := realpeers.ClaudeEnv(t, fm.URL())
	ws := filepath.Join(env.Root(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws, "hello.txt")
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	fm.On(fakemodel.Contains("WRITEFILE"), fakemodel.WriteFile(target, "hi\n").WithFollowUp("Wrote it."))
	fm.On(fakemodel.Contains("SLOWREPLY"), fakemodel.Text("late").WithDelay(5*time.Minute))
	return &peer{
		name: "claude-agent-acp", argv: []string{bin}, env: env.Environ(), workspace: ws, fm: fm,
		hello: "hello there", helloReply: "Hello from fake model.",
		slow: "SLOWREPLY", permission: "WRITEFILE please",
		permitted: func() bool { _, err := os.Stat(target); return err == nil },
	}
}

func opencodePeer(t *testing.T) *peer {
	t.Helper()
	bin := realpeers.Require(t, realpeers.OpenCode)
	fm := fakemodel.New(t)
	cfg := realpeers.OpenCodeConfig(fm.BaseURL())
	cfg["permission"] = map[string]any{"edit": "ask"}
	env := realpeers.OpenCodeEnv(t, cfg)
	ws := filepath.Join(env.Root(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws, "hello.txt")
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	fm.On(fakemodel.Contains("WRITEFILE"), fakemodel.WriteFile(target, "hi\n").WithFollowUp("Wrote it."))
	fm.On(fakemodel.Contains("SLOWREPLY"), fakemodel.Text("late").WithDelay(5*time.Minute))
	return &peer{
		name: "opencode", argv: []string{bin, "acp", "--pure", "--cwd", ws}, env: env.Environ(), workspace: ws, fm: fm,
		hello: "hello there", helloReply: "Hello from fake model.",
		slow: "SLOWREPLY", permission: "WRITEFILE please",
		permitted: func() bool { _, err := os.Stat(target); return err == nil },
		// OpenCode writes through fs/write_text_file although the client
		// advertises writeTextFile:false; we answer -32601.
		unsupportedInbound: "WRITEFILE again", unsupportedMethodWant: "fs/write_text_file",
	}
}

type providersEvent = providers.NativeEvent

type fakemodelRequest = fakemodel.Request

// TestInjectedClock checks that event and request times come from the
// injected clock.
func TestInjectedClock(t *testing.T) {
	p := simPeer(t)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := testclock.At(t, at)
	c, err := acp.Start(ctxT(t, 30*time.Second), acp.Config{Argv: p.argv, Env: p.env, AuthMethod: "cursor_login", Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	setup, err := c.NewSession(ctxT(t, 30*time.Second), p.workspace)
	if err != nil {
		t.Fatal(err)
	}
	ev := collect(t, c, setup.SessionID)
	turn, err := c.Prompt(ctxT(t, 30*time.Second), setup.SessionID, "PERMISSION")
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, "held request", wait.Process, func() bool { return len(c.Pending()) == 1 })
	if got := c.Pending()[0].RequestedAt; !got.Equal(at) {
		t.Fatalf("requestedAt %v", got)
	}
	if err := c.Cancel(setup.SessionID); err != nil {
		t.Fatal(err)
	}
	awaitTurn(t, turn)
	if turn.StopReason != "cancelled" || !turn.SentAt.Equal(at) {
		t.Fatalf("turn %s sent at %v", turn.StopReason, turn.SentAt)
	}
	for _, e := range ev.all() {
		if !e.Timestamp.Equal(at) {
			t.Fatalf("event %s at %v", e.Type, e.Timestamp)
		}
	}
}
