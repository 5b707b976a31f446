package delivery

import (
	"context"
	"errors"
	"testing"
	"time"

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
