package events

import (
	"context"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestReadWaitRunsOnTheInjectedClock: a read that waits 30 s for new
// events ends when the log's clock passes its deadline, not the wall
// clock, so it is tested in milliseconds; progress is reported on the way.
func TestReadWaitRunsOnTheInjectedClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	f := newFakeStreams()
	h := NewHub(NewLog(teststore.OpenAt(t, t.TempDir()+"/interop.db"), LogOptions{Clock: clock}),
		HubOptions{Open: f.open, PollInterval: time.Hour, ProgressInterval: 10 * time.Second})
	t.Cleanup(func() { h.Close() })
	deadline := clock.Trap().NewTimer("events", "read deadline")
	defer deadline.Close()
	type result struct {
		page Page
		err  error
	}
	reports := make(chan time.Duration, 16)
	done := make(chan result, 1)
	go func() {
		p, err := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "t1", Timeout: 30 * time.Second,
			Progress: func(w, _ time.Duration) { reports <- w }})
		done <- result{p, err}
	}()
	waitOpen(t, f)
	call, err := deadline.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if call.Duration != 30*time.Second {
		t.Fatalf("read deadline armed for %s, want 30s", call.Duration)
	}
	call.MustRelease(ctx)
	// Each progress tick is reported before the clock moves on: the read
	// handles one tick at a time, and at 30 s the deadline and a tick come
	// due together, so only the first two reports are certain.
	var waited []time.Duration
	for i := range 3 {
		clock.Advance(10 * time.Second).MustWait(ctx)
		if i == 2 {
			break
		}
		select {
		case w := <-reports:
			waited = append(waited, w)
		case <-ctx.Done():
			t.Fatalf("no progress reported after %ds on the clock", 10*(i+1))
		}
	}
	select {
	case r := <-done:
		if r.err != nil || r.page.WaitEnded != WaitTimeout {
			t.Fatalf("read = %+v, %v; want WaitEnded %q", r.page, r.err, WaitTimeout)
		}
	case <-ctx.Done():
		t.Fatal("the read did not end when the clock passed its deadline")
	}
	for len(reports) > 0 {
		waited = append(waited, <-reports)
	}
	if len(waited) < 2 || waited[0] != 10*time.Second || waited[1] != 20*time.Second || waited[len(waited)-1] > 30*time.Second {
		t.Errorf("progress reported %v, want 10s, 20s and at most the 30s bound", waited)
	}
}
