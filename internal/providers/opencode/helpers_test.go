package opencode

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
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
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		for _, o := range h.outcomes {
			if o.ref == ref {
				h.mu.Unlock()
				return o
			}
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no outcome for %s within %s", ref, d)
		}
	}
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
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("event channel closed while waiting")
			}
			if pred(ev) {
				return ev
			}
		case <-deadline.C:
			t.Fatalf("no matching event within %s", d)
		}
	}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
