package codex

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/proctest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// recHost records what the adapter reports.
type recHost struct {
	mu       sync.Mutex
	outcomes []outcome
	events   []providers.NativeEvent
	changed  chan struct{}
}

type outcome struct {
	nativeID, ref string
	status        providers.ReceiptStatus
	reason        string
}

func newRecHost() *recHost { return &recHost{changed: make(chan struct{}, 1)} }

func (h *recHost) ReportOutcome(_ providers.ID, nativeID, ref string, o providers.Outcome) {
	h.mu.Lock()
	h.outcomes = append(h.outcomes, outcome{nativeID, ref, o.Status, o.Reason})
	h.mu.Unlock()
	h.poke()
}

func (h *recHost) ReportEvent(_ providers.ID, ev providers.NativeEvent) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	h.poke()
}

func (h *recHost) poke() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// waitOutcome waits for an outcome for ref.
func (h *recHost) waitOutcome(t *testing.T, ref string) outcome {
	t.Helper()
	var got outcome
	wait.For(t, "an outcome for "+ref, wait.Process, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, o := range h.outcomes {
			if o.ref == ref {
				got = o
				return true
			}
		}
		return false
	})
	return got
}

func (h *recHost) waitEvent(t *testing.T, typ string) providers.NativeEvent {
	t.Helper()
	var got providers.NativeEvent
	wait.For(t, "a "+typ+" event", wait.Process, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, e := range h.events {
			if e.Type == typ {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	t.Cleanup(cancel)
	return ctx
}

// collect reads events until one of type stop arrives.
func collect(t *testing.T, ch <-chan providers.NativeEvent, stop string) []providers.NativeEvent {
	t.Helper()
	var out []providers.NativeEvent
	timeout := time.After(wait.Process) // the app-server is a child process
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream closed after %d events", len(out))
			}
			out = append(out, ev)
			if ev.Type == stop {
				return out
			}
		case <-timeout:
			t.Fatalf("no %s event; got %d events", stop, len(out))
		}
	}
}

func turnsLog(t *testing.T, state string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "turns.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.TrimSpace(string(b)))
}

func TestSimDiscoverCreateSendComplete(t *testing.T) {
	h := newRecHost()
	a, _ := simAdapter(t, h, nil)
	ctx := ctxT(t)
	caps := a.Capabilities(ctx)
	if caps.SendMessage.State != providers.Available || caps.ProviderVersion != "0.171.0-sim" || caps.Authorization != "authorized" {
		t.Fatalf("capabilities = %+v", caps)
	}
	if caps.Steer.Supported || caps.Steer.Reason == "" {
		t.Fatalf("steer = %+v", caps.Steer)
	}
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: t.TempDir(), Title: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "probe" || s.Endpoint == "" || s.ID != "codex:"+s.NativeID || s.Transport != "stdio" {
		t.Fatalf("session = %+v", s)
	}
	list, err := a.ListSessions(ctx)
	if err != nil || len(list) != 1 || list[0].NativeID != s.NativeID || list[0].Title != "probe" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	got, err := a.GetSession(ctx, s.NativeID)
	if err != nil || got == nil || got.NativeID != s.NativeID {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if got, err := a.GetSession(ctx, "01a22b15-0000-7000-8000-999999999999"); err != nil || got != nil {
		t.Fatalf("unknown get = %+v, %v", got, err)
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	ch, err := a.Subscribe(sctx, s.NativeID)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := a.Send(ctx, s.NativeID, "hello", providers.SendOptions{Model: &providers.Model{ModelID: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != providers.StatusQueued || !rc.Accepted || rc.Ref == "" || rc.Operation != "send" {
		t.Fatalf("receipt = %+v", rc)
	}
	evs := collect(t, ch, "turn/completed")
	types := []string{}
	for _, e := range evs {
		types = append(types, e.Type)
		if e.NativeID != s.NativeID || e.Timestamp.IsZero() || len(e.Data) == 0 {
			t.Fatalf("event = %+v", e)
		}
	}
	if strings.Join(types, ",") != "turn/started,item/agentMessage/delta,turn/completed" {
		t.Fatalf("event types = %v", types)
	}
	if o := h.waitOutcome(t, rc.Ref); o.status != providers.StatusCompleted {
		t.Fatalf("outcome = %+v", o)
	}
	scancel()
	if _, ok := <-ch; ok {
		// drain until closed
		for range ch {
		}
	}
}

func TestSimUnsupportedOptions(t *testing.T) {
	a, _ := simAdapter(t, newRecHost(), nil)
	ctx := ctxT(t)
	_, err := a.Send(ctx, "x", "hi", providers.SendOptions{Agent: "build"})
	var un *providers.UnsupportedError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "separate agent control") {
		t.Fatalf("agent option error = %v", err)
	}
	_, err = a.Send(ctx, "x", "hi", providers.SendOptions{Mode: "steer"})
	if !errors.As(err, &un) || un.Operation != "steer" {
		t.Fatalf("steer error = %v", err)
	}
}

func TestSimUnknownThreadIsNotSent(t *testing.T) {
	a, state := simAdapter(t, newRecHost(), nil)
	_, err := a.Send(ctxT(t), "01a22b15-0000-7000-8000-999999999999", "hello", providers.SendOptions{})
	var ns *providers.NotSentError
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "no rollout found") {
		t.Fatalf("error = %v", err)
	}
	if n := len(turnsLog(t, state)); n != 0 {
		t.Fatalf("turn/start reached the server %d times", n)
	}
}

// TestSimResumeOfALostThread: thread/resume of a thread the app-server
// has no rollout of is providers.ErrSessionLost with codex's words (the
// registry then refuses the resume unless a fresh session is allowed); a
// thread it has resumes.
func TestSimResumeOfALostThread(t *testing.T) {
	a, _ := simAdapter(t, newRecHost(), nil)
	const gone = "01a22b15-0000-7000-8000-999999999999"
	_, err := a.ResumeSession(ctxT(t), gone)
	reason, lost := providers.LostReason(err)
	if !lost || reason != "no rollout found for thread id "+gone {
		t.Fatalf("resume of a lost thread = %v (lost %v, reason %q)", err, lost, reason)
	}
	s, err := a.CreateSession(ctxT(t), providers.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.ResumeSession(ctxT(t), s.NativeID); err != nil || got.NativeID != s.NativeID {
		t.Fatalf("resume of a thread it has = %+v, %v", got, err)
	}
}

func TestSimFailedTurnIsRejectedWithReason(t *testing.T) {
	h := newRecHost()
	a, _ := simAdapter(t, h, nil)
	ctx := ctxT(t)
	s, err := a.CreateSession(ctx, providers.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := a.Send(ctx, s.NativeID, "FAIL401", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := h.waitOutcome(t, rc.Ref)
	if o.status != providers.StatusRejected || !strings.Contains(o.reason, "401 Unauthorized") {
		t.Fatalf("outcome = %+v", o)
	}
}

func TestSimCancelWaitsForTurnStart(t *testing.T) {
	h := newRecHost()
	a, state := simAdapter(t, h, nil)
	ctx := ctxT(t)
	s, _ := a.CreateSession(ctx, providers.CreateOptions{})
	if _, err := a.Cancel(ctx, s.NativeID); !errors.As(err, new(*providers.NotSentError)) {
		t.Fatalf("cancel without a turn = %v", err)
	}
	rc, err := a.Send(ctx, s.NativeID, "SLOW DELAYSTART", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := a.Cancel(ctx, s.NativeID)
	if err != nil {
		t.Fatal(err)
	}
	if cr.Status != providers.StatusQueued || cr.Ref != interruptRef(rc.Ref) {
		t.Fatalf("cancel receipt = %+v", cr)
	}
	if err := os.WriteFile(filepath.Join(state, startTurnFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if o := h.waitOutcome(t, cr.Ref); o.status != providers.StatusCompleted {
		t.Fatalf("interrupt outcome = %+v", o)
	}
	if o := h.waitOutcome(t, rc.Ref); o.status != providers.StatusRejected || o.reason != "turn interrupted" {
		t.Fatalf("send outcome = %+v", o)
	}
}

func TestSimApprovalHeldUntilAnswered(t *testing.T) {
	h := newRecHost()
	a, _ := simAdapter(t, h, nil)
	ctx := ctxT(t)
	s, _ := a.CreateSession(ctx, providers.CreateOptions{CWD: "/tmp"})
	ch, err := a.Subscribe(ctx, s.NativeID)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := a.Send(ctx, s.NativeID, "APPROVE", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ask := collect(t, ch, "item/commandExecution/requestApproval")
	var asked struct {
		RequestID string `json:"requestId"`
	}
	_ = json.Unmarshal(ask[len(ask)-1].Data, &asked)
	perms, _ := a.PendingPermissions(ctx)
	if len(perms) != 1 || perms[0].RequestID != asked.RequestID || perms[0].NativeID != s.NativeID {
		t.Fatalf("pending = %+v (asked %q)", perms, asked.RequestID)
	}
	p := perms[0]
	if got := offeredIDs(p.Options); got != "accept, acceptWithExecpolicyAmendment, cancel" {
		t.Fatalf("options = %s", got)
	}
	if !strings.Contains(p.Title, "echo hi") {
		t.Fatalf("title = %q", p.Title)
	}
	_, err = a.RespondPermission(ctx, s.NativeID, p.RequestID, "decline")
	if !errors.As(err, new(*providers.NotSentError)) || !strings.Contains(err.Error(), "offered: accept, acceptWithExecpolicyAmendment, cancel") {
		t.Fatalf("bad decision error = %v", err)
	}
	_, err = a.RespondPermission(ctx, "other-thread", p.RequestID, "accept")
	if err == nil || !strings.Contains(err.Error(), "No pending permission request "+p.RequestID+" for other-thread") {
		t.Fatalf("wrong thread error = %v", err)
	}
	pr, err := a.RespondPermission(ctx, s.NativeID, p.RequestID, "acceptWithExecpolicyAmendment")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Status != providers.StatusQueued || pr.Ref != permissionRef(p.RequestID) {
		t.Fatalf("permission receipt = %+v", pr)
	}
	if o := h.waitOutcome(t, pr.Ref); o.status != providers.StatusCompleted {
		t.Fatalf("permission outcome = %+v", o)
	}
	evs := collect(t, ch, "item/completed")
	if !strings.Contains(string(evs[len(evs)-1].Data), `"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["echo"]}`) {
		t.Fatalf("decision sent = %s", evs[len(evs)-1].Data)
	}
	h.waitOutcome(t, rc.Ref)
	if perms, _ := a.PendingPermissions(ctx); len(perms) != 0 {
		t.Fatalf("still pending: %+v", perms)
	}
	if _, err := a.RespondPermission(ctx, s.NativeID, p.RequestID, "accept"); err == nil {
		t.Fatal("second answer accepted")
	}
}

func TestSimDiffFromTurnDiffUpdated(t *testing.T) {
	h := newRecHost()
	a, _ := simAdapter(t, h, nil)
	ctx := ctxT(t)
	s, _ := a.CreateSession(ctx, providers.CreateOptions{})
	d, err := a.Diff(ctx, s.NativeID, providers.DiffOptions{})
	if err != nil || d.(DiffResult).Observed {
		t.Fatalf("diff before = %+v, %v", d, err)
	}
	rc, _ := a.Send(ctx, s.NativeID, "DIFF", providers.SendOptions{})
	h.waitOutcome(t, rc.Ref)
	d, err = a.Diff(ctx, s.NativeID, providers.DiffOptions{})
	dr := d.(DiffResult)
	if err != nil || !dr.Observed || dr.TurnID != rc.Ref || !strings.Contains(dr.Diff, "+hello world") {
		t.Fatalf("diff = %+v, %v", d, err)
	}
	if _, err := a.Diff(ctx, s.NativeID, providers.DiffOptions{MessageID: "nope"}); err == nil {
		t.Fatal("diff for unknown turn")
	}
}

func TestSimCrashMidTurnReportsAndRestarts(t *testing.T) {
	h := newRecHost()
	a, state := simAdapter(t, h, nil)
	ctx := ctxT(t)
	s, _ := a.CreateSession(ctx, providers.CreateOptions{})
	ch, err := a.Subscribe(ctx, s.NativeID)
	if err != nil {
		t.Fatal(err)
	}
	pid := a.PID()
	rc, err := a.Send(ctx, s.NativeID, "CRASHMID", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := h.waitOutcome(t, rc.Ref)
	if o.status != providers.StatusDeliveryUnknown || !strings.Contains(o.reason, "not resent") {
		t.Fatalf("outcome = %+v", o)
	}
	ev := h.waitEvent(t, providers.EventProviderRestarted)
	if ev.NativeID != s.NativeID || !strings.Contains(string(ev.Data), `"lostTurnId":"`+rc.Ref+`"`) || !strings.Contains(string(ev.Data), "exit status 4") {
		t.Fatalf("restart event = %+v %s", ev, ev.Data)
	}
	for range ch { // the subscription ends with the process
	}
	// The restarted process serves the same thread (resumed on demand).
	rc2, err := a.Send(ctx, s.NativeID, "again", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := h.waitOutcome(t, rc2.Ref); o.status != providers.StatusCompleted {
		t.Fatalf("after restart = %+v", o)
	}
	if a.PID() == pid || a.PID() == 0 {
		t.Fatalf("pid %d -> %d", pid, a.PID())
	}
	if got := turnsLog(t, state); strings.Join(got, ",") != "CRASHMID,again" {
		t.Fatalf("turns seen by the server = %v", got)
	}
}

func TestSimCrashBeforeAnswerIsUncertain(t *testing.T) {
	a, state := simAdapter(t, newRecHost(), nil)
	ctx := ctxT(t)
	s, _ := a.CreateSession(ctx, providers.CreateOptions{})
	_, err := a.Send(ctx, s.NativeID, "CRASHNOW", providers.SendOptions{})
	if err == nil || !providers.IsUncertain(err) {
		t.Fatalf("error = %v (uncertain=%v)", err, providers.IsUncertain(err))
	}
	if got := turnsLog(t, state); len(got) != 1 {
		t.Fatalf("turns = %v", got)
	}
}

func TestSimTimeoutIsUncertainAndConnectionSurvives(t *testing.T) {
	h := newRecHost()
	// The bound runs on a fake clock: the set-up's and the next send's
	// calls never time out however slow the machine, and the HANG call
	// ends when the test moves the clock past the bound.
	clock := testclock.At(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	const bound = 2 * time.Second
	a, state := simAdapter(t, h, func(c *Config) { c.CallTimeout, c.Clock = bound, clock })
	ctx := ctxT(t)
	s, err := a.CreateSession(ctx, providers.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid := a.PID()
	hung := make(chan error, 1)
	go func() {
		_, err := a.Send(ctx, s.NativeID, "HANG", providers.SendOptions{})
		hung <- err
	}()
	// The sim logs the turn when it reads turn/start, whose bound is armed.
	wait.For(t, "the HANG turn/start to reach the sim", wait.Process, func() bool { return slices.Contains(turnsLog(t, state), "HANG") })
	testclock.Pass(ctx, clock, bound)
	err = wait.Recv(t, "the HANG send to end by its bound", wait.InProcess, hung)
	if err == nil || !providers.IsUncertain(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v", err)
	}
	rc, err := a.Send(ctx, s.NativeID, "after", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.waitOutcome(t, rc.Ref)
	if a.PID() != pid {
		t.Fatal("process restarted after a timeout")
	}
	if got := turnsLog(t, state); strings.Join(got, ",") != "HANG,after" {
		t.Fatalf("turns = %v", got)
	}
}

func TestSimCloseKillsProcessGroup(t *testing.T) {
	a, _ := simAdapter(t, newRecHost(), nil)
	if caps := a.Capabilities(ctxT(t)); caps.Sessions.State != providers.Available {
		t.Fatalf("caps = %+v", caps.Sessions)
	}
	pid := a.PID()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if proctest.GroupExists(pid) {
		t.Fatalf("process group %d still exists", pid)
	}
	if _, err := a.ListSessions(ctxT(t)); err == nil {
		t.Fatal("closed adapter answered")
	}
}

func TestMissingProgramIsReportedNotFaked(t *testing.T) {
	a := New(Config{Program: "/nonexistent/codex"})
	defer a.Close()
	caps := a.Capabilities(context.Background())
	if caps.Sessions.State != providers.Unavailable || !strings.Contains(caps.Sessions.Reason, "/nonexistent/codex") || caps.Sessions.Fix == "" {
		t.Fatalf("caps = %+v", caps.Sessions)
	}
	if _, err := a.ListSessions(context.Background()); err == nil {
		t.Fatal("sessions from a missing program")
	}
	_, err := a.Send(context.Background(), "t", "x", providers.SendOptions{})
	if !errors.As(err, new(*providers.NotSentError)) {
		t.Fatalf("send error = %v", err)
	}
	if _, err := a.ForEndpoint(context.Background(), "stdio:/other"); err == nil {
		t.Fatal("routed to a foreign endpoint")
	}
}

func TestCommandResolution(t *testing.T) {
	env := map[string]string{EnvCommand: "/bin/sh -c true"}
	c := Config{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	argv, err := c.command()
	if err != nil || strings.Join(argv, " ") != "/bin/sh -c true" {
		t.Fatalf("argv = %v, %v", argv, err)
	}
	env[EnvCommand] = "/bin/sh"
	argv, _ = c.command()
	if strings.Join(argv, " ") != "/bin/sh app-server" {
		t.Fatalf("argv = %v", argv)
	}
	c.Program = "/bin/true"
	c.ExtraArgs = []string{"--disable", "plugins"}
	argv, _ = c.command()
	if strings.Join(argv, " ") != "/bin/true app-server --disable plugins" {
		t.Fatalf("argv = %v", argv)
	}
	a := New(Config{Program: "/bin/true", Env: []string{"CODEX_HOME=/x"}})
	if a.Endpoint() != "stdio:/bin/true app-server (CODEX_HOME=/x)" {
		t.Fatalf("endpoint = %q", a.Endpoint())
	}
	if got, err := a.ForEndpoint(context.Background(), a.Endpoint()); err != nil || got != a {
		t.Fatalf("ForEndpoint = %v, %v", got, err)
	}
}

func TestSimOlderServerMethodsNotSupported(t *testing.T) {
	a, _ := simAdapter(t, newRecHost(), func(c *Config) { c.Env = append(c.Env, "CODEX_SIM_OLD=1") })
	ctx := ctxT(t)
	// -32601 for thread/name/set: the thread is created untitled.
	s, err := a.CreateSession(ctx, providers.CreateOptions{Title: "x"})
	if err != nil || s.Title != "" {
		t.Fatalf("create = %+v, %v", s, err)
	}
	// -32600 "unknown variant" for thread/list: not supported, said so.
	_, err = a.ListSessions(ctx)
	var un *providers.UnsupportedError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "does not know thread/list") {
		t.Fatalf("list = %v", err)
	}
}

// A thread started in a symlinked directory gets the directory's real path:
// Codex's sandbox grants writes under the real path only.
func TestSimCreateSessionResolvesSymlinkedCWD(t *testing.T) {
	a, _ := simAdapter(t, newRecHost(), nil)
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "workspace")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.CreateSession(ctxT(t), providers.CreateOptions{CWD: link})
	if err != nil {
		t.Fatal(err)
	}
	if s.CWD != want {
		t.Fatalf("thread cwd %q, want the real path %q (asked for %q)", s.CWD, want, link)
	}
}
