package freebuff

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/desktop"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// startFakeDesktop runs the Desktop simulator as its own process and waits
// for its listening line.
func startFakeDesktop(t *testing.T, exe string, env []string, args ...string) (url string, cmd *exec.Cmd, stdin io.WriteCloser) {
	t.Helper()
	cmd = exec.Command(exe, args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("fakedesktop: %v", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("fakedesktop printed %q", line)
	}
	return url, cmd, stdin
}

func TestDiscoveryThroughProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc on this system")
	}
	exe := program(t, "fakedesktop")
	project := t.TempDir()
	launch := "proc-launch-" + fmt.Sprint(os.Getpid())
	url, cmd, _ := startFakeDesktop(t, exe, []string{"PORT=0", "FREEBUFF_LAUNCH_ID=" + launch}, "-project", project, "-thread", "From proc")

	svc := New(Config{LookupEnv: newEnv(nil).lookup, HomeDir: t.TempDir(), WorkDir: t.TempDir(), Clock: newFakeClock(t)})
	defer svc.Close()
	ctx := context.Background()
	st := svc.Status(ctx)
	if st.Product != "desktop" || st.ReadOnly || st.Endpoint != url {
		t.Fatalf("status = %+v", st)
	}
	if !strings.Contains(strings.Join(st.Notes, " "), fmt.Sprintf("PID %d", cmd.Process.Pid)) {
		t.Errorf("notes do not name the orchestrator pid: %q", st.Notes)
	}
	threads, err := svc.ListThreads(ctx, project)
	if err != nil || len(threads) != 1 {
		t.Fatalf("threads = %+v, %v", threads, err)
	}
	if _, err := svc.SendThreadMessage(ctx, threads[0].ID, "found through /proc"); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoveryOfBootstrappedOrchestratorIsReadOnlyWithReason(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc on this system")
	}
	// Named like the real orchestrator, started without FREEBUFF_LAUNCH_ID:
	// its launch id only arrives on stdin, so nothing can verify it.
	exe := program(t, "fakedesktop")
	dir := t.TempDir()
	orch := filepath.Join(dir, "orchestrator.js")
	must(t, os.Link(exe, orch))
	_, _, stdin := startFakeDesktop(t, orch, []string{"PORT=0"}, "-project", t.TempDir())
	defer stdin.Close()

	svc := New(Config{LookupEnv: newEnv(nil).lookup, HomeDir: t.TempDir(), WorkDir: t.TempDir(), Clock: newFakeClock(t)})
	defer svc.Close()
	_, err := svc.SendThreadMessage(context.Background(), "t-1", "hi")
	var ns *providers.NotSentError
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "requires a launch id") {
		t.Fatalf("err = %v", err)
	}
}

func TestDiscoveryThroughReadinessFile(t *testing.T) {
	sim, err := freebuffsim.NewDesktop(freebuffsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	sim.AddThread(t.TempDir(), "ready")
	clock := newFakeClock(t)
	file := filepath.Join(t.TempDir(), "readiness.json")
	write := func(at time.Time) {
		b, _ := json.Marshal(map[string]any{"port": sim.Port(), "launchId": sim.LaunchID(), "pid": 1, "updatedAt": at.Format(time.RFC3339Nano)})
		must(t, os.WriteFile(file, b, 0o644))
	}
	write(clock.Now().Add(-time.Minute))
	env := newEnv(map[string]string{EnvReadinessFile: file})
	svc := New(Config{LookupEnv: env.lookup, ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir(), Clock: clock})
	defer svc.Close()
	if st := svc.Status(context.Background()); st.Product != "desktop" || st.ReadOnly {
		t.Fatalf("status = %+v", st)
	}
	// A stale record is ignored (after the cached connection expires).
	write(clock.Now().Add(-11 * time.Minute))
	clock.Advance(desktop.ConnectionTTL + time.Second)
	st := svc.Status(context.Background())
	if st.Product != "unknown" || !strings.Contains(strings.Join(st.Notes, " "), "older than 10 minutes") {
		t.Fatalf("status with a stale record = %+v", st)
	}
}

func TestDiscoveryThroughOrchestratorLog(t *testing.T) {
	sim, err := freebuffsim.NewDesktop(freebuffsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	home := t.TempDir()
	logs := filepath.Join(home, ".config", "Freebuff", "logs")
	must(t, os.MkdirAll(logs, 0o755))
	// Older lines are stale; the newest listening line wins.
	body := "listening on http://127.0.0.1:1\nother line\nlistening on " + sim.URL() + "\n"
	must(t, os.WriteFile(filepath.Join(logs, "orchestrator-stderr.log"), []byte(body), 0o644))
	env := newEnv(map[string]string{EnvLaunchID: sim.LaunchID()})
	svc := New(Config{LookupEnv: env.lookup, ProcDir: "-", HomeDir: home, WorkDir: t.TempDir(), Clock: newFakeClock(t)})
	defer svc.Close()
	if st := svc.Status(context.Background()); st.Product != "desktop" || st.ReadOnly || st.Endpoint != sim.URL() {
		t.Fatalf("status = %+v", st)
	}
}

// TestDiscoveryIsReportedAsStarting: while the service looks for the
// Desktop orchestrator (here a first candidate that does not answer yet),
// the adapter's Starting role says so, so that a listing of every provider
// reports Freebuff late at its start grace (registry.DefaultStartGrace)
// instead of waiting for it; once discovery ends it says no more.
func TestDiscoveryIsReportedAsStarting(t *testing.T) {
	sim, err := freebuffsim.NewDesktop(freebuffsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	sim.AddThread(t.TempDir(), "found")
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	defer unblock()
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // answers only once released, and then refuses
		http.Error(w, "not an orchestrator", http.StatusServiceUnavailable)
	}))
	defer stalled.Close()
	readiness := filepath.Join(t.TempDir(), "readiness.json")
	clock := newFakeClock(t)
	// The stalled candidate comes first (the readiness file is checked
	// before FREEBUFF_ORCHESTRATOR_URL, so it is given through the file and
	// the simulator through the URL).
	b, _ := json.Marshal(map[string]any{"url": stalled.URL, "updatedAt": clock.Now().Format(time.RFC3339Nano)})
	must(t, os.WriteFile(readiness, b, 0o644))
	env := newEnv(map[string]string{EnvReadinessFile: readiness, EnvOrchestratorURL: sim.URL(), EnvLaunchID: sim.LaunchID()})
	svc := New(Config{LookupEnv: env.lookup, ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir(), Clock: clock})
	defer svc.Close()
	a := NewAdapter(svc, nil)
	starting := a.Roles().Starting
	if starting == nil || starting.Starting() {
		t.Fatalf("Starting role = %v before any call, want one that reports no start", starting)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.ListSessions(context.Background())
		done <- err
	}()
	wait.For(t, "the Starting role to report the discovery under way", wait.Process, starting.Starting)
	unblock()
	if err := wait.Recv(t, "the listing", wait.Process, done); err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	if starting.Starting() {
		t.Fatal("Starting role still reports a start after discovery ended")
	}
}
