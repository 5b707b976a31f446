package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/providers"
)

// maxTotalledTurns bounds the operations one total reads (the newest
// count; Partial says when more were left out).
const maxTotalledTurns = 10000

// Totals is what a set of sends' turns cost, from what their providers
// reported.
type Totals struct {
	// Turns counts the sends whose turn ended with something observed (a
	// verdict or usage); Reported those among them with usage.
	Turns, Reported int
	// Usage sums the reported figures; nil when no turn reported any
	// (unknown, never 0).
	Usage *providers.Usage
	// Partial is set when more than maxTotalledTurns sends matched and
	// only the newest were counted.
	Partial bool
	// Verdicts counts the counted turns per verdict (a turn with usage
	// but no verdict yet is in none).
	Verdicts map[providers.Verdict]int
}

// VerdictText lists the counted turns per verdict in the spec's order
// ("2 answered, 1 failed"); "" when none has a verdict.
func (t Totals) VerdictText() string {
	var parts []string
	for _, v := range providers.Verdicts() {
		if n := t.Verdicts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	return strings.Join(parts, ", ")
}

// Text renders the total in one line: the summed figures, or "unknown"
// when no turn reported usage (never 0), the turns counted and their
// verdicts ("in 120 · out 30 over 3 turns (2 reported usage; 2 answered,
// 1 empty)"). The desk and `work show` print it.
func (t Totals) Text() string {
	figures := "unknown"
	if t.Usage.Known() {
		figures = t.Usage.Text()
	}
	s := fmt.Sprintf("%s over %d turns (%d reported usage", figures, t.Turns, t.Reported)
	if v := t.VerdictText(); v != "" {
		s += "; " + v
	}
	s += ")"
	if t.Partial {
		s += ", the newest only"
	}
	return s
}

// SessionTotals totals the turns of the sends to the given sessions
// ("provider:nativeId"; unknown forms are skipped).
func (s *Service) SessionTotals(ctx context.Context, sessions ...string) (Totals, error) {
	return SessionTotalsIn(ctx, s.st.Client(), sessions...)
}

// SessionTotalsIn is SessionTotals over a store client, for a reader
// without a ledger (the desk).
func SessionTotalsIn(ctx context.Context, c *ent.Client, sessions ...string) (Totals, error) {
	var ors []predicate.Operation
	seen := map[string]bool{}
	for _, id := range sessions {
		p, n, ok := strings.Cut(id, ":")
		if !ok || p == "" || n == "" || seen[id] {
			continue
		}
		seen[id] = true
		ors = append(ors, operation.And(operation.Provider(p), operation.NativeID(n)))
	}
	if len(ors) == 0 {
		return Totals{}, nil
	}
	return totals(ctx, c, operation.Or(ors...))
}

// ConversationTotals totals the turns the conversation's messages started.
func (s *Service) ConversationTotals(ctx context.Context, conversationID string) (Totals, error) {
	return ConversationTotalsIn(ctx, s.st.Client(), conversationID)
}

// ConversationTotalsIn is ConversationTotals over a store client (the desk).
func ConversationTotalsIn(ctx context.Context, c *ent.Client, conversationID string) (Totals, error) {
	ids, err := c.Message.Query().Where(message.ConversationID(conversationID)).
		Order(ent.Desc(message.FieldSequence)).Limit(maxTotalledTurns).Select(message.FieldOperationID).Strings(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("read conversation %s's messages: %w", conversationID, err)
	}
	if len(ids) == 0 {
		return Totals{}, nil
	}
	return totals(ctx, c, operation.IDIn(ids...))
}

// WorkTotals totals the turns of the sessions attached to a work item: its
// source and destination sessions and those of its handoffs.
func (s *Service) WorkTotals(ctx context.Context, workID string) (Totals, error) {
	return WorkTotalsIn(ctx, s.st.Client(), workID)
}

// WorkTotalsIn is WorkTotals over a store client (the desk).
func WorkTotalsIn(ctx context.Context, c *ent.Client, workID string) (Totals, error) {
	w, err := c.WorkItem.Query().Where(workitem.ID(workID)).Only(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("read work %s: %w", workID, err)
	}
	var sessions []string
	for _, p := range []*string{w.SourceSession, w.DestinationSession} {
		if p != nil {
			sessions = append(sessions, *p)
		}
	}
	hs, err := c.Handoff.Query().Where(handoff.WorkID(workID)).Limit(maxTotalledTurns).All(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("read work %s's handoffs: %w", workID, err)
	}
	for _, h := range hs {
		sessions = append(sessions, h.SourceSession)
		if h.DestinationSession != nil {
			sessions = append(sessions, *h.DestinationSession)
		}
	}
	return SessionTotalsIn(ctx, c, sessions...)
}

func totals(ctx context.Context, c *ent.Client, where predicate.Operation) (Totals, error) {
	ops, err := c.Operation.Query().
		Where(where, operation.Operation(OpSend), operation.Or(operation.VerdictNotNil(), operation.UsageNotNil())).
		Order(ent.Desc(operation.FieldCreatedAt)).Limit(maxTotalledTurns+1).
		Select(operation.FieldVerdict, operation.FieldUsage).All(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("read the sends' usage: %w", err)
	}
	var t Totals
	var sum providers.Usage
	for i, o := range ops {
		if i == maxTotalledTurns { // the one read past the bound: more are left out
			t.Partial = true
			break
		}
		t.Turns++
		if o.Verdict != nil {
			if t.Verdicts == nil {
				t.Verdicts = map[providers.Verdict]int{}
			}
			t.Verdicts[providers.Verdict(*o.Verdict)]++
		}
		if len(o.Usage) == 0 {
			continue
		}
		var u providers.Usage
		if json.Unmarshal(o.Usage, &u) == nil && u.Known() {
			t.Reported++
			sum.Add(&u)
		}
	}
	if t.Reported > 0 {
		t.Usage = &sum
	}
	return t, nil
}
