package startonce_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agent-interop/runtime/internal/providers/kit/startonce"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestCallerThatStopsWaitingLeavesTheStart: the call that began a start
// stops waiting (its ctx ends); it is told the program is still starting,
// the start goes on, and the next call joins it: one start for two calls.
// The test runs in a synctest bubble so that the second call is known to
// be waiting on the start before the start is let finish (a call that
// comes after a start ended begins another, by design).
func TestCallerThatStopsWaitingLeavesTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startonce.New[int]("prog", testclock.At(t, time.Unix(0, 0)), time.Minute, "test", "start")
		defer s.Close()
		var starts atomic.Int32
		release := make(chan struct{})
		start := func(ctx context.Context) (int, error) {
			starts.Add(1)
			select {
			case <-release:
				return 42, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		first, cancelFirst := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := s.Do(first, start)
			got <- err
		}()
		synctest.Wait() // the start runs, blocked on release
		if n := starts.Load(); n != 1 {
			t.Fatalf("%d starts after the first call, want 1", n)
		}
		cancelFirst()
		err := <-got
		var still *startonce.StillStartingError
		if !errors.As(err, &still) || !errors.Is(err, context.Canceled) {
			t.Fatalf("first call: %v, want a StillStartingError wrapping context.Canceled", err)
		}
		type result struct {
			v   int
			err error
		}
		second := make(chan result, 1)
		go func() {
			v, err := s.Do(context.Background(), start)
			second <- result{v, err}
		}()
		synctest.Wait() // the second call waits on the start under way
		close(release)
		r := <-second
		if r.err != nil || r.v != 42 {
			t.Fatalf("second call: %d, %v; want 42, nil", r.v, r.err)
		}
		if n := starts.Load(); n != 1 {
			t.Fatalf("%d starts, want the second call to join the first one", n)
		}
	})
}

// TestStartIsBoundedOnTheClock: the start's own bound (on the injected
// clock) ends it, whatever the callers' contexts.
func TestStartIsBoundedOnTheClock(t *testing.T) {
	ctx := context.Background()
	clock := testclock.At(t, time.Unix(0, 0))
	trap := clock.Trap().AfterFunc("test", "start")
	defer trap.Close()
	s := startonce.New[int]("prog", clock, time.Minute, "test", "start")
	defer s.Close()
	got := make(chan error, 1)
	go func() {
		_, err := s.Do(ctx, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		got <- err
	}()
	trap.MustWait(ctx).MustRelease(ctx)
	clock.Advance(time.Minute).MustWait(ctx)
	if err := wait.Recv(t, "the call's answer", wait.InProcess, got); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the start's deadline", err)
	}
}

// TestCloseEndsTheStart: Close cancels the start under way, waits for it,
// and a later call fails without starting anything.
func TestCloseEndsTheStart(t *testing.T) {
	s := startonce.New[int]("prog", testclock.At(t, time.Unix(0, 0)), 0)
	var starts atomic.Int32
	ended := make(chan struct{})
	go func() {
		_, _ = s.Do(context.Background(), func(ctx context.Context) (int, error) {
			starts.Add(1)
			<-ctx.Done()
			close(ended)
			return 0, ctx.Err()
		})
	}()
	wait.For(t, "the start begins", wait.InProcess, func() bool { return starts.Load() == 1 })
	s.Close()
	select {
	case <-ended:
	default:
		t.Fatal("Close returned before the start ended")
	}
	_, err := s.Do(context.Background(), func(context.Context) (int, error) { starts.Add(1); return 1, nil })
	if !errors.Is(err, startonce.ErrClosed) || starts.Load() != 1 {
		t.Fatalf("after Close: %v with %d starts, want ErrClosed and no new start", err, starts.Load())
	}
}

// TestStartingReportsTheStartUnderWay: Starting is true from the start's
// beginning to its end only.
func TestStartingReportsTheStartUnderWay(t *testing.T) {
	s := startonce.New[int]("prog", testclock.At(t, time.Unix(0, 0)), time.Minute, "test", "start")
	defer s.Close()
	var none *startonce.Starter[int]
	if s.Starting() || none.Starting() {
		t.Fatal("starting before any start")
	}
	release := make(chan struct{})
	began := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Do(context.Background(), func(context.Context) (int, error) {
			close(began)
			<-release
			return 1, nil
		})
		done <- err
	}()
	<-began
	if !s.Starting() {
		t.Fatal("not starting while the start runs")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.Starting() {
		t.Fatal("still starting after the start ended")
	}
}
