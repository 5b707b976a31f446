package delivery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// waitOpts are the options a process that owns nothing waits with, on e's
// clock and fake process table, as another process on host h.
func waitOpts(e *env) Options {
	return Options{Clock: e.clock, Process: &Process{Host: "h", Boot: "b1", PID: int(1000 + nextPID.Add(1))},
		Alive: table.alive, WatchExit: table.watch}
}

func startWait(e *env) (context.CancelFunc, chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- WaitForWork(ctx, e.st, waitOpts(e)) }()
	return cancel, done
}

func TestWaitForWorkOnAnUnsweptStoreReturnsAtOnce(t *testing.T) {
	e := markEnv(t, "")
	if err := WaitForWork(context.Background(), e.st, waitOpts(e)); err != nil {
		t.Fatal(err)
	}
}

// TestWaitForWorkWaitsWhileQuiet: beside a live marked owner it judges
// the marks again at every tick and goes on waiting; once the mark is
// older than the owner timeout a tick ends the wait.
func TestWaitForWorkWaitsWhileQuiet(t *testing.T) {
	a := markEnv(t, "", func(o *Options) { o.HeartbeatEvery = 10 * time.Hour })
	release, done := inflight(t, a, "quiet")
	defer func() { close(release); <-done }()
	if _, err := a.svc.pass(context.Background()); err != nil { // sweeps
		t.Fatal(err)
	}
	judged := a.clock.Trap().Now("delivery", "marks")
	defer judged.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	waited := make(chan error, 1)
	opts := waitOpts(a)
	opts.OwnerTimeout = time.Hour
	go func() { waited <- WaitForWork(ctx, a.st, opts) }()
	for tick := 0; tick < 3; tick++ { // each judgement is followed by the next one
		judged.MustWait(ctx).MustRelease(ctx)
		advanceThrough(t, a.clock, DefaultSettleEvery)
	}
	judged.MustWait(ctx).MustRelease(ctx)
	advanceThrough(t, a.clock, time.Hour) // no heartbeat renewed the mark
	judged.MustWait(ctx).MustRelease(ctx)
	if err := wait.Recv(t, "the wait to end on a stale mark", wait.InProcess, waited); err != nil {
		t.Fatal(err)
	}
}

// TestWaitForWorkEndsWhenAMarkedOwnerExits: a live marked owner on this
// host is watched, and its exit ends the wait with no tick.
func TestWaitForWorkEndsWhenAMarkedOwnerExits(t *testing.T) {
	a := markEnv(t, "")
	release, done := inflight(t, a, "exits")
	defer func() { close(release); <-done }()
	if _, err := a.svc.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := table.watchCount(a.pid())
	cancel, waited := startWait(a)
	defer cancel()
	wait.For(t, "the marked owner to be watched", wait.InProcess, func() bool { return table.watchCount(a.pid()) > before })
	table.kill(a.pid())
	if err := wait.Recv(t, "the wait to end when the owner exits", wait.InProcess, waited); err != nil {
		t.Fatal(err)
	}
}

func TestWaitForWorkEndsWithItsContext(t *testing.T) {
	e := markEnv(t, "")
	if _, err := e.svc.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel, waited := startWait(e)
	cancel()
	if err := wait.Recv(t, "the wait to end with its context", wait.InProcess, waited); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestWaitForWorkOnANewStoreWaitsUntilAMarkMayBeGone: a store that had no
// schema when it was opened holds nothing from before, so marks no pass
// has swept do not end the wait; a mark of a process that may be gone
// still does, and the store file stays empty until then.
func TestWaitForWorkOnANewStoreWaitsUntilAMarkMayBeGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	st, err := store.Open(context.Background(), path, store.WithLazyConnect())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := testclock.At(t, time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	judged := clock.Trap().Now("delivery", "marks")
	defer judged.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	opts := Options{Clock: clock, Process: &Process{Host: "h", Boot: "b1", PID: int(1000 + nextPID.Add(1))},
		Alive: table.alive, WatchExit: table.watch}
	waited := make(chan error, 1)
	go func() { waited <- WaitForWork(ctx, st, opts) }()
	for tick := 0; tick < 2; tick++ {
		judged.MustWait(ctx).MustRelease(ctx)
		advanceThrough(t, clock, DefaultSettleEvery)
	}
	select {
	case err := <-waited:
		t.Fatalf("the wait on a new store ended with no mark: %v", err)
	default:
	}
	gone := Process{ID: "rt_gone", Host: "h", Boot: "b1", PID: int(1000 + nextPID.Add(1))}
	if err := (&marks{dir: path + marksSuffix}).put(gone, true, clock.Now()); err != nil {
		t.Fatal(err)
	}
	judged.MustWait(ctx).MustRelease(ctx)
	if err := wait.Recv(t, "the wait to end on a stopped mark", wait.InProcess, waited); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Fatalf("the store file while waiting: %v, %v; want it empty", info, err)
	}
}
