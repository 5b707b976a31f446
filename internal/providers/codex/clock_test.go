package codex

import (
	"context"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestExitSuffixWaitsOnTheAdaptersClock: how long the adapter waits for a
// dying app-server's exit reason is measured on the injected clock, so a
// test drives it without sleeping.
func TestExitSuffixWaitsOnTheAdaptersClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	trap := clock.Trap().NewTimer("codex", "exit-reason")
	defer trap.Close()
	a := New(Config{Clock: clock, LookupEnv: func(string) (string, bool) { return "", false }})
	exited := make(chan struct{})
	link := &Link{Exited: exited, ExitReason: func() string { return "exited with status 3" }}
	got := make(chan string, 1)

	// Still running: the wait ends when the clock passes 500 ms.
	go func() { got <- a.exitSuffix(link) }()
	call := trap.MustWait(ctx)
	if call.Duration != 500*time.Millisecond {
		t.Fatalf("exit wait armed for %v, want 500ms", call.Duration)
	}
	call.MustRelease(ctx)
	clock.Advance(500 * time.Millisecond).MustWait(ctx)
	if s := wait.Recv(t, "the running process described", wait.InProcess, got); s != "" {
		t.Fatalf("running process described as %q", s)
	}

	// Exited: the reason is reported without the clock moving.
	close(exited)
	go func() { got <- a.exitSuffix(link) }()
	trap.MustWait(ctx).MustRelease(ctx)
	if s := wait.Recv(t, "the exited process described", wait.InProcess, got); s != " (process exited with status 3)" {
		t.Fatalf("exited process described as %q", s)
	}
}
