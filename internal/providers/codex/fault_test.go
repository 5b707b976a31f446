//go:build unix

package codex_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/sessionevent"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// Sizes of the no-replay fault test (INTEROP_FAULT_SCALE=small shrinks them
// for a quick local run).
func faultSizes() (transport, kills, restarts, workers int) {
	if os.Getenv("INTEROP_FAULT_SCALE") == "small" {
		return 60, 3, 3, 4
	}
	return 1000, 20, 20, 6
}

// TestRealCodexNoReplayUnderFaults sends through the whole runtime stack to
// the real codex app-server while the transport cuts connections after the
// request left, drops answers and holds them until the caller gave up
// (without restarting codex), while the codex process is killed mid-send,
// and while the runtime itself is killed mid-send and restarted. Every send
// carries a unique text; the fake model and the transport count each text.
// No text may reach codex or the model twice, and every faulted send must
// end delivery_unknown or rejected (or, after a runtime restart, completed
// when codex's history shows its result).
//
// Faults are conditions, not timings: a dropped or held answer makes the
// caller give up the moment the request was written (its context is
// cancelled), and a held answer is delivered after the send returned. The
// loops run until the planned number of faults was injected (a planned
// fault whose request never left is not counted), bounded by attempts.
func TestRealCodexNoReplayUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("long fault test")
	}
	program := realpeers.Require(t, realpeers.Codex)
	nTransport, nKills, nRestarts, workers := faultSizes()
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("ok"))
	env := realpeers.CodexEnv(t, fm.BaseURL())
	project := filepath.Join(env.Root(), "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(env.Root(), "interop.db")

	var planMu sync.Mutex
	plan := map[string]faultKind{}
	giveUp := map[string]context.CancelFunc{}
	setPlan := func(text string, k faultKind, cancel context.CancelFunc) {
		planMu.Lock()
		plan[text], giveUp[text] = k, cancel
		planMu.Unlock()
	}
	hub := newFaultHub(func(text string) faultKind { planMu.Lock(); defer planMu.Unlock(); return plan[text] },
		func(text string, _ faultKind) {
			planMu.Lock()
			cancel := giveUp[text]
			planMu.Unlock()
			if cancel != nil {
				cancel()
			}
		})
	defer hub.Close()

	s, err := buildStack(stackConfig{dbPath: dbPath, program: program, env: env.Environ(), dir: project, mutate: func(c *codex.Config) {
		c.Dial = hub.Dial
		c.StartTimeout = 2 * time.Minute
		c.RetryAfter = 50 * time.Millisecond
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()

	type sent struct {
		text    string
		key     string
		faulted bool
	}
	var sentMu sync.Mutex
	var all []sent
	record := func(x sent) { sentMu.Lock(); all = append(all, x); sentMu.Unlock() }

	// One thread per worker, each with one clean first turn (so it has a
	// rollout and can be resumed by a restarted codex or runtime).
	threads := make([]string, workers)
	for i := range threads {
		sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: project})
		if err != nil {
			t.Fatal(err)
		}
		threads[i] = sess.NativeID
		text := fmt.Sprintf("warmup-%d-%s", i, sess.NativeID)
		res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: text, IdempotencyKey: text})
		if err != nil {
			t.Fatal(err)
		}
		record(sent{text: text, key: text})
		if op := waitOp(t, s, res.Operation.ID); op.Status != providers.StatusCompleted {
			t.Fatalf("warm-up op = %+v %s", op, op.Detail)
		}
	}
	startProcs := hub.processes()

	// Phase A: transport faults, without restarting codex: a third cut the
	// connection after the request left, a third drop the answer and a
	// third hold it until the caller gave up.
	start := time.Now()
	var next atomic.Int64
	for _, kind := range []faultKind{faultCut, faultDrop, faultDelay} {
		goal := hub.faults(kind) + nTransport/3 + 1
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for hub.faults(kind) < goal {
					i := int(next.Add(1))
					if i > 10*nTransport { // a safety bound, far above what is needed
						t.Errorf("%d sends did not inject %d faults", i, nTransport)
						return
					}
					text := fmt.Sprintf("fault-%s-%04d", kind, i)
					sendCtx, cancel := context.WithCancel(ctx)
					setPlan(text, kind, cancel)
					_, err := s.del.Send(sendCtx, delivery.SendRequest{Provider: "codex", NativeID: threads[w], Text: text, IdempotencyKey: text})
					cancel()
					if kind == faultDelay {
						hub.release(text)
					}
					record(sent{text: text, key: text, faulted: hub.count(text) > 0})
					if err != nil && !isDeliveryUnknown(err) {
						t.Errorf("send %s: %v", text, err)
					}
				}
			}()
		}
		wg.Wait()
	}
	if hub.processes() != startProcs {
		t.Errorf("codex restarted during transport faults: %d processes, want %d", hub.processes(), startProcs)
	}
	transportFaults := hub.faults(faultCut) + hub.faults(faultDrop) + hub.faults(faultDelay)
	t.Logf("phase A: %d transport faults (cut %d, drop %d, delay %d) in %v over %d sends, one codex process",
		transportFaults, hub.faults(faultCut), hub.faults(faultDrop), hub.faults(faultDelay), time.Since(start).Round(time.Millisecond), next.Load())

	// Phase B: kill the codex process group right after turn/start left.
	start = time.Now()
	for i := 0; hub.faults(faultKill) < nKills; i++ {
		if i >= 3*nKills {
			t.Fatalf("%d sends injected only %d of %d kills", i, hub.faults(faultKill), nKills)
		}
		// Kill a live process each time: wait for the restart that
		// follows the previous kill.
		waitLive(t, s.codex, hub)
		text := fmt.Sprintf("kill-%02d", i)
		setPlan(text, faultKill, nil)
		_, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: threads[i%workers], Text: text, IdempotencyKey: text})
		record(sent{text: text, key: text, faulted: hub.count(text) > 0})
		if err != nil && !isDeliveryUnknown(err) {
			t.Errorf("send %s: %v", text, err)
		}
	}
	// Codex is back: a clean send completes.
	waitLive(t, s.codex, hub)
	clean := "after-kills"
	res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: threads[0], Text: clean, IdempotencyKey: clean})
	if err != nil {
		t.Fatalf("send after kills: %v", err)
	}
	record(sent{text: clean, key: clean})
	if op := waitOp(t, s, res.Operation.ID); op.Status != providers.StatusCompleted {
		t.Errorf("send after kills = %+v %s", op, op.Detail)
	}
	restartedEvents, err := s.st.Client().SessionEvent.Query().Where(sessionevent.Type(providers.EventProviderRestarted)).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("phase B: %d codex kills mid-send, %d codex processes in all, %d provider.restarted events, in %v",
		hub.faults(faultKill), hub.processes(), restartedEvents, time.Since(start).Round(time.Millisecond))
	if restartedEvents < hub.faults(faultKill) {
		t.Errorf("provider.restarted events = %d, want >= %d (one per kill)", restartedEvents, hub.faults(faultKill))
	}

	// Phase C: the runtime itself is killed mid-send and restarted; the
	// restarted runtime settles what the dead one left open, at once (its
	// pid is gone), from codex's own history.
	start = time.Now()
	var childPIDs []int
	points := []string{"resume", "turn/start", "answer"}
	settled := map[providers.ReceiptStatus]int{}
	for i := 0; i < nRestarts; i++ {
		text := fmt.Sprintf("runtime-kill-%02d", i)
		point := points[i%len(points)]
		pid := runChild(t, childSpec{
			DB: dbPath, Program: program, Env: env.Environ(), Dir: project,
			Thread: threads[i%workers], Text: text, Key: text, KillAt: point,
		})
		if pid <= 0 {
			t.Errorf("runtime child %d started no codex app-server", i)
		}
		childPIDs = append(childPIDs, pid)
		record(sent{text: text, key: text, faulted: true})
		rs, err := buildStack(stackConfig{dbPath: dbPath, program: program, env: env.Environ(), dir: project})
		if err != nil {
			t.Fatal(err)
		}
		changed, err := rs.del.Settle(ctx)
		rs.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got *delivery.Operation
		for _, op := range changed {
			if op.IdempotencyKey == text {
				got = &op
			}
		}
		switch {
		case got == nil:
			op, _ := s.del.ByKey(ctx, text)
			t.Errorf("restart %d (%s): operation not settled: %+v %s", i, point, op, op.Detail)
		case got.Status == providers.StatusQueued:
			t.Errorf("restart %d (%s): settled as queued: %s", i, point, got.Detail)
		case point == "resume" && got.Status != providers.StatusDeliveryUnknown:
			// Killed before turn/start was written: codex has no such turn.
			t.Errorf("restart %d (%s): %s, want delivery_unknown: %s", i, point, got.Status, got.Detail)
		default:
			settled[got.Status]++
		}
	}
	t.Logf("phase C: %d runtime kills mid-send + restarts in %v; settled %v", nRestarts, time.Since(start).Round(time.Millisecond), settled)
	// The orphaned app-servers of the killed runtimes exit on their own.
	for _, pid := range childPIDs {
		waitGone(t, pid)
	}

	// Verdict: no text reached codex or the model twice; faulted sends
	// ended delivery_unknown or rejected, or completed where codex's own
	// report or history showed the result.
	if err := s.del.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	statuses := map[providers.ReceiptStatus]int{}
	rejected := map[string]int{}
	duplicates := 0
	for _, x := range all {
		if n := hub.count(x.text); n > 1 {
			duplicates++
			t.Errorf("%s written to codex %d times", x.text, n)
		}
		if n := fm.Count(x.text); n > 1 {
			duplicates++
			t.Errorf("%s reached the model %d times", x.text, n)
		}
		op, err := s.del.ByKey(ctx, x.key)
		if err != nil {
			t.Errorf("%s: %v", x.text, err)
			continue
		}
		statuses[op.Status]++
		if op.Status == providers.StatusRejected {
			r := op.Reason()
			if len(r) > 90 {
				r = r[:90]
			}
			rejected[r]++
		}
		if op.Status == providers.StatusQueued {
			t.Errorf("%s left queued: %s", x.text, op.Detail)
		}
		// A faulted send may still end completed, but only on an observed
		// result: codex's own completion arriving for that turn, or its
		// history read at settlement. Never on the transport's word alone.
		if x.faulted && op.Status == providers.StatusCompleted && op.ProviderState != "outcome_observed" && op.ProviderState != "reconciled" {
			t.Errorf("faulted send %s ended completed without an observed result (%s): %s", x.text, op.ProviderState, op.Detail)
		}
	}
	t.Logf("%d sends: %v; model requests %d; duplicate sends %d", len(all), statuses, fm.Total(), duplicates)
	for r, n := range rejected {
		t.Logf("rejected (certainly not sent, or refused) %d× %s", n, r)
	}
	if transportFaults < nTransport || hub.faults(faultKill) < nKills {
		t.Errorf("faults injected: transport %d (want >= %d), kills %d (want >= %d)", transportFaults, nTransport, hub.faults(faultKill), nKills)
	}
}

// waitLive waits until the adapter runs an app-server that the hub did not
// kill.
func waitLive(t *testing.T, a *codex.Adapter, hub *faultHub) {
	t.Helper()
	wait.For(t, "the codex app-server to come back", wait.Process, func() bool {
		pid := a.PID()
		return pid != 0 && hub.alive(pid)
	})
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	if pid <= 0 {
		return
	}
	if wait.Until(wait.Process, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }) {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	t.Errorf("codex app-server %d outlived its killed runtime by %v", pid, wait.Process)
}

// --- the runtime child ---

const childDBEnv = "FAULT_CHILD_SPEC"

type childSpec struct {
	DB      string
	Program string
	Env     []string
	Dir     string
	Thread  string
	Text    string
	Key     string
	KillAt  string // "resume", "turn/start" (after the write) or "answer" (before the answer is handled)
	PIDFile string
}

// runChild runs one runtime process that sends spec.Text and is SIGKILLed
// at spec.KillAt. It returns the pid of the app-server it started.
func runChild(t *testing.T, spec childSpec) int {
	t.Helper()
	spec.PIDFile = filepath.Join(t.TempDir(), "codex.pid")
	raw, _ := json.Marshal(spec)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childDBEnv+"="+string(raw))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("runtime child did not die by SIGKILL: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(spec.PIDFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// runRuntimeChild is the child's main: build the stack, send, and die at
// the chosen point.
func runRuntimeChild() int {
	var spec childSpec
	if err := json.Unmarshal([]byte(os.Getenv(childDBEnv)), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	die := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	dial := func(ctx context.Context, ps codex.ProcessSpec) (*codex.Link, error) {
		link, err := codex.StartProcess(ctx, ps)
		if err != nil {
			return nil, err
		}
		_ = os.WriteFile(spec.PIDFile, []byte(strconv.Itoa(link.PID)), 0o600)
		link.ReadWriteCloser = &killer{rwc: link.ReadWriteCloser, at: spec.KillAt, die: die}
		return link, nil
	}
	s, err := buildStack(stackConfig{dbPath: spec.DB, program: spec.Program, env: spec.Env, dir: spec.Dir, mutate: func(c *codex.Config) {
		c.Dial = dial
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = s.del.Send(context.Background(), delivery.SendRequest{Provider: "codex", NativeID: spec.Thread, Text: spec.Text, IdempotencyKey: spec.Key})
	fmt.Fprintf(os.Stderr, "runtime child survived its send (%v)\n", err)
	return 3
}

// killer kills the runtime when the chosen message passes.
type killer struct {
	rwc interface {
		Read([]byte) (int, error)
		Write([]byte) (int, error)
		Close() error
	}
	at      string
	die     func()
	started atomic.Bool
}

func (k *killer) Write(p []byte) (int, error) {
	s := string(p)
	if k.at == "resume" && strings.Contains(s, `"thread/resume"`) {
		k.die()
	}
	turnStart := strings.Contains(s, `"turn/start"`)
	if turnStart {
		// Before the write: codex may answer, and the reader see the
		// answer, before Write returns (the child then outlived its send).
		k.started.Store(true)
	}
	n, err := k.rwc.Write(p)
	if turnStart && k.at == "turn/start" {
		k.die()
	}
	return n, err
}

func (k *killer) Read(p []byte) (int, error) {
	n, err := k.rwc.Read(p)
	if k.at == "answer" && k.started.Load() && strings.Contains(string(p[:n]), `"turn":{`) {
		k.die()
	}
	return n, err
}

func (k *killer) Close() error { return k.rwc.Close() }
