package opencode

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// outcome is one Host.ReportOutcome call.
type outcome struct {
	nativeID, ref string
	status        providers.ReceiptStatus
	reason        string
	turn          *providers.TurnResult
}

// recordingHost records outcomes and lets tests wait for them.
type recordingHost struct {
	mu       sync.Mutex
	outcomes []outcome
	changed  chan struct{}
}

func newHost() *recordingHost { return &recordingHost{changed: make(chan struct{})} }

func (h *recordingHost) ReportOutcome(_ providers.ID, nativeID, ref string, o providers.Outcome) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outcomes = append(h.outcomes, outcome{nativeID, ref, o.Status, o.Reason, o.Turn})
	close(h.changed)
	h.changed = make(chan struct{})
}

// wait returns the outcome reported for ref, failing the test after d.
func (h *recordingHost) wait(t *testing.T, ref string, d time.Duration) outcome {
	t.Helper()
	var got outcome
	wait.For(t, "an outcome for "+ref, d, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, o := range h.outcomes {
			if o.ref == ref {
				got = o
				return true
			}
		}
		return false
	})
	return got
}

// count returns how many outcomes were reported for ref.
func (h *recordingHost) count(ref string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, o := range h.outcomes {
		if o.ref == ref {
			n++
		}
	}
	return n
}

// waitEvent reads ch until an event satisfies pred, failing after d.
func waitEvent(t *testing.T, ch <-chan providers.NativeEvent, d time.Duration, pred func(providers.NativeEvent) bool) providers.NativeEvent {
	t.Helper()
	var got providers.NativeEvent
	wait.For(t, "a matching event", d, func() bool {
		for {
			select {
			case ev, ok := <-ch:
				if !ok {
					t.Fatal("event channel closed while waiting")
				}
				if pred(ev) {
					got = ev
					return true
				}
			default:
				return false
			}
		}
	})
	return got
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
