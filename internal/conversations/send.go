package conversations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/participant"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
)

// SendInput is the input of Send.
type SendInput struct {
	ConversationID string
	Sender         string
	Recipient      string
	Text           string
	ReplyTo        string
	// IdempotencyKey is the caller's key; empty means "outbound_<uuid>".
	IdempotencyKey string
	Model          *providers.Model
	// BareModel is a model given as a plain string. It is always refused:
	// a provider would silently discard it.
	BareModel *string
	Reasoning string
}

// envelope is the text a recipient session receives.
func envelope(messageID, sender, text string) string {
	return fmt.Sprintf("[agent-interop message %s from %s]\n%s", messageID, sender, text)
}

// Send records a directed message, with the delivery operation that
// carries it, in one write transaction, and then dispatches it to the
// recipient participant's provider session (see the package
// documentation). A dispatch with an uncertain outcome returns a
// *DeliveryUnknownError after recording delivery_unknown; a provider
// refusal is recorded as rejected and returned as a normal result.
func (s *Service) Send(ctx context.Context, in SendInput) (SendResult, error) {
	if in.BareModel != nil {
		return SendResult{}, &InvalidError{Msg: msgBareModel}
	}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return SendResult{}, &InvalidError{Msg: msgBlankText}
	}
	if n := utf8.RuneCountInString(in.Text); n > MaxTextLen {
		return SendResult{}, invalidf("text must be at most %d characters; received %d", MaxTextLen, n)
	}
	key := strings.TrimSpace(in.IdempotencyKey)
	if key == "" {
		key = s.newID("outbound")
	}
	if n := utf8.RuneCountInString(key); n > MaxKeyLen {
		return SendResult{}, invalidf("idempotencyKey must be at most %d characters; received %d", MaxKeyLen, n)
	}
	if s.ledger == nil {
		return SendResult{}, errors.New("no delivery ledger is configured")
	}
	convID := strings.TrimSpace(in.ConversationID)
	recipient := strings.TrimSpace(in.Recipient)
	// The recipient's session is resolved before anything is written (a
	// participant's binding never changes); the transaction checks
	// everything again.
	var to *ent.Participant
	err := s.read(ctx, func(tx *ent.Tx) error {
		if _, err := getConversation(ctx, tx.Client(), convID); err != nil {
			return err
		}
		if _, err := findParticipant(ctx, tx, convID, strings.TrimSpace(in.Sender)); err != nil {
			return notFoundAs(err, unknownSender(strings.TrimSpace(in.Sender)))
		}
		var err error
		if to, err = findParticipant(ctx, tx, convID, recipient); err != nil {
			return notFoundAs(err, unknownRecipient(recipient))
		}
		return nil
	})
	if err != nil {
		return SendResult{}, err
	}
	// The same message again under its key answers the recorded one
	// (delivery.KeyRule); other arguments under it are refused below.
	if res, ok, err := s.replay(ctx, key, in, to, text); ok {
		return res, err
	}
	target, routeErr := s.ledger.Prepare(ctx, to.Provider, to.NativeID)
	msgID := s.newID("message")
	req := delivery.SendRequest{
		Provider: to.Provider, NativeID: to.NativeID, Text: envelope(msgID, strings.TrimSpace(in.Sender), text),
		IdempotencyKey: key, Extra: map[string]any{"conversationId": convID, "conversationMessageId": msgID},
		Options: providers.SendOptions{Mode: "send", Model: in.Model, Reasoning: strings.TrimSpace(in.Reasoning)},
	}
	var pending *delivery.Pending
	var refused *delivery.Operation
	var row *ent.Message
	err = s.tx(ctx, func(tx *ent.Tx) error {
		var opID string
		record := func() error {
			if routeErr != nil {
				op, err := s.ledger.RecordRefused(ctx, tx, to.Provider, to.NativeID, req, routeErr)
				if err != nil {
					return err
				}
				refused, opID = &op, op.ID
				return nil
			}
			p, err := s.ledger.RecordSend(ctx, tx, target, req)
			if err != nil {
				return err
			}
			pending, opID = p, p.Operation.ID
			return nil
		}
		var err error
		row, err = s.persist(ctx, tx, in, msgID, text, key, record, func() string { return opID })
		return err
	})
	if err != nil {
		if errors.As(err, new(*DuplicateKeyError)) {
			// Another process recorded it meanwhile: the same message is a
			// replay of its record.
			if res, ok, rerr := s.replay(ctx, key, in, to, text); ok {
				return res, rerr
			}
		}
		var dup *delivery.DuplicateKeyError
		if errors.As(err, &dup) {
			return SendResult{}, &DuplicateKeyError{Key: key, OperationID: dup.Existing.ID, Delivery: Delivery(dup.Existing.Status)}
		}
		return SendResult{}, err
	}
	s.ledger.Committed()
	if refused != nil {
		msg := messageView(row, refused)
		l := s.ledger.Liveness(providers.ID(to.Provider), to.NativeID)
		return SendResult{Message: msg, Receipt: refused.Receipt(), Liveness: &l}, nil
	}
	res, derr := s.ledger.Dispatch(ctx, pending)
	var du *delivery.DeliveryUnknownError
	switch {
	case errors.As(derr, &du):
		return SendResult{}, &DeliveryUnknownError{Message: messageView(row, &du.Result.Operation), Reason: du.Reason}
	case derr != nil:
		op := res.Operation
		if op.ID == "" {
			op = pending.Operation
		}
		return SendResult{}, &DeliveryUnknownError{Message: messageView(row, &op), Reason: derr.Error()}
	}
	l := s.ledger.Liveness(res.Operation.Provider, res.Operation.NativeID)
	return SendResult{Message: messageView(row, &res.Operation), Receipt: res.Receipt, Liveness: &l}, nil
}

// persist validates the send against the store and records the message
// inside tx; record writes its delivery operation first, and opID names it.
func (s *Service) persist(ctx context.Context, tx *ent.Tx, in SendInput, msgID, text, key string, record func() error, opID func() string) (*ent.Message, error) {
	convID := strings.TrimSpace(in.ConversationID)
	sender, recipient := strings.TrimSpace(in.Sender), strings.TrimSpace(in.Recipient)
	replyTo := strings.TrimSpace(in.ReplyTo)
	conv, err := getConversation(ctx, tx.Client(), convID)
	if err != nil {
		return nil, err
	}
	if err := duplicateKey(ctx, tx.Client(), key); err != nil {
		return nil, err
	}
	if _, err := findParticipant(ctx, tx, convID, sender); err != nil {
		return nil, notFoundAs(err, unknownSender(sender))
	}
	if _, err := findParticipant(ctx, tx, convID, recipient); err != nil {
		return nil, notFoundAs(err, unknownRecipient(recipient))
	}
	if replyTo != "" {
		ok, err := tx.Message.Query().Where(message.ID(replyTo), message.ConversationID(convID), message.TrimmedAtIsNil()).Exist(ctx)
		if err != nil {
			return nil, fmt.Errorf("read reply target: %w", err)
		}
		if !ok {
			return nil, unknownReplyTarget(replyTo, convID)
		}
	}
	if err := s.checkBudget(ctx, tx, conv, recipient); err != nil {
		return nil, err
	}
	if err := record(); err != nil {
		return nil, err
	}
	now := s.now()
	seq := conv.LastSequence + 1
	create := tx.Message.Create().
		SetID(msgID).
		SetConversationID(convID).
		SetSequence(seq).
		SetSender(sender).
		SetRecipient(recipient).
		SetText(text).
		SetCreatedAt(now).
		SetIdempotencyKey(key).
		SetOperationID(opID())
	if replyTo != "" {
		create.SetReplyTo(replyTo)
	}
	row, err := create.Save(ctx)
	if err != nil {
		if ent.IsConstraintError(err) {
			if derr := duplicateKey(ctx, tx.Client(), key); derr != nil {
				return nil, derr
			}
		}
		return nil, fmt.Errorf("insert message: %w", err)
	}
	if err := tx.Conversation.UpdateOneID(convID).SetLastSequence(seq).SetUpdatedAt(now).Exec(ctx); err != nil {
		return nil, fmt.Errorf("advance conversation %s: %w", convID, err)
	}
	return row, trim(ctx, tx, convID, seq, s.retain, now)
}

// replay answers a send whose key already has a message for the same
// arguments (conversation, sender, recipient, text, reply target, model
// and effort) with that message and its operation's receipt, as they are
// now; nothing is sent (delivery.KeyRule). ok is false when the key has
// no message or one for other arguments.
func (s *Service) replay(ctx context.Context, key string, in SendInput, to *ent.Participant, text string) (SendResult, bool, error) {
	var row *ent.Message
	var op delivery.Operation
	found := false
	err := s.read(ctx, func(tx *ent.Tx) error {
		m, err := tx.Message.Query().Where(message.IdempotencyKey(key)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read idempotency key: %w", err)
		}
		ops, err := delivery.OperationsTx(ctx, tx, []string{m.OperationID})
		if err != nil {
			return err
		}
		row, op = m, ops[m.OperationID]
		found = op.ID != ""
		return nil
	})
	if err != nil || !found {
		return SendResult{}, false, nil
	}
	sender := strings.TrimSpace(in.Sender)
	if row.ConversationID != strings.TrimSpace(in.ConversationID) || row.Sender != sender || row.Recipient != strings.TrimSpace(in.Recipient) ||
		deref(row.ReplyTo) != strings.TrimSpace(in.ReplyTo) {
		return SendResult{}, false, nil
	}
	req := delivery.SendRequest{
		Provider: to.Provider, NativeID: to.NativeID, Text: envelope(row.ID, sender, text),
		Extra:   map[string]any{"conversationId": row.ConversationID, "conversationMessageId": row.ID},
		Options: providers.SendOptions{Mode: "send", Model: in.Model, Reasoning: strings.TrimSpace(in.Reasoning)},
	}
	if !delivery.SameSend(op, to.Provider, to.NativeID, req) {
		return SendResult{}, false, nil
	}
	msg := messageView(row, &op)
	if op.Status == providers.StatusDeliveryUnknown {
		return SendResult{}, true, &DeliveryUnknownError{Message: msg, Reason: op.Reason()}
	}
	l := s.ledger.Liveness(op.Provider, op.NativeID)
	return SendResult{Message: msg, Receipt: op.Receipt(), Liveness: &l}, true, nil
}

// duplicateKey returns a *DuplicateKeyError when key already has a message.
func duplicateKey(ctx context.Context, c *ent.Client, key string) error {
	dup, err := c.Message.Query().Where(message.IdempotencyKey(key)).WithOperation().Only(ctx)
	switch {
	case err == nil:
		e := &DuplicateKeyError{Key: key, MessageID: dup.ID, OperationID: dup.OperationID, Delivery: DeliveryUnknown}
		if op := dup.Edges.Operation; op != nil {
			e.Delivery = Delivery(op.Status)
		}
		return e
	case ent.IsNotFound(err):
		return nil
	default:
		return fmt.Errorf("read idempotency key: %w", err)
	}
}

func findParticipant(ctx context.Context, tx *ent.Tx, convID, id string) (*ent.Participant, error) {
	return tx.Participant.Query().
		Where(participant.ConversationID(convID), participant.ParticipantID(id)).
		Only(ctx)
}

// notFoundAs replaces a not-found error with the given one.
func notFoundAs(err, notFound error) error {
	if ent.IsNotFound(err) {
		return notFound
	}
	return fmt.Errorf("read participant: %w", err)
}

// trim turns the messages older than the newest retain (the service's
// MaxMessagesPerConversation) into tombstones. Sequences are dense (every
// send records one), so the cut is by number.
func trim(ctx context.Context, tx *ent.Tx, convID string, last int64, retain int, now time.Time) error {
	cut := last - int64(retain)
	if cut < 1 {
		return nil
	}
	err := tx.Message.Update().
		Where(message.ConversationID(convID), message.SequenceLTE(cut), message.TrimmedAtIsNil()).
		SetTrimmedAt(now).
		SetText("").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("trim conversation %s: %w", convID, err)
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
