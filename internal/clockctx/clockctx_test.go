package clockctx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/quartz"
)

func TestWithTimeout(t *testing.T) {
	ctx := context.Background()
	clock := quartz.NewMock(t)
	tctx, cancel := WithTimeout(ctx, clock, time.Second)
	defer cancel()
	if _, ok := tctx.Deadline(); ok {
		t.Error("the clock's deadline is reported by Deadline")
	}
	clock.Advance(999 * time.Millisecond).MustWait(ctx)
	if err := tctx.Err(); err != nil {
		t.Fatalf("before the deadline: %v", err)
	}
	clock.Advance(time.Millisecond).MustWait(ctx)
	<-tctx.Done()
	if err := tctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the deadline: %v, want DeadlineExceeded", err)
	}
}

func TestCancelAndParent(t *testing.T) {
	clock := quartz.NewMock(t)
	tctx, cancel := WithTimeout(context.Background(), clock, time.Second)
	cancel()
	if err := tctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	parent, pcancel := context.WithCancel(context.Background())
	tctx, cancel = WithTimeout(parent, clock, time.Second)
	defer cancel()
	pcancel()
	<-tctx.Done()
	if err := tctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("parent cancelled: %v", err)
	}
}
