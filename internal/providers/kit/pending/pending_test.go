package pending

import (
	"fmt"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// host records the outcomes it receives.
type host struct{ got []string }

func (h *host) ReportOutcome(p providers.ID, nativeID, ref string, o providers.Outcome) {
	h.got = append(h.got, fmt.Sprintf("%s %s %s %s: %s", p, nativeID, ref, o.Status, o.Reason))
}

func TestLostSettlesEveryOpAsUnknown(t *testing.T) {
	ops := []Op{
		{NativeID: "s1", Ref: "t1", Unsettled: "turn t1 had not completed and may have run in part; it is not resent"},
		{NativeID: "s2", Ref: "interrupt:t2", Unsettled: "the interrupt's effect was not observed"},
		{NativeID: "s1", Ref: "permission:r1"},
	}
	outs := Lost("connection lost: EOF", ops)
	want := []Outcome{
		{"s1", "t1", providers.StatusDeliveryUnknown, "connection lost: EOF; turn t1 had not completed and may have run in part; it is not resent", nil},
		{"s2", "interrupt:t2", providers.StatusDeliveryUnknown, "connection lost: EOF; the interrupt's effect was not observed", nil},
		{"s1", "permission:r1", providers.StatusDeliveryUnknown, "connection lost: EOF; " + DefaultUnsettled, nil},
	}
	if fmt.Sprint(outs) != fmt.Sprint(want) {
		t.Fatalf("Lost =\n%v\nwant\n%v", outs, want)
	}
	if got := Sessions(outs); fmt.Sprint(got) != "[s1 s2]" {
		t.Fatalf("Sessions = %v, want [s1 s2]", got)
	}

	h := &host{}
	Report(h, providers.Codex, outs)
	if len(h.got) != 3 || h.got[0] != "codex s1 t1 delivery_unknown: "+want[0].Reason {
		t.Fatalf("reported %q", h.got)
	}
}

func TestNothingToSettle(t *testing.T) {
	if outs := Lost("gone", nil); outs != nil {
		t.Fatalf("Lost(nil) = %v", outs)
	}
	Report(nil, providers.Codex, Lost("gone", []Op{{NativeID: "s", Ref: "r"}})) // no host: nothing, no panic
}

// TestTrackerSettlesEachOpOnce walks one connection's life: operations
// added when written, one answered, the loss settling the rest, and an
// operation written as the connection died settled at once.
func TestTrackerSettlesEachOpOnce(t *testing.T) {
	var tr Tracker
	if late := tr.Add(Op{NativeID: "s1", Ref: "t1"}); late != nil {
		t.Fatalf("Add before the loss settled %v", late)
	}
	tr.Add(Op{NativeID: "s2", Ref: "t2", Unsettled: "turn t2 may have run in part"})
	tr.Add(Op{NativeID: "s1", Ref: "t3"})
	if !tr.Settle("t1") {
		t.Fatal("Settle(t1) = false for an op in flight")
	}
	if tr.Settle("t1") || tr.Settle("never-added") {
		t.Fatal("Settle reported an op that was not in flight")
	}
	if got := fmt.Sprint(tr.InFlight()); got != "[{s2 t2 turn t2 may have run in part} {s1 t3 }]" {
		t.Fatalf("InFlight = %s", got)
	}
	outs := tr.Lost("agent exited")
	want := []Outcome{
		{"s2", "t2", providers.StatusDeliveryUnknown, "agent exited; turn t2 may have run in part", nil},
		{"s1", "t3", providers.StatusDeliveryUnknown, "agent exited; " + DefaultUnsettled, nil},
	}
	if fmt.Sprint(outs) != fmt.Sprint(want) {
		t.Fatalf("Lost =\n%v\nwant\n%v", outs, want)
	}
	if tr.Settle("t2") {
		t.Fatal("an op Lost settled was settled again")
	}
	if again := tr.Lost("later reason"); again != nil {
		t.Fatalf("a second Lost settled %v", again)
	}
	late := tr.Add(Op{NativeID: "s3", Ref: "t4"})
	if len(late) != 1 || late[0].Ref != "t4" || late[0].Status != providers.StatusDeliveryUnknown || late[0].Reason != "agent exited; "+DefaultUnsettled {
		t.Fatalf("Add after the loss = %v, want t4 settled at once with the first reason", late)
	}
	if len(tr.InFlight()) != 0 {
		t.Fatalf("ops kept after the loss: %v", tr.InFlight())
	}
}
