package app

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/server"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// qwenRuntime is a runtime (App + MCP server in memory) whose built-in
// qwen entry runs the real Qwen Code against a fake model. close stops it
// (Qwen Code stops with it) and open starts another on the same store.
type qwenRuntime struct {
	t   *testing.T
	fm  *fakemodel.Server
	env map[string]string
	ws  string
	app *App
	cs  *mcp.ClientSession
	end context.CancelFunc
	ctx context.Context
}

// newQwenRuntime sets the process environment Qwen Code inherits (its
// own HOME, the fake model's OpenAI base URL, qwen first on PATH) and
// opens a runtime on a fresh store.
func newQwenRuntime(t *testing.T) *qwenRuntime {
	t.Helper()
	bin := realpeers.Require(t, realpeers.QwenCode)
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	penv := realpeers.QwenEnv(t, fm.BaseURL())
	for _, kv := range penv.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+penv.Get("PATH"))
	root := penv.Root()
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &qwenRuntime{t: t, fm: fm, ws: ws, env: map[string]string{
		"INTEROP_DB": filepath.Join(root, "interop.db"), "INTEROP_AGENTS_FILE": filepath.Join(root, "no-agents.yaml"),
		"INTEROP_PROJECT_ROOTS": ws, "HOME": penv.Home(),
	}}
	r.open()
	t.Cleanup(r.close)
	t.Cleanup(func() {
		if t.Failed() {
			for _, q := range fm.Requests() {
				t.Logf("model request %d: %s last-user=%.160q side=%v continuation=%v", q.Seq, q.API, q.LastUser, q.Side, q.Continuation)
			}
		}
	})
	return r
}

func (r *qwenRuntime) open() {
	t := r.t
	t.Helper()
	a, err := Open(context.Background(), Config{Env: func(k string) (string, bool) { v, ok := r.env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := catalogs.LookupProfile("full")
	s := server.New(server.Options{Profile: p, Version: "test", Handlers: a.Handlers})
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		_ = a.Close()
		t.Fatal(err)
	}
	r.app, r.cs, r.ctx = a, cs, ctx
	r.end = func() { _ = cs.Close(); cancel(); <-done }
}

func (r *qwenRuntime) close() {
	if r.app == nil {
		return
	}
	r.end()
	_ = r.app.Close()
	r.app = nil
}

// call calls a tool and returns its answer decoded, its text and whether
// it was a tool error.
func (r *qwenRuntime) call(name string, args map[string]any) (map[string]any, string, bool) {
	r.t.Helper()
	res, err := r.cs.CallTool(r.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var out map[string]any
	_ = json.Unmarshal([]byte(text), &out)
	return out, text, res.IsError
}

// must is call that fails the test on a tool error.
func (r *qwenRuntime) must(name string, args map[string]any) (map[string]any, string) {
	r.t.Helper()
	out, text, isErr := r.call(name, args)
	if isErr {
		r.t.Fatalf("%s %v: %s", name, args, text)
	}
	return out, text
}

// create opens a qwen session in the workspace and returns its native id.
func (r *qwenRuntime) create() string {
	r.t.Helper()
	out, text := r.must("create_session", map[string]any{"provider": "qwen", "cwd": r.ws})
	native, _ := out["nativeId"].(string)
	if native == "" {
		r.t.Fatalf("create_session answered no nativeId: %s", text)
	}
	return native
}

// sendAndSettle sends text to a qwen session and waits until the send's
// turn completed (the session's events carry the operation's completion).
func (r *qwenRuntime) sendAndSettle(native, text string) {
	r.t.Helper()
	out, _ := r.must("send_session_message", map[string]any{"provider": "qwen", "nativeId": native, "text": text})
	op := findString(out, "operationId")
	var last string
	if !wait.Until(wait.Process, func() bool {
		_, last, _ = r.call("read_session_events", map[string]any{"provider": "qwen", "nativeId": native, "timeoutMs": 5000})
		return strings.Contains(last, `"operationId":"`+op+`"`) && strings.Contains(last, `"operation":"send","status":"completed"`)
	}) {
		r.t.Fatalf("send %q (operation %s) never completed: %s", text, op, last)
	}
}

// delivered counts the turn-starting chat requests (neither a
// continuation after a tool result nor a side request) whose last user
// message carries a conversation message's envelope: one per message the
// runtime delivered. Qwen Code's own background requests (its memory
// extraction, titles) carry none.
func (r *qwenRuntime) delivered() int {
	n := 0
	for _, q := range r.fm.Requests() {
		if q.API == fakemodel.ChatCompletions && !q.Side && !q.Continuation && strings.Contains(q.LastUser, "[agent-interop message ") {
			n++
		}
	}
	return n
}

// forgetSession removes every file of Qwen Code's own storage (under its
// HOME) named after the session: the agent no longer has it.
func forgetSession(t *testing.T, home, native string) {
	t.Helper()
	var removed []string
	err := filepath.WalkDir(filepath.Join(home, ".qwen"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), native) {
			removed = append(removed, path)
			if err := os.RemoveAll(path); err != nil {
				return err
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil || len(removed) == 0 {
		t.Fatalf("removing Qwen Code's files of session %s: removed %v, %v", native, removed, err)
	}
	t.Logf("removed Qwen Code's files of the session: %v", removed)
}

// TestRealResumeIntegrity: Qwen Code over ACP loses a session (the runtime
// restarts and the agent's own storage of it is gone). resume_session
// refuses, naming the session, the agent's reason (its -32002
// "Resource not found") and allowFresh, and the send count at the model
// does not move; with allowFresh it opens a fresh session in the recorded
// workspace, says so, and the next send there reaches the model once.
func TestRealResumeIntegrity(t *testing.T) {
	r := newQwenRuntime(t)
	native := r.create()
	r.sendAndSettle(native, "first words before the loss")
	if n := r.fm.Count("first words before the loss"); n != 1 {
		t.Fatalf("the first prompt reached the model %d times", n)
	}

	r.close()
	forgetSession(t, r.env["HOME"], native)
	r.open()

	_, text, isErr := r.call("resume_session", map[string]any{"provider": "qwen", "nativeId": native})
	for _, want := range []string{"no longer has session " + native, "Resource not found", "nothing was recorded", "allowFresh: true", r.ws} {
		if !isErr || !strings.Contains(text, want) {
			t.Fatalf("resume of a lost session: error %v, %s; want a refusal saying %q", isErr, text, want)
		}
	}

	t.Logf("resume refused: %s", text)

	out, text := r.must("resume_session", map[string]any{"provider": "qwen", "nativeId": native, "allowFresh": true})
	t.Logf("resume with allowFresh: resumed %v, nativeId %v, cwd %v, resumeNote %q", out["resumed"], out["nativeId"], out["cwd"], out["resumeNote"])
	fresh, _ := out["nativeId"].(string)
	if out["resumed"] != "fresh" || fresh == "" || fresh == native || out["cwd"] != r.ws {
		t.Fatalf("resume with allowFresh: %s; want a fresh session in %s", text, r.ws)
	}
	if note, _ := out["resumeNote"].(string); !strings.Contains(note, native) || !strings.Contains(note, "history is not in it") {
		t.Fatalf("resume with allowFresh says nothing of what happened: %s", text)
	}

	r.sendAndSettle(fresh, "words in the fresh session")
	if n := r.fm.Count("words in the fresh session"); n != 1 {
		t.Fatalf("the prompt in the fresh session reached the model %d times", n)
	}
	if n := r.fm.Count("first words before the loss"); n != 1 {
		t.Fatalf("the lost session's prompt reached the model again (%d times)", n)
	}
}

// TestRealConversationStoppedByBudget: a directed conversation between two
// real Qwen Code sessions with a budget of two messages carries two (each
// reaches the model once), then refuses the third naming the messages
// budget; nothing of it reaches the model, and read_conversation shows the
// budget spent.
func TestRealConversationStoppedByBudget(t *testing.T) {
	r := newQwenRuntime(t)
	a, b := r.create(), r.create()
	out, text := r.must("create_conversation", map[string]any{"title": "budget", "budget": map[string]any{"messages": 2}})
	conv, _ := out["id"].(string)
	if conv == "" {
		t.Fatalf("create_conversation: %s", text)
	}
	for _, native := range []string{a, b} {
		r.must("join_conversation", map[string]any{"conversationId": conv, "provider": "qwen", "nativeId": native})
	}
	send := func(from, to, words string) (string, bool) {
		_, text, isErr := r.call("send_conversation_message", map[string]any{
			"conversationId": conv, "sender": "qwen:" + from, "recipient": "qwen:" + to, "text": words})
		return text, isErr
	}
	settled := func(n int) {
		t.Helper()
		var last string
		if !wait.Until(wait.Process, func() bool {
			_, last, _ = r.call("read_conversation", map[string]any{"conversationId": conv})
			return strings.Count(last, `"delivery":"completed"`) == n
		}) {
			t.Fatalf("%d messages never completed: %s", n, last)
		}
	}
	exchange := []struct{ from, to, words string }{
		{a, b, "ping from a to b"},
		{b, a, "pong from b to a"},
	}
	for i, m := range exchange {
		if text, isErr := send(m.from, m.to, m.words); isErr {
			t.Fatalf("message %d: %s", i+1, text)
		}
		settled(i + 1)
		if n := r.fm.Count(m.words); n != 1 {
			t.Fatalf("message %d reached the model %d times", i+1, n)
		}
	}

	if n := r.delivered(); n != 2 {
		t.Fatalf("%d conversation messages reached the model, want 2", n)
	}
	text, isErr := send(a, b, "one more past the budget")
	for _, want := range []string{"budget messages exhausted", "2 of 2 messages", "not stored or delivered"} {
		if !isErr || !strings.Contains(text, want) {
			t.Fatalf("a send past the budget: error %v, %s; want a refusal saying %q", isErr, text, want)
		}
	}
	t.Logf("send past the budget refused: %s", text)
	if n := r.delivered(); n != 2 || r.fm.Count("one more past the budget") != 0 {
		t.Fatalf("the refused message reached the model (%d conversation messages delivered, want 2)", n)
	}
	_, last := r.must("read_conversation", map[string]any{"conversationId": conv})
	if strings.Contains(last, "one more past the budget") || strings.Count(last, `"delivery":"completed"`) != 2 {
		t.Fatalf("the refused message was stored: %s", last)
	}
}
