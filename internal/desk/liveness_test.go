package desk

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

func TestDeriveLiveness(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ev := func(seq int64, typ string, s int) eventFact {
		return eventFact{seq: seq, typ: typ, at: at(s), data: json.RawMessage(`{"command":"echo hi"}`)}
	}
	op := func(kind, status string, s int) opFact {
		return opFact{kind: kind, status: status, created: at(s), updated: at(s), owner: "rt_alive"}
	}
	orphaned := func(kind string, s int) opFact {
		return opFact{kind: kind, status: "queued", created: at(s), updated: at(s), owner: "rt_gone", ownerGone: true,
			ownerWhy: "runtime process rt_gone (pid 7) is no longer running"}
	}
	tests := []struct {
		name    string
		facts   sessionFacts
		want    string
		pending int
	}{
		{"nothing recorded", sessionFacts{}, LiveUnknown, 0},
		{"a queued send", sessionFacts{open: []opFact{op("send", "queued", 1)}, anyOperation: true}, LiveWorking, 0},
		{"only a queued cancel", sessionFacts{open: []opFact{op("cancel", "queued", 1)}, anyOperation: true}, LiveUnknown, 0},
		{"operations, none open", sessionFacts{anyOperation: true}, LiveIdle, 0},
		{"an approval asked, nothing after it", sessionFacts{
			events: []eventFact{ev(4, "thread/status/changed", 4), ev(3, "item/commandExecution/requestApproval", 3), ev(2, "item/started", 2)},
			open:   []opFact{op("send", "queued", 1)}, anyOperation: true}, LiveWaitingOnApproval, 1},
		{"an approval the turn moved on from", sessionFacts{
			events: []eventFact{ev(4, "session/update", 4), ev(3, "session/request_permission", 3)},
			open:   []opFact{op("send", "queued", 1)}, anyOperation: true}, LiveWorking, 0},
		{"an approval resolved by the provider", sessionFacts{
			events: []eventFact{ev(5, "interop.operation", 5), ev(4, "serverRequest/resolved", 4), ev(3, "item/commandExecution/requestApproval", 3)},
			open:   []opFact{op("send", "queued", 1)}, anyOperation: true}, LiveWorking, 0},
		{"a turn ended", sessionFacts{
			events: []eventFact{ev(5, "thread/tokenUsage/updated", 5), ev(4, "turn/completed", 4), ev(3, "permission.asked", 3)}}, LiveIdle, 0},
		{"two approvals pending", sessionFacts{
			events: []eventFact{ev(5, "item/fileChange/requestApproval", 5), ev(4, "item/commandExecution/requestApproval", 4)},
			open:   []opFact{op("send", "queued", 1)}, anyOperation: true}, LiveWaitingOnApproval, 2},
		{"the provider restarted", sessionFacts{
			events: []eventFact{ev(4, "provider.restarted", 4), ev(3, "item/commandExecution/requestApproval", 3)}, anyOperation: true}, LiveUnknown, 0},
		{"a turn after the restart", sessionFacts{
			events: []eventFact{ev(6, "turn/completed", 6), ev(5, "turn/started", 5), ev(4, "provider.restarted", 4)}, anyOperation: true}, LiveIdle, 0},
		{"an approval whose turn was settled", sessionFacts{
			events: []eventFact{{seq: 4, typ: "interop.operation", at: at(4), data: json.RawMessage(`{"operation":"send","status":"delivery_unknown"}`)},
				ev(3, "item/commandExecution/requestApproval", 3)}, anyOperation: true}, LiveIdle, 0},
		{"an approval answered, the send still running", sessionFacts{
			events: []eventFact{{seq: 4, typ: "interop.operation", at: at(4), data: json.RawMessage(`{"operation":"permission","status":"completed"}`)},
				ev(3, "item/commandExecution/requestApproval", 3)}, open: []opFact{op("send", "queued", 1)}, anyOperation: true}, LiveWorking, 0},
		{"an open send whose owner is gone", sessionFacts{
			events: []eventFact{ev(2, "item/started", 2)}, open: []opFact{orphaned("send", 1)}, anyOperation: true}, LiveUnknown, 0},
		{"an approval whose runtime is gone", sessionFacts{
			events: []eventFact{ev(3, "item/commandExecution/requestApproval", 3)}, open: []opFact{orphaned("send", 1)}, anyOperation: true}, LiveUnknown, 1},
		{"a gone owner's send and a live one's", sessionFacts{
			open: []opFact{orphaned("send", 1), op("send", "queued", 2)}, anyOperation: true}, LiveWorking, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, pending := deriveLiveness(tt.facts)
			if l.State != tt.want || len(pending) != tt.pending || l.Source != SourceStore || l.Reason == "" {
				t.Fatalf("liveness %+v, %d pending; want %s, %d pending", l, len(pending), tt.want, tt.pending)
			}
			if tt.pending > 0 && pending[0].Title != "echo hi" {
				t.Fatalf("pending title %q", pending[0].Title)
			}
			if (len(tt.facts.events) > 0 || len(tt.facts.open) > 0) && l.ObservedAt == nil {
				t.Fatal("no observation time")
			}
			gone := strings.Contains(tt.name, "gone") && tt.want == LiveUnknown
			if l.OwnerGone != gone || gone && !strings.Contains(l.Reason, "is no longer running") {
				t.Fatalf("owner gone %v (%s), want %v", l.OwnerGone, l.Reason, gone)
			}
			if strings.Contains(tt.name, "restarted") && !strings.Contains(l.Reason, "provider process serving it was lost") {
				t.Fatalf("reason %q", l.Reason)
			}
		})
	}
}

func TestMermaidText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{`say "hi"`, "say #quot;hi#quot;"},
		{"<script>x</script>", "#lt;script#gt;x#lt;/script#gt;"},
		{"a # b & c", "a #35; b #amp; c"},
		{"line\nbreak\t tab", "line break tab"},
		{"`code` \\n", "#96;code#96; #92;n"},
		{"abcdefghij", "abcd…"},
	}
	for _, tt := range tests {
		limit := 60
		if tt.in == "abcdefghij" {
			limit = 5
		}
		if got := mermaidText(tt.in, limit); got != tt.want {
			t.Errorf("mermaidText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSessionLivenessFromTheStoreAndTheRuntime: a desk that does not drive
// the sessions infers each one's liveness from the store and says so (an
// open send of a live owner is working; one whose owner stopped is
// unknown, owner gone); a desk given the runtime's liveness shows it as
// the runtime's (dead included) for the sessions that runtime drives (its
// own operations), unless another live process drives the session now;
// a session it does not drive shows the store's inference. On both
// dialects.
func TestSessionLivenessFromTheStoreAndTheRuntime(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		runtime := map[string]Liveness{}
		f := newFixtureAt(t, location, func(o *Options) {
			o.Owner = "rt_self"
			o.Liveness = func(provider, nativeID string) (Liveness, bool) {
				l, ok := runtime[nativeID]
				return l, ok
			}
		})
		stopped := f.now.Add(-time.Minute)
		f.addOwner("rt_alive", f.now, nil)
		f.addOwner("rt_stopped", f.now.Add(-2*time.Minute), &stopped)
		f.addOwner("rt_self", f.now, nil)
		for _, s := range []string{"t-alive", "t-orphan", "t-dead", "t-elsewhere", "t-self", "t-undriven"} {
			f.addSession(s)
		}
		f.addOwnedOperation("op_1", "t-alive", "send", operation.StatusQueued, f.now, "rt_alive")
		f.addOwnedOperation("op_2", "t-orphan", "send", operation.StatusQueued, f.now, "rt_stopped")
		f.addOwnedOperation("op_3", "t-elsewhere", "send", operation.StatusQueued, f.now, "rt_alive")
		f.addOwnedOperation("op_4", "t-self", "send", operation.StatusQueued, f.now, "rt_self")
		f.addOwnedOperation("op_5", "t-dead", "send", operation.StatusCompleted, f.now, "rt_self")
		f.addOwnedOperation("op_6", "t-elsewhere", "send", operation.StatusCompleted, f.now.Add(-time.Second), "rt_self")
		died := f.now
		runtime["t-dead"] = Liveness{State: LiveDead, ObservedAt: &died, Reason: "the app-server exited"}
		runtime["t-elsewhere"] = Liveness{State: LiveIdle, ObservedAt: &died}
		runtime["t-self"] = Liveness{State: LiveWaitingOnApproval, ObservedAt: &died, Reason: "request 1 waits"}
		runtime["t-undriven"] = Liveness{State: LiveDead, ObservedAt: &died, Reason: "not this runtime's"}
		_, body := f.get("/desk/sessions", bearer...)
		tests := []struct {
			native, state, source string
			ownerGone             bool
		}{
			{"t-alive", LiveWorking, SourceStore, false},
			{"t-orphan", LiveUnknown, SourceStore, true},
			{"t-dead", LiveDead, SourceRuntime, false},
			{"t-elsewhere", LiveWorking, SourceStore, false},
			{"t-self", LiveWaitingOnApproval, SourceRuntime, false},
			{"t-undriven", LiveUnknown, SourceStore, false},
		}
		for _, tt := range tests {
			i := strings.Index(body, `data-native-id="`+tt.native+`"`)
			if i < 0 {
				t.Fatalf("%s not listed", tt.native)
			}
			row := body[i:]
			row = row[:strings.Index(row, "</tr>")]
			want := `data-liveness="` + tt.state + `" data-liveness-source="` + tt.source + `"`
			if !strings.Contains(row, want) || strings.Contains(row, `data-owner-gone="true"`) != tt.ownerGone {
				t.Errorf("%s: row %s, want %s (owner gone %v)", tt.native, row, want, tt.ownerGone)
			}
		}
		_, page := f.get("/desk/sessions/codex/t-orphan", bearer...)
		if !strings.Contains(page, "runtime process rt_stopped (pid 4242) stopped at") || !strings.Contains(page, "inferred from the store") {
			t.Errorf("the session page does not say why and where from: %s", page)
		}
		_, page = f.get("/desk/sessions/codex/t-dead", bearer...)
		if !strings.Contains(page, "the app-server exited") || !strings.Contains(page, "reported by this runtime process") {
			t.Errorf("the session page does not show the runtime's liveness: %s", page)
		}
	})
}
