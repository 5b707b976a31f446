package conversations

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
)

// ReadInput is the input of Read.
type ReadInput struct {
	ConversationID string
	// After is the cursor: messages with a greater sequence are returned.
	After int64
	// Limit is clamped to 1..100; zero means 100.
	Limit int
}

// Read returns the retained messages after a cursor, oldest first, from
// one consistent snapshot. Next is the last returned sequence (or After
// when none); Gap is set when messages after the cursor were trimmed.
func (s *Service) Read(ctx context.Context, in ReadInput) (Page, error) {
	id := strings.TrimSpace(in.ConversationID)
	after := max(in.After, 0)
	limit := in.Limit
	if limit == 0 {
		limit = DefaultReadLimit
	}
	limit = min(max(limit, 1), MaxReadLimit)
	var page Page
	err := s.read(ctx, func(tx *ent.Tx) error {
		conv, err := summary(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		rows, err := tx.Message.Query().
			Where(message.ConversationID(id), message.TrimmedAtIsNil(), message.SequenceGT(after)).
			Order(ent.Asc(message.FieldSequence)).
			Limit(limit).
			All(ctx)
		if err != nil {
			return fmt.Errorf("read messages: %w", err)
		}
		first, err := firstRetained(ctx, tx, id, conv.LastSequence)
		if err != nil {
			return err
		}
		page = Page{
			Conversation:   conv,
			Messages:       make([]Message, 0, len(rows)),
			Next:           after,
			LatestSequence: conv.LastSequence,
		}
		if page.Messages, err = messageViews(ctx, tx, rows); err != nil {
			return err
		}
		if len(rows) > 0 {
			page.Next = rows[len(rows)-1].Sequence
		}
		if after+1 < first {
			page.Gap = &Gap{From: after + 1, To: first - 1}
		}
		return nil
	})
	return page, err
}

// firstRetained is the lowest retained sequence, or last+1 when no
// message is retained.
func firstRetained(ctx context.Context, tx *ent.Tx, id string, last int64) (int64, error) {
	m, err := tx.Message.Query().
		Where(message.ConversationID(id), message.TrimmedAtIsNil()).
		Order(ent.Asc(message.FieldSequence)).
		First(ctx)
	switch {
	case ent.IsNotFound(err):
		return last + 1, nil
	case err != nil:
		return 0, fmt.Errorf("read first retained message: %w", err)
	}
	return m.Sequence, nil
}
