package freebuff

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/providers/freebuff/desktop"
	"github.com/agent-interop/runtime/internal/security"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// desktopFixture is a simulated Desktop with one project and a service
// configured to find it through FREEBUFF_ORCHESTRATOR_URL.
type desktopFixture struct {
	sim     *freebuffsim.Desktop
	env     *envStore
	svc     *Service
	clock   *quartz.Mock
	project string
	threads []string
	roots   *security.Roots
}

func newDesktopFixture(t *testing.T, opts freebuffsim.Options, withLaunchID bool, tweaks ...func(*Config)) *desktopFixture {
	t.Helper()
	sim, err := freebuffsim.NewDesktop(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	project := t.TempDir()
	must(t, os.WriteFile(filepath.Join(project, "README.md"), []byte("# demo\ntoken=abc-secret-123\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(project, ".env"), []byte("OPENAI_API_KEY=sk-"+strings.Repeat("z", 40)+"\n"), 0o644))
	f := &desktopFixture{sim: sim, project: project, clock: newFakeClock(t)}
	f.threads = []string{sim.AddThread(project, "First thread"), sim.AddThread(project, "Second thread")}
	vars := map[string]string{EnvOrchestratorURL: sim.URL()}
	if withLaunchID {
		vars[EnvLaunchID] = sim.LaunchID()
	}
	f.env = newEnv(vars)
	f.roots = security.NewRoots(f.env.lookup)
	cfg := Config{LookupEnv: f.env.lookup, Clock: f.clock, ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir(), Roots: f.roots,
		RequestTimeout: 2 * time.Second}
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	f.svc = New(cfg)
	t.Cleanup(func() { f.svc.Close() })
	return f
}

// guard bounds a test step that waits for real I/O (never an assertion).
func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process) // the CLI fixture is a child process
	t.Cleanup(cancel)
	return ctx
}

// collect reads progress pages until an event of kind appears.
func collect(t *testing.T, svc *Service, threadID string, after int64, kind string) ([]ProgressEvent, int64) {
	t.Helper()
	ctx := guard(t)
	var all []ProgressEvent
	for ctx.Err() == nil {
		snap, err := svc.GetThreadProgress(ctx, ProgressQuery{ThreadID: threadID, AfterSequence: after, TimeoutMs: 30_000})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, snap.Events...)
		after = *snap.Next
		for _, e := range snap.Events {
			if e.Kind == kind {
				return all, after
			}
		}
	}
	t.Fatalf("no %s event for %s; got %+v", kind, threadID, all)
	return nil, 0
}

// awaitTurnState returns the events after next up to the thread's
// turn_state event with state (none when seen already holds it).
func awaitTurnState(t *testing.T, svc *Service, threadID string, seen []ProgressEvent, next int64, state string) []ProgressEvent {
	t.Helper()
	last := ""
	for _, e := range seen {
		if e.Kind == core.KindTurnState {
			last = e.State
		}
	}
	if last == state {
		return nil
	}
	ctx := guard(t)
	var more []ProgressEvent
	for ctx.Err() == nil {
		snap, err := svc.GetThreadProgress(ctx, ProgressQuery{ThreadID: threadID, AfterSequence: next, TimeoutMs: 30_000})
		if err != nil {
			t.Fatal(err)
		}
		more = append(more, snap.Events...)
		next = *snap.Next
		for _, e := range snap.Events {
			if e.Kind == core.KindTurnState && e.State == state {
				return more
			}
		}
	}
	t.Fatalf("no turn_state %s event for %s; got %+v", state, threadID, more)
	return nil
}

func TestDesktopReadsWritesAndProgress(t *testing.T) {
	f := newDesktopFixture(t, freebuffsim.Options{}, true)
	ctx := context.Background()
	svc, tid := f.svc, f.threads[0]

	st := svc.Status(ctx)
	if st.Product != "desktop" || st.ReadOnly || !st.Orchestrator || st.SignedIn != true || st.Endpoint != f.sim.URL() {
		t.Fatalf("status = %+v", st)
	}
	projects, err := svc.ListProjects(ctx)
	if err != nil || len(projects) != 1 || projects[0].ID != f.project || projects[0].Metadata["threadCount"] != 2 {
		t.Fatalf("projects = %+v, %v", projects, err)
	}
	if _, _, err := f.roots.Locate(filepath.Join(f.project, "README.md")); err != nil {
		t.Fatalf("project not approved as a root: %v", err)
	}
	threads, err := svc.ListThreads(ctx, f.project)
	if err != nil || len(threads) != 2 || threads[0].ID != tid || threads[0].State != "idle" || threads[0].Model == "" {
		t.Fatalf("threads = %+v, %v", threads, err)
	}
	var nf *NotFoundError
	if _, err := svc.ListThreads(ctx, "/no/such/project"); !errors.As(err, &nf) || err.Error() != "Unknown Freebuff project /no/such/project" {
		t.Fatalf("unknown project: %v", err)
	}
	if _, err := svc.GetThread(ctx, "nope-123"); !errors.As(err, &nf) || nf.Kind != "thread" {
		t.Fatalf("unknown thread: %v", err)
	}

	rec, err := svc.SendThreadMessage(ctx, tid, "hello\nworld")
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Accepted || rec.Status != providers.StatusQueued || rec.Operation != "send" || rec.NativeID != tid || rec.Ref == "" {
		t.Fatalf("receipt = %+v", rec)
	}
	events, next := collect(t, svc, tid, 0, core.KindCompleted)
	// The Desktop reports the turn's end (completed) and the thread going
	// idle in separate frames: wait for the idle one too before reading the
	// summary.
	events = append(events, awaitTurnState(t, svc, tid, events, next, "idle")...)
	var kinds []string
	text := ""
	for _, e := range events {
		kinds = append(kinds, e.Kind)
		text += e.Text
	}
	joined := strings.Join(kinds, ",")
	for _, want := range []string{"turn_state", "tool_start", "tool_output", "assistant_text", "completed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("events %v lack %s", kinds, want)
		}
	}
	if !strings.Contains(text, "Echo: hello\nworld") || strings.Contains(text, "private chain of thought") {
		t.Errorf("event text = %q", text)
	}
	for i := 1; i < len(events); i++ {
		if events[i].Sequence != events[i-1].Sequence+1 {
			t.Fatalf("sequences not contiguous: %+v", events)
		}
	}
	det, err := svc.GetThread(ctx, tid)
	if err != nil || len(det.Messages) != 2 || det.Live == nil || !det.Live.Connected {
		t.Fatalf("detail = %+v, %v", det, err)
	}
	msgs, err := svc.GetThreadMessages(ctx, tid)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
	if sum, err := svc.GetThreadProgress(ctx, ProgressQuery{ThreadID: tid, Summary: true}); err != nil || len(sum.Events) != 0 || sum.Phase != core.PhaseCompleted || sum.CurrentState != "idle" {
		t.Fatalf("summary = %+v, %v", sum, err)
	}
	if msgs, _, _ := f.sim.Thread(tid); len(msgs) != 2 || msgs[0].Text != "hello\nworld" {
		t.Fatalf("the Desktop received %+v", msgs)
	}

	// A held turn is active until stopped.
	f.sim.SetTurnMode(freebuffsim.TurnHold)
	if _, err := svc.SendThreadMessage(ctx, f.threads[1], "long task"); err != nil {
		t.Fatal(err)
	}
	collect(t, svc, f.threads[1], 0, core.KindToolOutput)
	active, err := svc.ListActiveThreads(ctx)
	if err != nil || len(active) != 1 || active[0].ThreadID != f.threads[1] {
		t.Fatalf("active threads = %+v, %v", active, err)
	}
	work, err := svc.GetActiveWork(ctx, "")
	if err != nil || len(work) != 1 || work[0].ID != f.threads[1] || work[0].State != "running" || work[0].Live == nil {
		t.Fatalf("active work = %+v, %v", work, err)
	}
	if _, err := svc.StopThread(ctx, f.threads[1]); err != nil {
		t.Fatal(err)
	}
	if w, err := svc.GetActiveWork(ctx, f.threads[1]); err != nil || len(w) != 0 {
		t.Fatalf("active work after stop = %+v, %v", w, err)
	}
	if _, err := svc.GetActiveWork(ctx, "unknown-thread"); !errors.As(err, &nf) {
		t.Fatalf("active work of an unknown thread: %v", err)
	}

	// Model and reasoning.
	if r, err := svc.SetThreadModel(ctx, tid, "anthropic/claude-sonnet-4.5", ""); err != nil || r.Status != providers.StatusCompleted {
		t.Fatalf("set model: %+v, %v", r, err)
	}
	var rj *providers.RejectedError
	if _, err := svc.SetThreadModel(ctx, tid, "no/such-model", ""); !errors.As(err, &rj) || !strings.Contains(rj.Reason, "invalid model") {
		t.Fatalf("invalid model: %v", err)
	}
	if _, err := svc.SetThreadReasoning(ctx, tid, core.Ptr("high")); err != nil {
		t.Fatal(err)
	}
	_, state, _ := f.sim.Thread(tid)
	if state["model"] != "anthropic/claude-sonnet-4.5" || state["reasoningEffort"] != "high" {
		t.Fatalf("thread state after writes: %+v", state)
	}
	if _, err := svc.SetThreadReasoning(ctx, tid, nil); err != nil {
		t.Fatal(err)
	}
	if _, state, _ = f.sim.Thread(tid); state["reasoningEffort"] != nil {
		t.Fatalf("effort not cleared: %v", state["reasoningEffort"])
	}
	if _, err := svc.ResumeThread(ctx, tid); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SendThreadMessage(ctx, "no-such-thread", "x"); !errors.As(err, &rj) || !strings.Contains(err.Error(), "Unknown Freebuff thread no-such-thread") {
		t.Fatalf("send to an unknown thread: %v", err)
	}

	// Files.
	fc, err := svc.ReadProjectFile(ctx, f.project, "README.md")
	if err != nil || strings.Contains(fc.Content, "abc-secret-123") || !strings.Contains(fc.Content, "token=[REDACTED]") {
		t.Fatalf("read = %+v, %v", fc, err)
	}
	if _, err := svc.ReadProjectFile(ctx, f.project, ".env"); !errors.Is(err, security.ErrProtected) {
		t.Fatalf(".env read: %v", err)
	}
	if _, err := svc.ReadProjectFile(ctx, f.project, "../../etc/passwd"); !errors.Is(err, security.ErrEscapes) {
		t.Fatalf("traversal: %v", err)
	}
	if _, err := svc.ReadProjectFile(ctx, "/etc", "passwd"); !errors.As(err, &nf) {
		t.Fatalf("a path that is not a project: %v", err)
	}
	files, err := svc.ListProjectFiles(ctx, f.project, "")
	if err != nil || strings.Join(files, ",") != "README.md" {
		t.Fatalf("files = %q, %v", files, err)
	}
	models, err := svc.ListModels(ctx)
	if err != nil || len(models.Models) != 2 || models.Note == "" {
		t.Fatalf("models = %+v, %v", models, err)
	}
}

func TestDesktopReadOnlyWithoutVerifiedLaunchID(t *testing.T) {
	ctx := context.Background()
	t.Run("open GETs, no launch id", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{Auth: freebuffsim.AuthV0124}, false)
		if threads, err := f.svc.ListThreads(ctx, ""); err != nil || len(threads) != 2 {
			t.Fatalf("reads must work: %v", err)
		}
		st := f.svc.Status(ctx)
		if !st.ReadOnly || st.ReadOnlyReason != ReasonDesktopUnverified {
			t.Fatalf("status = %+v", st)
		}
		_, err := f.svc.SendThreadMessage(ctx, f.threads[0], "hi")
		var ns *providers.NotSentError
		if !errors.As(err, &ns) || ns.Err.Error() != ReasonDesktopUnverified {
			t.Fatalf("write without a verified launch id: %v", err)
		}
		if n := len(f.sim.Requests()); n != 0 {
			t.Fatalf("%d writes reached the Desktop", n)
		}
	})
	t.Run("guarded GETs, wrong launch id", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{Auth: freebuffsim.AuthV0156}, false)
		f.env.set(EnvLaunchID, "stale-launch-id")
		_, err := f.svc.ListProjects(ctx)
		if err == nil || !strings.Contains(err.Error(), "unauthorized") {
			t.Fatalf("reads with a wrong launch id: %v", err)
		}
		if _, err := f.svc.StopThread(ctx, f.threads[0]); providers.IsUncertain(err) {
			t.Fatalf("write: %v", err)
		}
		if n := len(f.sim.Requests()); n != 0 {
			t.Fatalf("%d writes reached the Desktop", n)
		}
	})
	t.Run("an environment launch id alone never grants writes", func(t *testing.T) {
		env := newEnv(map[string]string{EnvLaunchID: "some-id"})
		svc := New(Config{LookupEnv: env.lookup, ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir()})
		defer svc.Close()
		if _, err := svc.SendThreadMessage(ctx, "t-1", "hi"); providers.IsUncertain(err) || !strings.Contains(err.Error(), "No Freebuff Desktop orchestrator was found") {
			t.Fatalf("write: %v", err)
		}
	})
	t.Run("non-loopback URL refused", func(t *testing.T) {
		env := newEnv(map[string]string{EnvOrchestratorURL: "http://10.1.2.3:4000", EnvLaunchID: "x"})
		svc := New(Config{LookupEnv: env.lookup, ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir()})
		defer svc.Close()
		if st := svc.Status(ctx); st.Product != "unknown" || !strings.Contains(strings.Join(st.Notes, " "), "not a loopback address") {
			t.Fatalf("status = %+v", st)
		}
	})
}

func TestDesktopWriteRetriesOnceAfterAuthorizationRefusal(t *testing.T) {
	ctx := context.Background()
	t.Run("rotated launch id", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{}, true)
		var once sync.Once
		f.sim.BeforeWrite(func() {
			once.Do(func() { f.env.set(EnvLaunchID, f.sim.RotateLaunchID()) })
		})
		rec, err := f.svc.SendThreadMessage(ctx, f.threads[0], "after rotation")
		if err != nil || !rec.Accepted {
			t.Fatalf("send = %+v, %v", rec, err)
		}
		reqs := f.sim.Requests()
		if len(reqs) != 2 || reqs[0].Status != http.StatusUnauthorized || reqs[1].Status != http.StatusOK || reqs[1].LaunchID != f.sim.LaunchID() {
			t.Fatalf("requests = %+v", reqs)
		}
		if msgs, _, _ := f.sim.Thread(f.threads[0]); len(msgs) != 2 {
			t.Fatalf("the prompt was applied %d times", len(msgs)/2)
		}
	})
	t.Run("refused twice: exactly one retry", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{Auth: freebuffsim.AuthV0156}, true)
		f.sim.RefuseNextWrites(5)
		_, err := f.svc.SendThreadMessage(ctx, f.threads[0], "x")
		var rj *providers.RejectedError
		if !errors.As(err, &rj) || !strings.Contains(rj.Reason, "HTTP 401: unauthorized") {
			t.Fatalf("err = %v", err)
		}
		if n := len(f.sim.Requests()); n != 2 {
			t.Fatalf("%d attempts, want 2", n)
		}
	})
	t.Run("v0124 forbidden", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{Auth: freebuffsim.AuthV0124}, true)
		var once sync.Once
		f.sim.BeforeWrite(func() { once.Do(func() { f.env.set(EnvLaunchID, f.sim.RotateLaunchID()) }) })
		if _, err := f.svc.StopThread(ctx, f.threads[0]); err != nil {
			t.Fatal(err)
		}
		if reqs := f.sim.Requests(); len(reqs) != 2 || reqs[0].Status != http.StatusForbidden {
			t.Fatalf("requests = %+v", reqs)
		}
	})
	t.Run("restart on a new port before the write", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{}, true)
		if _, err := f.svc.ListThreads(ctx, ""); err != nil {
			t.Fatal(err)
		}
		must(t, f.sim.Restart())
		f.env.set(EnvOrchestratorURL, f.sim.URL())
		f.env.set(EnvLaunchID, f.sim.LaunchID())
		// The cached connection points at the old port; the write refreshes
		// it first.
		if _, err := f.svc.SendThreadMessage(ctx, f.threads[0], "after restart"); err != nil {
			t.Fatal(err)
		}
		if reqs := f.sim.Requests(); len(reqs) != 1 || reqs[0].Status != http.StatusOK {
			t.Fatalf("requests = %+v", reqs)
		}
	})
}

func TestDesktopNeverRetriesUncertainOutcomes(t *testing.T) {
	ctx := context.Background()
	t.Run("connection cut after sending", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{}, true)
		f.sim.CutNextWrites(1)
		_, err := f.svc.SendThreadMessage(ctx, f.threads[0], "maybe delivered")
		if err == nil || !providers.IsUncertain(err) || !strings.Contains(err.Error(), "outcome unknown") {
			t.Fatalf("err = %v", err)
		}
		if n := len(f.sim.Requests()); n != 1 {
			t.Fatalf("%d attempts, want 1", n)
		}
		if msgs, _, _ := f.sim.Thread(f.threads[0]); len(msgs) != 2 {
			t.Fatalf("messages = %+v", msgs)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		f := newDesktopFixture(t, freebuffsim.Options{}, true, func(c *Config) { c.RequestTimeout = 300 * time.Millisecond })
		f.sim.HangNextWrites(1)
		errc := make(chan error, 1)
		go func() { _, err := f.svc.StopThread(ctx, f.threads[0]); errc <- err }()
		// The write's bound runs on the injected clock: once the write
		// hangs at the orchestrator, its 300 ms pass.
		wait.For(t, "the write to reach the orchestrator", wait.InProcess, func() bool { return len(f.sim.Requests()) == 1 })
		testclock.Pass(ctx, f.clock, 300*time.Millisecond)
		err := wait.Recv(t, "the timed-out write to return", wait.InProcess, errc)
		if err == nil || !providers.IsUncertain(err) {
			t.Fatalf("err = %v", err)
		}
		if n := len(f.sim.Requests()); n != 1 {
			t.Fatalf("%d attempts, want 1", n)
		}
	})
}

func TestDesktopRedirectRefused(t *testing.T) {
	var hits int
	var mu sync.Mutex
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer target.Close()
	launch := "launch-redirect"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/projects":
			w.Write([]byte(`{"projects":[{"path":"/p","threads":[{"id":"t-1","turnState":"idle"}]}]}`))
		case "/healthz":
			w.Write([]byte(`{"ok":true}`))
		case "/api/events":
			w.Header().Set("content-type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			<-r.Context().Done()
		default:
			http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	env := newEnv(map[string]string{EnvOrchestratorURL: srv.URL, EnvLaunchID: launch})
	svc := New(Config{LookupEnv: env.lookup, ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir(), Clock: newFakeClock(t)})
	defer svc.Close()
	_, err := svc.SendThreadMessage(context.Background(), "t-1", "hi")
	var rj *providers.RejectedError
	if !errors.As(err, &rj) || !strings.Contains(rj.Reason, "redirects are refused") {
		t.Fatalf("err = %v", err)
	}
	if _, err := svc.GetThread(context.Background(), "t-1"); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("read through a redirect: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Fatalf("the redirect target was reached %d times", hits)
	}
}

// awaitBackoff waits until the event stream arms its shortest reconnect
// back-off (releasing the longer ones armed before it).
func awaitBackoff(t *testing.T, trap *quartz.Trap) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		call := trap.MustWait(ctx)
		call.MustRelease(ctx)
		if call.Duration == desktop.BackoffMin {
			return
		}
	}
}

func TestDesktopEventStreamReconnects(t *testing.T) {
	f := newDesktopFixture(t, freebuffsim.Options{Pings: 0}, true)
	ctx := context.Background()
	tid := f.threads[0]
	if _, err := f.svc.SendThreadMessage(ctx, tid, "one"); err != nil {
		t.Fatal(err)
	}
	first, next := collect(t, f.svc, tid, 0, core.KindCompleted)

	// Drop the stream: the client backs off 250 ms (on the injected clock),
	// reconnects, and the replayed frames do not duplicate events.
	backoff := f.clock.Trap().NewTimer(desktop.TagBackoff)
	defer backoff.Close()
	f.sim.DropClients()
	awaitBackoff(t, backoff)
	f.clock.Advance(desktop.BackoffMin).MustWait(ctx)
	if _, err := f.svc.SendThreadMessage(ctx, tid, "two"); err != nil {
		t.Fatal(err)
	}
	second, _ := collect(t, f.svc, tid, next, core.KindCompleted)
	if second[0].Sequence != next+1 {
		t.Fatalf("sequence restarted: %d after %d", second[0].Sequence, next)
	}
	texts := 0
	for _, e := range append(first, second...) {
		if e.Kind == core.KindAssistantText {
			texts++
		}
	}
	if texts != 2 {
		t.Fatalf("%d assistant_text events over two turns (replay duplicated?)", texts)
	}

	// A rotated launch id: the stream is refused, re-discovery finds the
	// new id, and the stream resumes.
	f.env.set(EnvLaunchID, f.sim.RotateLaunchID())
	f.sim.DropClients()
	awaitBackoff(t, backoff)
	f.clock.Advance(desktop.BackoffMin).MustWait(ctx)
	f.sim.SetTurnMode(freebuffsim.TurnFail)
	if _, err := f.svc.SendThreadMessage(ctx, tid, "three"); err != nil {
		t.Fatal(err)
	}
	third, _ := collect(t, f.svc, tid, next+int64(len(second)), core.KindFailed)
	failed := 0
	for _, e := range third {
		if e.Kind == core.KindFailed {
			failed++
			if e.Error != "model overloaded" {
				t.Fatalf("failed event = %+v", e)
			}
		}
	}
	if failed != 1 {
		t.Fatalf("%d failed events, want 1: %+v", failed, third)
	}
}
