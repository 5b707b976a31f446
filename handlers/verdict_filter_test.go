package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestReadConversationFiltersByVerdict: read_conversation {verdict} keeps
// only the messages whose turn ended with that verdict (a turn without a
// verdict yet matches none), its cursor is bound to the filter, and an
// unknown verdict is a tool error naming the argument.
func TestReadConversationFiltersByVerdict(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	var n atomic.Int64
	f := &registrytest.Adapter{Provider: providers.OpenCode}
	f.SetSessions([]providers.Session{f.Session("ses_a", ""), f.Session("ses_b", "")}, nil)
	f.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		ref := fmt.Sprintf("msg_%d", n.Add(1))
		return providers.Receipt{Accepted: true, Status: providers.StatusQueued, Ref: ref, NativeTurnID: ref}, nil
	}
	reg, err := registry.New(st, []providers.Adapter{f}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	relay := registry.NewHost()
	ledger := delivery.New(st, reg, delivery.Options{Reports: relay})
	t.Cleanup(func() { ledger.Close() })
	tools := ConversationTools{Svc: conversations.New(st, ledger), Usage: ledger}
	conv, err := tools.CreateConversation(ctx, &catalogs.CreateConversationInput{Title: strPtr("verdicts")})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ses_a", "ses_b"} {
		if _, err := tools.JoinConversation(ctx, &catalogs.JoinConversationInput{ConversationID: conv.ID, Provider: "opencode", NativeID: id}); err != nil {
			t.Fatal(err)
		}
	}
	// Four messages: answered, failed, answered, and one still running.
	verdicts := []providers.Verdict{providers.VerdictAnswered, providers.VerdictFailed, providers.VerdictAnswered, ""}
	for i, v := range verdicts {
		in, err := catalogs.DecodeSendConversationMessage(json.RawMessage(fmt.Sprintf(
			`{"conversationId":%q,"sender":"opencode:ses_a","recipient":"opencode:ses_b","text":"m%d"}`, conv.ID, i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tools.SendConversationMessage(ctx, in); err != nil {
			t.Fatal(err)
		}
		if v != "" {
			relay.ReportOutcome(providers.OpenCode, "ses_b", fmt.Sprintf("msg_%d", i+1),
				providers.Outcome{Status: providers.StatusCompleted, Turn: &providers.TurnResult{Verdict: v}})
		}
	}
	if err := ledger.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	read := func(args string) (*catalogs.ReadConversationOutput, error) {
		t.Helper()
		in, err := catalogs.DecodeReadConversation(json.RawMessage(`{"conversationId":"` + conv.ID + `"` + args + `}`))
		if err != nil {
			return nil, err
		}
		return tools.ReadConversation(ctx, in)
	}
	texts := func(out *catalogs.ReadConversationOutput) string {
		var s []string
		for _, m := range out.Messages {
			s = append(s, m.Text)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct{ args, want string }{
		{``, "m0,m1,m2,m3"},
		{`,"verdict":"answered"`, "m0,m2"},
		{`,"verdict":"failed"`, "m1"},
		{`,"verdict":"empty"`, ""},
		{`,"verdict":"answered","after":1`, "m2"},
	} {
		out, err := read(tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if got := texts(out); got != tc.want {
			t.Errorf("read_conversation {%s}: messages %q, want %q", tc.args, got, tc.want)
		}
	}
	// A filtered page's cursor continues the filtered read and no other.
	first, err := read(`,"verdict":"answered","limit":1`)
	if err != nil || texts(first) != "m0" || first.NextCursor == nil {
		t.Fatalf("first page: %v %+v", err, first)
	}
	next, err := read(`,"verdict":"answered","cursor":"` + *first.NextCursor + `"`)
	if err != nil || texts(next) != "m2" {
		t.Fatalf("second page: %v %+v", err, next)
	}
	if _, err := read(`,"verdict":"failed","cursor":"` + *first.NextCursor + `"`); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("a cursor under another verdict filter: %v, want a cursor error", err)
	}
	// Bad input: an unknown verdict names the argument and the known ones.
	_, err = read(`,"verdict":"completed"`)
	if err == nil || !strings.Contains(err.Error(), "verdict") || !strings.Contains(err.Error(), "answered") {
		t.Errorf("unknown verdict filter: %v, want an error naming verdict and the known values", err)
	}
}

// TestReadConversationServiceRefusesUnknownVerdict: a caller that skips the
// generated decoder (the desk, the CLI) gets the same refusal.
func TestReadConversationServiceRefusesUnknownVerdict(t *testing.T) {
	svc := conversations.New(teststore.Open(t), nil)
	_, err := svc.Read(context.Background(), conversations.ReadInput{ConversationID: "conv_x", Verdict: "done"})
	if err == nil || !strings.Contains(err.Error(), "verdict") {
		t.Fatalf("Read {verdict: done}: %v, want an error naming verdict", err)
	}
}
