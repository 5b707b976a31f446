package conversations_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agent-interop/runtime/internal/conversations"
)

// BenchmarkSend measures one send with an instant dispatcher: the persist
// transaction, the dispatch and the outcome transaction.
func BenchmarkSend(b *testing.B) {
	e := newEnv(b)
	e.svc = e.process(b, e.disp, conversations.WithBudget(unbounded)).svc
	id := e.conv(b)
	in := conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "benchmark message"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.svc.Send(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead measures reading a page of 100 messages from a full
// (500-message) conversation.
func BenchmarkRead(b *testing.B) {
	e := newEnv(b)
	e.svc = e.process(b, e.disp, conversations.WithBudget(unbounded)).svc
	id := e.conv(b)
	for range conversations.MaxMessagesPerConversation {
		if _, err := e.send(b, id, "benchmark message", ""); err != nil {
			b.Fatal(err)
		}
	}
	in := conversations.ReadInput{ConversationID: id, After: 200}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.svc.Read(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// unbounded is a budget no benchmark reaches.
var unbounded = conversations.Budget{Messages: 1 << 40, TurnsPerParticipant: 1 << 40, Tokens: 1 << 40}

// BenchmarkSendAfterUsage measures one send into a conversation whose
// earlier turns all reported usage: the token budget's sum is one SQL
// aggregate, so the cost stays flat as the conversation grows.
func BenchmarkSendAfterUsage(b *testing.B) {
	for _, prior := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("prior=%d", prior), func(b *testing.B) {
			e := newEnv(b)
			e.svc = e.process(b, e.disp, conversations.WithBudget(unbounded)).svc
			id := e.conv(b)
			for range prior {
				if _, err := e.send(b, id, "earlier message", ""); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			if err := e.c.Operation.Update().SetUsage(json.RawMessage(`{"input":120,"output":30}`)).Exec(ctx); err != nil {
				b.Fatal(err)
			}
			in := conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "benchmark message"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.svc.Send(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
