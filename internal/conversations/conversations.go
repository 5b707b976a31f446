package conversations

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/conversation"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/participant"
	"github.com/agent-interop/runtime/internal/providers"
)

// Create records a new conversation. The title is trimmed and cut to 300
// characters; a blank title is refused.
func (s *Service) Create(ctx context.Context, title string) (Conversation, error) {
	return s.CreateWithBudget(ctx, title, s.budget)
}

// CreateWithBudget creates a conversation with the loop budget b.
func (s *Service) CreateWithBudget(ctx context.Context, title string, b Budget) (Conversation, error) {
	if b.Messages < 1 || b.TurnsPerParticipant < 1 || b.Tokens < 1 {
		return Conversation{}, invalidf("budget: messages, turnsPerParticipant and tokens must be at least 1; received %+v", b)
	}
	t := strings.TrimSpace(title)
	if t == "" {
		return Conversation{}, invalidf("Conversation title must not be blank")
	}
	if utf8.RuneCountInString(t) > MaxTitleLen {
		t = strings.TrimSpace(string([]rune(t)[:MaxTitleLen]))
	}
	var out Conversation
	err := s.tx(ctx, func(tx *ent.Tx) error {
		now := s.now()
		row, err := tx.Conversation.Create().
			SetID(s.newID("conversation")).
			SetTitle(t).
			SetCreatedAt(now).
			SetUpdatedAt(now).
			SetBudgetMessages(b.Messages).
			SetBudgetTurns(b.TurnsPerParticipant).
			SetBudgetTokens(b.Tokens).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("insert conversation: %w", err)
		}
		out = conversationView(row, 0)
		return nil
	})
	return out, err
}

// JoinInput is the input of Join.
type JoinInput struct {
	ConversationID string
	Provider       string
	NativeID       string
	WorkspaceID    string
	// Role is sender, reviewer, editor or empty.
	Role string
	// ParticipantID is the ID to join under; empty means
	// "<provider>:<nativeId>".
	ParticipantID string
}

// Join adds a provider session to a conversation and returns the
// conversation. Joining again with the same session is a no-op (also under
// a different participant ID: the session keeps its first one); a
// participant ID already bound to another session is refused.
func (s *Service) Join(ctx context.Context, in JoinInput) (Conversation, error) {
	convID := strings.TrimSpace(in.ConversationID)
	prov, err := providers.ParseID(strings.TrimSpace(in.Provider))
	if err != nil {
		return Conversation{}, &InvalidError{Msg: err.Error()}
	}
	nativeID := strings.TrimSpace(in.NativeID)
	if nativeID == "" {
		return Conversation{}, invalidf("nativeId must not be blank")
	}
	role := participant.Role(strings.TrimSpace(in.Role))
	if role != "" {
		if err := participant.RoleValidator(role); err != nil {
			return Conversation{}, invalidf("role must be one of sender, reviewer, editor; received %q", in.Role)
		}
	}
	pid := strings.TrimSpace(in.ParticipantID)
	if pid == "" {
		pid = string(prov) + ":" + nativeID
	}
	var out Conversation
	err = s.tx(ctx, func(tx *ent.Tx) error {
		if _, err := getConversation(ctx, tx.Client(), convID); err != nil {
			return err
		}
		bound, err := tx.Participant.Query().
			Where(participant.ConversationID(convID), participant.ParticipantID(pid)).
			Only(ctx)
		switch {
		case err == nil && (bound.Provider != string(prov) || bound.NativeID != nativeID):
			return &BoundParticipantError{ParticipantID: pid, Provider: bound.Provider, NativeID: bound.NativeID}
		case err != nil && !ent.IsNotFound(err):
			return fmt.Errorf("read participant %s: %w", pid, err)
		}
		if err == nil {
			return nil // the same session under the same ID: no-op
		}
		same, err := tx.Participant.Query().
			Where(participant.ConversationID(convID), participant.Provider(string(prov)), participant.NativeID(nativeID)).
			Exist(ctx)
		if err != nil {
			return fmt.Errorf("read participants: %w", err)
		}
		if same {
			return nil // the session is already a participant under another ID
		}
		now := s.now()
		create := tx.Participant.Create().
			SetConversationID(convID).
			SetParticipantID(pid).
			SetProvider(string(prov)).
			SetNativeID(nativeID).
			SetJoinedAt(now)
		if w := strings.TrimSpace(in.WorkspaceID); w != "" {
			create.SetWorkspaceID(w)
		}
		if role != "" {
			create.SetRole(role)
		}
		if err := create.Exec(ctx); err != nil {
			return fmt.Errorf("insert participant %s: %w", pid, err)
		}
		if err := tx.Conversation.UpdateOneID(convID).SetUpdatedAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("touch conversation %s: %w", convID, err)
		}
		return nil
	})
	if err != nil {
		return Conversation{}, err
	}
	err = s.read(ctx, func(tx *ent.Tx) error {
		out, err = summary(ctx, tx.Client(), convID)
		return err
	})
	return out, err
}

// Get returns one conversation; with detail, its retained messages too.
func (s *Service) Get(ctx context.Context, id string, detail bool) (Conversation, error) {
	var out Conversation
	err := s.read(ctx, func(tx *ent.Tx) error {
		var err error
		if out, err = summary(ctx, tx.Client(), strings.TrimSpace(id)); err != nil {
			return err
		}
		if detail {
			rows, err := tx.Message.Query().
				Where(message.ConversationID(out.ID), message.TrimmedAtIsNil()).
				Order(ent.Asc(message.FieldSequence)).All(ctx)
			if err != nil {
				return fmt.Errorf("read messages: %w", err)
			}
			if out.Messages, err = messageViews(ctx, tx, rows); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// getConversation returns the row or "Unknown conversation <id>".
func getConversation(ctx context.Context, c *ent.Client, id string) (*ent.Conversation, error) {
	row, err := c.Conversation.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, unknownConversation(id)
	}
	if err != nil {
		return nil, fmt.Errorf("read conversation %s: %w", id, err)
	}
	return row, nil
}

// summary loads one conversation with its participants and message count.
func summary(ctx context.Context, c *ent.Client, id string) (Conversation, error) {
	row, err := c.Conversation.Query().Where(conversation.ID(id)).
		WithParticipants(func(q *ent.ParticipantQuery) { q.Order(ent.Asc(participant.FieldID)) }).
		Only(ctx)
	if ent.IsNotFound(err) {
		return Conversation{}, unknownConversation(id)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("read conversation %s: %w", id, err)
	}
	n, err := c.Message.Query().Where(message.ConversationID(id), message.TrimmedAtIsNil()).Count(ctx)
	if err != nil {
		return Conversation{}, fmt.Errorf("count messages: %w", err)
	}
	return conversationView(row, n), nil
}
