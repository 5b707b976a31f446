package handlers

import (
	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/conversations"
)

// The answers of the conversation tools.

func participantAnswer(v conversations.Participant) catalogs.Participant {
	return catalogs.Participant{
		ID:          v.ID,
		Provider:    v.Provider,
		NativeID:    v.NativeID,
		WorkspaceID: opt(v.WorkspaceID),
		Role:        opt(v.Role),
		JoinedAt:    timeText(v.JoinedAt),
	}
}

func messageAnswer(v conversations.Message) catalogs.Message {
	return catalogs.Message{
		ID:                v.ID,
		ConversationID:    v.ConversationID,
		Sequence:          v.Sequence,
		Sender:            v.Sender,
		Recipient:         v.Recipient,
		Text:              v.Text,
		ReplyTo:           opt(v.ReplyTo),
		CreatedAt:         timeText(v.CreatedAt),
		Delivery:          string(v.Delivery),
		DeliveryUnknownAt: timePtr(v.DeliveryUnknownAt),
		IdempotencyKey:    v.IdempotencyKey,
		OperationID:       v.OperationID,
		Receipt:           ptrTo(v.Receipt, receiptAnswer),
		TurnID:            opt(v.TurnID),
		ReplyToTurnID:     opt(v.ReplyToTurnID),
		TrimmedAt:         timePtr(v.TrimmedAt),
	}
}

func conversationAnswer(v conversations.Conversation) catalogs.Conversation {
	return catalogs.Conversation{
		ID:           v.ID,
		Title:        v.Title,
		Participants: mapList(v.Participants, participantAnswer),
		CreatedAt:    timeText(v.CreatedAt),
		UpdatedAt:    timeText(v.UpdatedAt),
		LastSequence: v.LastSequence,
		MessageCount: int64(v.MessageCount),
		Messages:     given(v.Messages != nil, func() []catalogs.Message { return mapList(v.Messages, messageAnswer) }),
	}
}

func reconcileResultAnswer(v conversations.ReconcileResult) catalogs.ReconcileResult {
	return catalogs.ReconcileResult{
		Message:          messageAnswer(v.Message),
		Resolved:         v.Resolved,
		PreviousDelivery: string(v.PreviousDelivery),
	}
}

func sendResultAnswer(v conversations.SendResult) catalogs.SendConversationMessageOutput {
	return catalogs.SendConversationMessageOutput{
		Message:  messageAnswer(v.Message),
		Receipt:  receiptAnswer(v.Receipt),
		Liveness: ptrTo(v.Liveness, livenessAnswer),
	}
}

func conversationGapAnswer(v conversations.Gap) catalogs.Gap {
	return catalogs.Gap{From: v.From, To: v.To}
}

func conversationListAnswer(l conversations.List) *catalogs.ListConversationsOutput {
	return &catalogs.ListConversationsOutput{
		Conversations: mapList(l.Conversations, conversationAnswer),
		NextCursor:    opt(l.NextCursor),
		Cut: func(n int) *catalogs.ListConversationsOutput {
			return conversationListAnswer(l.CutPage(n).(conversations.List))
		},
	}
}

func conversationBudgetAnswer(v conversations.BudgetLeft) catalogs.BudgetLeft {
	return catalogs.BudgetLeft{
		Messages: v.Messages, MessagesLeft: v.MessagesLeft, TurnsPerParticipant: v.TurnsPerParticipant,
		TurnsLeft: mapList(v.TurnsLeft, func(t conversations.ParticipantTurns) catalogs.BudgetLeftTurnsLeftItem {
			return catalogs.BudgetLeftTurnsLeftItem{ParticipantID: t.ParticipantID, Used: t.Used, Left: t.Left}
		}),
		Tokens: v.Tokens, TokensUsed: v.TokensUsed.Answer(), TokensLeft: v.TokensLeft(),
	}
}

func conversationPageAnswer(p conversations.Page) *catalogs.ReadConversationOutput {
	return &catalogs.ReadConversationOutput{
		Conversation:   conversationAnswer(p.Conversation),
		Messages:       mapList(p.Messages, messageAnswer),
		Next:           p.Next,
		LatestSequence: p.LatestSequence,
		Gap:            ptrTo(p.Gap, conversationGapAnswer),
		Budget:         ptrTo(p.Budget, conversationBudgetAnswer),
		NextCursor:     opt(p.NextCursor),
		Cut: func(n int) *catalogs.ReadConversationOutput {
			return conversationPageAnswer(p.CutPage(n).(conversations.Page))
		},
	}
}
