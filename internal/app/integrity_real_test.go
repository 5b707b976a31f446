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

// realRuntime is a runtime (App + MCP server in memory) whose built-in
// entry of one provider runs the real program against a fake model. close
// stops it (the program stops with it) and open starts another on the
// same store.
type realRuntime struct {
	t        *testing.T
	provider string        // the built-in entry the sessions are opened with
	api      fakemodel.API // the dialect the program talks to the model
	fm       *fakemodel.Server
	env      map[string]string
	ws       string
	app      *App
	cs       *mcp.ClientSession
	end      context.CancelFunc
	ctx      context.Context
}

// newRealRuntime sets the process environment the program inherits (penv,
// the program's folder first on PATH) and opens a runtime on a fresh
// store whose own settings are the defaults plus extra.
func newRealRuntime(t *testing.T, provider string, api fakemodel.API, bin string, fm *fakemodel.Server, penv *realpeers.Env, extra map[string]string) *realRuntime {
	t.Helper()
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
	r := &realRuntime{t: t, provider: provider, api: api, fm: fm, ws: ws, env: map[string]string{
		"INTEROP_DB": filepath.Join(root, "interop.db"), "INTEROP_AGENTS_FILE": filepath.Join(root, "no-agents.yaml"),
		"INTEROP_PROJECT_ROOTS": ws, "HOME": penv.Home(),
	}}
	for k, v := range extra {
		r.env[k] = v
	}
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

// newQwenRuntime is a realRuntime of the real Qwen Code (over ACP) whose
// fake model answers every prompt with a short text.
func newQwenRuntime(t *testing.T) *realRuntime {
	t.Helper()
	bin := realpeers.Require(t, realpeers.QwenCode)
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	return newRealRuntime(t, "qwen", fakemodel.ChatCompletions, bin, fm, realpeers.QwenEnv(t, fm.BaseURL()), nil)
}

// newCodexRuntime is a realRuntime of the real Codex app-server (a native
// provider that reports each turn's token usage) against fm.
func newCodexRuntime(t *testing.T, fm *fakemodel.Server) *realRuntime {
	t.Helper()
	bin := realpeers.Require(t, realpeers.Codex)
	penv := realpeers.CodexEnv(t, fm.BaseURL())
	return newRealRuntime(t, "codex", fakemodel.Responses, bin, fm, penv, map[string]string{
		"CODEX_HOME": penv.Get("CODEX_HOME"), "CODEX_APP_SERVER_COMMAND": bin + " app-server --disable plugins",
	})
}

func (r *realRuntime) open() {
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

func (r *realRuntime) close() {
	if r.app == nil {
		return
	}
	r.end()
	_ = r.app.Close()
	r.app = nil
}

// call calls a tool and returns its answer decoded, its text and whether
// it was a tool error.
func (r *realRuntime) call(name string, args map[string]any) (map[string]any, string, bool) {
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
func (r *realRuntime) must(name string, args map[string]any) (map[string]any, string) {
	r.t.Helper()
	out, text, isErr := r.call(name, args)
	if isErr {
		r.t.Fatalf("%s %v: %s", name, args, text)
	}
	return out, text
}

// create opens a session in the workspace and returns its native id.
func (r *realRuntime) create() string {
	r.t.Helper()
	out, text := r.must("create_session", map[string]any{"provider": r.provider, "cwd": r.ws})
	native, _ := out["nativeId"].(string)
	if native == "" {
		r.t.Fatalf("create_session answered no nativeId: %s", text)
	}
	return native
}

// sendAndSettle sends text to a session and waits until the send's
// turn completed (the session's events carry the operation's completion).
func (r *realRuntime) sendAndSettle(native, text string) {
	r.t.Helper()
	out, _ := r.must("send_session_message", map[string]any{"provider": r.provider, "nativeId": native, "text": text})
	op := findString(out, "operationId")
	var last string
	if !wait.Until(wait.Process, func() bool {
		_, last, _ = r.call("read_session_events", map[string]any{"provider": r.provider, "nativeId": native, "timeoutMs": 5000})
		return strings.Contains(last, `"operationId":"`+op+`"`) && strings.Contains(last, `"operation":"send","status":"completed"`)
	}) {
		r.t.Fatalf("send %q (operation %s) never completed: %s", text, op, last)
	}
}

// delivered counts the turn-starting model requests (neither a
// continuation after a tool result nor a side request) whose last user
// message carries a conversation message's envelope: one per message the
// runtime delivered. The programs' own background requests (Qwen Code's
// memory extraction, titles) carry none.
func (r *realRuntime) delivered() int {
	n := 0
	for _, q := range r.fm.Requests() {
		if q.API == r.api && !q.Side && !q.Continuation && strings.Contains(q.LastUser, "[agent-interop message ") {
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

// realConversation is a directed conversation between sessions of a
// realRuntime.
type realConversation struct {
	r  *realRuntime
	id string
}

// conversation creates a conversation with budget (nil: the defaults)
// and joins the sessions natives to it.
func (r *realRuntime) conversation(budget map[string]any, natives ...string) *realConversation {
	r.t.Helper()
	args := map[string]any{"title": "budget"}
	if budget != nil {
		args["budget"] = budget
	}
	out, text := r.must("create_conversation", args)
	id, _ := out["id"].(string)
	if id == "" {
		r.t.Fatalf("create_conversation: %s", text)
	}
	for _, native := range natives {
		r.must("join_conversation", map[string]any{"conversationId": id, "provider": r.provider, "nativeId": native})
	}
	return &realConversation{r: r, id: id}
}

// send sends words from one session of the conversation to another and
// returns the answer's text and whether it was a tool error.
func (c *realConversation) send(from, to, words string) (string, bool) {
	c.r.t.Helper()
	_, text, isErr := c.r.call("send_conversation_message", map[string]any{
		"conversationId": c.id, "sender": c.r.provider + ":" + from, "recipient": c.r.provider + ":" + to, "text": words})
	return text, isErr
}

// read is read_conversation's answer, decoded, and its text.
func (c *realConversation) read() (map[string]any, string) {
	c.r.t.Helper()
	return c.r.must("read_conversation", map[string]any{"conversationId": c.id})
}

// settle waits until n messages' deliveries completed and until done
// holds of read_conversation's answer (nil: nothing more), and returns
// that answer.
func (c *realConversation) settle(n int, what string, done func(map[string]any) bool) map[string]any {
	c.r.t.Helper()
	var out map[string]any
	var last string
	if !wait.Until(wait.Process, func() bool {
		out, last = c.read()
		return strings.Count(last, `"delivery":"completed"`) == n && (done == nil || done(out))
	}) {
		c.r.t.Fatalf("%d messages never completed with %s: %s", n, what, last)
	}
	return out
}

// exchange sends each message in turn, waits until it completed (and
// until done holds after message i), and checks it reached the model once.
func (c *realConversation) exchange(msgs []realMessage, what string, done func(i int, read map[string]any) bool) {
	c.r.t.Helper()
	for i, m := range msgs {
		if text, isErr := c.send(m.from, m.to, m.words); isErr {
			c.r.t.Fatalf("message %d: %s", i+1, text)
		}
		c.settle(i+1, what, func(out map[string]any) bool { return done == nil || done(i, out) })
		if n := c.r.fm.Count(m.words); n != 1 {
			c.r.t.Fatalf("message %d reached the model %d times", i+1, n)
		}
	}
	if n := c.r.delivered(); n != len(msgs) {
		c.r.t.Fatalf("%d conversation messages reached the model, want %d", n, len(msgs))
	}
}

// refused sends words past the budget and checks the refusal says each of
// want, that nothing of it reached the model and that it was not stored
// (sent messages completed before). It returns read_conversation's answer.
func (c *realConversation) refused(from, to, words string, sent int, want ...string) map[string]any {
	c.r.t.Helper()
	text, isErr := c.send(from, to, words)
	for _, w := range append(want, "not stored or delivered") {
		if !isErr || !strings.Contains(text, w) {
			c.r.t.Fatalf("a send past the budget: error %v, %s; want a refusal saying %q", isErr, text, w)
		}
	}
	c.r.t.Logf("send past the budget refused: %s", text)
	if n := c.r.delivered(); n != sent || c.r.fm.Count(words) != 0 {
		c.r.t.Fatalf("the refused message reached the model (%d conversation messages delivered, want %d)", n, sent)
	}
	out, last := c.read()
	if strings.Contains(last, words) || strings.Count(last, `"delivery":"completed"`) != sent {
		c.r.t.Fatalf("the refused message was stored: %s", last)
	}
	return out
}

type realMessage struct{ from, to, words string }

// TestRealConversationStoppedByBudget: a directed conversation between two
// real Qwen Code sessions with a budget of two messages carries two (each
// reaches the model once), then refuses the third naming the messages
// budget; nothing of it reaches the model, and read_conversation shows the
// budget spent.
func TestRealConversationStoppedByBudget(t *testing.T) {
	r := newQwenRuntime(t)
	a, b := r.create(), r.create()
	c := r.conversation(map[string]any{"messages": 2}, a, b)
	c.exchange([]realMessage{{a, b, "ping from a to b"}, {b, a, "pong from b to a"}}, "nothing more", nil)
	out := c.refused(a, b, "one more past the budget", 2, "budget messages exhausted", "2 of 2 messages")
	if budget, _ := out["budget"].(map[string]any); budget["messages"] != 2.0 || budget["messagesLeft"] != 0.0 {
		t.Fatalf("read_conversation's budget after the refusal: %v, want 2 messages, 0 left", out["budget"])
	}
}

// TestRealConversationStoppedByTokenBudget: a directed conversation
// between two real Codex sessions (Codex reports each turn's usage: the
// fake model's 120 input and 30 output tokens, 150 counted) with a budget
// of 300 tokens carries two messages (each reaches the model once, and
// read_conversation shows the tokens used and left after each), then
// refuses the third naming the token budget; nothing of it reaches the
// model or is stored.
func TestRealConversationStoppedByTokenBudget(t *testing.T) {
	fm := fakemodel.New(t)
	usage := fakemodel.Usage{Input: 120, Output: 30, Cached: 20, Reasoning: 7}
	fm.SetDefault(fakemodel.Text("Reply from the fake model.").WithUsage(usage))
	r := newCodexRuntime(t, fm)
	a, b := r.create(), r.create()
	c := r.conversation(map[string]any{"tokens": 300}, a, b)
	perTurn := float64(usage.Input + usage.Output)
	var budget map[string]any
	c.exchange([]realMessage{{a, b, "ping from a to b"}, {b, a, "pong from b to a"}}, "its usage counted",
		func(i int, out map[string]any) bool {
			budget, _ = out["budget"].(map[string]any)
			used := perTurn * float64(i+1)
			return budget["tokens"] == 300.0 && budget["tokensUsed"] == used && budget["tokensLeft"] == 300-used
		})
	t.Logf("budget after two messages: %v", budget)
	out := c.refused(a, b, "one more past the token budget", 2, "budget tokens exhausted", "300 of 300 tokens")
	budget, _ = out["budget"].(map[string]any)
	if budget["tokens"] != 300.0 || budget["tokensUsed"] != 300.0 || budget["tokensLeft"] != 0.0 || budget["messagesLeft"] == 0.0 {
		t.Fatalf("read_conversation's budget after the refusal: %v, want 300 tokens, 300 used, 0 left (messages left)", budget)
	}
	// The conversation's usage total: the two turns' figures, as reported.
	total, _ := json.Marshal(out["usage"])
	if want := `{"reported":2,"turns":2,"usage":{"cached":40,"input":240,"output":60,"reasoning":14},"verdicts":"2 answered"}`; string(total) != want {
		t.Fatalf("read_conversation's usage = %s, want %s", total, want)
	}
}
