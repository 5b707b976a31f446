package desk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agent-interop/runtime/ent/conversation"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/paging"
)

// ---- conversations

// ConversationRow is one conversation in a listing.
type ConversationRow struct {
	ID, Title    string
	Participants int
	Messages     int   // retained messages
	LastSequence int64 // the newest message's sequence
	Created      time.Time
	Updated      time.Time
}

// DOMID is the row's element id.
func (c ConversationRow) DOMID() string { return domID("v-", c.ID) }

// Fingerprint changes when anything shown for the row changes.
func (c ConversationRow) Fingerprint() string {
	return fmt.Sprint(c.Title, c.Participants, c.Messages, c.LastSequence, c.Updated.UnixNano())
}

// ConversationPage is a page of conversations, most recently updated
// first.
type ConversationPage struct {
	Rows []ConversationRow
	Next string
	// Start and Total: the position of the first row and how many
	// conversations the store holds, both counted in the store.
	Start, Total int
}

func conversationRow(c conversations.Conversation) ConversationRow {
	return ConversationRow{ID: c.ID, Title: c.Title, Participants: len(c.Participants), Messages: c.MessageCount,
		LastSequence: c.LastSequence, Created: c.CreatedAt, Updated: c.UpdatedAt}
}

// conversations is list_conversations' page (conversations.List: keyset
// on (updated_at, id)).
func (r *reader) conversations(ctx context.Context, cursor string, limit int) (ConversationPage, error) {
	l, err := r.convs.List(ctx, conversations.ListInput{Limit: int64(clampLimit(limit)), Cursor: cursor})
	if err != nil {
		return ConversationPage{}, err
	}
	page := ConversationPage{Next: l.NextCursor, Start: 1}
	for _, c := range l.Conversations {
		page.Rows = append(page.Rows, conversationRow(c))
	}
	if page.Total, err = r.client.Conversation.Query().Count(ctx); err != nil {
		return page, fmt.Errorf("count conversations: %w", err)
	}
	// The cursor is list_conversations' (conversations.List, which
	// checked it above): the (updated_at, id) of the previous page's last
	// row; the conversations before the page are those not older.
	at, id, set, err := timeKeys(cursorConversations, paging.F("session", "", "updatedSince", "", "detail", "false"), cursor)
	if err != nil {
		return page, err
	}
	if set {
		n, err := r.client.Conversation.Query().
			Where(conversation.Not(olderThan[predicate.Conversation](conversation.FieldUpdatedAt, conversation.FieldID, at, id))).Count(ctx)
		if err != nil {
			return page, fmt.Errorf("count the conversations before the page: %w", err)
		}
		page.Start = n + 1
	}
	return page, nil
}

// cursorConversations is the tool name of conversations.List's cursors.
const cursorConversations = "list_conversations"

// ParticipantRow is one participant of a conversation.
type ParticipantRow struct {
	ID, Provider, NativeID, Workspace, Role string
	Joined                                  time.Time
}

// MessageRow is one directed message and the state of the delivery
// operation that carries it.
type MessageRow struct {
	ID, Sender, Recipient, Text, ReplyTo, Delivery string
	Sequence                                       int64
	Created                                        time.Time
	Operation, Turn, ProviderState                 string
	ReplyOnPage                                    bool
}

// DOMID is the row's element id.
func (m MessageRow) DOMID() string { return domID("m-", m.ID) }

// ReplyDOMID is the element id of the message this one answers.
func (m MessageRow) ReplyDOMID() string { return domID("m-", m.ReplyTo) }

// Fingerprint changes when anything shown for the row changes.
func (m MessageRow) Fingerprint() string {
	return fmt.Sprint(m.Delivery, m.ProviderState, m.Turn, m.ReplyOnPage)
}

// ConversationDetail is a conversation with a page of its messages.
type ConversationDetail struct {
	ConversationRow
	Participants []ParticipantRow
	Messages     []MessageRow
	Earlier      int64 // a "before" cursor for older messages; 0 when none
	Last         int64 // the newest sequence shown (the live cursor)
	Gap          *conversations.Gap
	Budget       *conversations.BudgetLeft // the loop budget and what is left
	// Usage totals the turns its messages started (usage.go; set by the page).
	Usage string
}

// afterEverything is an After for conversations.Read that no message
// follows: the read answers the conversation's head only.
const afterEverything = 1 << 62

// conversation reads the messages before a sequence (the newest when
// before is 0), oldest first, with conversations.Read: the retained
// messages are a run of consecutive sequences, so the page is the limit
// sequences below before.
func (r *reader) conversation(ctx context.Context, id string, before int64, limit int) (ConversationDetail, error) {
	limit = clampLimit(limit)
	var nf *conversations.NotFoundError
	read := func(in conversations.ReadInput) (conversations.Page, error) {
		p, err := r.convs.Read(ctx, in)
		if errors.As(err, &nf) {
			return p, errNotFound
		}
		return p, err
	}
	newest := before <= 0
	if newest {
		head, err := read(conversations.ReadInput{ConversationID: id, After: afterEverything, Limit: 1})
		if err != nil {
			return ConversationDetail{}, err
		}
		before = head.Conversation.LastSequence + 1
	}
	var p conversations.Page
	for attempt := 1; ; attempt++ {
		var err error
		p, err = read(conversations.ReadInput{ConversationID: id, After: max(0, before-1-int64(limit)), Limit: limit})
		if err != nil {
			return ConversationDetail{}, err
		}
		// The newest page: a message stored between the head's read and
		// this one would be cut off while the budget (read with this
		// page) already counts it; read the page again up to the new
		// head, so the messages and the budget shown agree.
		if !newest || p.Conversation.LastSequence < before || attempt == 3 {
			break
		}
		before = p.Conversation.LastSequence + 1
	}
	d := ConversationDetail{ConversationRow: conversationRow(p.Conversation), Last: before - 1, Gap: p.Gap, Budget: p.Budget}
	for _, pt := range p.Conversation.Participants {
		d.Participants = append(d.Participants, ParticipantRow{ID: pt.ID, Provider: pt.Provider, NativeID: pt.NativeID,
			Workspace: pt.WorkspaceID, Role: pt.Role, Joined: pt.JoinedAt})
	}
	first := int64(0)
	for _, m := range p.Messages {
		if m.Sequence >= before {
			break
		}
		if first == 0 {
			first = m.Sequence
		}
		d.Messages = append(d.Messages, messageRow(m))
	}
	if first > 1 && p.Gap == nil {
		d.Earlier = first
	}
	markReplies(d.Messages)
	return d, nil
}

// messageRow shows a message with the state of the delivery operation that
// carries it (the one ledger: the message has no state of its own).
func messageRow(m conversations.Message) MessageRow {
	row := MessageRow{ID: m.ID, Sender: m.Sender, Recipient: m.Recipient, Text: m.Text, ReplyTo: m.ReplyTo,
		Sequence: m.Sequence, Created: m.CreatedAt, Delivery: string(m.Delivery), Operation: m.OperationID, Turn: m.TurnID}
	if m.Receipt != nil {
		row.ProviderState = m.Receipt.ProviderState
	}
	return row
}

func markReplies(ms []MessageRow) {
	on := make(map[string]bool, len(ms))
	for _, m := range ms {
		on[m.ID] = true
	}
	for i := range ms {
		ms[i].ReplyOnPage = on[ms[i].ReplyTo]
	}
}
