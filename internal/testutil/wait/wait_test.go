package wait

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

type recordingTB struct {
	testing.TB
	failed string
}

func (r *recordingTB) Helper()                        {}
func (r *recordingTB) Fatalf(format string, a ...any) { r.failed = fmt.Sprintf(format, a...) }

func TestForWaitsUntilTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	rec := &recordingTB{TB: t}
	For(rec, "the third poll", InProcess, func() bool { return n.Add(1) >= 3 })
	if rec.failed != "" || n.Load() != 3 {
		t.Fatalf("failed %q after %d polls", rec.failed, n.Load())
	}
}

func TestForNamesWhatItWaitedFor(t *testing.T) {
	rec := &recordingTB{TB: t}
	For(rec, "the impossible", 20*time.Millisecond, func() bool { return false })
	if rec.failed != "timed out after 20ms waiting for the impossible" {
		t.Fatalf("failed %q", rec.failed)
	}
}

func TestRecvReturnsTheValueOrNamesWhatItWaitedFor(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	rec := &recordingTB{TB: t}
	if got := Recv(rec, "seven", InProcess, ch); got != 7 || rec.failed != "" {
		t.Fatalf("Recv = %d, failed %q", got, rec.failed)
	}
	Recv(rec, "nothing", 20*time.Millisecond, ch)
	if rec.failed != "timed out after 20ms waiting for nothing" {
		t.Fatalf("failed %q", rec.failed)
	}
	close(ch)
	if _, ok := RecvWithin(InProcess, ch); !ok {
		t.Fatal("a closed channel did not count as received")
	}
}
