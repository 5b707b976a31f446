package codex

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// gatedDial starts the simulated app-server only once gate is closed (an
// app-server slow to start); dials counts the starts begun.
func gatedDial(gate <-chan struct{}, dials *atomic.Int32) Dialer {
	return func(ctx context.Context, spec ProcessSpec) (*Link, error) {
		dials.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return StartProcess(ctx, spec)
	}
}

// TestSlowStartOutlivesTheCallThatBegunIt: a listing that stops waiting
// for a slow app-server start is told codex is still starting; the start
// goes on (it is not killed with the call) and the next listing joins it:
// one program start for two calls. The start's bound is armed on the
// adapter's clock.
func TestSlowStartOutlivesTheCallThatBegunIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	trap := clock.Trap().AfterFunc("codex", "start")
	defer trap.Close()
	gate := make(chan struct{})
	var dials atomic.Int32
	a, _ := simAdapter(t, newRecHost(), func(c *Config) {
		c.Clock, c.StartTimeout, c.Dial = clock, time.Minute, gatedDial(gate, &dials)
	})

	first, cancelFirst := context.WithCancel(ctx)
	failed := make(chan error, 1)
	go func() {
		_, err := a.ListSessions(first)
		failed <- err
	}()
	if call := trap.MustWait(ctx); call.Duration != time.Minute {
		t.Fatalf("start bounded by %v, want StartTimeout (1m)", call.Duration)
	} else {
		call.MustRelease(ctx)
	}
	wait.For(t, "the app-server start begins", wait.InProcess, func() bool { return dials.Load() == 1 })
	cancelFirst()
	if err := wait.Recv(t, "the abandoned listing's answer", wait.InProcess, failed); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "codex is still starting") {
		t.Fatalf("the abandoned listing returned %v, want codex still starting", err)
	}

	close(gate)
	if _, err := a.ListSessions(ctx); err != nil {
		t.Fatalf("the next listing: %v", err)
	}
	if n := dials.Load(); n != 1 || a.PID() == 0 {
		t.Fatalf("app-server started %d times (pid %d), want the next listing to join the one start", n, a.PID())
	}
}

// TestStartEndsAtItsOwnBound: a start no caller waits for any more still
// ends at StartTimeout on the adapter's clock, and Close ends one under way.
func TestStartEndsAtItsOwnBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	trap := clock.Trap().AfterFunc("codex", "start")
	defer trap.Close()
	var dials atomic.Int32
	a, _ := simAdapter(t, newRecHost(), func(c *Config) {
		c.Clock, c.StartTimeout, c.Dial = clock, time.Minute, gatedDial(make(chan struct{}), &dials)
	})

	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	probed := make(chan error, 1)
	go func() { probed <- a.Probe(short) }()
	trap.MustWait(ctx).MustRelease(ctx)
	if err := wait.Recv(t, "the probe's answer", wait.InProcess, probed); err == nil || !strings.Contains(err.Error(), "still starting") {
		t.Fatalf("probe with an ended context: %v, want still starting", err)
	}
	clock.Advance(time.Minute).MustWait(ctx)
	wait.For(t, "the start ends at its bound", wait.InProcess, func() bool {
		err := a.Probe(ctx)
		return err != nil && errors.Is(err, context.DeadlineExceeded)
	})

	// A new start (RetryAfter is 1 ms) is ended by Close.
	clock.Advance(time.Millisecond).MustWait(ctx)
	go func() { _ = a.Probe(context.WithoutCancel(ctx)) }()
	trap.MustWait(ctx).MustRelease(ctx)
	wait.For(t, "the second start begins", wait.InProcess, func() bool { return dials.Load() == 2 })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Probe(ctx); !errors.Is(err, errAdapterClosed) {
		t.Fatalf("probe after Close: %v, want the adapter closed", err)
	}
}
