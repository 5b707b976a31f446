package conversations

import (
	"fmt"

	"github.com/agent-interop/runtime/internal/delivery"
)

// Error texts follow the 0.3.x runtime verbatim where it had one.

// NotFoundError names an unknown conversation, participant or reply target.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

func unknownConversation(id string) error {
	return &NotFoundError{Msg: "Unknown conversation " + id}
}

func unknownSender(id string) error {
	return &NotFoundError{Msg: "Unknown conversation sender " + id}
}

func unknownRecipient(id string) error {
	return &NotFoundError{Msg: "Unknown conversation recipient " + id}
}

func unknownReplyTarget(id, conversationID string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Unknown reply target %s in conversation %s", id, conversationID)}
}

// InvalidError is an argument refused before the store is touched.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// Exact 0.3.x messages.
const (
	msgBlankText = "Conversation message text must not be blank"
	msgBareModel = "conversation_send requires the structured model object {providerID, modelID}; a bare string would be silently discarded"
)

// DuplicateKeyError refuses a send whose idempotency key already has a
// message for other arguments, in any conversation, or an operation of
// the delivery ledger (delivery.KeyRule).
type DuplicateKeyError struct {
	Key         string
	MessageID   string
	OperationID string
	Delivery    Delivery
}

func (e *DuplicateKeyError) Error() string {
	if e.MessageID == "" {
		return fmt.Sprintf("Idempotency key '%s' already has an operation (%s, status %s) for other arguments; nothing was sent. Rule: %s.",
			e.Key, e.OperationID, e.Delivery, delivery.KeyRule)
	}
	return fmt.Sprintf("Idempotency key '%s' already has a message (%s, delivery %s) for other arguments; nothing was sent. Rule: %s.",
		e.Key, e.MessageID, e.Delivery, delivery.KeyRule)
}

// BoundParticipantError refuses a participant ID that is already bound to
// another provider session in the conversation.
type BoundParticipantError struct {
	ParticipantID string
	Provider      string
	NativeID      string
}

func (e *BoundParticipantError) Error() string {
	return fmt.Sprintf("Participant ID '%s' is already bound to %s:%s", e.ParticipantID, e.Provider, e.NativeID)
}

// DeliveryUnknownError reports a dispatch whose outcome is uncertain. The
// message is recorded with delivery_unknown and must not be resent blindly.
type DeliveryUnknownError struct {
	Message Message
	Reason  string
}

func (e *DeliveryUnknownError) Error() string {
	return fmt.Sprintf("Message %s persisted with delivery_unknown; it may have reached the provider and must not be resent blindly: %s",
		e.Message.ID, e.Reason)
}
