// Package cursorentry_test tests the Cursor entry of the agent catalog
// (the ACP adapter with Cursor's quirks) against the simulated Cursor CLI.
package cursorentry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/procgroup"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
	"github.com/agent-interop/runtime/internal/testutil/acpsim"
	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

var update = flag.Bool("update", false, "rewrite the acpsim fixtures")

var simBinary string

var _ providers.Adapter = (*acp.Adapter)(nil)

// cursorSpec is the catalog's Cursor entry.
func cursorSpec() providers.AgentSpec {
	for _, s := range providers.BuiltinAgents() {
		if s.ID == providers.Cursor {
			return s
		}
	}
	panic("no cursor entry in the catalog")
}

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "cursor-test-")
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

type host struct {
	mu  sync.Mutex
	out map[string]string // ref -> status: reason
}

func (h *host) ReportOutcome(_ providers.ID, _, ref string, o providers.Outcome) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out == nil {
		h.out = map[string]string{}
	}
	h.out[ref] = string(o.Status) + ": " + o.Reason
}

func (h *host) await(t *testing.T, ref string) string {
	t.Helper()
	var got string
	wait.For(t, "outcome "+ref, wait.Process, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		var ok bool
		got, ok = h.out[ref]
		return ok
	})
	return got
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// sim is one adapter over the simulated Cursor CLI, with its transcript.
type sim struct {
	a    *acp.Adapter
	h    *host
	ws   string
	home string
	rec  *acpsim.Recorder
	env  []string
}

type simOption func(*[]string, *acp.AgentConfig)

func withEnv(kv string) simOption {
	return func(env *[]string, _ *acp.AgentConfig) { *env = append(*env, kv) }
}

func newSim(t *testing.T, opts ...simOption) *sim {
	t.Helper()
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &sim{h: &host{}, ws: ws, home: home, rec: acpsim.NewRecorder(ws, "$WORKSPACE", home, "$HOME")}
	s.env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "FAKECURSOR_NOW=2026-11-30T00:00:00Z"}
	o := acp.AgentConfig{}
	for _, f := range opts {
		f(&s.env, &o)
	}
	s.a = s.adapter(o)
	return s
}

func (s *sim) adapter(o acp.AgentConfig) *acp.Adapter {
	o.Host = s.h
	o.LookupEnv = func(string) (string, bool) { return "", false }
	o.LookPath = func(name string) (string, error) {
		if name == "agent" {
			return simBinary, nil
		}
		return "", exec.ErrNotFound
	}
	o.Env = s.env
	o.DefaultCWD = s.ws
	o.Spec = cursorSpec()
	o.Trace = func(d acp.Direction, line []byte) { s.rec.Record(string(d), line) }
	return acp.NewAgent(o)
}

func (s *sim) close(t *testing.T) {
	t.Helper()
	if err := s.a.Close(); err != nil {
		t.Fatal(err)
	}
}

func (s *sim) create(t *testing.T) string {
	t.Helper()
	sess, err := s.a.CreateSession(ctxT(t), providers.CreateOptions{CWD: s.ws})
	if err != nil {
		t.Fatal(err)
	}
	return sess.NativeID
}

// send sends text and waits for the turn's outcome.
func (s *sim) send(t *testing.T, sid, text string, opts providers.SendOptions) string {
	t.Helper()
	r, err := s.a.Send(ctxT(t), sid, text, opts)
	if err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
	return s.h.await(t, r.Ref)
}

func (s *sim) pending(t *testing.T, method string) providers.PermissionRequest {
	t.Helper()
	var req providers.PermissionRequest
	wait.For(t, "a held "+method, wait.Process, func() bool {
		list, _ := s.a.PendingPermissions(context.Background())
		for _, r := range list {
			if r.Method == method {
				req = r
				return true
			}
		}
		return false
	})
	return req
}

type stream struct {
	mu   sync.Mutex
	list []providers.NativeEvent
}

func subscribe(t *testing.T, a providers.Adapter, sid string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := a.Subscribe(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	st := &stream{}
	go func() {
		for ev := range ch {
			st.mu.Lock()
			st.list = append(st.list, ev)
			st.mu.Unlock()
		}
	}()
	return st
}

func (st *stream) find(kind string) (providers.NativeEvent, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, ev := range st.list {
		if ev.Type == kind {
			return ev, true
		}
	}
	return providers.NativeEvent{}, false
}

func (st *stream) text() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var b strings.Builder
	for _, ev := range st.list {
		var u struct {
			Content struct{ Type, Text string } `json:"content"`
		}
		if ev.Type == "agent_message_chunk" && json.Unmarshal(ev.Data, &u) == nil && u.Content.Type == "text" {
			b.WriteString(u.Content.Text)
		}
	}
	return b.String()
}

func (st *stream) waitText(t *testing.T, want string) {
	t.Helper()
	wait.For(t, fmt.Sprintf("streamed text %q", want), wait.Process, func() bool { return strings.Contains(st.text(), want) })
}

func TestCursorLogin(t *testing.T) {
	s := newSim(t)
	caps := s.a.Capabilities(ctxT(t))
	if caps.Authorization != "authorized" || caps.SendMessage.State != providers.Available {
		t.Fatalf("capabilities %s %+v", caps.Authorization, caps.SendMessage)
	}
	if !strings.Contains(caps.SendMessage.Protocol, "ACP v1") || !strings.Contains(caps.SendMessage.Protocol, "agent acp") || caps.Program != simBinary {
		t.Fatalf("protocol %q program %q", caps.SendMessage.Protocol, caps.Program)
	}
	if caps.Sessions.State != providers.Available || !strings.Contains(caps.Sessions.Reason, "session/load") {
		t.Fatalf("sessions %+v", caps.Sessions)
	}
	if got := s.rec.Methods("client->agent"); !slices.Equal(got, []string{"initialize", "authenticate"}) {
		t.Fatalf("client sent %v", got)
	}
	s.close(t)
	s.rec.Check(t, "cursor_login", "initialize with the exact Cursor result, then authenticate {methodId: cursor_login} → {}", *update)
}

func TestCursorSignedOut(t *testing.T) {
	s := newSim(t, withEnv("FAKECURSOR_AUTH=signed_out"))
	caps := s.a.Capabilities(ctxT(t))
	if caps.Authorization != "unauthorized" || caps.SendMessage.State != providers.Unavailable ||
		!strings.Contains(caps.SendMessage.Reason, "Failed to open browser for login") || caps.SendMessage.Fix != cursorSpec().AuthHow {
		t.Fatalf("capabilities %s %+v", caps.Authorization, caps.SendMessage)
	}
	var ns *providers.NotSentError
	if _, err := s.a.Send(ctxT(t), "x", "hi", providers.SendOptions{}); !errors.As(err, &ns) {
		t.Fatalf("send while signed out: %v", err)
	}
	s.close(t)
	s.rec.Check(t, "cursor_login_signed_out", "signed out: authenticate cursor_login → -32602 Failed to open browser for login", *update)
}

func TestCursorPromptAndTitle(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)
	if got := s.send(t, sid, "hello", providers.SendOptions{}); got != "completed: stopReason: end_turn" {
		t.Fatalf("outcome %q", got)
	}
	st.waitText(t, "Hello from fake cursor.")
	wait.For(t, "title", wait.Process, func() bool { _, ok := st.find("session_info_update"); return ok })
	if _, ok := st.find("available_commands_update"); !ok {
		t.Fatal("no available_commands_update after session/new")
	}
	if _, ok := st.find("agent_thought_chunk"); !ok {
		t.Fatal("no thought chunk")
	}
	got, err := s.a.GetSession(ctxT(t), sid)
	if err != nil || got == nil || got.Title != "hello" || got.ID != "cursor:"+sid {
		t.Fatalf("session %+v %v", got, err)
	}
	s.close(t)
	s.rec.Check(t, "prompt_stream", "session/new (modes, models, configOptions, then available_commands_update), a prompt streamed in 2–4 character chunks with a thought and a title update, end_turn", *update)
}

func TestCursorModes(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)
	if _, err := s.a.SetMode(ctxT(t), sid, "plan"); err != nil {
		t.Fatal(err)
	}
	s.send(t, sid, "WRITEFILE in plan mode", providers.SendOptions{})
	st.waitText(t, "Writes are blocked in plan mode.")
	if _, err := os.Stat(filepath.Join(s.ws, "hello.txt")); err == nil {
		t.Fatal("plan mode wrote a file")
	}
	// The per-prompt agent option switches the mode before the prompt.
	s.send(t, sid, "WRITEFILE in agent mode", providers.SendOptions{Agent: "agent"})
	st.waitText(t, "Wrote hello.txt.")
	var ns *providers.NotSentError
	if _, err := s.a.SetMode(ctxT(t), sid, "yolo"); !errors.As(err, &ns) || !strings.Contains(err.Error(), "[agent plan ask]") {
		t.Fatalf("unoffered mode: %v", err)
	}
	// session/set_mode also works and is followed by current_mode_update.
	c, err := s.a.Client(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctxT(t), "session/set_mode", map[string]string{"sessionId": sid, "modeId": "ask"}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "current_mode_update", wait.Process, func() bool {
		v, _ := c.Session(sid)
		return v.Modes != nil && v.Modes.CurrentModeID == "ask"
	})
	s.close(t)
	s.rec.Check(t, "modes", "agent/plan/ask modes: set through the mode config option, plan blocks writes, session/set_mode then current_mode_update", *update)
}

func TestCursorHyphenatedOptionIDs(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)
	for _, c := range []struct{ kind, id, reply string }{
		{"allow_once", "allow-once", "Tool ran."},
		{"reject_once", "reject-once", "Tool was rejected."},
	} {
		r, err := s.a.Send(ctxT(t), sid, "PERMISSION "+c.kind, providers.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		req := s.pending(t, "session/request_permission")
		var ids []string
		for _, o := range req.Options {
			ids = append(ids, o.ID)
		}
		if !slices.Equal(ids, []string{"allow-once", "allow-always", "reject-once"}) {
			t.Fatalf("option ids %v", ids)
		}
		// Cursor offers no reject_always: refused, naming the offered kinds.
		_, err = s.a.RespondPermission(ctxT(t), sid, req.RequestID, "reject_always")
		if err == nil || !strings.Contains(err.Error(), "offered kinds: allow_once, allow_always, reject_once") {
			t.Fatalf("reject_always: %v", err)
		}
		rr, err := s.a.RespondPermission(ctxT(t), sid, req.RequestID, c.kind)
		if err != nil {
			t.Fatal(err)
		}
		if d := rr.Detail.(map[string]any); d["optionId"] != c.id {
			t.Fatalf("answered %v, want option id %s", d, c.id)
		}
		if got := s.h.await(t, r.Ref); got != "completed: stopReason: end_turn" {
			t.Fatalf("outcome %q", got)
		}
		st.waitText(t, c.reply)
	}
	s.close(t)
	s.rec.Check(t, "permission_hyphenated", "session/request_permission with hyphenated option ids answered by kind (allow_once → allow-once, reject_once → reject-once)", *update)
}

func TestCursorCancelAnswersHeldPermission(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	r, err := s.a.Send(ctxT(t), sid, "PERMISSION then cancel", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.pending(t, "session/request_permission")
	if _, err := s.a.Cancel(ctxT(t), sid); err != nil {
		t.Fatal(err)
	}
	if got := s.h.await(t, r.Ref); got != "rejected: stopReason: cancelled" {
		t.Fatalf("outcome %q", got)
	}
	if list, _ := s.a.PendingPermissions(ctxT(t)); len(list) != 0 {
		t.Fatalf("still held: %+v", list)
	}
	s.close(t)
	s.rec.Check(t, "cancel_answers_permission", "session/cancel notification while a permission request is held: the client answers it {outcome: cancelled}; the prompt ends cancelled", *update)
}

func TestCursorSlowReplyCancel(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)
	r, err := s.a.Send(ctxT(t), sid, "SLOWREPLY", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st.waitText(t, "Working")
	// A second send waits for the running prompt: with a short deadline it
	// is certainly not sent.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var ns *providers.NotSentError
	if _, err := s.a.Send(short, sid, "queued behind", providers.SendOptions{}); !errors.As(err, &ns) {
		t.Fatalf("second send while busy: %v", err)
	}
	cr, err := s.a.Cancel(ctxT(t), sid)
	if err != nil || cr.Detail.(map[string]any)["promptRunning"] != true {
		t.Fatalf("cancel %+v %v", cr, err)
	}
	if got := s.h.await(t, r.Ref); got != "rejected: stopReason: cancelled" {
		t.Fatalf("outcome %q", got)
	}
	if got := s.send(t, sid, "hello", providers.SendOptions{}); got != "completed: stopReason: end_turn" {
		t.Fatalf("session unusable after cancel: %q", got)
	}
	s.close(t)
	s.rec.Check(t, "cancel_slow_reply", "a slow reply cancelled by the session/cancel notification ends cancelled; the session stays usable", *update)
}

func TestCursorExtensions(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)

	// cursor/ask_question is held; answered by option id.
	r, err := s.a.Send(ctxT(t), sid, "ASKQUESTION", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q := s.pending(t, "cursor/ask_question")
	if q.NativeID != sid || q.Title != "Pick a colour" {
		t.Fatalf("question %+v", q)
	}
	if _, err := s.a.RespondPermission(ctxT(t), sid, q.RequestID, "blue"); err != nil {
		t.Fatal(err)
	}
	s.h.await(t, r.Ref)
	st.waitText(t, "You chose blue.")

	// cursor/create_plan is held; answered by kind.
	r, err = s.a.Send(ctxT(t), sid, "CREATEPLAN", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := s.pending(t, "cursor/create_plan")
	if _, err := s.a.RespondPermission(ctxT(t), sid, p.RequestID, "accept"); err != nil {
		t.Fatal(err)
	}
	s.h.await(t, r.Ref)
	st.waitText(t, "Plan accepted.")

	// cursor/update_todos: the request is accepted at once; the notification
	// and cursor/task become raw events.
	s.send(t, sid, "TODOS", providers.SendOptions{})
	st.waitText(t, "Todos updated.")
	s.send(t, sid, "TASK", providers.SendOptions{})
	for _, kind := range []string{"cursor/update_todos", "cursor/task"} {
		wait.For(t, kind+" event", wait.Process, func() bool { _, ok := st.find(kind); return ok })
	}

	// An unknown cursor/* request gets -32601.
	s.send(t, sid, "BOGUSREQUEST", providers.SendOptions{})
	st.waitText(t, "Client answered -32601.")
	s.close(t)
	s.rec.Check(t, "cursor_extensions", "blocking cursor/ask_question and cursor/create_plan held until answered (nested outcome), cursor/update_todos request accepted, notifications kept as events, unknown cursor/* → -32601", *update)
}

func TestCursorAskQuestionSkipAndRejectPlan(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)
	r, _ := s.a.Send(ctxT(t), sid, "ASKQUESTION", providers.SendOptions{})
	q := s.pending(t, "cursor/ask_question")
	if _, err := s.a.RespondPermission(ctxT(t), sid, q.RequestID, "skip"); err != nil {
		t.Fatal(err)
	}
	s.h.await(t, r.Ref)
	st.waitText(t, "Question skipped.")
	r, _ = s.a.Send(ctxT(t), sid, "CREATEPLAN", providers.SendOptions{})
	p := s.pending(t, "cursor/create_plan")
	if _, err := s.a.RespondPermission(ctxT(t), sid, p.RequestID, "rejected"); err != nil {
		t.Fatal(err)
	}
	s.h.await(t, r.Ref)
	st.waitText(t, "Plan rejected.")
	// A cancel answers a held question "cancelled".
	r, _ = s.a.Send(ctxT(t), sid, "ASKQUESTION again", providers.SendOptions{})
	s.pending(t, "cursor/ask_question")
	if _, err := s.a.Cancel(ctxT(t), sid); err != nil {
		t.Fatal(err)
	}
	if got := s.h.await(t, r.Ref); got != "rejected: stopReason: cancelled" {
		t.Fatalf("outcome %q", got)
	}
	s.close(t)
}

func TestCursorModels(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	var ns *providers.NotSentError
	_, err := s.a.SetModel(ctxT(t), sid, providers.Model{ModelID: "auto"})
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "gpt-5.3-codex") {
		t.Fatalf("unoffered model: %v", err)
	}
	rr, err := s.a.SetModel(ctxT(t), sid, providers.Model{ModelID: "gpt-5.3-codex"})
	if err != nil || rr.ProviderState != "configuration_applied" {
		t.Fatalf("set model %+v %v", rr, err)
	}
	got, _ := s.a.GetSession(ctxT(t), sid)
	if got.Model != "gpt-5.3-codex" {
		t.Fatalf("model %q", got.Model)
	}
	// Reasoning is not offered without the parameterized picker.
	var ue *providers.UnsupportedError
	if _, err := s.a.SetReasoning(ctxT(t), sid, "high"); !errors.As(err, &ue) {
		t.Fatalf("reasoning without picker: %v", err)
	}
	// session/set_model accepts only parameterized ids.
	c, _ := s.a.Client(ctxT(t))
	_, err = c.Call(ctxT(t), "session/set_model", map[string]string{"sessionId": sid, "modelId": "auto"})
	var re *acp.RPCError
	if !errors.As(err, &re) || re.Code != acp.CodeInvalidParams {
		t.Fatalf("bare slug: %v", err)
	}
	if _, err := c.Call(ctxT(t), "session/set_model", map[string]string{"sessionId": sid, "modelId": "default[]"}); err != nil {
		t.Fatal(err)
	}
	s.close(t)
	s.rec.Check(t, "models", "model through the model config option (whole configOptions returned); session/set_model rejects a bare slug with -32602 and accepts a parameterized id", *update)

	// With the picker _meta, the per-model reasoning option appears.
	p := newSim(t)
	p.a = p.adapter(acp.AgentConfig{ParameterizedModelPicker: true})
	sid = p.create(t)
	if _, err := p.a.SetReasoning(ctxT(t), sid, "high"); err != nil {
		t.Fatal(err)
	}
	p.close(t)
	p.rec.Check(t, "models_picker", "clientCapabilities._meta.parameterizedModelPicker unlocks the per-model reasoning option", *update)
}

func TestCursorReadTextFile(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)
	lines := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	if err := os.WriteFile(filepath.Join(s.ws, "notes.txt"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.ws, ".env"), []byte("TOKEN=secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.send(t, sid, "READFILE notes.txt", providers.SendOptions{})
	st.waitText(t, "Read: one\ntwo\nthree\nfour\nfive\n")
	s.send(t, sid, "READFILE .env", providers.SendOptions{})
	st.waitText(t, "Read failed (-32602): Invalid params")
	s.send(t, sid, "READFILE ../home/x", providers.SendOptions{})
	s.send(t, sid, "READFILE missing.txt", providers.SendOptions{})
	st.waitText(t, "Read failed (-32002)")
	if strings.Contains(st.text(), "secret") {
		t.Fatal("a protected file leaked")
	}
	s.close(t)
	s.rec.Check(t, "read_text_file", "fs/read_text_file served inside the session workspace with line/limit; .env and paths outside refused (-32602), a missing file → -32002", *update)
}

func TestCursorUnknownUpdatesKeptRaw(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	st := subscribe(t, s.a, sid)
	s.send(t, sid, "UNKNOWNUPDATE", providers.SendOptions{})
	st.waitText(t, "Sent an unknown update.")
	ev, ok := st.find("future_widget_update")
	if !ok || !strings.Contains(string(ev.Data), `"widget":{"id":1}`) {
		t.Fatalf("unknown kind not kept raw: %+v", ev)
	}
	if strings.Contains(st.text(), "not a user message") || strings.Contains(st.text(), "holo") {
		t.Fatalf("unknown content misread as text: %q", st.text())
	}
	found := false
	st.mu.Lock()
	for _, e := range st.list {
		found = found || (e.Type == "agent_message_chunk" && strings.Contains(string(e.Data), `"type":"hologram"`))
	}
	st.mu.Unlock()
	if !found {
		t.Fatal("unknown content block not kept raw")
	}
	s.close(t)
	s.rec.Check(t, "unknown_update", "an unknown sessionUpdate kind and an unknown content block type pass through raw", *update)
}

func TestCursorLoadAndList(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	s.send(t, sid, "hello", providers.SendOptions{})
	s.close(t)

	b := &sim{h: s.h, ws: s.ws, home: s.home, env: s.env, rec: acpsim.NewRecorder(s.ws, "$WORKSPACE", s.home, "$HOME")}
	b.a = b.adapter(acp.AgentConfig{})
	list, err := b.a.ListSessions(ctxT(t))
	if err != nil || len(list) != 1 || list[0].NativeID != sid || list[0].Title != "hello" || list[0].CWD != s.ws {
		t.Fatalf("list %+v %v", list, err)
	}
	if _, err := b.a.ResumeSession(ctxT(t), sid); err != nil {
		t.Fatal(err)
	}
	st := subscribe(t, b.a, sid)
	wait.For(t, "replay", wait.Process, func() bool {
		_, u := st.find("user_message_chunk")
		return u && strings.Contains(st.text(), "Hello from fake cursor.")
	})
	// An unknown session id: the agent's -32602 comes back as a refusal.
	c, _ := b.a.Client(ctxT(t))
	_, err = c.LoadSession(ctxT(t), "nope", b.ws)
	var re *acp.RPCError
	if !errors.As(err, &re) || re.Code != acp.CodeInvalidParams || !strings.Contains(string(re.Data), `Session \"nope\" not found`) {
		t.Fatalf("unknown session: %v", err)
	}
	// session/resume is not offered by Cursor.
	if _, err := c.ResumeSession(ctxT(t), sid, b.ws); err == nil {
		t.Fatal("session/resume used although not advertised")
	}
	b.close(t)
	b.rec.Check(t, "load_list", "session/list from a new process, session/load replays history before answering (answer without sessionId), unknown id → -32602", *update)
}

func TestCursorSessionNewValidation(t *testing.T) {
	s := newSim(t)
	c, err := s.a.Client(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(ctxT(t), "session/new", map[string]string{"cwd": s.ws})
	var re *acp.RPCError
	if !errors.As(err, &re) || re.Code != acp.CodeInternalError || !strings.Contains(string(re.Data), "mcpServers") {
		t.Fatalf("missing mcpServers: %v", err)
	}
	_, err = c.Call(ctxT(t), "session/resume", map[string]any{"sessionId": "x", "cwd": s.ws})
	if !errors.As(err, &re) || re.Code != acp.CodeMethodNotFound {
		t.Fatalf("session/resume: %v", err)
	}
	s.close(t)
	s.rec.Check(t, "session_new_validation", "session/new without mcpServers → -32603 with Zod issues; session/resume → -32601", *update)
}

// TestCursorAgentKilledMidReply: the agent process dies while a prompt
// runs: the turn is delivery_unknown with the reason, the session is dead
// until the agent is started again, and the next send (a new agent, the
// session loaded from its workspace) completes. A runtime that restarted
// finds the first prompt in the replayed history, never completed.
func TestCursorAgentKilledMidReply(t *testing.T) {
	s := newSim(t)
	sid := s.create(t)
	if got := s.send(t, sid, "hello", providers.SendOptions{}); got != "completed: stopReason: end_turn" {
		t.Fatalf("first turn %q", got)
	}
	st := subscribe(t, s.a, sid)
	r, err := s.a.Send(ctxT(t), sid, "SLOWREPLY", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st.waitText(t, "Working")
	if l := s.a.Liveness(sid); l.State != providers.LiveWorking {
		t.Fatalf("liveness during the reply = %+v", l)
	}
	c, err := s.a.Client(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	_ = procgroup.Kill(c.PID())
	got := s.h.await(t, r.Ref)
	if !strings.HasPrefix(got, "delivery_unknown: ") || !strings.Contains(got, "exited") || !strings.Contains(got, "it is not resent") {
		t.Fatalf("outcome of the killed reply %q", got)
	}
	if l := s.a.Liveness(sid); l.State != providers.LiveDead || l.Reason == "" || l.ObservedAt == nil {
		t.Fatalf("liveness after the agent died = %+v", l)
	}
	if got := s.send(t, sid, "hello again", providers.SendOptions{}); got != "completed: stopReason: end_turn" {
		t.Fatalf("next send after the agent died: %q", got)
	}
	s.close(t)

	b := &sim{h: s.h, ws: s.ws, home: s.home, env: s.env, rec: acpsim.NewRecorder(s.ws, "$WORKSPACE", s.home, "$HOME")}
	b.a = b.adapter(acp.AgentConfig{})
	defer b.close(t)
	sum := sha256.Sum256([]byte("hello"))
	rec, err := b.a.LookupTurn(ctxT(t), providers.TurnQuery{NativeID: sid, TextSHA256: hex.EncodeToString(sum[:])})
	if err != nil || !rec.Found || rec.Status != "" || !strings.Contains(rec.Reason, "no stop reason") {
		t.Fatalf("lookup = %+v, %v", rec, err)
	}
	none := sha256.Sum256([]byte("never sent"))
	if rec, err := b.a.LookupTurn(ctxT(t), providers.TurnQuery{NativeID: sid, TextSHA256: hex.EncodeToString(none[:])}); err == nil || rec.Found {
		t.Fatalf("lookup of an unsent prompt in an open session = %+v, %v", rec, err)
	}
}

// TestLoadFromAnotherWorkspace: an agent that lists, without a cwd, only
// the sessions of the directory it runs in (Qwen Code, opencode) still
// lists and reopens a session of another workspace after a restart, once
// the runtime gives the adapter the workspace it recorded for it (the
// registry does, through providers.Roles.Workspaces).
func TestLoadFromAnotherWorkspace(t *testing.T) {
	s := newSim(t, withEnv("FAKECURSOR_LIST=own-dir"))
	sid := s.create(t)
	s.send(t, sid, "hello", providers.SendOptions{})
	s.close(t)

	b := &sim{h: s.h, ws: s.ws, home: s.home, env: s.env, rec: acpsim.NewRecorder()}
	b.a = b.adapter(acp.AgentConfig{})
	t.Cleanup(func() { b.close(t) })
	if got, err := b.a.GetSession(ctxT(t), sid); err != nil || got != nil {
		t.Fatalf("the sim listed a session of another directory without a cwd (%+v, %v): it no longer models the gap", got, err)
	}
	hints := b.a.Roles().Workspaces
	if hints == nil {
		t.Fatal("the acp adapter takes no recorded workspaces")
	}
	hints.KnowWorkspace(sid, s.ws)
	list, err := b.a.ListSessions(ctxT(t))
	if err != nil || len(list) != 1 || list[0].NativeID != sid || list[0].CWD != s.ws {
		t.Fatalf("list with the recorded workspace = %+v, %v; want %s in %s", list, err, sid, s.ws)
	}
	if got, err := b.a.GetSession(ctxT(t), sid); err != nil || got == nil || got.CWD != s.ws {
		t.Fatalf("get with the recorded workspace = %+v, %v", got, err)
	}
	if _, err := b.a.ResumeSession(ctxT(t), sid); err != nil {
		t.Fatal(err)
	}
	st := subscribe(t, b.a, sid)
	wait.For(t, "replay", wait.Process, func() bool { return strings.Contains(st.text(), "Hello from fake cursor.") })
}

// TestListRefusedNamesTheProviderOnce: an agent that refuses session/list
// (codex-acp where nobody has signed in) fails the listing with its
// answer, the provider and the method named once each.
func TestListRefusedNamesTheProviderOnce(t *testing.T) {
	s := newSim(t, withEnv("FAKECURSOR_LIST=auth-required"))
	defer s.close(t)
	_, err := s.a.ListSessions(ctxT(t))
	if err == nil {
		t.Fatal("a refused session/list listed without an error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "cursor: ") || strings.Count(msg, "session/list") != 1 || !strings.Contains(msg, "Authentication required") {
		t.Fatalf("error = %q; want the provider, session/list once and the agent's answer", msg)
	}
}

// TestNoFileReadsQuirk: an entry with the no-fs-read quirk is offered no
// fs/read_text_file in initialize (Gemini CLI then reads files itself and
// asks before a write); without it the capability is offered.
func TestNoFileReadsQuirk(t *testing.T) {
	for _, quirk := range []bool{false, true} {
		s := newSim(t)
		sp := cursorSpec()
		if quirk {
			sp.Quirks = append(slices.Clone(sp.Quirks), providers.QuirkNoFileReads)
		}
		var mu sync.Mutex
		var init string
		o := acp.AgentConfig{Spec: sp, Env: s.env, DefaultCWD: s.ws, Host: s.h,
			LookupEnv: func(string) (string, bool) { return "", false },
			LookPath:  func(string) (string, error) { return simBinary, nil },
			Trace: func(d acp.Direction, line []byte) {
				mu.Lock()
				defer mu.Unlock()
				if init == "" && strings.Contains(string(line), `"method":"initialize"`) {
					init = string(line)
				}
			}}
		a := acp.NewAgent(o)
		if err := a.Probe(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		_ = a.Close()
		s.close(t)
		mu.Lock()
		want := fmt.Sprintf(`"readTextFile":%v`, !quirk)
		if !strings.Contains(init, want) {
			t.Errorf("quirk %v: initialize %s, want %s", quirk, init, want)
		}
		mu.Unlock()
	}
}

// TestCursorResumeOfALostSession: Cursor answers session/load of a
// session it does not have with -32602 `Session "<id>" not found`; the
// adapter reports it as providers.ErrSessionLost with Cursor's words, a
// refusal (not an unknown outcome). A send, an events subscription and a
// diff of it are refused the same way: the error says the agent no
// longer has the session, with its words, and to go on with
// resume_session's allowFresh; the send is the agent's refusal (nothing
// delivered), and the subscription is a NotFound (the events hub does not
// reopen it in a loop).
func TestCursorResumeOfALostSession(t *testing.T) {
	s := newSim(t)
	s.a.KnowWorkspace("gone", s.ws)
	_, err := s.a.ResumeSession(ctxT(t), "gone")
	reason, lost := providers.LostReason(err)
	if !lost || !strings.Contains(reason, `Session "gone" not found`) || providers.IsUncertain(err) {
		t.Fatalf("resume of a session Cursor does not have = %v (lost %v, reason %q)", err, lost, reason)
	}
	says := func(op string, err error) {
		t.Helper()
		reason, lost := providers.LostReason(err)
		if !lost || reason != `Invalid params: Session "gone" not found` {
			t.Fatalf("%s: %v (lost %v, reason %q); want providers.ErrSessionLost with Cursor's words", op, err, lost, reason)
		}
		for _, w := range []string{"the agent no longer has session gone", `(Invalid params: Session "gone" not found)`, "resume_session with allowFresh: true"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q\nlacks %q", op, err, w)
			}
		}
	}
	_, err = s.a.Send(ctxT(t), "gone", "hello", providers.SendOptions{})
	says("send", err)
	var rj *providers.RejectedError
	if !errors.As(err, &rj) || providers.IsUncertain(err) || !strings.Contains(rj.Reason, "no longer has session gone") {
		t.Fatalf("send to a session Cursor does not have = %v; want the agent's refusal saying so", err)
	}
	_, err = s.a.Subscribe(ctxT(t), "gone")
	says("subscribe", err)
	var nf interface{ NotFound() bool }
	if !errors.As(err, &nf) || !nf.NotFound() {
		t.Fatalf("subscribe to a lost session = %v; want a NotFound", err)
	}
	_, err = s.a.Diff(ctxT(t), "gone", providers.DiffOptions{})
	says("diff", err)
	// A session it has still resumes; after an agent restart its events
	// stream reopens it, and its diff (nothing observed) is empty.
	sid := s.create(t)
	if _, err := s.a.ResumeSession(ctxT(t), sid); err != nil {
		t.Fatal(err)
	}
	s.close(t)
	s.a = s.adapter(acp.AgentConfig{})
	defer s.close(t)
	s.a.KnowWorkspace(sid, s.ws)
	st := subscribe(t, s.a, sid)
	if d, err := s.a.Diff(ctxT(t), sid, providers.DiffOptions{}); err != nil || d.(acp.DiffResult).Observed {
		t.Fatalf("diff of a session with nothing observed = %+v, %v", d, err)
	}
	if got := s.send(t, sid, "hello again", providers.SendOptions{}); !strings.HasPrefix(got, string(providers.StatusCompleted)) {
		t.Fatalf("send to the reopened session: %s", got)
	}
	wait.For(t, "the prompt's answer on the reopened stream", wait.Process, func() bool { _, ok := st.find("session/prompt"); return ok })
}
