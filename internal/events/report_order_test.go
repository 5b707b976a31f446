package events

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestReportedEventFollowsTheStreamsEarlierEvents: an event reported out of
// band (the interop.operation event of a turn's verdict) is stored after
// every event the session's provider stream delivered before the report,
// including those still queued: a read that ends on the verdict has seen
// the turn's last update. Many rounds, because without the ordering the
// report overtakes a queued update only some of the time.
func TestReportedEventFollowsTheStreamsEarlierEvents(t *testing.T) {
	st := teststore.Open(t)
	f := newFakeStreams()
	h := newHub(t, st, f, LogOptions{})
	ctx := context.Background()
	if err := h.Watch(ctx, providers.Codex, "s1", time.Minute); err != nil {
		t.Fatal(err)
	}
	ch := waitOpen(t, f)
	const rounds = 60
	for i := range rounds {
		ch <- ev("update", i)
		ch <- ev("update", i)
		h.ReportEvent(providers.Codex, providers.NativeEvent{NativeID: "s1", Type: "interop.operation",
			Timestamp: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC), Data: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	// Every event is stored once ReportEvent returned: read them all.
	var got []Event
	req := ReadRequest{Provider: providers.Codex, NativeID: "s1", Limit: 100}
	for {
		p, err := h.Read(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Events...)
		if len(p.Events) == 0 || p.Next == req.AfterSequence {
			break
		}
		req.AfterSequence = p.Next
	}
	if len(got) != 3*rounds {
		t.Fatalf("stored %d events, want %d", len(got), 3*rounds)
	}
	for i := range rounds {
		want := fmt.Sprintf(`{"n":%d}`, i)
		for j, typ := range []string{"update", "update", "interop.operation"} {
			e := got[3*i+j]
			if e.Type != typ || string(e.Data) != want {
				t.Fatalf("event %d is %s %s, want %s %s: a report overtook the stream's earlier events", 3*i+j, e.Type, e.Data, typ, want)
			}
		}
	}
}
