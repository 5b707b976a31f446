package desk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
)

// TestSessionPageTotalsUsage: a session's page totals its turns' reported
// usage; before any turn reported usage it says unknown, never 0, and
// another session's turns are not counted.
func TestSessionPageTotalsUsage(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	f.addOperation("op_u1", "thread-1", "send", operation.StatusCompleted, at)
	if err := f.ent().Operation.UpdateOneID("op_u1").SetVerdict("empty").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, page := f.get("/desk/sessions/codex/thread-1", bearer...)
	if !strings.Contains(page, `<p id="session-usage">Usage: unknown over 1 turns (0 reported usage; 1 empty)</p>`) {
		t.Fatalf("session page before usage:\n%s", page)
	}
	for i, u := range []string{`{"input":100,"output":30,"costUsd":0.5}`, `{"input":20,"cached":5}`} {
		id := []string{"op_u2", "op_u3"}[i]
		f.addOperation(id, "thread-1", "send", operation.StatusCompleted, at.Add(time.Duration(i+1)*time.Second))
		if err := f.ent().Operation.UpdateOneID(id).SetVerdict("answered").SetUsage(json.RawMessage(u)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f.addOperation("op_other", "thread-2", "send", operation.StatusCompleted, at)
	if err := f.ent().Operation.UpdateOneID("op_other").SetVerdict("answered").SetUsage(json.RawMessage(`{"input":9999}`)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, page = f.get("/desk/sessions/codex/thread-1", bearer...)
	if want := `Usage: in 120 · out 30 · cached 5 · $0.5000 over 3 turns (2 reported usage; 2 answered, 1 empty)`; !strings.Contains(page, want) {
		t.Fatalf("session page lacks %q:\n%s", want, page)
	}
}

// TestWorkAndConversationPagesTotalUsage: a work item's page totals the
// turns of its sessions, a conversation's page the turns its messages
// started (not the other turns of the same sessions); nothing reported
// reads unknown, never 0.
func TestWorkAndConversationPagesTotalUsage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.ent()
	turn := func(id, native, verdict, usage string) {
		t.Helper()
		f.addOperation(id, native, "send", operation.StatusCompleted, f.now)
		u := c.Operation.UpdateOneID(id).SetVerdict(verdict)
		if usage != "" {
			u.SetUsage(json.RawMessage(usage))
		}
		if err := u.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f.addWork("work_1", "Add retries")
	if err := c.WorkItem.UpdateOneID("work_1").SetSourceSession("codex:w1").SetDestinationSession("codex:w2").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, page := f.get("/desk/work/work_1", bearer...); !strings.Contains(page, `<dd id="work-usage">unknown over 0 turns (0 reported usage)</dd>`) {
		t.Fatalf("work page before any turn:\n%s", page)
	}
	turn("op_w1", "w1", "answered", `{"input":100,"output":10}`)
	turn("op_w2", "w2", "failed", "")
	turn("op_w3", "w3", "answered", `{"input":5000}`) // not the work's session
	if _, page := f.get("/desk/work/work_1", bearer...); !strings.Contains(page, `<dd id="work-usage">in 100 · out 10 over 2 turns (1 reported usage; 1 answered, 1 failed)</dd>`) {
		t.Fatalf("work page usage:\n%s", page)
	}

	if err := c.Conversation.Create().SetID("conversation_1").SetTitle("Talk").SetCreatedAt(f.now).SetUpdatedAt(f.now).SetLastSequence(2).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i, m := range []struct{ id, op, verdict, usage string }{
		{"message_1", "op_m1", "empty", ""},
		{"message_2", "op_m2", "answered", `{"input":7,"output":3,"costUsd":0.01}`},
	} {
		turn(m.op, "w1", m.verdict, m.usage)
		if err := c.Message.Create().SetID(m.id).SetConversationID("conversation_1").SetSequence(int64(i + 1)).SetSender("codex:w2").SetRecipient("codex:w1").
			SetText("hi").SetCreatedAt(f.now).SetIdempotencyKey("k-" + m.id).SetOperationID(m.op).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, page := f.get("/desk/conversations/conversation_1", bearer...)
	if want := `<p id="conversation-usage">Usage: in 7 · out 3 · $0.0100 over 2 turns (1 reported usage; 1 answered, 1 empty)</p>`; !strings.Contains(page, want) {
		t.Fatalf("conversation page lacks %q:\n%s", want, page)
	}
}

// TestUsageLinesUpdateLive: when a turn's verdict and usage are stored,
// the live streams of the session, work item and conversation pages
// replace their usage lines (and the conversation's budget line) in
// place, verdict counts included, without a reload.
func TestUsageLinesUpdateLive(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.ent()
	f.addSession("w1")
	f.addWork("work_1", "Add retries")
	if err := c.WorkItem.UpdateOneID("work_1").SetSourceSession("codex:w1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Conversation.Create().SetID("conversation_1").SetTitle("Talk").SetCreatedAt(f.now).SetUpdatedAt(f.now).SetLastSequence(1).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	f.addOperation("op_m1", "w1", "send", operation.StatusQueued, f.now)
	if err := c.Message.Create().SetID("message_1").SetConversationID("conversation_1").SetSequence(1).SetSender("codex:w2").SetRecipient("codex:w1").
		SetText("hi").SetCreatedAt(f.now).SetIdempotencyKey("k-message_1").SetOperationID("op_m1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	const before = "unknown over 0 turns (0 reported usage)"
	pages := []struct {
		path, before string
	}{
		{"/desk/sessions/codex/w1", `<p id="session-usage">Usage: ` + before + `</p>`},
		{"/desk/work/work_1", `<dd id="work-usage">` + before + `</dd>`},
		{"/desk/conversations/conversation_1", `<p id="conversation-usage">Usage: ` + before + `</p>`},
	}
	streams := make([]*sse, len(pages))
	for i, p := range pages {
		_, body := f.get(p.path, bearer...)
		if !strings.Contains(body, p.before) {
			t.Fatalf("%s lacks %q:\n%s", p.path, p.before, body)
		}
		streams[i] = f.stream(liveURL(t, body), bearer...)
		streams[i].next(t, streamWait) // the greeting
	}

	if err := c.Operation.UpdateOneID("op_m1").SetStatus(operation.StatusCompleted).SetVerdict("answered").
		SetUsage(json.RawMessage(`{"input":7,"output":3,"costUsd":0.01}`)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	const after = "in 7 · out 3 · $0.0100 over 1 turns (1 reported usage; 1 answered)"
	for i, want := range [][]string{
		{`<p id="session-usage" hx-swap-oob="true">Usage: ` + after + `</p>`},
		{`<dd id="work-usage" hx-swap-oob="true">` + after + `</dd>`},
		{`<p id="conversation-usage" hx-swap-oob="true">Usage: ` + after + `</p>`, `<p id="budget" hx-swap-oob="true">39 of 40 messages left`, "tokens 10 used of 2000000"},
	} {
		// The parts may come in more than one update: a step that read the
		// conversation (its budget) just before the turn's end was stored
		// and its usage just after sends the usage line, and the step the
		// store's change wakes sends the budget (eventually consistent,
		// never stale for good).
		var got []string
		for !containsAll(strings.Join(got, "\n"), want) {
			if len(got) == 3 {
				t.Fatalf("%s: three updates and still not all of %q: %q", pages[i].path, want, got)
			}
			got = append(got, streams[i].next(t, streamWait).data)
		}
	}
}

// containsAll reports whether s contains every one of parts.
func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
