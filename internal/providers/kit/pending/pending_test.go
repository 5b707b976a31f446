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
