package conversations_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestSendRoutesToRecipientSession checks the envelope, the options and
// that a message goes to the recipient participant's own provider session,
// never to its participant ID (0.3.x AIR-01).
func TestSendRoutesToRecipientSession(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, acceptQueued())
	c, _ := e.svc.Create(ctx, "t")
	for _, j := range []conversations.JoinInput{
		{ConversationID: c.ID, Provider: "codex", NativeID: "thread-1", ParticipantID: "lead"},
		{ConversationID: c.ID, Provider: "opencode", NativeID: "ses_9", ParticipantID: "reviewer"},
	} {
		if _, err := e.svc.Join(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	model := &providers.Model{ProviderID: "anthropic", ModelID: "claude-x"}
	res, err := e.svc.Send(ctx, conversations.SendInput{ConversationID: c.ID, Sender: "lead", Recipient: "reviewer",
		Text: "  please review  ", Model: model, Reasoning: "high"})
	if err != nil {
		t.Fatal(err)
	}
	calls := e.disp.Calls()
	if len(calls) != 1 {
		t.Fatalf("dispatched %d times", len(calls))
	}
	got := calls[0]
	wantText := "[agent-interop message " + res.Message.ID + " from lead]\nplease review"
	if got.Provider != "opencode" || got.NativeID != "ses_9" || got.Text != wantText {
		t.Fatalf("dispatch = %+v, want opencode/ses_9 %q", got, wantText)
	}
	if got.Opts.Mode != "send" || got.Opts.Model != model || got.Opts.Reasoning != "high" || got.Opts.CorrelationID != res.Message.OperationID {
		t.Fatalf("options = %+v", got.Opts)
	}
	m := res.Message
	if m.Text != "please review" || m.Sequence != 1 || m.Sender != "lead" || m.Recipient != "reviewer" ||
		!strings.HasPrefix(m.ID, "message_") || !strings.HasPrefix(m.IdempotencyKey, "outbound_") || m.TurnID != "turn-1" {
		t.Fatalf("message = %+v", m)
	}
	// One ledger: the message references its operation, which carries the
	// message's key, and shows its state.
	op := e.op(t, m.ID)
	if op.ID != m.OperationID || op.IdempotencyKey != m.IdempotencyKey || op.Status != "queued" || op.NativeTurn != "turn-1" ||
		!strings.Contains(string(op.Detail), `"conversationMessageId":"`+m.ID+`"`) {
		t.Fatalf("operation = %+v %s", op, op.Detail)
	}
	if stored := e.message(t, m.ID); stored.Receipt == nil || stored.Delivery != "queued" || stored.Receipt.NativeTurnID != "turn-1" {
		t.Fatalf("stored = %+v", stored)
	}
	if res.Liveness == nil || res.Liveness.State != providers.LiveUnknown {
		t.Fatalf("liveness = %+v", res.Liveness)
	}
	res2, err := e.svc.Send(ctx, conversations.SendInput{ConversationID: c.ID, Sender: "reviewer", Recipient: "reviewer", Text: "note to self", ReplyTo: m.ID})
	if err != nil || res2.Message.Sequence != 2 || res2.Message.ReplyTo != m.ID || e.disp.Calls()[1].NativeID != "ses_9" {
		t.Fatalf("reply to self = %+v, %v", res2, err)
	}
	// A reply links to the native turn in which its sender received the
	// message it answers.
	if r := e.message(t, res2.Message.ID); r.ReplyToTurnID != "turn-1" {
		t.Fatalf("reply = %+v", r)
	}
}

// TestSendOutcomes drives every dispatcher outcome and checks what is
// recorded and returned, and that nothing is ever dispatched twice.
func TestSendOutcomes(t *testing.T) {
	tests := []struct {
		name           string
		step           step
		cancelAfter    bool // the caller gives up once the dispatch started
		want           conversations.Delivery
		wantErr        string // for delivery_unknown: the reason after the fixed prefix
		classification string
		receiptStatus  providers.ReceiptStatus
	}{
		{name: "transport accepted", step: acceptQueued(), want: "queued", receiptStatus: "queued"},
		{name: "accepted without status", step: acceptBare(), want: "queued", receiptStatus: "queued"},
		{name: "completed", step: acceptCompleted(), want: "completed", receiptStatus: "completed"},
		{name: "refused receipt", step: refuse(), want: "rejected", classification: "rejected", receiptStatus: "rejected"},
		{name: "not sent", step: notSent(), want: "rejected", classification: "not_sent", receiptStatus: "rejected"},
		{name: "rejected by provider", step: rejectedErr(), want: "rejected", classification: "rejected", receiptStatus: "rejected"},
		{name: "uncertain", step: uncertain(), want: "delivery_unknown",
			wantErr: "connection reset after the request was written", classification: "delivery_unknown", receiptStatus: "delivery_unknown"},
		{name: "hangs until the caller gives up", step: hang(), cancelAfter: true, want: "delivery_unknown",
			wantErr: "context canceled", classification: "delivery_unknown", receiptStatus: "delivery_unknown"},
		{name: "adapter panics", step: step{panic: true}, want: "delivery_unknown",
			wantErr: "adapter panicked during send: adapter bug", classification: "delivery_unknown", receiptStatus: "delivery_unknown"},
		{name: "receipt says delivery_unknown", step: step{receipt: providers.Receipt{Accepted: true, Status: providers.StatusDeliveryUnknown}},
			want: "delivery_unknown", wantErr: "the provider reported an unknown outcome", classification: "delivery_unknown", receiptStatus: "delivery_unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.cancelAfter {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				tt.step.started = make(chan struct{})
				go func(started chan struct{}) { <-started; cancel() }(tt.step.started)
			}
			e := newEnv(t, tt.step)
			id := e.conv(t)
			res, err := e.svc.Send(ctx, conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "hi", IdempotencyKey: "key-1"})
			row := e.message(t, e.c.Message.Query().OnlyX(context.Background()).ID)
			if tt.wantErr != "" {
				want := "Message " + row.ID + " persisted with delivery_unknown; it may have reached the provider and must not be resent blindly: " + tt.wantErr
				var du *conversations.DeliveryUnknownError
				if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &du) || du.Message.Delivery != conversations.DeliveryUnknown {
					t.Fatalf("err = %v\nwant  %s", err, want)
				}
				if row.DeliveryUnknownAt == nil {
					t.Fatal("deliveryUnknownAt not set")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if res.Message.Delivery != tt.want || res.Receipt.Provider != "claude-code" || res.Receipt.NativeID != "b" || res.Receipt.Operation != "send" {
					t.Fatalf("result = %+v", res)
				}
			}
			if row.Delivery != tt.want {
				t.Fatalf("stored delivery %s, want %s", row.Delivery, tt.want)
			}
			if row.Receipt == nil || row.Receipt.Status != tt.receiptStatus {
				t.Fatalf("stored receipt = %+v, want status %q", row.Receipt, tt.receiptStatus)
			}
			if tt.classification != "" {
				d, _ := row.Receipt.Detail.(map[string]any)
				if d["classification"] != tt.classification || d["reason"] == "" || row.Receipt.Accepted {
					t.Fatalf("stored receipt = %+v, want classification %s", row.Receipt, tt.classification)
				}
			}
			// The same message again under its key answers the recorded
			// one (an uncertain one as uncertain again); other text under
			// it is refused; nothing is dispatched again.
			again, err := e.svc.Send(context.Background(), conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "hi", IdempotencyKey: "key-1"})
			var du *conversations.DeliveryUnknownError
			switch {
			case tt.want == conversations.DeliveryUnknown:
				if !errors.As(err, &du) || du.Message.ID != row.ID {
					t.Fatalf("replay of an uncertain send: %v", err)
				}
			case err != nil || again.Message.ID != row.ID || again.Message.Delivery != row.Delivery || again.Receipt.Status != row.Receipt.Status:
				t.Fatalf("replay = %+v, %v", again, err)
			}
			_, err = e.svc.Send(context.Background(), conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "hi!", IdempotencyKey: "key-1"})
			wantDup := "Idempotency key 'key-1' already has a message (" + row.ID + ", delivery " + string(row.Delivery) + ") for other arguments; nothing was sent. Rule: " + delivery.KeyRule + "."
			if err == nil || err.Error() != wantDup {
				t.Fatalf("resend err = %v\nwant %s", err, wantDup)
			}
			if n := len(e.disp.Calls()); n != 1 {
				t.Fatalf("dispatched %d times, want 1", n)
			}
		})
	}
}

func TestSendRejections(t *testing.T) {
	bare := "gpt-5"
	long := strings.Repeat("x", conversations.MaxTextLen+1)
	tests := []struct {
		name string
		in   func(convID, otherConv, firstMsg string) conversations.SendInput
		want func(convID, otherConv, firstMsg string) string
	}{
		{"bare string model",
			func(c, _, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: c, Sender: "codex:a", Recipient: "claude-code:b", Text: "hi", BareModel: &bare}
			},
			func(string, string, string) string {
				return "conversation_send requires the structured model object {providerID, modelID}; a bare string would be silently discarded"
			}},
		{"blank text",
			func(c, _, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: c, Sender: "codex:a", Recipient: "claude-code:b", Text: " \n\t "}
			},
			func(string, string, string) string { return "Conversation message text must not be blank" }},
		{"text too long",
			func(c, _, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: c, Sender: "codex:a", Recipient: "claude-code:b", Text: long}
			},
			func(string, string, string) string { return "text must be at most 100000 characters; received 100001" }},
		{"key too long",
			func(c, _, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: c, Sender: "codex:a", Recipient: "claude-code:b", Text: "hi", IdempotencyKey: strings.Repeat("k", 201)}
			},
			func(string, string, string) string {
				return "idempotencyKey must be at most 200 characters; received 201"
			}},
		{"unknown conversation",
			func(string, string, string) conversations.SendInput {
				return conversations.SendInput{ConversationID: "conversation_nope", Sender: "codex:a", Recipient: "claude-code:b", Text: "hi"}
			},
			func(string, string, string) string { return "Unknown conversation conversation_nope" }},
		{"unknown sender",
			func(c, _, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: c, Sender: "codex:zz", Recipient: "claude-code:b", Text: "hi"}
			},
			func(string, string, string) string { return "Unknown conversation sender codex:zz" }},
		{"unknown recipient",
			func(c, _, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: c, Sender: "codex:a", Recipient: "cursor:q", Text: "hi"}
			},
			func(string, string, string) string { return "Unknown conversation recipient cursor:q" }},
		{"participant of another conversation",
			func(_, o, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: o, Sender: "codex:a", Recipient: "claude-code:b", Text: "hi"}
			},
			func(_, o, _ string) string { return "Unknown conversation sender codex:a" }},
		{"unknown reply target",
			func(c, _, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: c, Sender: "codex:a", Recipient: "claude-code:b", Text: "hi", ReplyTo: "message_nope"}
			},
			func(c, _, _ string) string { return "Unknown reply target message_nope in conversation " + c }},
		{"reply target in another conversation",
			func(_, o, m string) conversations.SendInput {
				return conversations.SendInput{ConversationID: o, Sender: "cursor:o", Recipient: "cursor:o", Text: "hi", ReplyTo: m}
			},
			func(_, o, m string) string { return "Unknown reply target " + m + " in conversation " + o }},
		{"reused key from another conversation",
			func(_, o, _ string) conversations.SendInput {
				return conversations.SendInput{ConversationID: o, Sender: "cursor:o", Recipient: "cursor:o", Text: "hi", IdempotencyKey: " first-key "}
			},
			func(_, _, m string) string {
				return "Idempotency key 'first-key' already has a message (" + m + ", delivery completed) for other arguments; nothing was sent. Rule: " + delivery.KeyRule + "."
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, acceptCompleted())
			id := e.conv(t)
			other, _ := e.svc.Create(ctx, "other")
			if _, err := e.svc.Join(ctx, conversations.JoinInput{ConversationID: other.ID, Provider: "cursor", NativeID: "o"}); err != nil {
				t.Fatal(err)
			}
			first, err := e.send(t, id, "first", "first-key")
			if err != nil {
				t.Fatal(err)
			}
			before, n := e.snapshot(t), e.counts(t)
			_, err = e.svc.Send(ctx, tt.in(id, other.ID, first.Message.ID))
			want := tt.want(id, other.ID, first.Message.ID)
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant  %s", err, want)
			}
			if e.counts(t) != n || e.snapshot(t) != before {
				t.Fatal("rejected send changed the store")
			}
			if len(e.disp.Calls()) != 1 {
				t.Fatalf("rejected send was dispatched")
			}
		})
	}
}

// TestPersistBeforeDispatch checks that the message and its operation are
// recorded, queued and owned by this process, before the provider is
// called.
func TestPersistBeforeDispatch(t *testing.T) { pgtest.EachDialect(t, testPersistBeforeDispatch) }

func testPersistBeforeDispatch(t *testing.T, location string) {
	var seen string
	var e *env
	st := acceptQueued()
	st.during = func() {
		row := e.c.Message.Query().WithOperation().OnlyX(context.Background())
		op := row.Edges.Operation
		if op == nil || op.Status != "queued" || op.ProviderState != "dispatching" || op.Owner != e.p.del.Owner() || !row.CreatedAt.Equal(t0) {
			seen = fmt.Sprintf("bad in-flight row %+v %+v", row, op)
			return
		}
		seen = "ok"
	}
	e = newEnvAt(t, location, st)
	id := e.conv(t)
	if _, err := e.send(t, id, "hi", ""); err != nil {
		t.Fatal(err)
	}
	if seen != "ok" {
		t.Fatalf("during dispatch: %s", seen)
	}
}

// TestUnreachableRecipientIsRecordedRejected: a recipient session the
// provider does not know is refused before anything is sent, and the
// message is recorded as rejected with the reason.
func TestUnreachableRecipientIsRecordedRejected(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c, _ := e.svc.Create(ctx, "t")
	for _, j := range []conversations.JoinInput{
		{ConversationID: c.ID, Provider: "codex", NativeID: "a"},
		{ConversationID: c.ID, Provider: "cursor", NativeID: "gone"},
	} {
		if _, err := e.svc.Join(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.svc.Send(ctx, conversations.SendInput{ConversationID: c.ID, Sender: "codex:a", Recipient: "cursor:gone", Text: "hi"})
	if err != nil || res.Message.Delivery != "rejected" || res.Receipt.Accepted ||
		!strings.Contains(res.Receipt.Detail.(map[string]any)["reason"].(string), "Unknown session cursor:gone") {
		t.Fatalf("send = %+v, %v", res, err)
	}
	if n := len(e.disp.Calls()); n != 0 {
		t.Fatalf("dispatched %d times", n)
	}
}

// TestIdempotencyKeyUniqueInDatabase checks that the store itself refuses
// a second message with the same key, whatever code writes it.
func TestIdempotencyKeyUniqueInDatabase(t *testing.T) {
	e := newEnv(t)
	id := e.conv(t)
	if _, err := e.send(t, id, "hi", "k"); err != nil {
		t.Fatal(err)
	}
	opID := e.c.Message.Query().OnlyX(context.Background()).OperationID
	err := e.c.Message.Create().SetID("message_dup").SetConversationID(id).SetSequence(99).
		SetSender("codex:a").SetRecipient("claude-code:b").SetText("x").SetCreatedAt(t0).
		SetIdempotencyKey("k").SetOperationID(opID).Exec(context.Background())
	if !ent.IsConstraintError(err) {
		t.Fatalf("duplicate key insert: %v", err)
	}
	err = e.c.Message.Create().SetID("message_dup").SetConversationID(id).SetSequence(1).
		SetSender("codex:a").SetRecipient("claude-code:b").SetText("x").SetCreatedAt(t0).
		SetIdempotencyKey("k2").SetOperationID(opID).Exec(context.Background())
	if !ent.IsConstraintError(err) {
		t.Fatalf("duplicate sequence insert: %v", err)
	}
}
