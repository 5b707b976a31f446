package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestConversationTools drives every conversations tool from raw
// arguments through the generated decoders.
func TestConversationTools(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	var sent []string
	var adapters []providers.Adapter
	for _, id := range []providers.ID{providers.Codex, providers.OpenCode} {
		f := &registrytest.Adapter{Provider: id}
		f.SetSessions([]providers.Session{f.Session("a", ""), f.Session("ses_1", "")}, nil)
		f.SendFunc = func(_ context.Context, nativeID, text string, o providers.SendOptions) (providers.Receipt, error) {
			sent = append(sent, string(id)+"/"+nativeID+"/"+o.Model.ModelID)
			if strings.HasSuffix(text, "lost") {
				return providers.Receipt{}, errors.New("connection reset")
			}
			return providers.Receipt{Accepted: true, Status: providers.StatusQueued}, nil
		}
		adapters = append(adapters, f)
	}
	reg, err := registry.New(st, adapters, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledger := delivery.New(st, reg, delivery.Options{})
	t.Cleanup(func() { ledger.Close() })
	tools := ConversationTools{Svc: conversations.New(st, ledger)}

	created, err := tools.CreateConversation(ctx, &catalogs.CreateConversationInput{Title: strPtr(" Pairing ")})
	if err != nil {
		t.Fatal(err)
	}
	id := created.ID
	for _, raw := range []string{
		`{"conversationId":"` + id + `","provider":"codex","nativeId":"a"}`,
		`{"conversationId":"` + id + `","provider":"opencode","nativeId":"ses_1","role":"reviewer","workspaceId":"/repo"}`,
	} {
		in, err := catalogs.DecodeJoinConversation(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tools.JoinConversation(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	in, err := catalogs.DecodeSendConversationMessage(json.RawMessage(`{"conversationId":"` + id +
		`","sender":"codex:a","recipient":"opencode:ses_1","text":"hi","idempotencyKey":"k1","model":{"providerID":"p","modelID":"m"}}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tools.SendConversationMessage(ctx, in)
	if err != nil || !strings.Contains(mustJSON(t, out), `"delivery":"queued"`) || len(sent) != 1 || sent[0] != "opencode/ses_1/m" {
		t.Fatalf("send = %s, %v, dispatched %v", mustJSON(t, out), err, sent)
	}
	lost, _ := catalogs.DecodeSendConversationMessage(json.RawMessage(`{"conversationId":"` + id +
		`","sender":"codex:a","recipient":"opencode:ses_1","text":"lost","idempotencyKey":"k2","model":{"providerID":"p","modelID":"m"}}`))
	if _, err := tools.SendConversationMessage(ctx, lost); err == nil || !strings.Contains(err.Error(), "persisted with delivery_unknown") {
		t.Fatalf("uncertain send: %v", err)
	}

	page, err := tools.ReadConversation(ctx, &catalogs.ReadConversationInput{ConversationID: id, Limit: 100})
	if err != nil || !strings.Contains(mustJSON(t, page), `"next":2,"latestSequence":2`) {
		t.Fatalf("read = %s, %v", mustJSON(t, page), err)
	}
	list, err := tools.ListConversations(ctx, &catalogs.ListConversationsInput{})
	if err != nil || !strings.HasPrefix(mustJSON(t, list), `{"conversations":[{"id":"`+id+`","title":"Pairing"`) || strings.Contains(mustJSON(t, list), `"messages"`) {
		t.Fatalf("list = %s, %v", mustJSON(t, list), err)
	}

	rin, err := catalogs.DecodeReconcileConversation(json.RawMessage(`{"observedReceipts":[{"idempotencyKey":"k2",` +
		`"receipt":{"provider":"opencode","nativeId":"ses_1","operation":"send","accepted":true,"status":"completed","detail":{"via":"test"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tools.ReconcileConversation(ctx, rin)
	got := mustJSON(t, rec)
	if err != nil || !strings.HasPrefix(got, `{"results":[{"message":{`) || !strings.Contains(got, `"delivery":"completed"`) ||
		!strings.Contains(got, `"detail":{"via":"test"}`) || !strings.HasSuffix(got, `"resolved":true,"previousDelivery":"delivery_unknown"}]}`) {
		t.Fatalf("reconcile = %s, %v", got, err)
	}
}
