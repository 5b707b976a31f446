package conversations

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/conversation"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/participant"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/providers"
)

// ReadInput is the input of Read.
type ReadInput struct {
	ConversationID string
	// After is the cursor: messages with a greater sequence are returned.
	After int64
	// Limit is clamped to 1..100; zero means 100.
	Limit int
	// Cursor is a nextCursor of an earlier page of the same conversation;
	// it replaces After.
	Cursor string
	// Verdict, when set, keeps only the messages whose turn ended with
	// that verdict (a spec enum; the decoder refuses other values).
	Verdict string
}

// PageLen implements paging.Cuttable.
func (p Page) PageLen() int { return len(p.Messages) }

// CutPage implements paging.Cuttable: the next page starts after the last
// message kept.
func (p Page) CutPage(n int) any {
	p.Messages = p.Messages[:n]
	p.Next = p.Messages[n-1].Sequence
	p.NextCursor = readCursor(p.Conversation.ID, p.verdict, p.Next)
	return p
}

// readFilter binds a cursor to its conversation and verdict filter (an
// unfiltered read keeps the cursors it issued before the filter existed).
func readFilter(id, verdict string) paging.Filter {
	if verdict == "" {
		return paging.F("conversationId", id)
	}
	return paging.F("conversationId", id, "verdict", verdict)
}

func readCursor(id, verdict string, after int64) string {
	return paging.Encode(toolRead, readFilter(id, verdict), strconv.FormatInt(after, 10))
}

// Read returns the retained messages after a cursor, oldest first, from
// one consistent snapshot. Next is the last returned sequence (or After
// when none); Gap is set when messages after the cursor were trimmed.
func (s *Service) Read(ctx context.Context, in ReadInput) (Page, error) {
	id := strings.TrimSpace(in.ConversationID)
	after := max(in.After, 0)
	if in.Verdict != "" {
		if _, err := providers.ParseVerdict(in.Verdict); err != nil {
			return Page{}, paging.Invalid(toolRead, "verdict", "must be one of answered, empty, failed, aborted, truncated")
		}
	}
	keys, err := paging.Decode(toolRead, readFilter(id, in.Verdict), in.Cursor, 1)
	if err != nil {
		return Page{}, err
	}
	if keys != nil {
		if in.After != 0 {
			return Page{}, paging.Invalid(toolRead, "cursor", "replaces after; pass one of them")
		}
		if after, err = strconv.ParseInt(keys[0], 10, 64); err != nil || after < 0 {
			return Page{}, paging.Invalid(toolRead, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
		}
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultReadLimit
	}
	limit = min(max(limit, 1), MaxReadLimit)
	var page Page
	err = s.read(ctx, func(tx *ent.Tx) error {
		row, err := tx.Conversation.Query().Where(conversation.ID(id)).
			WithParticipants(func(q *ent.ParticipantQuery) { q.Order(ent.Asc(participant.FieldID)) }).
			Only(ctx)
		if ent.IsNotFound(err) {
			return unknownConversation(id)
		}
		if err != nil {
			return fmt.Errorf("read conversation %s: %w", id, err)
		}
		where := []predicate.Message{message.ConversationID(id), message.TrimmedAtIsNil(), message.SequenceGT(after)}
		if in.Verdict != "" {
			where = append(where, message.HasOperationWith(operation.Verdict(in.Verdict)))
		}
		rows, err := tx.Message.Query().
			Where(where...).
			Order(ent.Asc(message.FieldSequence)).
			Limit(limit + 1).
			All(ctx)
		if err != nil {
			return fmt.Errorf("read messages: %w", err)
		}
		first, err := firstRetained(ctx, tx, id, row.LastSequence)
		if err != nil {
			return err
		}
		// The retained messages are the sequences first..last (see
		// messageCounts): no need to count them.
		conv := conversationView(row, int(row.LastSequence-first+1))
		page = Page{
			Conversation:   conv,
			Messages:       make([]Message, 0, len(rows)),
			Next:           after,
			LatestSequence: conv.LastSequence,
			verdict:        in.Verdict,
		}
		more := len(rows) > limit
		rows = rows[:min(len(rows), limit)]
		if page.Messages, err = messageViews(ctx, tx, rows); err != nil {
			return err
		}
		if len(rows) > 0 {
			page.Next = rows[len(rows)-1].Sequence
		}
		if more {
			page.NextCursor = readCursor(id, in.Verdict, page.Next)
		}
		if after+1 < first {
			page.Gap = &Gap{From: after + 1, To: first - 1}
		}
		page.Budget, err = s.budgetLeft(ctx, tx, row)
		return err
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
