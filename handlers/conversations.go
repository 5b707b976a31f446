package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/callinfo"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
)

// ConversationTools answers the conversations tool group over an
// internal/conversations Service. Handlers delegates to it when Deps
// carries a conversations service.
type ConversationTools struct {
	Svc *conversations.Service
	// Registry names the known providers (nil: the built-in ones).
	Registry *registry.Registry
	// Usage totals what the conversation's turns cost (nil: not shown).
	Usage *delivery.Service
}

// ListConversations answers list_conversations with {conversations,
// nextCursor?} (the legacy conversation_list unwraps the first page to the
// bare array).
func (t ConversationTools) ListConversations(ctx context.Context, in *catalogs.ListConversationsInput) (*catalogs.ListConversationsOutput, error) {
	session, err := providerSession("list_conversations", in.Session, knownIDs(t.Registry))
	if err != nil {
		return nil, err
	}
	since, err := paging.Since("list_conversations", "updatedSince", in.UpdatedSince)
	if err != nil {
		return nil, err
	}
	return answer(conversationListAnswer)(t.Svc.List(ctx, conversations.ListInput{
		Detail: optBool(in.Detail), Session: session, UpdatedSince: since, Limit: in.Limit, Cursor: optString(in.Cursor),
	}))
}

// ReadConversation answers read_conversation with one page.
func (t ConversationTools) ReadConversation(ctx context.Context, in *catalogs.ReadConversationInput) (*catalogs.ReadConversationOutput, error) {
	out, err := answer(conversationPageAnswer)(t.Svc.Read(ctx, conversations.ReadInput{
		ConversationID: in.ConversationID, After: optInt(in.After), Limit: int(in.Limit), Cursor: optString(in.Cursor),
		Verdict: optString(in.Verdict),
	}))
	if err != nil || t.Usage == nil || callinfo.Legacy(ctx) {
		return out, err
	}
	tot, err := t.Usage.ConversationTotals(ctx, in.ConversationID)
	if err != nil {
		return nil, err
	}
	return withConversationUsage(out, usageTotalsAnswer(tot)), nil
}

// CreateConversation answers create_conversation with the new
// conversation's summary; with conversationId it sets that conversation's
// loop budget (and title, when given) instead: raising the budget lets a
// stopped exchange go on.
func (t ConversationTools) CreateConversation(ctx context.Context, in *catalogs.CreateConversationInput) (*catalogs.Conversation, error) {
	if in.ConversationID != nil {
		if in.Budget == nil {
			return nil, paging.Invalid("create_conversation", "budget", "is required with conversationId (it sets that conversation's budget)")
		}
		return record(conversationAnswer)(t.Svc.SetBudget(ctx, *in.ConversationID, budgetChange(in.Budget), optString(in.Title)))
	}
	if in.Title == nil {
		return nil, paging.Invalid("create_conversation", "title", "is required to create a conversation")
	}
	if in.Budget == nil {
		return record(conversationAnswer)(t.Svc.Create(ctx, *in.Title))
	}
	return record(conversationAnswer)(t.Svc.CreateWithBudget(ctx, *in.Title, budgetInput(in.Budget)))
}

// budgetInput is the budget argument; the decoder filled in the defaults
// of the parts left out.
func budgetInput(b *catalogs.CreateConversationInputBudget) conversations.Budget {
	return conversations.Budget{Messages: b.Messages, TurnsPerParticipant: b.TurnsPerParticipant, Tokens: b.Tokens}
}

// budgetChange is the budget argument of a change to a conversation's
// budget: a part left out is 0, which keeps that part's current value
// (the decoder's creation default would silently reset it).
func budgetChange(b *catalogs.CreateConversationInputBudget) conversations.Budget {
	out := budgetInput(b)
	if !b.Given("messages") {
		out.Messages = 0
	}
	if !b.Given("turnsPerParticipant") {
		out.TurnsPerParticipant = 0
	}
	if !b.Given("tokens") {
		out.Tokens = 0
	}
	return out
}

// JoinConversation answers join_conversation with the conversation's
// summary.
func (t ConversationTools) JoinConversation(ctx context.Context, in *catalogs.JoinConversationInput) (*catalogs.Conversation, error) {
	return record(conversationAnswer)(t.Svc.Join(ctx, conversations.JoinInput{
		ConversationID: in.ConversationID,
		Provider:       in.Provider,
		NativeID:       in.NativeID,
		WorkspaceID:    optString(in.WorkspaceID),
		Role:           optString(in.Role),
	}))
}

// SendConversationMessage answers send_conversation_message with
// {message, receipt}. An uncertain delivery is a tool error carrying the
// 0.3.x delivery_unknown text.
func (t ConversationTools) SendConversationMessage(ctx context.Context, in *catalogs.SendConversationMessageInput) (*catalogs.SendConversationMessageOutput, error) {
	send := conversations.SendInput{
		ConversationID: in.ConversationID,
		Sender:         in.Sender,
		Recipient:      in.Recipient,
		Text:           in.Text,
		ReplyTo:        optString(in.ReplyTo),
		IdempotencyKey: optString(in.IdempotencyKey),
		Reasoning:      optString(in.Reasoning),
	}
	if in.Model != nil {
		send.Model = &providers.Model{ProviderID: in.Model.ProviderID, ModelID: in.Model.ModelID, Variant: optString(in.Model.Variant)}
	}
	return record(sendResultAnswer)(t.Svc.Send(ctx, send))
}

// ReconcileConversation answers reconcile_conversation.
func (t ConversationTools) ReconcileConversation(ctx context.Context, in *catalogs.ReconcileConversationInput) (*catalogs.ReconcileConversationOutput, error) {
	rec := conversations.ReconcileInput{ConversationID: optString(in.ConversationID)}
	for _, o := range in.ObservedReceipts {
		obs := conversations.ObservedReceipt{IdempotencyKey: o.IdempotencyKey}
		if r := o.Receipt; r != nil {
			obs.Receipt = providers.Receipt{
				Provider:  providers.ID(r.Provider),
				NativeID:  r.NativeID,
				Operation: r.Operation,
				Accepted:  r.Accepted,
				Status:    providers.ReceiptStatus(r.Status),
			}
			if len(r.Detail) > 0 {
				obs.Receipt.Detail = r.Detail
			}
		}
		rec.ObservedReceipts = append(rec.ObservedReceipts, obs)
	}
	results, err := t.Svc.Reconcile(ctx, rec)
	if err != nil {
		return nil, err
	}
	out := &catalogs.ReconcileConversationOutput{}
	results, out.Omitted = capList(results, limits.KindList)
	out.Results = mapList(results, reconcileResultAnswer)
	return out, nil
}

// capList keeps the first n of list and counts the rest (nil when none
// are left out): a collection that is settled or listed whole but answered
// within a declared cap.
func capList[T any](list []T, n int) ([]T, *int64) {
	if len(list) <= n {
		return list, nil
	}
	rest := int64(len(list) - n)
	return list[:n], &rest
}
