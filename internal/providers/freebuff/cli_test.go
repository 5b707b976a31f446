package freebuff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/cli"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/testutil/proctest"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// cliFixture is a home with Freebuff credentials, a project and a service in
// CLI mode driving the fake freebuff.
type cliFixture struct {
	home, project string
	env           *envStore
	extraEnv      []string
	svc           *Service
	probe         func() error
}

func newCLIFixture(t *testing.T, signedIn bool, vars map[string]string, extraEnv ...string) *cliFixture {
	t.Helper()
	exe := program(t, "fakefreebuff")
	f := &cliFixture{home: t.TempDir(), extraEnv: extraEnv}
	f.project = filepath.Join(t.TempDir(), "myproj")
	must(t, os.MkdirAll(filepath.Join(f.project, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.project, "main.go"), []byte("package main\n"), 0o644))
	if signedIn {
		must(t, os.MkdirAll(filepath.Join(f.home, ".config", "manicode"), 0o755))
		must(t, os.WriteFile(filepath.Join(filepath.Join(f.home, ".config", "manicode"), "credentials.json"), []byte(`{"default":{"name":"n","email":"e","authToken":"tok-secret-123"}}`), 0o600))
	}
	base := map[string]string{EnvCLIMode: "pty", EnvCLIPath: exe, EnvProjectRoot: f.project}
	for k, v := range vars {
		base[k] = v
	}
	f.env = newEnv(base)
	f.start(t)
	return f
}

// start (re)creates the service, as a new runtime process would.
func (f *cliFixture) start(t *testing.T) {
	t.Helper()
	environ := append([]string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH")}, f.extraEnv...)
	f.svc = New(Config{LookupEnv: f.env.lookup, Environ: func() []string { return environ }, HomeDir: f.home, WorkDir: f.project, ProcDir: "-", PTYProbe: f.probe})
	svc := f.svc
	t.Cleanup(func() { svc.Close() })
}

func (f *cliFixture) chatsDir() string {
	return filepath.Join(f.home, ".config", "manicode", "projects", filepath.Base(f.project), "chats")
}

// waitScreen waits until a managed session shows screen.
func waitScreen(t *testing.T, svc *Service, id, screen string) cli.Session {
	t.Helper()
	ctx := guard(t)
	for {
		s, ok := svc.cli.Observe(id)
		if !ok {
			t.Fatalf("no live session for %s", id)
		}
		if s.Screen == screen {
			return s
		}
		if s.Exited {
			t.Fatalf("session exited while waiting for %s; screen %q", screen, s.Text)
		}
		select {
		case <-s.Changed:
		case <-ctx.Done():
			t.Fatalf("screen %q never showed; last %q: %q", screen, s.Screen, s.Text)
		}
	}
}

// waitFinished waits until the conversation has logged n finished turns.
func waitFinished(t *testing.T, f *cliFixture, key string, n int) string {
	t.Helper()
	ctx := guard(t)
	for ctx.Err() == nil {
		s, ok := f.svc.cli.Observe(key)
		if !ok {
			t.Fatalf("session %s is gone", key)
		}
		id, done, _ := f.svc.cli.FinishedTurns(s.Key)
		if done >= n {
			return id
		}
		select {
		case <-s.Changed:
		case <-ctx.Done():
		}
	}
	t.Fatalf("turn %d never finished", n)
	return ""
}

var isoDashID = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z$`)

func TestCLICreateSendHistoryAndExactResume(t *testing.T) {
	f := newCLIFixture(t, true, nil)
	ctx := context.Background()
	st := f.svc.Status(ctx)
	if st.Product != "cli" || st.ReadOnly || st.SignedIn != true || st.Orchestrator {
		t.Fatalf("status = %+v", st)
	}
	projects, err := f.svc.ListProjects(ctx)
	if err != nil || len(projects) != 1 || projects[0].Path != f.project {
		t.Fatalf("projects = %+v, %v", projects, err)
	}
	if threads, err := f.svc.ListThreads(ctx, ""); err != nil || len(threads) != 0 {
		t.Fatalf("threads before any prompt = %+v, %v", threads, err)
	}

	created, err := f.svc.CreateThread(ctx, CreateThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := created.ID
	pid := created.Metadata["pid"].(int)
	if created.State != "idle" || !strings.HasPrefix(key, "pty-") {
		t.Fatalf("created = %+v", created)
	}
	rec, err := f.svc.SendThreadMessage(ctx, key, "hello\nsecond line")
	if err != nil || rec.Status != providers.StatusQueued || !rec.Accepted {
		t.Fatalf("send = %+v, %v", rec, err)
	}
	chatID := waitFinished(t, f, key, 1)
	if !isoDashID.MatchString(chatID) {
		t.Fatalf("chat id %q is not the ISO-dash form", chatID)
	}
	if _, err := os.Stat(filepath.Join(f.chatsDir(), chatID, "chat-messages.json")); err != nil {
		t.Fatalf("history is not under the plain project basename: %v", err)
	}
	threads, err := f.svc.ListThreads(ctx, f.project)
	if err != nil || len(threads) != 1 || threads[0].ID != chatID || threads[0].Title != "hello\nsecond line" || threads[0].Metadata["live"] != true {
		t.Fatalf("threads = %+v, %v", threads, err)
	}
	det, err := f.svc.GetThread(ctx, chatID)
	if err != nil || len(det.Messages) != 2 || core.AsMap(det.Messages[1])["content"] != "Echo: hello\nsecond line" {
		t.Fatalf("detail = %+v, %v", det, err)
	}
	// The bound conversation id reaches the same process.
	if _, err := f.svc.SendThreadMessage(ctx, chatID, "again"); err != nil {
		t.Fatal(err)
	}
	waitFinished(t, f, key, 2)
	if s, ok := f.svc.cli.Observe(chatID); !ok || s.PID != pid {
		t.Fatal("the second prompt did not reach the same session")
	}
	// A newer conversation appears; resuming the older one must not
	// substitute the newest.
	if _, err := f.svc.SendThreadMessage(ctx, key, "/new"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, f.svc, key, cli.ScreenReady)

	// Close kills the process group.
	must(t, f.svc.Close())
	if proctest.Exists(pid) {
		t.Fatalf("pid %d still exists after Close", pid)
	}
	newer := filepath.Join(f.chatsDir(), "2099-01-01T00-00-00.000Z")
	must(t, os.MkdirAll(newer, 0o755))
	must(t, os.WriteFile(filepath.Join(newer, "chat-messages.json"), []byte(`[{"id":"x","variant":"user","content":"newer","timestamp":1}]`), 0o644))

	f.start(t)
	rec, err = f.svc.ResumeThread(ctx, chatID)
	if err != nil || rec.Status != providers.StatusCompleted || rec.Detail.(map[string]any)["args"] != "--continue "+chatID {
		t.Fatalf("resume = %+v, %v", rec, err)
	}
	if _, err := f.svc.SendThreadMessage(ctx, chatID, "third"); err != nil {
		t.Fatal(err)
	}
	s, _ := f.svc.cli.Observe(chatID)
	waitFinished(t, f, s.Key, 3)
	det, err = f.svc.GetThread(ctx, chatID)
	if err != nil || len(det.Messages) != 6 {
		t.Fatalf("resumed conversation has %d messages, %v", len(det.Messages), err)
	}
	if nd, _ := f.svc.GetThread(ctx, "2099-01-01T00-00-00.000Z"); len(nd.Messages) != 1 {
		t.Fatalf("the newest conversation was written to: %+v", nd.Messages)
	}
	// Resuming a live thread is a no-op.
	if rec, err := f.svc.ResumeThread(ctx, chatID); err != nil || rec.Detail.(map[string]any)["alreadyRunning"] != true {
		t.Fatalf("second resume = %+v, %v", rec, err)
	}
}

func TestCLIPasteCannotInjectKeys(t *testing.T) {
	f := newCLIFixture(t, true, nil)
	ctx := context.Background()
	created, err := f.svc.CreateThread(ctx, CreateThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hostile := "line one\x1b[201~\r/exit\r\x03 tail"
	if _, err := f.svc.SendThreadMessage(ctx, created.ID, hostile); err != nil {
		t.Fatal(err)
	}
	chatID := waitFinished(t, f, created.ID, 1)
	det, err := f.svc.GetThread(ctx, chatID)
	if err != nil {
		t.Fatal(err)
	}
	content := core.AsMap(det.Messages[0])["content"].(string)
	if content != "line one[201~/exit tail" {
		t.Fatalf("pasted content = %q", content)
	}
	if s, ok := f.svc.cli.Observe(created.ID); !ok || s.Exited {
		t.Fatal("the pasted text ended the CLI")
	}
}

func TestCLIStopWithEsc(t *testing.T) {
	f := newCLIFixture(t, true, nil, "FAKEFREEBUFF_TURN_MS=600000")
	ctx := context.Background()
	created, err := f.svc.CreateThread(ctx, CreateThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SendThreadMessage(ctx, created.ID, "long job"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, f.svc, created.ID, cli.ScreenWorking)
	work, err := f.svc.GetActiveWork(ctx, "")
	if err != nil || len(work) != 1 || work[0].State != "running" {
		t.Fatalf("active work = %+v, %v", work, err)
	}
	rec, err := f.svc.StopThread(ctx, created.ID)
	if err != nil || rec.Operation != "stop" {
		t.Fatalf("stop = %+v, %v", rec, err)
	}
	chatID := waitScreen(t, f.svc, created.ID, cli.ScreenReady).Conversation
	det, _ := f.svc.GetThread(ctx, chatID)
	if len(det.Messages) != 2 || core.AsMap(det.Messages[1])["content"] != "Stopped." {
		t.Fatalf("messages after Esc = %+v", det.Messages)
	}
	// Stopping a thread with no managed session is not sent.
	var ns *providers.NotSentError
	if _, err := f.svc.StopThread(ctx, "2001-01-01T00-00-00.000Z"); !errors.As(err, &ns) {
		t.Fatalf("stop of an unknown thread: %v", err)
	}
}

func TestCLIScreensAreReported(t *testing.T) {
	ctx := context.Background()
	t.Run("login", func(t *testing.T) {
		f := newCLIFixture(t, false, nil)
		if st := f.svc.Status(ctx); st.SignedIn != false {
			t.Fatalf("signedIn = %v", st.SignedIn)
		}
		_, err := f.svc.CreateThread(ctx, CreateThreadOptions{})
		var se *ScreenError
		if !errors.As(err, &se) || se.Screen != cli.ScreenLogin || !strings.Contains(err.Error(), "freebuff login") {
			t.Fatalf("err = %v", err)
		}
		if f.svc.cli.Running() != 0 {
			t.Fatal("a session on the login screen was kept")
		}
	})
	t.Run("lock", func(t *testing.T) {
		f := newCLIFixture(t, true, nil)
		must(t, os.WriteFile(filepath.Join(filepath.Join(f.home, ".config", "manicode"), "freebuff-instance-owner.json"), []byte(`{"instanceId":"other","pid":`+strconv.Itoa(os.Getpid())+`}`), 0o644))
		_, err := f.svc.CreateThread(ctx, CreateThreadOptions{})
		var se *ScreenError
		if !errors.As(err, &se) || se.Screen != cli.ScreenLock || !strings.Contains(err.Error(), "FREEBUFF_CLI_TAKEOVER=1") {
			t.Fatalf("err = %v", err)
		}
		f.env.set(EnvTakeover, "1")
		f.start(t)
		if _, err := f.svc.CreateThread(ctx, CreateThreadOptions{}); err != nil {
			t.Fatalf("takeover: %v", err)
		}
	})
	t.Run("session expiry", func(t *testing.T) {
		f := newCLIFixture(t, true, nil, "FAKEFREEBUFF_EXPIRE_AFTER=1")
		created, err := f.svc.CreateThread(ctx, CreateThreadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.SendThreadMessage(ctx, created.ID, "only turn"); err != nil {
			t.Fatal(err)
		}
		chatID := waitScreen(t, f.svc, created.ID, cli.ScreenExpired).Conversation
		_, err = f.svc.SendThreadMessage(ctx, chatID, "after expiry")
		var se *ScreenError
		if !errors.As(err, &se) || se.Screen != cli.ScreenExpired || providers.IsUncertain(err) {
			t.Fatalf("send after expiry: %v", err)
		}
		threads, _ := f.svc.ListThreads(ctx, "")
		if len(threads) != 1 || threads[0].State != cli.ScreenExpired {
			t.Fatalf("threads = %+v", threads)
		}
		if rec, err := f.svc.ResumeThread(ctx, chatID); err != nil || rec.Status != providers.StatusCompleted {
			t.Fatalf("resume after expiry = %+v, %v", rec, err)
		}
		if _, err := f.svc.SendThreadMessage(ctx, chatID, "new session"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("model and reasoning unsupported", func(t *testing.T) {
		f := newCLIFixture(t, true, nil)
		var un *providers.UnsupportedError
		if _, err := f.svc.SetThreadModel(ctx, "2001-01-01T00-00-00.000Z", "z-ai/glm-5.3-flash", ""); !errors.As(err, &un) || un.Reason != ReasonCLIModel {
			t.Fatalf("model: %v", err)
		}
		if _, err := f.svc.SetThreadReasoning(ctx, "2001-01-01T00-00-00.000Z", core.Ptr("high")); !errors.As(err, &un) || !strings.Contains(err.Error(), "/reasoning") {
			t.Fatalf("reasoning: %v", err)
		}
		if m, err := f.svc.ListModels(ctx); err != nil || len(m.Models) != 0 || !strings.Contains(m.Note, "/model") {
			t.Fatalf("models = %+v, %v", m, err)
		}
		if p, err := f.svc.GetThreadProgress(ctx, ProgressQuery{ThreadID: "x-1", TimeoutMs: 30_000}); err != nil || p.Connected || !p.Stale || p.Next != nil {
			t.Fatalf("progress = %+v, %v", p, err)
		}
	})
	t.Run("unknown thread", func(t *testing.T) {
		f := newCLIFixture(t, true, nil)
		_, err := f.svc.SendThreadMessage(ctx, "2001-01-01T00-00-00.000Z", "hi")
		var nf *NotFoundError
		if !errors.As(err, &nf) || providers.IsUncertain(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("PTY probe failure disables writes", func(t *testing.T) {
		f := newCLIFixture(t, true, nil)
		f.probe = func() error { return errors.New("no ptys available") }
		f.start(t)
		st := f.svc.Status(ctx)
		if !st.ReadOnly || !strings.Contains(st.ReadOnlyReason, "PTY start-up probe failed: no ptys available") {
			t.Fatalf("status = %+v", st)
		}
		if _, err := f.svc.CreateThread(ctx, CreateThreadOptions{}); err == nil || providers.IsUncertain(err) {
			t.Fatalf("create: %v", err)
		}
	})
	t.Run("missing executable", func(t *testing.T) {
		f := newCLIFixture(t, true, map[string]string{EnvCLIPath: "/nonexistent/freebuff"})
		if st := f.svc.Status(ctx); !st.ReadOnly || !strings.Contains(st.ReadOnlyReason, "not an executable file") {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("ready pattern override and narrow terminal text", func(t *testing.T) {
		f := newCLIFixture(t, true, map[string]string{EnvReadyPattern: `1h\s+left`})
		if _, err := f.svc.CreateThread(ctx, CreateThreadOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCLIHistoryLayout(t *testing.T) {
	f := newCLIFixture(t, true, nil)
	ctx := context.Background()
	// Started in a subdirectory, the CLI rebinds to the git root: history
	// lives under the root's plain basename.
	sub := filepath.Join(f.project, "pkg", "inner")
	must(t, os.MkdirAll(sub, 0o755))
	f.env.set(EnvProjectRoot, sub)
	f.start(t)
	if got := f.svc.cli.ChatsDir(); got != f.chatsDir() {
		t.Fatalf("chats dir = %s, want %s", got, f.chatsDir())
	}
	created, err := f.svc.CreateThread(ctx, CreateThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SendThreadMessage(ctx, created.ID, "from a subdirectory"); err != nil {
		t.Fatal(err)
	}
	chatID := waitFinished(t, f, created.ID, 1)
	// A stale chat-meta.json (its size no longer matches) is recomputed.
	meta := filepath.Join(f.chatsDir(), chatID, "chat-meta.json")
	must(t, os.WriteFile(meta, []byte(`{"messageCount":99,"firstPrompt":"stale","messagesSize":1,"messagesMtimeMs":1}`), 0o644))
	threads, err := f.svc.ListThreads(ctx, "")
	if err != nil || len(threads) != 1 || threads[0].Title != "from a subdirectory" || threads[0].Metadata["messageCount"] != 2 {
		t.Fatalf("threads = %+v, %v", threads, err)
	}
	// Unsafe folder names are ignored.
	must(t, os.MkdirAll(filepath.Join(f.chatsDir(), "bad name"), 0o755))
	if threads, _ := f.svc.ListThreads(ctx, ""); len(threads) != 1 {
		t.Fatalf("threads = %+v", threads)
	}
	// Project files resolve against the CLI root.
	if files, err := f.svc.ListProjectFiles(ctx, sub, ""); err != nil || len(files) != 0 {
		t.Fatalf("files = %v, %v", files, err)
	}
	if _, err := f.svc.ListProjectFiles(ctx, "/elsewhere", ""); err == nil {
		t.Fatal("a foreign project id was accepted")
	}
}

func TestCLIThatExitsBeforeReady(t *testing.T) {
	f := newCLIFixture(t, true, map[string]string{EnvCLIPath: "/bin/false"})
	_, err := f.svc.CreateThread(context.Background(), CreateThreadOptions{})
	var se *ScreenError
	if !errors.As(err, &se) || se.Screen != "exited" || providers.IsUncertain(err) {
		t.Fatalf("err = %v", err)
	}
	// A live session with no conversation yet is listed and readable.
	f2 := newCLIFixture(t, true, nil)
	created, err := f2.svc.CreateThread(context.Background(), CreateThreadOptions{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	threads, err := f2.svc.ListThreads(context.Background(), "")
	if err != nil || len(threads) != 1 || threads[0].ID != created.ID || threads[0].Metadata["live"] != true {
		t.Fatalf("threads = %+v, %v", threads, err)
	}
	det, err := f2.svc.GetThread(context.Background(), created.ID)
	if err != nil || det.ID != created.ID || len(det.Messages) != 0 {
		t.Fatalf("detail = %+v, %v", det, err)
	}
}

func TestCLIProcessGroupIsKilled(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "child.pid")
	f := newCLIFixture(t, true, nil, "FAKEFREEBUFF_CHILD_PIDFILE="+pidfile)
	if _, err := f.svc.CreateThread(context.Background(), CreateThreadOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	must(t, f.svc.Close())
	// The child shares the CLI's process group: it must be gone (or a zombie
	// awaiting its new parent) once Close returns and the signal lands.
	wait.For(t, fmt.Sprintf("child %d of the managed CLI to end after Close", child), wait.Process,
		func() bool { return processGone(child) })
}

// processGone reports whether pid no longer runs (absent or a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}
