package freebuff

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
)

// TestAdapterDesktopVerdicts: each Desktop turn's outcome carries the
// verdict derived from what its frames showed, and the only usage the
// Desktop reports (the finish frame's costUsd); no token count is made up.
func TestAdapterDesktopVerdicts(t *testing.T) {
	f := newDesktopFixture(t, freebuffsim.Options{}, true)
	host := newFakeHost()
	a := NewAdapter(f.svc, host)
	t.Cleanup(func() { a.Close() })
	ctx := context.Background()
	tid := f.threads[0]
	// The verdict comes from the frames the adapter's stream saw: a first
	// turn's outcome (which only that stream reports) shows it connected.
	subscribe(t, a, tid)
	if _, err := a.Send(ctx, tid, "connect", providers.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	host.next(t)
	turnJSON := func(r *providers.TurnResult) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name string
		mode freebuffsim.TurnMode
		stop bool
		want string
	}{
		{"answered", freebuffsim.TurnComplete, false, `{"verdict":"answered","usage":{"costUsd":0}}`},
		{"empty", freebuffsim.TurnEmpty, false, `{"verdict":"empty"}`},
		{"failed", freebuffsim.TurnFail, false, `{"verdict":"failed","error":"model overloaded"}`},
		// The Desktop ends a stopped turn "closed", after its text: the
		// stop the adapter sent makes it aborted, not answered.
		{"aborted", freebuffsim.TurnHold, true, `{"verdict":"aborted"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.sim.SetTurnMode(tc.mode)
			var running <-chan providers.NativeEvent
			if tc.stop {
				running = subscribe(t, a, tid)
			}
			rec, err := a.Send(ctx, tid, "verdict "+tc.name, providers.SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.stop {
				waitRunning(t, running)
				if _, err := a.Cancel(ctx, tid); err != nil {
					t.Fatal(err)
				}
			}
			o := host.next(t)
			if o.ref != rec.Ref {
				t.Fatalf("outcome of %s, want %s", o.ref, rec.Ref)
			}
			if got := turnJSON(o.turn); got != tc.want {
				t.Errorf("turn %s, want %s", got, tc.want)
			}
		})
	}
}

// subscribe opens a subscription to tid's events for the test's length.
func subscribe(t *testing.T, a *Adapter, tid string) <-chan providers.NativeEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	events, err := a.Subscribe(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// waitRunning waits until the adapter's event stream showed the turn's
// tool call (the stop is then of a turn the adapter knows runs).
func waitRunning(t *testing.T, events <-chan providers.NativeEvent) {
	t.Helper()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("subscription closed before the turn ran")
			}
			var pe ProgressEvent
			if json.Unmarshal(ev.Data, &pe) == nil && pe.Kind == core.KindToolStart {
				return
			}
		case <-guard(t).Done():
			t.Fatal("the turn was not seen running")
		}
	}
}
