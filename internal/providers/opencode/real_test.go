package opencode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// shared is one password-protected opencode server (and its fake model)
// used by the real-program tests of this package; each test works in its
// own project directory.
var shared = realpeers.SharedOpenCode{Password: "s3cret-pass"}

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, shared.Close))
}

// Generous bounds: the machine is shared by several agents.
const (
	turnTimeout  = 60 * time.Second
	eventTimeout = 60 * time.Second
)

// realConfig binds an adapter to the test's server only. A server busy
// with other tests' turns on a loaded machine can take more than the
// default 10 s to answer, and must not make the adapter fall back to
// 127.0.0.1:4096, where another process's OpenCode may listen: the
// default URL is a closed port.
func realConfig(url, password string) Config {
	return Config{
		ServerURL: url, Password: password, DefaultURL: "http://127.0.0.1:1",
		DisableScan: true, DisableAutoStart: true, RequestTimeout: 60 * time.Second,
	}
}

// realAdapter returns an adapter bound to the shared server.
func realAdapter(t *testing.T) (*Adapter, *recordingHost, *realpeers.OpenCodeServer, *fakemodel.Server) {
	t.Helper()
	srv, fm := shared.Get(t)
	host := newHost()
	a := New(realConfig(srv.URL, srv.Password), host)
	t.Cleanup(func() { _ = a.Close() })
	t.Cleanup(func() { diagnose(t, fm, srv) })
	return a, host, srv, fm
}

// diagnose logs what the fake model saw and the server's output when the
// test failed.
func diagnose(t *testing.T, fm *fakemodel.Server, srv *realpeers.OpenCodeServer) {
	if !t.Failed() {
		return
	}
	for _, r := range fm.Requests() {
		t.Logf("model request %d: %s last-user=%q rule=%s status=%d continuation=%v side=%v note=%s",
			r.Seq, r.API, r.LastUser, r.Rule, r.Status, r.Continuation, r.Side, r.Note)
	}
	out := srv.Output()
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	t.Logf("opencode output (tail):\n%s", out)
}

// unique returns a token no other test uses.
func unique(t *testing.T, word string) string {
	return fmt.Sprintf("%s-%s-%d", word, strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
}

func projectDir(t *testing.T, git bool) string {
	t.Helper()
	dir := t.TempDir()
	if git {
		cmd := exec.Command("git", "init", "-q", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
	}
	return dir
}

func TestRealDiscoverCreateSendCompletes(t *testing.T) {
	a, host, srv, fm := realAdapter(t)
	ctx := ctxT(t, 2*turnTimeout)

	caps := a.Capabilities(ctx)
	if caps.Discovery.State != providers.Available || caps.ProviderVersion != PinnedVersion || caps.Authorization != "authorized" {
		t.Fatalf("capabilities %+v", caps)
	}
	if caps.Model.Supported || !strings.Contains(caps.Model.Reason, "validated native session model mutation") {
		t.Fatalf("model capability %+v", caps.Model)
	}

	dir := projectDir(t, false)
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: dir, Title: "real create"})
	if err != nil {
		t.Fatal(err)
	}
	if s.CWD != dir || s.Endpoint != srv.URL || s.ID != "opencode:"+s.NativeID || s.Title != "real create" {
		t.Fatalf("created %+v", s)
	}
	list, err := a.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range list {
		if x.NativeID == s.NativeID {
			found = x.CWD == dir && x.Endpoint == srv.URL
		}
	}
	if !found {
		t.Fatalf("session %s with cwd %s not in list of %d", s.NativeID, dir, len(list))
	}
	if got, err := a.GetSession(ctx, s.NativeID); err != nil || got == nil || got.CWD != dir {
		t.Fatalf("GetSession = %+v, %v", got, err)
	}
	if got, err := a.GetSession(ctx, "ses_doesnotexist123"); err != nil || got != nil {
		t.Fatalf("GetSession(unknown) = %+v, %v", got, err)
	}
	if _, err := a.ResumeSession(ctx, "ses_doesnotexist123"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("ResumeSession(unknown) = %v", err)
	}

	events, err := a.Subscribe(ctx, s.NativeID)
	if err != nil {
		t.Fatal(err)
	}
	text := unique(t, "hello")
	fm.On(fakemodel.Exact(text), fakemodel.Text("Hi from the fake."))
	start := time.Now()
	rc, err := a.Send(ctx, s.NativeID, text, providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Accepted || rc.Status != providers.StatusQueued || rc.ProviderState != "transport_accepted" || rc.Ref == "" {
		t.Fatalf("receipt %+v", rc)
	}
	waitEvent(t, events, eventTimeout, func(ev providers.NativeEvent) bool {
		if ev.NativeID != s.NativeID {
			t.Fatalf("event of another session: %+v", ev)
		}
		return ev.Type == "session.idle"
	})
	o := host.wait(t, rc.Ref, turnTimeout)
	if o.status != providers.StatusCompleted || o.nativeID != s.NativeID {
		t.Fatalf("outcome %+v", o)
	}
	t.Logf("send → completed outcome in %s", time.Since(start))
	if n := fm.Count(text); n != 1 {
		t.Fatalf("the model saw the prompt %d times, want 1", n)
	}
	if host.count(rc.Ref) != 1 {
		t.Fatalf("outcome reported %d times", host.count(rc.Ref))
	}
}

func TestRealDiffAfterToolEdit(t *testing.T) {
	a, host, _, fm := realAdapter(t)
	ctx := ctxT(t, 2*turnTimeout)
	dir := projectDir(t, true)
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: dir, Title: "diff"})
	if err != nil {
		t.Fatal(err)
	}
	text := unique(t, "WRITEFILE")
	fm.On(fakemodel.Exact(text), fakemodel.WriteFile("diffed.txt", "line one\n"))
	rc, err := a.Send(ctx, s.NativeID, text, providers.SendOptions{Model: &providers.Model{ProviderID: "fake", ModelID: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	if o := host.wait(t, rc.Ref, turnTimeout); o.status != providers.StatusCompleted {
		t.Fatalf("outcome %+v", o)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "diffed.txt")); err != nil || string(b) != "line one\n" {
		t.Fatalf("file: %q, %v", b, err)
	}
	// The turn summary is written just after the turn ends; poll for it.
	var res DiffResult
	wait.For(t, "the turn's diff", turnTimeout, func() bool {
		d, err := a.Diff(ctx, s.NativeID, providers.DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res = d.(DiffResult)
		return len(res.Files) > 0
	})
	if res.MessageID == "" || res.Files[0].File != "diffed.txt" || res.Files[0].Additions != 1 || !strings.Contains(res.Files[0].Patch, "+line one") {
		t.Fatalf("diff %+v", res)
	}
	again, err := a.Diff(ctx, s.NativeID, providers.DiffOptions{MessageID: res.MessageID})
	if err != nil || len(again.(DiffResult).Files) != 1 {
		t.Fatalf("diff by message id: %+v, %v", again, err)
	}
}

func TestRealCancelDuringSlowReply(t *testing.T) {
	a, host, _, fm := realAdapter(t)
	ctx := ctxT(t, 2*turnTimeout)
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: projectDir(t, false), Title: "cancel"})
	if err != nil {
		t.Fatal(err)
	}
	events, err := a.Subscribe(ctx, s.NativeID)
	if err != nil {
		t.Fatal(err)
	}
	text := unique(t, "SLOWREPLY")
	fm.On(fakemodel.Exact(text), fakemodel.Text("too late").WithDelay(5*time.Minute))
	rc, err := a.Send(ctx, s.NativeID, text, providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fm.Await(ctx, func(r fakemodel.Request) bool { return r.LastUser == text }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cr, err := a.Cancel(ctx, s.NativeID)
	if err != nil {
		t.Fatal(err)
	}
	if !cr.Accepted || cr.Status != providers.StatusCompleted || cr.ProviderState != "abort_requested" {
		t.Fatalf("cancel receipt %+v", cr)
	}
	waitEvent(t, events, eventTimeout, func(ev providers.NativeEvent) bool { return ev.Type == "session.idle" })
	o := host.wait(t, rc.Ref, turnTimeout)
	if o.status != providers.StatusRejected || !strings.Contains(o.reason, "Aborted") {
		t.Fatalf("outcome %+v", o)
	}
	t.Logf("cancel → idle and rejected outcome in %s", time.Since(start))
}

func TestRealProviderErrorRejectsReceipt(t *testing.T) {
	a, host, _, fm := realAdapter(t)
	ctx := ctxT(t, 2*turnTimeout)
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: projectDir(t, false), Title: "401"})
	if err != nil {
		t.Fatal(err)
	}
	text := unique(t, "FAIL401")
	fm.On(fakemodel.Exact(text), fakemodel.Fail(401, "Incorrect API key provided"))
	rc, err := a.Send(ctx, s.NativeID, text, providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != providers.StatusQueued {
		t.Fatalf("receipt %+v", rc)
	}
	o := host.wait(t, rc.Ref, turnTimeout)
	if o.status != providers.StatusRejected || !strings.Contains(o.reason, "APIError") || !strings.Contains(o.reason, "Incorrect API key provided") {
		t.Fatalf("outcome %+v", o)
	}
}

func TestRealWrongPasswordIsUnauthorized(t *testing.T) {
	srv, _ := shared.Get(t)
	a := New(realConfig(srv.URL, "wrong"), nil)
	t.Cleanup(func() { _ = a.Close() })
	caps := a.Capabilities(ctxT(t, 30*time.Second))
	if caps.Authorization != "unauthorized" || caps.Discovery.State != providers.Unavailable || strings.Contains(caps.Discovery.Reason, "wrong") {
		t.Fatalf("capabilities %+v", caps)
	}
}

// TestRealPermissionAskAndReply runs on the shared server: the project's
// own opencode.json asks for edits and commands, for this project only
// (OpenCode merges a project's config over the server's).
func TestRealPermissionAskAndReply(t *testing.T) {
	a, host, _, fm := realAdapter(t)
	ctx := ctxT(t, 2*turnTimeout)

	dir := projectDir(t, false)
	ask := `{"$schema":"https://opencode.ai/config.json","permission":{"edit":"ask","bash":"ask"}}`
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(ask), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: dir, Title: "permission"})
	if err != nil {
		t.Fatal(err)
	}
	text := unique(t, "WRITEFILE")
	fm.On(fakemodel.Exact(text), fakemodel.WriteFile("asked.txt", "granted\n"))
	rc, err := a.Send(ctx, s.NativeID, text, providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var req providers.PermissionRequest
	wait.For(t, "a pending permission", turnTimeout, func() bool {
		list, err := a.PendingPermissions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if p.NativeID == s.NativeID {
				req = p
				return true
			}
		}
		return false
	})
	if req.Method != "permission.edit" || len(req.Options) != 3 || req.Options[0].Kind != "allow_once" {
		t.Fatalf("request %+v", req)
	}
	// The request names the file it would write, absolute (OpenCode
	// resolves the session's directory).
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Paths) != 1 || req.Paths[0] != filepath.Join(realDir, "asked.txt") || req.PathsUnknown {
		t.Fatalf("request names %q (unknown %v), want [%s]", req.Paths, req.PathsUnknown, filepath.Join(realDir, "asked.txt"))
	}
	if _, err := os.Stat(filepath.Join(dir, "asked.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file written before the reply: %v", err)
	}
	var ns *providers.NotSentError
	if _, err := a.RespondPermission(ctx, s.NativeID, "per_nope", "allow_once"); !errors.As(err, &ns) || !strings.Contains(err.Error(), "No pending permission request per_nope") {
		t.Fatalf("unknown request: %v", err)
	}
	pr, err := a.RespondPermission(ctx, s.NativeID, req.RequestID, "allow_once")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Status != providers.StatusCompleted || pr.ProviderState != "decision_sent" {
		t.Fatalf("reply receipt %+v", pr)
	}
	if o := host.wait(t, rc.Ref, turnTimeout); o.status != providers.StatusCompleted {
		t.Fatalf("outcome %+v", o)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "asked.txt")); err != nil || string(b) != "granted\n" {
		t.Fatalf("file after reply: %q, %v", b, err)
	}

	// A shell command asks "bash": what it writes cannot be named.
	text = unique(t, "RUNSHELL")
	fm.On(fakemodel.Exact(text), fakemodel.RunCommand("printf x > shell.txt"))
	if _, err := a.Send(ctx, s.NativeID, text, providers.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	var cmd providers.PermissionRequest
	wait.For(t, "a pending bash permission", turnTimeout, func() bool {
		list, err := a.PendingPermissions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if p.NativeID == s.NativeID && p.RequestID != req.RequestID {
				cmd = p
				return true
			}
		}
		return false
	})
	if cmd.Method != "permission.bash" || !cmd.PathsUnknown || len(cmd.Paths) != 0 {
		t.Fatalf("command request %+v", cmd)
	}
	if _, err := a.RespondPermission(ctx, s.NativeID, cmd.RequestID, "reject_once"); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the bash permission answered", turnTimeout, func() bool {
		list, err := a.PendingPermissions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if p.RequestID == cmd.RequestID {
				return false
			}
		}
		return true
	})
	if _, err := os.Stat(filepath.Join(dir, "shell.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the rejected command ran: %v", err)
	}
}

func TestRealAutoStartAndRestart(t *testing.T) {
	program := realpeers.Require(t, realpeers.OpenCode)
	fm := fakemodel.New(t)
	env := realpeers.OpenCodeEnv(t, realpeers.OpenCodeConfig(fm.BaseURL()))
	closed, err := realpeers.FreePort() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	host := newHost()
	a := New(Config{
		DefaultURL: fmt.Sprintf("http://127.0.0.1:%d", closed), DisableScan: true,
		Program: program, ServeEnv: env.Environ(), ServeDir: t.TempDir(),
	}, host)
	t.Cleanup(func() { _ = a.Close() })
	ctx := ctxT(t, 3*time.Minute)

	start := time.Now()
	caps := a.Capabilities(ctx)
	if caps.Discovery.State != providers.Available || caps.Program == "" {
		t.Fatalf("capabilities after auto-start %+v", caps)
	}
	t.Logf("auto-start took %s", time.Since(start))
	first, err := a.Endpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: t.TempDir(), Title: "managed"})
	if err != nil {
		t.Fatal(err)
	}
	// The server dies in the middle of a reply: the turn is reported
	// delivery_unknown with the reason, never left queued, never resent.
	gate := make(chan struct{})
	defer close(gate)
	text := unique(t, "MIDREPLY")
	fm.On(fakemodel.Exact(text), fakemodel.Text("never seen").WithGate(gate))
	rc, err := a.Send(ctx, s.NativeID, text, providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fm.Await(ctx, func(r fakemodel.Request) bool { return r.LastUser == text }); err != nil {
		t.Fatal(err)
	}
	a.epMu.Lock()
	m := a.managed
	a.epMu.Unlock()
	m.proc.Kill()
	<-m.exited
	o := host.wait(t, rc.Ref, turnTimeout)
	// Whichever the adapter notices first: the process exit, or the
	// refused connection of its event stream.
	if o.status != providers.StatusDeliveryUnknown || !strings.Contains(o.reason, "not resent") ||
		(!strings.Contains(o.reason, "exited") && !strings.Contains(o.reason, "stopped answering")) {
		t.Fatalf("outcome after the server died = %+v", o)
	}
	if l := a.Liveness(s.NativeID); l.State != providers.LiveDead || l.ObservedAt == nil {
		t.Fatalf("liveness after the server died = %+v", l)
	}

	// The next call starts a new server, which finds the session in the
	// same data directory, and the next send completes.
	got, err := a.GetSession(ctx, s.NativeID)
	if err != nil || got == nil {
		t.Fatalf("GetSession after restart = %+v, %v", got, err)
	}
	next := unique(t, "AFTERRESTART")
	rc2, err := a.Send(ctx, s.NativeID, next, providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := host.wait(t, rc2.Ref, turnTimeout); o.status != providers.StatusCompleted {
		t.Fatalf("the send after the restart = %+v", o)
	}
	if n, m := fm.Count(text), fm.Count(next); n != 1 || m != 1 {
		t.Fatalf("the model saw the prompts %d and %d times, want 1 and 1", n, m)
	}
	second, _ := a.Endpoint(ctx)
	if second == first || got.Endpoint != second {
		t.Fatalf("endpoint after restart %s (before %s), session endpoint %s", second, first, got.Endpoint)
	}
	a.epMu.Lock()
	m2 := a.managed
	a.epMu.Unlock()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wait.Recv(t, "the managed server to exit after Close", wait.Process, m2.exited)
}
