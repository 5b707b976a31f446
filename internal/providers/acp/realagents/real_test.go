// Package realagents_test drives the ACP agents of the catalog through the
// one ACP adapter, for real (through internal/testutil/realpeers), offline
// against the fake model: one table over the agents, each run through
// create, send (the prompt reaches the model once), the reply in events,
// a file write through a permission, its diff, cancel, the agent killed
// mid-turn (delivery_unknown, never resent) and a working next send.
package realagents_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

var _ providers.Adapter = (*acp.Adapter)(nil)

// spec is the catalog's entry of id.
func spec(t *testing.T, id providers.ID) providers.AgentSpec {
	t.Helper()
	for _, s := range providers.BuiltinAgents() {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no catalog entry %s", id)
	return providers.AgentSpec{}
}

// host records reported outcomes.
type host struct {
	mu  sync.Mutex
	out map[string]outcome
}

type outcome struct {
	status providers.ReceiptStatus
	reason string
}

func (h *host) ReportOutcome(_ providers.ID, _, ref string, o providers.Outcome) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out == nil {
		h.out = map[string]outcome{}
	}
	h.out[ref] = outcome{o.Status, o.Reason}
}

func (h *host) await(t *testing.T, ref string) outcome {
	t.Helper()
	var o outcome
	wait.For(t, "the outcome of "+ref, wait.Process, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		var ok bool
		o, ok = h.out[ref]
		return ok
	})
	return o
}

// startWait bounds a call that may start the agent program: under load
// the start costs most (opencode's 185 MB binary answered initialize after
// 80 s at load 36 on two cores, and in about 5 s when idle).
const startWait = 4 * time.Minute

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func lookIn(path string) func(string) (string, error) {
	return func(name string) (string, error) {
		if name == "" {
			return "", exec.ErrNotFound
		}
		return path, nil
	}
}

func noEnv(string) (string, bool) { return "", false }

func TestLocate(t *testing.T) {
	look := func(name string) (string, error) {
		if name == "claude-code-acp" || name == "my-acp" {
			return "/bin/" + name, nil
		}
		return "", exec.ErrNotFound
	}
	claude := spec(t, providers.ClaudeCode)
	l, err := acp.LocateAgent(claude, noEnv, look)
	if err != nil || l.Label != "claude-code-acp" || l.Argv[0] != "/bin/claude-code-acp" {
		t.Fatalf("fallback: %+v %v", l, err)
	}
	env := func(k string) (string, bool) {
		if k == claude.CommandEnv {
			return "my-acp --flag", true
		}
		return "", false
	}
	l, err = acp.LocateAgent(claude, env, look)
	if err != nil || strings.Join(l.Argv, " ") != "/bin/my-acp --flag" {
		t.Fatalf("override: %+v %v", l, err)
	}
	// Cursor's command keeps its "acp" argument after an override.
	cursor := spec(t, providers.Cursor)
	l, err = acp.LocateAgent(cursor, func(k string) (string, bool) { return "my-acp", k == cursor.CommandEnv }, look)
	if err != nil || strings.Join(l.Argv, " ") != "/bin/my-acp acp" {
		t.Fatalf("cursor override: %+v %v", l, err)
	}
	none := func(string) (string, error) { return "", exec.ErrNotFound }
	if _, err := acp.LocateAgent(claude, noEnv, none); err == nil || !strings.Contains(err.Error(), "claude-agent-acp") {
		t.Fatalf("missing: %v", err)
	}
	a := acp.NewAgent(acp.AgentConfig{Spec: claude, LookupEnv: noEnv, LookPath: none})
	caps := a.Capabilities(context.Background())
	if caps.SendMessage.State != providers.Unavailable || !strings.Contains(caps.SendMessage.Fix, claude.CommandEnv) {
		t.Fatalf("capabilities without a program: %+v", caps.SendMessage)
	}
}

// agentCase is one real ACP agent of the table.
type agentCase struct {
	id      providers.ID
	program realpeers.Program
	// env is the agent's isolated environment pointing at fm.
	env func(t *testing.T, fm *fakemodel.Server) *realpeers.Env
	// load: the agent advertises session/load with history replay.
	load bool
	// args are appended to the catalog's command (offline switches).
	args []string
	// gaps are the steps known not to pass yet against this agent, with
	// why: they are skipped with that reason (and listed in
	// docs/compatibility.md), never counted as passing.
	gaps map[string]string
}

func agentCases() []agentCase {
	return []agentCase{
		{id: providers.ClaudeCode, program: realpeers.ClaudeACP, load: true,
			env: func(t *testing.T, fm *fakemodel.Server) *realpeers.Env { return realpeers.ClaudeEnv(t, fm.URL()) }},
		{id: "qwen", program: realpeers.QwenCode, load: true,
			env: func(t *testing.T, fm *fakemodel.Server) *realpeers.Env { return realpeers.QwenEnv(t, fm.BaseURL()) }},
		{id: "codex-acp", program: realpeers.CodexACP,
			env: func(t *testing.T, fm *fakemodel.Server) *realpeers.Env {
				// codex-acp's own Codex engine reads config.toml but not
				// the model catalog format of @openai/codex 0.171.
				e := realpeers.NewEnv(t)
				home := filepath.Join(e.Home(), ".codex")
				if err := os.MkdirAll(home, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(realpeers.CodexConfig(fm.BaseURL())), 0o600); err != nil {
					t.Fatal(err)
				}
				return e.Set("CODEX_HOME", home)
			}},
		{id: "gemini", program: realpeers.GeminiCLI,
			env: func(t *testing.T, fm *fakemodel.Server) *realpeers.Env { return realpeers.GeminiEnv(t, fm.URL()) }},
		// --pure: no first-start plugin install from the npm registry.
		{id: "opencode-acp", program: realpeers.OpenCode, args: []string{"--pure"}, load: true,
			env: func(t *testing.T, fm *fakemodel.Server) *realpeers.Env {
				return realpeers.OpenCodeEnv(t, realpeers.OpenCodeConfig(fm.BaseURL()))
			}},
	}
}

// caseOf is the agent case of id.
func caseOf(t *testing.T, id providers.ID) agentCase {
	t.Helper()
	for _, c := range agentCases() {
		if c.id == id {
			return c
		}
	}
	t.Fatalf("no agent case %q", id)
	return agentCase{}
}

// logRequestsOnFailure logs what the model saw when t fails, to tell why a
// step failed: each request, and what the tool answered in a continuation.
func logRequestsOnFailure(t *testing.T, fm *fakemodel.Server) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, q := range fm.Requests() {
			t.Logf("model request %d %s %s: last user %.80q continuation=%v rule=%s status=%d side=%v tools=%d note=%s",
				q.Seq, q.API, q.Path, q.LastUser, q.Continuation, q.Rule, q.Status, q.Side, len(q.Tools), q.Note)
			if q.Continuation {
				t.Logf("  tool result: %.600s", q.Body[max(0, len(q.Body)-600):])
			}
		}
	})
}

// realAgent builds the catalog adapter of c over the real program, in env.
func realAgent(t *testing.T, c agentCase, h providers.Host, env *realpeers.Env) (*acp.Adapter, string) {
	t.Helper()
	bin := realpeers.Require(t, c.program)
	ws := filepath.Join(env.Root(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	sp := spec(t, c.id)
	sp.Command = append(slices.Clone(sp.Command), c.args...)
	a := acp.NewAgent(acp.AgentConfig{Spec: sp, Host: h, LookupEnv: noEnv, LookPath: lookIn(bin), Env: env.Environ(), DefaultCWD: ws})
	t.Cleanup(func() { _ = a.Close() })
	return a, ws
}

type stream struct {
	mu   sync.Mutex
	list []providers.NativeEvent
}

func subscribe(t *testing.T, a providers.Adapter, id string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := a.Subscribe(ctx, id)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	s := &stream{}
	go func() {
		for ev := range ch {
			s.mu.Lock()
			s.list = append(s.list, ev)
			s.mu.Unlock()
		}
	}()
	return s
}

// len is the number of events received so far.
func (s *stream) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list)
}

// since renders the events received from index from on (type and data), for a log.
func (s *stream) since(from int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, ev := range s.list[min(from, len(s.list)):] {
		fmt.Fprintf(&b, "[%s turn=%s %s] ", ev.Type, ev.TurnID, ev.Data)
	}
	return b.String()
}

func (s *stream) text(kind string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, ev := range s.list {
		var u struct {
			Content struct{ Text string } `json:"content"`
		}
		if ev.Type == kind && json.Unmarshal(ev.Data, &u) == nil {
			b.WriteString(u.Content.Text)
		}
	}
	return b.String()
}

// choices is the session's current value and the offered values of a
// mode or model: its config option of that category, else its modes or
// models.
func choices(cl *acp.Client, sid, kind string) (string, []string) {
	v, ok := cl.Session(sid)
	if !ok {
		return "", nil
	}
	for _, o := range v.ConfigOptions {
		if o.Category == kind || o.ID == kind {
			return o.Current(), o.Values()
		}
	}
	var offered []string
	switch {
	case kind == "mode" && v.Modes != nil:
		for _, m := range v.Modes.AvailableModes {
			offered = append(offered, m.ID)
		}
		return v.Modes.CurrentModeID, offered
	case kind == "model" && v.Models != nil:
		for _, m := range v.Models.AvailableModels {
			offered = append(offered, m.ModelID)
		}
		return v.Models.CurrentModelID, offered
	}
	return "", nil
}

// delivered counts the turn-starting model requests whose newest user text
// (the last line of the last user message) is prompt: one per delivery. An
// agent that replays an unanswered prompt from its history joins it before
// a newer prompt (Qwen), which is not a second delivery; a resent prompt
// is the newest text again and is counted.
func delivered(fm *fakemodel.Server, prompt string) int {
	n := 0
	for _, r := range fm.Requests() {
		if r.Continuation || r.Side || r.API == fakemodel.CountTokens || r.API == fakemodel.Models || r.API == fakemodel.OtherAPI {
			continue
		}
		lines := strings.Split(strings.TrimSpace(r.LastUser), "\n")
		if strings.Contains(lines[len(lines)-1], prompt) {
			n++
		}
	}
	return n
}

func TestRealAgents(t *testing.T) {
	for _, c := range agentCases() {
		t.Run(string(c.id), func(t *testing.T) { runAgent(t, c) })
	}
}

func runAgent(t *testing.T, c agentCase) {
	h := &host{}
	fm := fakemodel.New(t)
	logRequestsOnFailure(t, fm)
	env := c.env(t, fm)
	a, ws := realAgent(t, c, h, env)
	sp := spec(t, c.id)
	allowed, rejected := filepath.Join(ws, "allowed.txt"), filepath.Join(ws, "rejected.txt")
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	fm.On(fakemodel.Contains("WRITE-ALLOW"), fakemodel.WriteFile(allowed, "yes\n").WithFollowUp("Wrote it."))
	fm.On(fakemodel.Contains("WRITE-REJECT"), fakemodel.WriteFile(rejected, "no\n").WithFollowUp("Could not write."))
	// Once each: an agent that keeps a cancelled or killed prompt in its
	// history sends it again inside a later request (Qwen joins it to the
	// next prompt), which must not be held again.
	fm.Times(1, fakemodel.Contains("SLOWREPLY"), fakemodel.Text("late").WithDelay(5*time.Minute))
	fm.Times(1, fakemodel.Contains("KILLME"), fakemodel.Text("never").WithDelay(5*time.Minute))

	var sid string
	var ev *stream
	top := t
	step := func(name string, f func(t *testing.T)) {
		if why, ok := c.gaps[name]; ok {
			t.Run(name, func(t *testing.T) { t.Skipf("known gap: %s", why) })
			return
		}
		start := time.Now()
		ok := t.Run(name, f)
		t.Logf("%s %s: %s", c.id, name, time.Since(start).Round(time.Millisecond))
		if !ok && sid != "" { // leave no prompt running for the next step
			_, _ = a.Cancel(context.Background(), sid)
		}
		if !ok && sid == "" {
			t.FailNow()
		}
	}
	step("capabilities name the program and version", func(t *testing.T) {
		caps := a.Capabilities(ctxT(t, startWait))
		if caps.SendMessage.State == providers.Unavailable {
			t.Fatalf("unavailable: %s", caps.SendMessage.Reason)
		}
		if caps.ProviderVersion == "" || caps.Program == "" {
			t.Fatalf("program %q version %q (pinned %s)", caps.Program, caps.ProviderVersion, sp.InstallVersion)
		}
		if caps.SendMessage.State != providers.Available {
			t.Fatalf("send capability %+v", caps.SendMessage)
		}
		// A version inside the entry's declared tested range is not warned
		// of; one outside it (a compat.sh run through the INTEROP_TEST_*
		// override) is, with the range. The pinned version is in range.
		if sp.VersionWarning(sp.InstallVersion) != "" {
			t.Fatalf("pinned %s is outside the tested range %s..%s", sp.InstallVersion, sp.TestedMin, sp.TestedMax)
		}
		want, warned := sp.VersionWarning(caps.ProviderVersion), ""
		for _, l := range caps.Limitations {
			if strings.HasPrefix(l, "warning:") {
				warned = l
			}
		}
		if (want == "") != (warned == "") || !strings.Contains(warned, want) {
			t.Fatalf("version %s (tested %s..%s): warning %q, want %q; limitations %q", caps.ProviderVersion, sp.TestedMin, sp.TestedMax, warned, want, caps.Limitations)
		}
		t.Logf("%s %s: %s", c.id, caps.ProviderVersion, caps.SendMessage.Protocol)
	})
	step("create", func(t *testing.T) {
		s, err := a.CreateSession(ctxT(t, startWait), providers.CreateOptions{CWD: ws})
		if err != nil {
			t.Fatal(err)
		}
		if s.ID != string(c.id)+":"+s.NativeID || s.CWD != ws || s.Provider != c.id {
			t.Fatalf("session %+v", s)
		}
		sid = s.NativeID
		ev = subscribe(top, a, sid)
	})
	step("prompt and stream", func(t *testing.T) {
		r, err := a.Send(ctxT(t, 30*time.Second), sid, "hello there", providers.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Accepted || r.Status != providers.StatusQueued || r.Ref == "" {
			t.Fatalf("receipt %+v", r)
		}
		if o := h.await(t, r.Ref); o.status != providers.StatusCompleted || o.reason != "stopReason: end_turn" {
			t.Fatalf("outcome %+v", o)
		}
		wait.For(t, "streamed text", wait.Process, func() bool { return strings.Contains(ev.text("agent_message_chunk"), "Hello from fake model.") })
		if n := delivered(fm, "hello there"); n != 1 {
			t.Fatalf("model saw the prompt %d times", n)
		}
		t.Logf("%s: prompts reaching the model for one send: %d", c.id, delivered(fm, "hello there"))
	})
	for _, pc := range []struct{ prompt, kind, file string }{
		{"WRITE-ALLOW now", "allow_once", allowed},
		{"WRITE-REJECT now", "reject_once", rejected},
	} {
		step("tool call permission "+pc.kind, func(t *testing.T) {
			r, err := a.Send(ctxT(t, 30*time.Second), sid, pc.prompt, providers.SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var req providers.PermissionRequest
			wait.For(t, "a permission request", wait.Process, func() bool {
				p, _ := a.PendingPermissions(context.Background())
				if len(p) > 0 {
					req = p[0]
				}
				return len(p) > 0
			})
			if req.NativeID != sid || req.Title == "" {
				t.Fatalf("request %+v", req)
			}
			// The path a claim is checked against at this request
			// (handlers.EditConflicts): the file the write names.
			if !slices.Contains(req.Paths, pc.file) {
				t.Fatalf("request paths %q (unknown %v) do not name %s", req.Paths, req.PathsUnknown, pc.file)
			}
			if l := a.Liveness(sid); l.State != providers.LiveWaitingOnApproval || l.ObservedAt == nil {
				t.Fatalf("liveness while the request is held = %+v", l)
			}
			if _, err := a.RespondPermission(ctxT(t, 5*time.Second), sid, req.RequestID, "allow"+"_forever"); err == nil {
				t.Fatal("an unoffered decision was accepted")
			} else {
				var ns *providers.NotSentError
				if !errors.As(err, &ns) {
					t.Fatalf("unoffered decision is not a NotSentError: %v", err)
				}
			}
			rr, err := a.RespondPermission(ctxT(t, 10*time.Second), sid, req.RequestID, pc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if rr.Status != providers.StatusCompleted || rr.ProviderState != "decision_sent" {
				t.Fatalf("receipt %+v", rr)
			}
			// A rejected edit ends the turn (completed) or cancels it
			// (codex-acp: stopReason cancelled).
			if o := h.await(t, r.Ref); o.status != providers.StatusCompleted &&
				(pc.kind == "allow_once" || o.reason != "stopReason: cancelled") {
				t.Fatalf("outcome %+v", o)
			}
			_, err = os.Stat(pc.file)
			if written := err == nil; written != (pc.kind == "allow_once") {
				t.Fatalf("%s: file written = %v", pc.kind, written)
			}
			d, err := a.Diff(ctxT(t, 5*time.Second), sid, providers.DiffOptions{MessageID: r.NativeTurnID})
			if err != nil {
				t.Fatal(err)
			}
			res := d.(acp.DiffResult)
			if pc.kind == "allow_once" {
				if !res.Observed || len(res.Files) != 1 || !strings.HasSuffix(res.Files[0].Path, "allowed.txt") || !strings.Contains(res.Diff, "+yes") {
					t.Fatalf("diff of the allowed write = %+v", res)
				}
			} else if strings.Contains(res.Diff, "+no") {
				t.Fatalf("diff of the rejected write = %+v", res)
			}
			if l := a.Liveness(sid); l.State != providers.LiveIdle {
				t.Fatalf("liveness after the turn = %+v", l)
			}
		})
	}
	step("cancel during a slow reply", func(t *testing.T) {
		r, err := a.Send(ctxT(t, 30*time.Second), sid, "SLOWREPLY please", providers.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fm.Await(ctxT(t, 90*time.Second), func(q fakemodel.Request) bool { return strings.Contains(q.LastUser, "SLOWREPLY") }); err != nil {
			t.Fatal(err)
		}
		cr, err := a.Cancel(ctxT(t, 10*time.Second), sid)
		if err != nil {
			t.Fatal(err)
		}
		if cr.ProviderState != "cancel_notification_sent" || cr.Status != providers.StatusCompleted {
			t.Fatalf("cancel receipt %+v", cr)
		}
		if o := h.await(t, r.Ref); o.status != providers.StatusRejected || o.reason != "stopReason: cancelled" {
			t.Fatalf("outcome %+v", o)
		}
	})
	step("agent killed mid-turn", func(t *testing.T) {
		r, err := a.Send(ctxT(t, 30*time.Second), sid, "KILLME please", providers.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fm.Await(ctxT(t, 90*time.Second), func(q fakemodel.Request) bool { return strings.Contains(q.LastUser, "KILLME") }); err != nil {
			t.Fatal(err)
		}
		cl, err := a.Client(ctxT(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		_ = procgroup.Kill(cl.PID())
		if o := h.await(t, r.Ref); o.status != providers.StatusDeliveryUnknown {
			t.Fatalf("outcome of the killed turn %+v", o)
		}
		// The next send starts the agent again and works; the killed
		// prompt was not sent again.
		next, err := a.Send(ctxT(t, startWait), sid, "hello after the crash", providers.SendOptions{})
		if err != nil {
			s, cerr := a.CreateSession(ctxT(t, startWait), providers.CreateOptions{CWD: ws})
			if cerr != nil {
				t.Fatalf("send after the crash: %v; new session: %v", err, cerr)
			}
			t.Logf("%s: the session did not survive the crash (%v); a new one works", c.id, err)
			next, err = a.Send(ctxT(t, 30*time.Second), s.NativeID, "hello after the crash", providers.SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		if o := h.await(t, next.Ref); o.status != providers.StatusCompleted {
			t.Fatalf("outcome after the crash %+v", o)
		}
		if n := delivered(fm, "KILLME please"); n != 1 {
			t.Fatalf("the killed prompt reached the model %d times", n)
		}
		if n := delivered(fm, "hello after the crash"); n != 1 {
			t.Fatalf("the next prompt reached the model %d times", n)
		}
	})
	step("modes and models", func(t *testing.T) {
		cl, err := a.Client(ctxT(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"mode", "model"} {
			current, offered := choices(cl, sid, kind)
			t.Logf("%s %ss: current %q of %q", c.id, kind, current, offered)
			if len(offered) == 0 {
				continue // not advertised: nothing to switch
			}
			set := func(v string) error {
				if kind == "mode" {
					_, err := a.SetMode(ctxT(t, 30*time.Second), sid, v)
					return err
				}
				_, err := a.SetModel(ctxT(t, 30*time.Second), sid, providers.Model{ModelID: v})
				return err
			}
			// An unoffered mode is refused (by the runtime or the agent);
			// a model may be taken by name although unlisted (Gemini CLI
			// takes any model id through session/set_model).
			if err := set("no-such-" + kind); err == nil && kind == "mode" {
				t.Fatalf("an unoffered %s was accepted", kind)
			} else if err == nil {
				t.Logf("%s takes a model it does not list", c.id)
			}
			// Switch to another offered value when there is one, then
			// back; the view follows each switch.
			other := current
			for _, v := range offered {
				if v != current && v != "yolo" && v != "bypassPermissions" {
					other = v
					break
				}
			}
			back := []string{other, current}
			if !slices.Contains(offered, current) {
				// codex-acp's model option lists its built-in models, not
				// the configured one it runs: there is no way back to it.
				t.Logf("%s: the current %s %q is not offered; set %q only", c.id, kind, current, other)
				back = back[:1]
			}
			for _, v := range back {
				var choice *acp.ChoiceError
				if err := set(v); v == current && v != other && errors.As(err, &choice) {
					// codex-acp lists its configured model among its models
					// but its model option offers only its built-in ones.
					t.Logf("%s: no way back to %s %q: %v", c.id, kind, v, err)
					break
				} else if err != nil {
					t.Fatalf("set %s %q: %v", kind, v, err)
				}
				if now, _ := choices(cl, sid, kind); now != v {
					t.Fatalf("%s after setting %q is %q", kind, v, now)
				}
			}
		}
	})
	if !c.load {
		return
	}
	step("load with history", func(t *testing.T) {
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := realAgent(t, c, h, env)
		// The restarted runtime's registry gives the adapter the
		// workspace it recorded for the session (Qwen Code and opencode
		// list, without a cwd, only the directory they run in).
		b.KnowWorkspace(sid, ws)
		list, err := b.ListSessions(ctxT(t, startWait))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range list {
			found = found || s.NativeID == sid
		}
		if !found {
			t.Fatalf("session %s not listed: %+v", sid, list)
		}
		// A runtime that restarted looks a prompt up by replaying the
		// session: found, but ACP history has no stop reason, so it is not
		// reported completed.
		sum := sha256.Sum256([]byte("hello there"))
		rec, err := b.LookupTurn(ctxT(t, 60*time.Second), providers.TurnQuery{NativeID: sid, TextSHA256: hex.EncodeToString(sum[:])})
		if err != nil || !rec.Found || rec.Status != "" || !strings.Contains(rec.Reason, "no stop reason") {
			t.Fatalf("lookup = %+v, %v", rec, err)
		}
		s, err := b.ResumeSession(ctxT(t, 60*time.Second), sid)
		if err != nil {
			t.Fatal(err)
		}
		if s.NativeID != sid || s.CWD != ws {
			t.Fatalf("resumed %+v", s)
		}
		replay := subscribe(t, b, sid)
		wait.For(t, "replayed history", wait.Process, func() bool {
			return strings.Contains(replay.text("user_message_chunk"), "hello there") &&
				strings.Contains(replay.text("agent_message_chunk"), "Hello from fake model.")
		})
		r, err := b.Send(ctxT(t, 30*time.Second), sid, "hello once more", providers.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if o := h.await(t, r.Ref); o.status != providers.StatusCompleted {
			t.Fatalf("outcome after load %+v", o)
		}
	})
}

func TestRealClaudeNoCredentials(t *testing.T) {
	h := &host{}
	c := agentCases()[0]
	env := realpeers.ClaudeEnv(t, "")
	a, ws := realAgent(t, c, h, env)
	for _, kv := range env.Environ() {
		if strings.HasPrefix(kv, "ANTHROPIC_") {
			t.Fatalf("environment carries %s", kv)
		}
	}
	if env.Get("IS_SANDBOX") != "1" || !strings.HasPrefix(env.Home(), env.Root()) {
		t.Fatal("not an isolated sandbox environment")
	}
	s, err := a.CreateSession(ctxT(t, 60*time.Second), providers.CreateOptions{CWD: ws})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Send(ctxT(t, 30*time.Second), s.NativeID, "hello", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := h.await(t, r.Ref)
	if o.status != providers.StatusRejected || !strings.HasPrefix(o.reason, "Authentication required") || !strings.Contains(o.reason, "ANTHROPIC_API_KEY") {
		t.Fatalf("outcome %+v", o)
	}
	caps := a.Capabilities(ctxT(t, 10*time.Second))
	if caps.Authorization != "unauthorized" || caps.SendMessage.State != providers.Degraded ||
		!strings.HasPrefix(caps.SendMessage.Reason, "Authentication required") || caps.SendMessage.Fix != spec(t, providers.ClaudeCode).AuthHow {
		t.Fatalf("capabilities %+v / %+v", caps.Authorization, caps.SendMessage)
	}
}
