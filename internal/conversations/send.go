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

// recorded is what the persist step hands to the dispatch step.
type recorded struct {
	msg      *ent.Message
	provider string
	nativeID string
	leaseID  string
}

// Send records a directed message and then dispatches it to the recipient
// participant's provider session (see the package documentation for the
// protocol). A dispatch with an uncertain outcome returns a
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
	rec, err := s.persist(ctx, in, text, key)
	if err != nil {
		return SendResult{}, err
	}
	return s.deliver(ctx, rec, in, text)
}

// persist validates the send against the store and records the message,
// queued and leased, in one write transaction.
func (s *Service) persist(ctx context.Context, in SendInput, text, key string) (recorded, error) {
	convID := strings.TrimSpace(in.ConversationID)
	sender, recipient := strings.TrimSpace(in.Sender), strings.TrimSpace(in.Recipient)
	replyTo := strings.TrimSpace(in.ReplyTo)
	var rec recorded
	errRace := errors.New("idempotency key inserted concurrently")
	err := s.tx(ctx, func(tx *ent.Tx) error {
		conv, err := getConversation(ctx, tx.Client(), convID)
		if err != nil {
			return err
		}
		if err := duplicateKey(ctx, tx.Client(), key); err != nil {
			return err
		}
		if _, err := findParticipant(ctx, tx, convID, sender); err != nil {
			return notFoundAs(err, unknownSender(sender))
		}
		to, err := findParticipant(ctx, tx, convID, recipient)
		if err != nil {
			return notFoundAs(err, unknownRecipient(recipient))
		}
		if replyTo != "" {
			ok, err := tx.Message.Query().Where(message.ID(replyTo), message.ConversationID(convID), message.TrimmedAtIsNil()).Exist(ctx)
			if err != nil {
				return fmt.Errorf("read reply target: %w", err)
			}
			if !ok {
				return unknownReplyTarget(replyTo, convID)
			}
		}
		now := s.now()
		seq := conv.LastSequence + 1
		rec = recorded{provider: to.Provider, nativeID: to.NativeID, leaseID: s.newID("dispatch")}
		create := tx.Message.Create().
			SetID(s.newID("message")).
			SetConversationID(convID).
			SetSequence(seq).
			SetSender(sender).
			SetRecipient(recipient).
			SetText(text).
			SetCreatedAt(now).
			SetDelivery(message.DeliveryQueued).
			SetIdempotencyKey(key).
			SetDispatchLeaseID(rec.leaseID).
			SetDispatchStartedAt(now).
			SetDispatchExpiresAt(now.Add(s.leaseTTL))
		if replyTo != "" {
			create.SetReplyTo(replyTo)
		}
		if rec.msg, err = create.Save(ctx); err != nil {
			if ent.IsConstraintError(err) {
				return errRace
			}
			return fmt.Errorf("insert message: %w", err)
		}
		err = tx.Conversation.UpdateOneID(convID).SetLastSequence(seq).SetUpdatedAt(now).Exec(ctx)
		if err != nil {
			return fmt.Errorf("advance conversation %s: %w", convID, err)
		}
		return trim(ctx, tx, convID, seq, now)
	})
	if errors.Is(err, errRace) {
		// Another writer recorded the key between our check and insert
		// (possible on backends without serialized writers): report it.
		if derr := duplicateKey(ctx, s.client, key); derr != nil {
			return recorded{}, derr
		}
		return recorded{}, fmt.Errorf("insert message: unique constraint failed")
	}
	return rec, err
}

// duplicateKey returns a *DuplicateKeyError when key already has a message.
func duplicateKey(ctx context.Context, c *ent.Client, key string) error {
	dup, err := c.Message.Query().Where(message.IdempotencyKey(key)).Only(ctx)
	switch {
	case err == nil:
		return &DuplicateKeyError{Key: key, MessageID: dup.ID, Delivery: Delivery(dup.Delivery)}
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

// trim turns the messages older than the newest MaxMessagesPerConversation
// into tombstones. Sequences are dense (every send records one), so the
// cut is by number.
func trim(ctx context.Context, tx *ent.Tx, convID string, last int64, now time.Time) error {
	cut := last - MaxMessagesPerConversation
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
