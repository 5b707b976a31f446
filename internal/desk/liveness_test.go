package desk

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDeriveLiveness(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ev := func(seq int64, typ string, s int) eventFact {
		return eventFact{seq: seq, typ: typ, at: at(s), data: json.RawMessage(`{"command":"echo hi"}`)}
	}
	op := func(kind, status string, s int) opFact {
		return opFact{kind: kind, status: status, created: at(s), updated: at(s)}
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
			events: []eventFact{ev(4, "provider.restarted", 4), ev(3, "item/commandExecution/requestApproval", 3)}, anyOperation: true}, LiveIdle, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, pending := deriveLiveness(tt.facts)
			if l.State != tt.want || len(pending) != tt.pending || !l.Derived || l.Reason == "" {
				t.Fatalf("liveness %+v, %d pending; want %s, %d pending", l, len(pending), tt.want, tt.pending)
			}
			if tt.pending > 0 && pending[0].Title != "echo hi" {
				t.Fatalf("pending title %q", pending[0].Title)
			}
			if (len(tt.facts.events) > 0 || len(tt.facts.open) > 0) && l.ObservedAt == nil {
				t.Fatal("no observation time")
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
