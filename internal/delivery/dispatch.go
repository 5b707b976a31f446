package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
)

var _ conversations.Dispatcher = (*Service)(nil)

// ConversationKeyPrefix prefixes the idempotency key of the operation that
// carries a conversation message ("conversation:<message key>").
const ConversationKeyPrefix = "conversation:"

// Dispatch implements conversations.Dispatcher on top of the registry: the
// message goes to the session's own endpoint, recorded as an operation
// under "conversation:<message idempotency key>" so its later outcome
// (turn completed, rejected) is observed (see OnOutcome). The errors follow
// the Dispatcher contract; a message that was already dispatched once is
// reported as uncertain, never sent again.
func (s *Service) Dispatch(ctx context.Context, provider, nativeID, text string, opts conversations.DispatchOptions) (providers.Receipt, error) {
	key := opts.IdempotencyKey
	if key == "" {
		key = opts.MessageID
	}
	if key != "" {
		key = ConversationKeyPrefix + key
	}
	extra := map[string]any{}
	if opts.MessageID != "" {
		extra["conversationMessageId"] = opts.MessageID
	}
	res, err := s.send(ctx, SendRequest{
		Provider: provider, NativeID: nativeID, Text: text, IdempotencyKey: key,
		Options: providers.SendOptions{Mode: opts.Mode, Model: opts.Model, Reasoning: opts.Reasoning},
	}, extra)
	var dup *DuplicateKeyError
	var du *DeliveryUnknownError
	var inv *InvalidError
	var ow *OutcomeWriteError
	switch {
	case errors.As(err, &ow):
		return providers.Receipt{}, fmt.Errorf("dispatched, outcome unknown: %w", err)
	case err == nil:
		return res.Receipt, nil
	case errors.As(err, &du):
		return res.Receipt, fmt.Errorf("%s: %w", du.Error(), du.Err)
	case errors.As(err, &dup):
		return providers.Receipt{}, fmt.Errorf("message was already dispatched as %s (status %s); not sending it again", dup.Existing.ID, dup.Existing.Status)
	case errors.As(err, &inv):
		return providers.Receipt{}, &providers.NotSentError{Err: err}
	case res.Operation.ID == "":
		// Refused before anything was recorded (unknown provider or
		// session, store failure): nothing was sent.
		return providers.Receipt{}, &providers.NotSentError{Err: err}
	default:
		return res.Receipt, err
	}
}
