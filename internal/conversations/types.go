package conversations

import (
	"context"
	"fmt"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
)

// Delivery is a message's delivery state.
type Delivery string

// Delivery states. Queued means a transport accepted the message (or it is
// in flight); it is never reported as completed.
const (
	DeliveryQueued    Delivery = "queued"
	DeliveryRejected  Delivery = "rejected"
	DeliveryUnknown   Delivery = "delivery_unknown"
	DeliveryCompleted Delivery = "completed"
)

// Participant is a conversation member.
type Participant struct {
	ID          string    `json:"id"`
	Provider    string    `json:"provider"`
	NativeID    string    `json:"nativeId"`
	WorkspaceID string    `json:"workspaceId,omitempty"`
	Role        string    `json:"role,omitempty"`
	JoinedAt    time.Time `json:"joinedAt"`
}

// Message is a directed message with the state of the delivery operation
// that carries it (the one ledger, internal/delivery): delivery, receipt
// and turn are read from that operation, so the two never disagree.
type Message struct {
	ID                string     `json:"id"`
	ConversationID    string     `json:"conversationId"`
	Sequence          int64      `json:"sequence"`
	Sender            string     `json:"sender"`
	Recipient         string     `json:"recipient"`
	Text              string     `json:"text"`
	ReplyTo           string     `json:"replyTo,omitempty"`
	CreatedAt         time.Time  `json:"createdAt"`
	Delivery          Delivery   `json:"delivery"`
	DeliveryUnknownAt *time.Time `json:"deliveryUnknownAt,omitempty"`
	IdempotencyKey    string     `json:"idempotencyKey"`
	// OperationID is the delivery operation carrying the message.
	OperationID string             `json:"operationId"`
	Receipt     *providers.Receipt `json:"receipt,omitempty"`
	// TurnID is the recipient's native turn the delivery started (a Codex
	// turn id, an OpenCode message id, an ACP prompt), when known.
	TurnID string `json:"turnId,omitempty"`
	// ReplyToTurnID is, for a reply, the native turn in which its sender
	// received the message it answers.
	ReplyToTurnID string `json:"replyToTurnId,omitempty"`
	// TrimmedAt is set on a message beyond the retained transcript (its
	// text is gone); only reconcile results can show one.
	TrimmedAt *time.Time `json:"trimmedAt,omitempty"`
}

// Conversation is a conversation summary; Messages is set only when
// detail was asked for.
type Conversation struct {
	ID           string        `json:"id"`
	Title        string        `json:"title"`
	Participants []Participant `json:"participants"`
	CreatedAt    time.Time     `json:"createdAt"`
	UpdatedAt    time.Time     `json:"updatedAt"`
	LastSequence int64         `json:"lastSequence"`
	MessageCount int           `json:"messageCount"`
	Messages     []Message     `json:"messages,omitzero"`
}

// Gap tells a reader that messages from From to To were trimmed before it
// read them.
type Gap struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Page is one read of a conversation's messages.
type Page struct {
	Conversation   Conversation `json:"conversation"`
	Messages       []Message    `json:"messages"`
	Next           int64        `json:"next"`
	LatestSequence int64        `json:"latestSequence"`
	Gap            *Gap         `json:"gap,omitempty"`
	// Budget is the conversation's loop budget and what is left of it.
	Budget *BudgetLeft `json:"budget,omitempty"`
	// NextCursor is set while retained messages follow this page.
	NextCursor string `json:"nextCursor,omitempty"`
	// verdict is the read's verdict filter, kept for CutPage's cursor.
	verdict string
}

// SendResult is the answer of Send. Liveness is what the runtime knows now
// of the recipient's session.
type SendResult struct {
	Message  Message             `json:"message"`
	Receipt  providers.Receipt   `json:"receipt"`
	Liveness *providers.Liveness `json:"liveness,omitempty"`
}

// ObservedReceipt is a receipt the caller observed for the message with
// IdempotencyKey.
type ObservedReceipt struct {
	IdempotencyKey string            `json:"idempotencyKey"`
	Receipt        providers.Receipt `json:"receipt"`
}

// ReconcileResult is one message Reconcile looked at.
type ReconcileResult struct {
	Message          Message  `json:"message"`
	Resolved         bool     `json:"resolved"`
	PreviousDelivery Delivery `json:"previousDelivery"`
}

func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func participantView(p *ent.Participant) Participant {
	v := Participant{
		ID:       p.ParticipantID,
		Provider: p.Provider,
		NativeID: p.NativeID,
		JoinedAt: utc(p.JoinedAt),
	}
	if p.WorkspaceID != nil {
		v.WorkspaceID = *p.WorkspaceID
	}
	if p.Role != nil {
		v.Role = string(*p.Role)
	}
	return v
}

// messageView renders a message with the state of its operation (op may
// be missing only in a store written by another build).
func messageView(m *ent.Message, op *delivery.Operation) Message {
	v := Message{
		ID:             m.ID,
		ConversationID: m.ConversationID,
		Sequence:       m.Sequence,
		Sender:         m.Sender,
		Recipient:      m.Recipient,
		Text:           m.Text,
		CreatedAt:      utc(m.CreatedAt),
		IdempotencyKey: m.IdempotencyKey,
		OperationID:    m.OperationID,
		TrimmedAt:      utcPtr(m.TrimmedAt),
		Delivery:       DeliveryUnknown,
	}
	if m.ReplyTo != nil {
		v.ReplyTo = *m.ReplyTo
	}
	if op != nil {
		v.Delivery = Delivery(op.Status)
		if op.Status == providers.StatusDeliveryUnknown {
			v.DeliveryUnknownAt = utcPtr(&op.UpdatedAt)
		}
		r := op.Receipt()
		v.Receipt = &r
		v.TurnID = op.NativeTurnID
	}
	return v
}

// messageViews renders rows with their operations (and, for replies, the
// turn of the message they answer), read inside tx.
func messageViews(ctx context.Context, tx *ent.Tx, rows []*ent.Message) ([]Message, error) {
	ids := make([]string, 0, len(rows))
	var replied []string
	for _, m := range rows {
		ids = append(ids, m.OperationID)
		if m.ReplyTo != nil {
			replied = append(replied, *m.ReplyTo)
		}
	}
	replyOps := map[string]string{} // replied-to message id -> its operation id
	if len(replied) > 0 {
		targets, err := tx.Message.Query().Where(message.IDIn(replied...)).
			Select(message.FieldID, message.FieldOperationID).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read replied-to messages: %w", err)
		}
		for _, t := range targets {
			replyOps[t.ID] = t.OperationID
			ids = append(ids, t.OperationID)
		}
	}
	ops, err := delivery.OperationsTx(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(rows))
	for _, m := range rows {
		var op *delivery.Operation
		if o, ok := ops[m.OperationID]; ok {
			op = &o
		}
		v := messageView(m, op)
		if m.ReplyTo != nil {
			if o, ok := ops[replyOps[*m.ReplyTo]]; ok {
				v.ReplyToTurnID = o.NativeTurnID
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// conversationView builds a summary from a row with its participants
// loaded.
func conversationView(c *ent.Conversation, messageCount int) Conversation {
	v := Conversation{
		ID:           c.ID,
		Title:        c.Title,
		Participants: make([]Participant, 0, len(c.Edges.Participants)),
		CreatedAt:    utc(c.CreatedAt),
		UpdatedAt:    utc(c.UpdatedAt),
		LastSequence: c.LastSequence,
		MessageCount: messageCount,
	}
	for _, p := range c.Edges.Participants {
		v.Participants = append(v.Participants, participantView(p))
	}
	return v
}
