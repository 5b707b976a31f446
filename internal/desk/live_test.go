package desk

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/providers"
)

const streamWait = 10 * time.Second

func TestReceiptsStreamPushesNewAndChangedRowsAndResumes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old := f.addOperation("op_old", "thread-1", "send", operation.StatusQueued, f.now)
	hwm, err := f.h.read.highWater(ctx, "operations")
	if err != nil {
		t.Fatal(err)
	}
	s := f.stream("/desk/live/receipts?since="+strconv.FormatInt(hwm, 10), bearer...)
	// On connecting, the stream sends the page's rows once (replacing what
	// the page shows), with the cursor it was given.
	first := s.next(t, streamWait)
	if first.name != "update" || first.id != strconv.FormatInt(hwm, 10) || !strings.Contains(first.data, `data-operation-id="op_old"`) ||
		!strings.Contains(first.data, `hx-swap-oob="true"`) {
		t.Fatalf("first event %+v", first)
	}
	// A new operation (another process's write) is inserted at the top.
	f.addOperation("op_new", "thread-1", "send", operation.StatusQueued, f.now)
	ev := s.next(t, streamWait)
	if !strings.Contains(ev.data, `<tbody hx-swap-oob="afterbegin:#receipt-rows">`) || !strings.Contains(ev.data, `data-operation-id="op_new"`) ||
		strings.Contains(ev.data, "op_old") {
		t.Fatalf("insert event %+v", ev)
	}
	if ev.id != strconv.FormatInt(hwm+1, 10) {
		t.Fatalf("cursor after the insert %q, want %d", ev.id, hwm+1)
	}
	// The old one moves to completed: its row is replaced in place.
	if _, err := f.ent().Operation.UpdateOneID(old.ID).SetStatus(operation.StatusCompleted).SetUpdatedAt(f.now.Add(time.Second)).Save(ctx); err != nil {
		t.Fatal(err)
	}
	ev = s.next(t, streamWait)
	if !strings.Contains(ev.data, `data-operation-id="op_old" data-status="completed"`) || strings.Contains(ev.data, "afterbegin") {
		t.Fatalf("change event %+v", ev)
	}
	// A dropped connection resumes from its cursor: what arrived after it
	// is inserted, nothing before it is inserted again.
	s.res.Body.Close()
	f.addOperation("op_later", "thread-1", "cancel", operation.StatusRejected, f.now)
	r := f.stream("/desk/live/receipts?since=0", append([]string{"Last-Event-ID", ev.id}, bearer...)...)
	ev = r.next(t, streamWait)
	if !strings.Contains(ev.data, `afterbegin:#receipt-rows">`) || !strings.Contains(ev.data, "op_later") {
		t.Fatalf("resumed event %+v", ev)
	}
	if i := strings.Index(ev.data, "afterbegin"); strings.Contains(ev.data[i:], "op_new") || strings.Contains(ev.data[i:], "op_old") {
		t.Fatalf("rows before the cursor were inserted again: %s", ev.data)
	}
}

func TestSessionStreamAppendsEventsAfterItsCursor(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID("thread-1").SetFirstSeenAt(f.now).SetLastSeenAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	log := f.h.read.events
	appendEvent := func(typ string) {
		t.Helper()
		if _, err := log.Append(ctx, "codex", "thread-1", 1, []providers.NativeEvent{{NativeID: "thread-1", Timestamp: f.now, Type: typ, Data: json.RawMessage(`{"text":"<b>hi</b>"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	appendEvent("turn/started")
	s := f.stream("/desk/live/session?provider=codex&nativeId=thread-1&after=1", bearer...)
	first := s.next(t, streamWait)
	if strings.Contains(first.data, `data-type="turn/started"`) {
		t.Fatalf("an event at the cursor was sent again: %s", first.data)
	}
	appendEvent("item/commandExecution/requestApproval")
	ev := s.next(t, streamWait)
	for ev.id != "2" {
		ev = s.next(t, streamWait)
	}
	if !strings.Contains(ev.data, `beforeend:#event-rows`) || !strings.Contains(ev.data, `data-type="item/commandExecution/requestApproval"`) ||
		!strings.Contains(ev.data, `&lt;b&gt;hi&lt;/b&gt;`) {
		t.Fatalf("event %+v", ev)
	}
	if !strings.Contains(ev.data, `data-liveness="waiting_on_approval"`) {
		t.Fatalf("the session summary did not move to waiting_on_approval: %s", ev.data)
	}
}

func TestStreamsEndWhenTheDeskCloses(t *testing.T) {
	f := newFixture(t)
	s := f.stream("/desk/live/claims", bearer...)
	s.next(t, streamWait)
	f.h.Close()
	deadline := time.After(streamWait)
	for {
		select {
		case _, ok := <-s.lines:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream did not end when the desk closed")
		}
	}
}

// TestClaimsStreamNoticesALeaseEnding: nothing is written when a claim's
// lease ends, so the stream looks again at every heartbeat.
func TestClaimsStreamNoticesALeaseEnding(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Heartbeat = 20 * time.Millisecond })
	w := f.addWork("work_1", "w")
	if _, err := f.ent().Claim.Create().SetID("claim_1").SetWorkID(w.ID).SetSessionID("codex:a").SetResource("src/a.go").
		SetAcquiredAt(f.now).SetExpiresAt(f.now.Add(time.Minute)).Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := f.stream("/desk/live/claims", bearer...)
	if ev := s.next(t, streamWait); !strings.Contains(ev.data, `data-claim-id="claim_1"`) {
		t.Fatalf("first event %+v", ev)
	}
	f.advance(2 * time.Minute)
	ev := s.next(t, streamWait)
	if strings.Contains(ev.data, `data-claim-id="claim_1"`) || !strings.Contains(ev.data, "No active claim.") {
		t.Fatalf("after the lease ended: %+v", ev)
	}
}

// TestSessionsStreamSendsOnlyWhatChanged: a write that leaves a session's
// row as it was sends nothing for it.
func TestSessionsStreamSendsOnlyWhatChanged(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, id := range []string{"thread-1", "thread-2"} {
		if _, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID(id).SetFirstSeenAt(f.now).SetLastSeenAt(f.now).Save(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := f.stream("/desk/live/sessions?since=2", bearer...)
	if ev := s.next(t, streamWait); strings.Count(ev.data, "data-native-id=") != 2 {
		t.Fatalf("first event %+v", ev)
	}
	f.addWork("work_1", "unrelated") // a commit that changes no session
	f.addOperation("op_1", "thread-2", "send", operation.StatusQueued, f.now)
	ev := s.next(t, streamWait)
	if strings.Contains(ev.data, `data-native-id="thread-1"`) || !strings.Contains(ev.data, `data-native-id="thread-2"`) ||
		!strings.Contains(ev.data, `data-liveness="working"`) {
		t.Fatalf("update %+v", ev)
	}
}

// TestConversationPageAndStream: messages show sender, recipient, text as
// text, a reply link to a message on the page and the delivery state; a
// new message is appended live and a delivery change replaces its item.
func TestConversationPageAndStream(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.ent()
	if _, err := c.Conversation.Create().SetID("conversation_1").SetTitle("Review <b>it</b>").SetCreatedAt(f.now).SetUpdatedAt(f.now).SetLastSequence(2).Save(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Participant.Create().SetConversationID("conversation_1").SetParticipantID("codex:a").SetProvider("codex").SetNativeID("a").SetJoinedAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	add := func(id string, seq int64, text, replyTo string) {
		t.Helper()
		op := f.addOperation("op-"+id, "b", "send", operation.StatusQueued, f.now) // the one ledger carries the message
		m := c.Message.Create().SetID(id).SetConversationID("conversation_1").SetSequence(seq).SetSender("codex:a").SetRecipient("claude-code:b").
			SetText(text).SetCreatedAt(f.now).SetIdempotencyKey("k-" + id).SetOperationID(op.ID)
		if replyTo != "" {
			m.SetReplyTo(replyTo)
		}
		if _, err := m.Save(ctx); err != nil {
			t.Fatal(err)
		}
	}
	add("message_1", 1, "first <script>x</script>", "")
	add("message_2", 2, "second", "message_1")
	res, body := f.get("/desk/conversations/conversation_1", bearer...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%d", res.StatusCode)
	}
	for _, want := range []string{"2 messages", `href="#m-message_1"`, "first &lt;script&gt;x&lt;/script&gt;", `data-delivery="queued"`, "Review &lt;b&gt;it&lt;/b&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	s := f.stream("/desk/live/conversation?id=conversation_1&after=2", bearer...)
	s.next(t, streamWait)
	add("message_3", 3, "third", "")
	ev := s.next(t, streamWait)
	if !strings.Contains(ev.data, `beforeend:#messages`) || !strings.Contains(ev.data, `id="m-message_3"`) || ev.id != "3" {
		t.Fatalf("append event %+v", ev)
	}
	if _, err := c.Operation.UpdateOneID("op-message_1").SetStatus(operation.StatusCompleted).Save(ctx); err != nil {
		t.Fatal(err)
	}
	ev = s.next(t, streamWait)
	if !strings.Contains(ev.data, `id="m-message_1" hx-swap-oob="true"`) || !strings.Contains(ev.data, `data-delivery="completed"`) {
		t.Fatalf("delivery event %+v", ev)
	}
}

// TestStreamsEndAfterTheirLifetime: a stream ends by itself after
// StreamLifetime, so the browser reconnects (and its credential is checked
// again).
func TestStreamsEndAfterTheirLifetime(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.StreamLifetime = 100 * time.Millisecond })
	s := f.stream("/desk/live/receipts", bearer...)
	deadline := time.After(streamWait)
	for {
		select {
		case _, ok := <-s.lines:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream outlived its lifetime")
		}
	}
}
