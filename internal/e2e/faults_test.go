//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/stdiogate"
	"github.com/agent-interop/runtime/internal/testutil/syncbuf"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// The fault tests drive the built runtime binary over MCP against the real
// provider programs and inject the faults a user meets: the provider
// process killed in the middle of a reply, the runtime itself killed
// (SIGKILL) before and after a prompt was dispatched and then started
// again, and a model that answers 401 or 400. Every case asserts the final
// receipt (never left queued, never completed without an observed
// result), the number of times the prompt reached the model (at most
// once: nothing is ever resent) and that the next send works.
//
// "Before dispatch" holds the prompt between the runtime and the provider
// (stdiogate for the stdio providers, an HTTP gate for OpenCode): the
// runtime wrote it, the provider never got it. "After dispatch" waits until
// the model received the prompt and holds the model's answer (a gate the
// test opens), so the turn is running when the runtime dies.

// faultTimeout bounds one wait for a condition (a generous bound on a
// loaded machine; the conditions themselves hold in seconds).
const faultTimeout = 3 * time.Minute

// rig is one provider's fault-test setup: a fake model, the runtime's
// environment and store, and the workspace.
type rig struct {
	t        *testing.T // the current step
	root     *testing.T // the whole provider test
	provider string
	fm       *fakemodel.Server
	env      *realpeers.Env
	db       string
	dir      string
	gate     string // stdiogate, for the stdio providers
	st       *store.Store
	// lingers marks a provider that leaves a child behind the runtime: the
	// Claude Code CLI, started by claude-agent-acp, outlives it while a
	// model request is held, and only gives up on that request 60 s later
	// (then writes a synthetic reply to the transcript and exits). The
	// after-dispatch case drops the held model request once the runtime is
	// gone (a model connection lost), so that child writes its last entry
	// and exits at once instead of a minute later.
	lingers bool
}

func newRig(t *testing.T, provider string) *rig {
	t.Helper()
	r := &rig{t: t, root: t, provider: provider, fm: fakemodel.New(t), env: realpeers.NewEnv(t)}
	r.fm.SetDefault(fakemodel.Text("Hello from fake model."))
	r.db = filepath.Join(r.env.Root(), "interop.db")
	r.dir = filepath.Join(r.env.Root(), "ws")
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.env.Set("INTEROP_DB", r.db).Set("INTEROP_LOG_LEVEL", "info")
	t.Cleanup(func() {
		if t.Failed() {
			for _, q := range r.fm.Requests() {
				t.Logf("model request %d: %s last-user=%.100q status=%d", q.Seq, q.API, q.LastUser, q.Status)
			}
		}
	})
	return r
}

// runtimeProc is one running interop-runtime process.
type runtimeProc struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer // written by the process's copier goroutine
}

// start runs the binary with the rig's environment plus extra variables.
func (r *rig) start(extra ...string) *runtimeProc {
	r.t.Helper()
	env := r.env.Clone()
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env.Set(k, v)
	}
	cmd := exec.Command(binary, "serve")
	cmd.Env = env.Environ()
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	client := newClient(r.t, "e2e-faults", cmd.Args, cmd.Env, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		r.t.Fatalf("start runtime: %v", err)
	}
	rt := &runtimeProc{cs: cs, cmd: cmd, stderr: stderr}
	t := r.t
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("runtime pid %d stderr:\n%s", cmd.Process.Pid, tail(stderr.String(), 4000))
		}
	})
	return rt
}

// kill SIGKILLs the runtime and waits until it is gone (and reaped), and
// until the provider programs it had started stopped too: they see their
// input end and exit (as codex app-server and claude-agent-acp do), so the
// restarted runtime reads a history nobody writes to any more. gone, when
// not nil, runs once the runtime is gone, before that second wait.
func (rt *runtimeProc) kill(t *testing.T, gone func()) {
	t.Helper()
	groups := providerGroups(t, rt)
	_ = rt.cmd.Process.Signal(syscall.SIGKILL)
	_ = rt.cs.Close()
	wait.For(t, "the killed runtime to be gone", faultTimeout, func() bool {
		return syscall.Kill(rt.cmd.Process.Pid, 0) != nil
	})
	if gone != nil {
		gone()
	}
	t.Cleanup(func() { // never leave a provider process behind
		for _, pg := range groups {
			_ = syscall.Kill(-pg, syscall.SIGKILL)
		}
	})
	wait.For(t, "the killed runtime's provider programs to exit", faultTimeout, func() bool {
		for _, pg := range groups {
			if syscall.Kill(-pg, 0) == nil {
				return false
			}
		}
		return true
	})
}

// store opens the rig's store (read by the test directly, as another
// process on the same file).
func (r *rig) store() *store.Store {
	r.t.Helper()
	if r.st == nil {
		st, err := store.Open(context.Background(), r.db)
		if err != nil {
			r.t.Fatal(err)
		}
		r.st = st
		r.root.Cleanup(func() { st.Close() })
	}
	return r.st
}

// op reads the operation recorded under key (nil when none yet).
func (r *rig) op(key string) *ent.Operation {
	o, err := r.store().Client().Operation.Query().Where(operation.IdempotencyKey(key)).Only(context.Background())
	if err != nil {
		if !ent.IsNotFound(err) {
			r.t.Logf("reading operation %s: %v", key, err)
		}
		return nil
	}
	return o
}

// settled waits until the operation under key left queued and returns it.
func (r *rig) settled(key string) *ent.Operation {
	r.t.Helper()
	var o *ent.Operation
	wait.For(r.t, "operation "+key+" to settle", faultTimeout, func() bool {
		o = r.op(key)
		return o != nil && o.Status != operation.StatusQueued
	})
	return o
}

// sendAsync sends in the background: the runtime may be killed mid-call.
func (rt *runtimeProc) sendAsync(provider, nativeID, text, key string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
		defer cancel()
		_, _ = rt.cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_session_message", Arguments: map[string]any{
			"provider": provider, "nativeId": nativeID, "text": text, "idempotencyKey": key}})
	}()
}

// gated scripts the model to answer text only once open was called (it is
// called at cleanup at the latest), or to drop the held request without an
// answer once drop was called.
func (r *rig) gated(text string) (open, drop func()) {
	gate, dropped := make(chan struct{}), make(chan struct{})
	var opened, dropOnce sync.Once
	open = func() { opened.Do(func() { close(gate) }) }
	drop = func() { dropOnce.Do(func() { close(dropped) }) }
	r.t.Cleanup(open)
	r.fm.On(fakemodel.Last(text), fakemodel.Text("The late answer.").WithGate(gate).WithDrop(dropped))
	return open, drop
}

// reached waits until the model received the prompt.
func (r *rig) reached(text string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	if _, err := r.fm.Await(ctx, func(q fakemodel.Request) bool { return strings.TrimSpace(q.LastUser) == text }); err != nil {
		r.t.Fatalf("the model never received %q: %v", text, err)
	}
}

// reason is an operation's recorded reason.
func reason(o *ent.Operation) string {
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(o.Detail, &d)
	return d.Reason
}

// nextSendWorks sends a fresh prompt and waits for it to complete.
func (r *rig) nextSendWorks(rt *runtimeProc, nativeID string) {
	r.t.Helper()
	text, key := unique("next"), unique("knext")
	send(r.t, rt.cs, r.provider, nativeID, text, key)
	if o := r.settled(key); o.Status != operation.StatusCompleted {
		r.t.Fatalf("the next send ended %s: %s\nruntime stderr:\n%s", o.Status, o.Detail, tail(rt.stderr.String(), 3000))
	}
	// Contains, not equals: after a failed turn Claude Code sends the
	// failed prompt again as history, in the same user message.
	if n := r.fm.Count(text); n != 1 {
		r.t.Fatalf("the next prompt reached the model %d times", n)
	}
}

// reachedTimes checks the prompt reached the model as a new prompt (alone,
// or after history Claude Code sends again) exactly want times.
func (r *rig) reachedTimes(text string, want int) {
	r.t.Helper()
	if n := r.fm.CountLast(text); n != want {
		r.t.Errorf("the prompt reached the model %d times, want %d", n, want)
	}
}

// faultLog reports one case's figures for the note.
func faultLog(t *testing.T, o *ent.Operation) {
	t.Logf("final receipt %s (%s): %s", o.Status, o.ProviderState, reason(o))
}

// providerGroups lists the process groups of the runtime's children (the
// provider programs it started).
func providerGroups(t *testing.T, rt *runtimeProc) []int {
	var out []int
	for _, c := range children(t, rt.cmd.Process.Pid) {
		pid, _ := strconv.Atoi(strings.Fields(c)[0])
		if pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// runFaults runs the cases shared by every provider. newSession makes a
// session on rt; holdEnv returns the extra environment that holds a prompt
// before it reaches the provider; killProvider kills the provider process
// mid-reply and restores it (if the runtime cannot) for the next send.
func runFaults(t *testing.T, r *rig, newSession func(rt *runtimeProc) string, holdEnv func(text string) ([]string, func()),
	killProvider func(rt *runtimeProc), afterDispatch func(o *ent.Operation, open func())) {
	step(t, "provider killed mid-reply", func(t *testing.T) {
		r.t = t
		rt := r.start()
		sid := newSession(rt)
		text, key := unique("killedreply"), unique("kkill")
		r.gated(text)
		rt.sendAsync(r.provider, sid, text, key)
		r.reached(text)
		killProvider(rt)
		o := r.settled(key)
		faultLog(t, o)
		if o.Status != operation.StatusDeliveryUnknown || reason(o) == "" {
			t.Fatalf("receipt after the provider died = %s %s", o.Status, o.Detail)
		}
		r.reachedTimes(text, 1)
		r.nextSendWorks(rt, sid)
	})
	step(t, "runtime killed before dispatch", func(t *testing.T) {
		r.t = t
		text, key := unique("heldprompt"), unique("khold")
		extra, waitHeld := holdEnv(text)
		rt := r.start(extra...)
		sid := newSession(rt)
		rt.sendAsync(r.provider, sid, text, key)
		waitHeld()
		wait.For(t, "the operation to be recorded", faultTimeout, func() bool { return r.op(key) != nil })
		rt.kill(t, nil)
		if o := r.op(key); o.Status != operation.StatusQueued {
			t.Fatalf("before the restart: %s", o.Status)
		}
		again := r.start()
		o := r.settled(key)
		faultLog(t, o)
		if o.Status != operation.StatusDeliveryUnknown || !strings.Contains(reason(o), "no record of it") || !strings.Contains(reason(o), "is no longer running") {
			t.Fatalf("settled = %s: %s", o.Status, reason(o))
		}
		r.reachedTimes(text, 0)
		r.nextSendWorks(again, sid)
	})
	step(t, "runtime killed after dispatch", func(t *testing.T) {
		r.t = t
		rt := r.start()
		sid := newSession(rt)
		text, key := unique("inflight"), unique("kafter")
		open, drop := r.gated(text)
		rt.sendAsync(r.provider, sid, text, key)
		r.reached(text)
		wait.For(t, "the receipt to be stored", faultTimeout, func() bool {
			o := r.op(key)
			return o != nil && o.Ref != ""
		})
		var gone func()
		if r.lingers {
			gone = drop
		}
		rt.kill(t, gone)
		again := r.start()
		var o *ent.Operation
		wait.For(t, "the restarted runtime to settle "+key, faultTimeout, func() bool {
			o = r.op(key)
			return strings.Contains(string(o.Detail), `"reconciliation"`) && o.ProviderState != "reconciling"
		})
		faultLog(t, o)
		afterDispatch(o, open)
		r.reachedTimes(text, 1)
		r.nextSendWorks(again, sid)
	})
	for _, status := range []int{401, 400} {
		step(t, fmt.Sprintf("model answers %d", status), func(t *testing.T) {
			r.t = t
			rt := r.start()
			sid := newSession(rt)
			text, key := unique(fmt.Sprintf("FAIL%d", status)), unique("kfail")
			msg := map[int]string{401: "Incorrect API key provided", 400: "Invalid request: bad parameter"}[status]
			// Last, not Exact: a transcript stored without the previous
			// case's reply makes Claude Code send the earlier failed
			// prompt again, before this one, in the same message.
			r.fm.On(fakemodel.Last(text), fakemodel.Fail(status, msg))
			send(t, rt.cs, r.provider, sid, text, key)
			o := r.settled(key)
			faultLog(t, o)
			if o.Status != operation.StatusRejected || !strings.Contains(reason(o), msg) {
				t.Fatalf("receipt after a %d = %s: %s", status, o.Status, o.Detail)
			}
			if n := r.fm.CountLast(text); n != 1 {
				t.Errorf("the failing prompt reached the model %d times, want 1", n)
			}
			r.nextSendWorks(rt, sid)
		})
	}
}

// gate is stdiogate, built once for the fault tests that use it.
var gate struct {
	once sync.Once
	path string
	err  error
}

// gateBinary returns stdiogate, built on first use into the folder
// TestMain made for the server's binary.
func gateBinary(t *testing.T) string {
	t.Helper()
	gate.once.Do(func() { gate.path, gate.err = stdiogate.BuildTo(filepath.Dir(binary)) })
	if gate.err != nil {
		t.Fatal(gate.err)
	}
	return gate.path
}

// gateEnv holds text in stdiogate and returns a wait for it.
func (r *rig) gateEnv(text string) ([]string, func()) {
	held := filepath.Join(r.t.TempDir(), "held")
	t := r.t
	return []string{"STDIOGATE_HOLD=" + text, "STDIOGATE_HELD=" + held}, func() {
		wait.For(t, "the prompt to be held before the provider", faultTimeout, func() bool {
			_, err := os.Stat(held)
			return err == nil
		})
	}
}

// killGroups SIGKILLs the provider process groups the runtime started.
func killGroups(t *testing.T, rt *runtimeProc) {
	groups := providerGroups(t, rt)
	if len(groups) == 0 {
		t.Fatal("the runtime started no provider process")
	}
	for _, pg := range groups {
		_ = syscall.Kill(-pg, syscall.SIGKILL)
	}
}

func TestFaultsCodex(t *testing.T) {
	program := realpeers.Require(t, realpeers.Codex)
	r := newRig(t, "codex")
	r.gate = gateBinary(t)
	codexHome := filepath.Join(r.env.Home(), ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(realpeers.CodexConfig(r.fm.BaseURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	r.env.Set("CODEX_HOME", codexHome).Set("CODEX_APP_SERVER_COMMAND", r.gate+" "+program+" app-server --disable plugins")
	var sid string
	newSession := func(rt *runtimeProc) string {
		if sid == "" {
			sid = createSession(r.t, rt.cs, "codex", r.dir, "faults").NativeID
			// A first turn gives the thread a rollout a restarted codex can resume.
			r.nextSendWorks(rt, sid)
		}
		return sid
	}
	runFaults(t, r, newSession, r.gateEnv, func(rt *runtimeProc) { killGroups(r.t, rt) },
		func(o *ent.Operation, open func()) {
			// The app-server died with the runtime: codex's history shows
			// the turn interrupted or still in progress, never completed.
			if o.Status != operation.StatusDeliveryUnknown && o.Status != operation.StatusRejected {
				r.t.Fatalf("settled = %s: %s", o.Status, o.Detail)
			}
			if !strings.Contains(reason(o), "codex thread/read") || o.NativeTurn == "" {
				r.t.Fatalf("settled without codex's history: %s (turn %q)", reason(o), o.NativeTurn)
			}
			open()
		})
}

func TestFaultsClaudeCode(t *testing.T) {
	program := realpeers.Require(t, realpeers.ClaudeACP)
	r := newRig(t, "claude-code")
	r.gate = gateBinary(t)
	r.lingers = true
	r.env.Set("CLAUDE_ACP_COMMAND", r.gate+" "+program).
		Set("IS_SANDBOX", "1").Set("DISABLE_AUTOUPDATER", "1").Set("DISABLE_TELEMETRY", "1").
		Set("DISABLE_ERROR_REPORTING", "1").Set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1").
		Set("ANTHROPIC_BASE_URL", r.fm.URL()).Set("ANTHROPIC_API_KEY", "test").
		// Claude Code retries a failing model call up to 10 times on its
		// own; the runtime's promise is about its own sends, so the
		// provider's retries are switched off (as for codex).
		Set("CLAUDE_CODE_MAX_RETRIES", "0")
	var sid string
	newSession := func(rt *runtimeProc) string {
		if sid == "" {
			sid = createSession(r.t, rt.cs, "claude-code", r.dir, "faults").NativeID
			r.nextSendWorks(rt, sid)
			// Claude Code writes the session's transcript a moment after
			// the turn; a session killed before that cannot be loaded
			// again, so the faults start once it is stored.
			wait.For(r.t, "Claude Code to store session "+sid, faultTimeout, func() bool {
				m, _ := filepath.Glob(filepath.Join(r.env.Home(), ".claude", "projects", "*", sid+".jsonl"))
				return len(m) == 1
			})
		}
		return sid
	}
	runFaults(t, r, newSession, r.gateEnv, func(rt *runtimeProc) { killGroups(r.t, rt) },
		func(o *ent.Operation, open func()) {
			// The agent died with the runtime; ACP's replay shows the
			// prompt but carries no stop reason: not completed.
			if o.Status != operation.StatusDeliveryUnknown || !strings.Contains(reason(o), "session/load history replay") {
				r.t.Fatalf("settled = %s: %s", o.Status, reason(o))
			}
			open()
		})
}

func TestFaultsOpenCode(t *testing.T) {
	program := realpeers.Require(t, realpeers.OpenCode)
	r := newRig(t, "opencode")
	ocEnv := realpeers.NewEnv(t)
	if err := realpeers.SetOpenCode(ocEnv, realpeers.OpenCodeConfig(r.fm.BaseURL())); err != nil {
		t.Fatal(err)
	}
	port, err := realpeers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var srv *realpeers.OpenCodeServer
	startServer := func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
		defer cancel()
		s, err := realpeers.StartOpenCode(ctx, realpeers.OpenCodeOptions{Program: program, Env: ocEnv, Password: openCodePassword, Port: port})
		if err != nil {
			t.Fatalf("starting opencode: %v", err)
		}
		srv = s
	}
	startServer(t)
	t.Cleanup(func() { srv.Close() })
	r.env.Set("OPENCODE_SERVER_URL", srv.URL).Set("OPENCODE_SERVER_PASSWORD", openCodePassword).Set("OPENCODE_AUTO_START", "false")
	var sid string
	newSession := func(rt *runtimeProc) string {
		if sid == "" {
			sid = createSession(r.t, rt.cs, "opencode", r.dir, "faults").NativeID
		}
		return sid
	}
	hold := func(text string) ([]string, func()) {
		gate := realpeers.HoldPrompts(r.t, srv.URL, text)
		return []string{"OPENCODE_SERVER_URL=" + gate.URL}, gate.WaitHeld
	}
	runFaults(t, r, newSession, hold, func(rt *runtimeProc) {
		srv.Kill() // the whole server process group, mid-reply
		// The runtime reports the loss before the server comes back...
		wait.For(r.t, "the running turn to be settled", faultTimeout, func() bool {
			n, _ := r.store().Client().Operation.Query().Where(operation.StatusEQ(operation.StatusQueued), operation.NativeID(sid)).Count(context.Background())
			return n == 0
		})
		// ...and re-attaches to the server started again at the same
		// address, over the same data.
		startServer(r.t)
	}, func(o *ent.Operation, open func()) {
		// The server outlived the runtime: the restarted runtime finds the
		// reply still running, follows it, and completes it once the model
		// answers.
		if o.Status != operation.StatusQueued && o.Status != operation.StatusCompleted {
			r.t.Fatalf("settled = %s: %s", o.Status, o.Detail)
		}
		open()
		key := o.IdempotencyKey
		r.t.Cleanup(func() {
			if r.t.Failed() {
				r.t.Logf("the followed reply's operation: %s (%s) %s", o.Status, o.ProviderState, o.Detail)
			}
		})
		wait.For(r.t, "the followed reply to complete", faultTimeout, func() bool {
			o = r.op(key)
			return o.Status == operation.StatusCompleted
		})
		if !strings.Contains(string(o.Detail), `"result":"following"`) {
			r.t.Fatalf("completed without following the reply: %s", o.Detail)
		}
	})
}
