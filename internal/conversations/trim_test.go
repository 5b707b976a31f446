package conversations_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
)

// TestTrimAndGap sends 5 messages more than a conversation keeps: the
// oldest 5 are trimmed, readers behind them get a gap, sequence numbers and
// keys are never reused. The service keeps MaxMessagesPerConversation
// (500); this one keeps keep (past the default read page of 100, as 500
// is), so the same cut takes 110 sends instead of 505.
func TestTrimAndGap(t *testing.T) {
	const keep = conversations.DefaultReadLimit + 5
	ctx := context.Background()
	e := newEnv(t)
	if got := conversations.Retention(e.svc); got != conversations.MaxMessagesPerConversation {
		t.Fatalf("a service keeps %d messages, want MaxMessagesPerConversation (%d)", got, conversations.MaxMessagesPerConversation)
	}
	// The default budget would stop the exchange at 40 messages.
	e.svc = e.process(t, e.disp, conversations.WithBudget(conversations.Budget{Messages: 1000, TurnsPerParticipant: 1000, Tokens: 1}),
		conversations.WithRetention(keep)).svc
	id := e.conv(t)
	var first string
	for i := 1; i <= keep+5; i++ {
		res, err := e.send(t, id, "m"+strconv.Itoa(i), "key-"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			first = res.Message.ID
		}
	}
	page, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id})
	if err != nil {
		t.Fatal(err)
	}
	if page.Gap == nil || *page.Gap != (conversations.Gap{From: 1, To: 5}) || page.Messages[0].Sequence != 6 ||
		len(page.Messages) != 100 || page.Next != 105 || page.LatestSequence != keep+5 || page.Conversation.MessageCount != keep {
		t.Fatalf("page = gap %+v first %d n %d next %d latest %d count %d", page.Gap, page.Messages[0].Sequence,
			len(page.Messages), page.Next, page.LatestSequence, page.Conversation.MessageCount)
	}
	// The listing derives the count from the retained range; it must
	// agree with counting the rows.
	list, err := e.svc.List(ctx, conversations.ListInput{})
	if err != nil || len(list.Conversations) != 1 || list.Conversations[0].MessageCount != keep {
		t.Fatalf("listed count = %+v, %v", list.Conversations, err)
	}
	tests := []struct {
		after   int64
		gap     *conversations.Gap
		firstSq int64
	}{
		{3, &conversations.Gap{From: 4, To: 5}, 6},
		{4, &conversations.Gap{From: 5, To: 5}, 6},
		{5, nil, 6},
		{keep, nil, keep + 1},
	}
	for _, tt := range tests {
		p, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id, After: tt.after, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if (tt.gap == nil) != (p.Gap == nil) || (tt.gap != nil && *tt.gap != *p.Gap) || p.Messages[0].Sequence != tt.firstSq {
			t.Errorf("after %d: gap %+v first %d", tt.after, p.Gap, p.Messages[0].Sequence)
		}
	}
	tomb := e.c.Message.GetX(ctx, first)
	if tomb.TrimmedAt == nil || tomb.Text != "" || tomb.Sequence != 1 {
		t.Fatalf("trimmed message row = %+v", tomb)
	}
	_, err = e.send(t, id, "again", "key-1")
	want := "Idempotency key 'key-1' already has a message (" + first + ", delivery queued) for other arguments; nothing was sent. Rule: " + delivery.KeyRule + "."
	if err == nil || err.Error() != want {
		t.Fatalf("reused trimmed key: %v", err)
	}
	_, err = e.svc.Send(ctx, conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "re", ReplyTo: first})
	if err == nil || err.Error() != "Unknown reply target "+first+" in conversation "+id {
		t.Fatalf("reply to a trimmed message: %v", err)
	}
	next, err := e.send(t, id, "after trim", "")
	if err != nil || next.Message.Sequence != keep+6 {
		t.Fatalf("next sequence = %d, %v", next.Message.Sequence, err)
	}
	detail, _ := e.svc.Get(ctx, id, true)
	if len(detail.Messages) != keep || detail.Messages[0].Sequence != 7 {
		t.Fatalf("detail keeps %d messages from %d", len(detail.Messages), detail.Messages[0].Sequence)
	}
}
