package conversations

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/conversation"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/participant"
	"github.com/agent-interop/runtime/internal/paging"
)

// Page sizes of List, and the messages a detailed listing embeds.
const (
	DefaultListLimit = limits.ListConversationsLimitDefault
	MaxListLimit     = limits.ListConversationsLimitMax
	// DetailMessages is how many of its newest retained messages each
	// conversation of a detailed listing carries; read_conversation pages
	// the rest.
	DetailMessages = 10
)

const (
	toolList = "list_conversations"
	toolRead = "read_conversation"
)

// ListInput filters and pages List.
type ListInput struct {
	// Detail adds each conversation's newest DetailMessages messages.
	Detail bool
	// Session keeps the conversations a provider session
	// ("<provider>:<nativeId>") participates in.
	Session string
	// UpdatedSince keeps conversations updated at or after it.
	UpdatedSince *time.Time
	// Limit is the page size (0 means DefaultListLimit).
	Limit int64
	// Cursor is a nextCursor of an earlier page of the same filter.
	Cursor string
}

// List is one page of List: conversations, most recently updated first.
type List struct {
	Conversations []Conversation `json:"conversations"`
	NextCursor    string         `json:"nextCursor,omitempty"`

	filter paging.Filter
}

// PageLen implements paging.Cuttable.
func (l List) PageLen() int { return len(l.Conversations) }

// CutPage implements paging.Cuttable.
func (l List) CutPage(n int) any {
	last := l.Conversations[n-1]
	l.Conversations = l.Conversations[:n]
	l.NextCursor = listCursor(l.filter, last)
	return l
}

func listCursor(f paging.Filter, c Conversation) string {
	return paging.Encode(toolList, f, c.UpdatedAt.Format(time.RFC3339Nano), c.ID)
}

// List returns one page of conversations, most recently updated first (ID
// descending among equal times), keyset-paged on (updated_at, id). Message
// counts and participants are read for the page's conversations only.
func (s *Service) List(ctx context.Context, in ListInput) (List, error) {
	limit, err := paging.Limit(toolList, in.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return List{}, err
	}
	session := strings.TrimSpace(in.Session)
	var prov, native string
	if session != "" {
		var ok bool
		if prov, native, ok = strings.Cut(session, ":"); !ok || prov == "" || native == "" {
			return List{}, paging.Invalid(toolList, "session", "must be <provider>:<nativeId>")
		}
	}
	since := ""
	if in.UpdatedSince != nil {
		since = in.UpdatedSince.UTC().Format(time.RFC3339Nano)
	}
	f := paging.F("session", session, "updatedSince", since, "detail", fmt.Sprint(in.Detail))
	keys, err := paging.Decode(toolList, f, in.Cursor, 2)
	if err != nil {
		return List{}, err
	}
	var after time.Time
	if keys != nil {
		if after, err = time.Parse(time.RFC3339Nano, keys[0]); err != nil || keys[1] == "" {
			return List{}, paging.Invalid(toolList, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
		}
	}
	out := List{Conversations: []Conversation{}, filter: f}
	err = s.read(ctx, func(tx *ent.Tx) error {
		q := tx.Conversation.Query()
		if session != "" {
			// Driven from the participant index: the session's own
			// conversations are looked up by ID and sorted, so the cost is
			// that session's conversations, not every newer conversation
			// of the store (which walking updated_at and probing each
			// would cost).
			q = q.Where(func(sel *sql.Selector) {
				t := sql.Table(participant.Table)
				sel.Where(sql.In(sel.C(conversation.FieldID),
					sql.Select(t.C(participant.FieldConversationID)).From(t).
						Where(sql.And(sql.EQ(t.C(participant.FieldProvider), prov), sql.EQ(t.C(participant.FieldNativeID), native)))))
			})
		}
		if in.UpdatedSince != nil {
			q = q.Where(conversation.UpdatedAtGTE(*in.UpdatedSince))
		}
		if keys != nil {
			q = q.Where(func(sel *sql.Selector) {
				sel.Where(sql.CompositeLT([]string{sel.C(conversation.FieldUpdatedAt), sel.C(conversation.FieldID)}, after, keys[1]))
			})
		}
		rows, err := q.WithParticipants(func(q *ent.ParticipantQuery) { q.Order(ent.Asc(participant.FieldID)) }).
			Order(ent.Desc(conversation.FieldUpdatedAt), ent.Desc(conversation.FieldID)).
			Limit(limit + 1).All(ctx)
		if err != nil {
			return fmt.Errorf("list conversations: %w", err)
		}
		more := len(rows) > limit
		rows = rows[:min(len(rows), limit)]
		counts, err := messageCounts(ctx, tx, rows)
		if err != nil {
			return err
		}
		for _, r := range rows {
			v := conversationView(r, counts[r.ID])
			if in.Detail {
				if v.Messages, err = newestMessages(ctx, tx, r.ID, DetailMessages); err != nil {
					return err
				}
			}
			out.Conversations = append(out.Conversations, v)
		}
		if more {
			out.NextCursor = listCursor(f, out.Conversations[len(out.Conversations)-1])
		}
		return nil
	})
	return out, err
}

// newestMessages returns a conversation's newest n retained messages,
// oldest first.
func newestMessages(ctx context.Context, tx *ent.Tx, id string, n int) ([]Message, error) {
	rows, err := tx.Message.Query().
		Where(message.ConversationID(id), message.TrimmedAtIsNil()).
		Order(ent.Desc(message.FieldSequence)).Limit(n).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	slices.Reverse(rows)
	return messageViews(ctx, tx, rows)
}

// messageCounts returns the retained message count of each of the given
// conversations (one page of them). Trimming turns a conversation's oldest
// messages into tombstones and sequences are handed out one per message,
// so the retained messages are the sequences from the first retained one
// to the conversation's last: one index seek per conversation instead of
// counting up to 500 rows each.
func messageCounts(ctx context.Context, tx *ent.Tx, convs []*ent.Conversation) (map[string]int, error) {
	out := make(map[string]int, len(convs))
	for _, c := range convs {
		first, err := firstRetained(ctx, tx, c.ID, c.LastSequence)
		if err != nil {
			return nil, err
		}
		if n := c.LastSequence - first + 1; n > 0 {
			out[c.ID] = int(n)
		}
	}
	return out, nil
}

var (
	_ paging.Cuttable = List{}
	_ paging.Cuttable = Page{}
)
