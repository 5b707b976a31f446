package conversations

import (
	"time"

	"github.com/agent-interop/runtime/ent"
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

// DispatchLease marks a message whose dispatch is in flight.
type DispatchLease struct {
	ID        string    `json:"id"`
	StartedAt time.Time `json:"startedAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Message is a directed message with its delivery record.
type Message struct {
	ID                string             `json:"id"`
	ConversationID    string             `json:"conversationId"`
	Sequence          int64              `json:"sequence"`
	Sender            string             `json:"sender"`
	Recipient         string             `json:"recipient"`
	Text              string             `json:"text"`
	ReplyTo           string             `json:"replyTo,omitempty"`
	CreatedAt         time.Time          `json:"createdAt"`
	Delivery          Delivery           `json:"delivery"`
	DeliveryUnknownAt *time.Time         `json:"deliveryUnknownAt,omitempty"`
	IdempotencyKey    string             `json:"idempotencyKey"`
	Receipt           *providers.Receipt `json:"receipt,omitempty"`
	DispatchLease     *DispatchLease     `json:"dispatchLease,omitempty"`
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
	// NextCursor is set while retained messages follow this page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// SendResult is the answer of Send.
type SendResult struct {
	Message Message           `json:"message"`
	Receipt providers.Receipt `json:"receipt"`
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

func messageView(m *ent.Message) Message {
	v := Message{
		ID:                m.ID,
		ConversationID:    m.ConversationID,
		Sequence:          m.Sequence,
		Sender:            m.Sender,
		Recipient:         m.Recipient,
		Text:              m.Text,
		CreatedAt:         utc(m.CreatedAt),
		Delivery:          Delivery(m.Delivery),
		DeliveryUnknownAt: utcPtr(m.DeliveryUnknownAt),
		IdempotencyKey:    m.IdempotencyKey,
		Receipt:           m.Receipt,
		TrimmedAt:         utcPtr(m.TrimmedAt),
	}
	if m.ReplyTo != nil {
		v.ReplyTo = *m.ReplyTo
	}
	if m.DispatchLeaseID != nil && m.DispatchExpiresAt != nil {
		v.DispatchLease = &DispatchLease{ID: *m.DispatchLeaseID, ExpiresAt: utc(*m.DispatchExpiresAt)}
		if m.DispatchStartedAt != nil {
			v.DispatchLease.StartedAt = utc(*m.DispatchStartedAt)
		}
	}
	return v
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

// deliveryFor maps a receipt to a delivery state (0.3.x rule).
func deliveryFor(r providers.Receipt) Delivery {
	switch {
	case !r.Accepted:
		return DeliveryRejected
	case r.Status == providers.StatusCompleted:
		return DeliveryCompleted
	default:
		return DeliveryQueued
	}
}
