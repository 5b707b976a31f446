package delivery

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/providers"
)

// maxTotalledHandoffs bounds the handoffs whose sessions a work item's
// total counts (the newest; Partial says when more were left out). The
// turns themselves are summed in one SQL aggregate, without a bound.
const maxTotalledHandoffs = 10000

// Totals is what a set of sends' turns cost, from what their providers
// reported.
type Totals struct {
	// Turns counts the sends whose turn ended with something observed (a
	// verdict or usage); Reported those among them with usage.
	Turns, Reported int
	// Usage sums the reported figures; nil when no turn reported any
	// (unknown, never 0).
	Usage *providers.Usage
	// Partial is set when a work item has more than maxTotalledHandoffs
	// handoffs and only the sessions of the newest were counted.
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

// ConversationTotalsIn is ConversationTotals over a store client (the
// desk): one SQL aggregate over the operations of the conversation's
// messages (OfConversation), whatever their number.
func ConversationTotalsIn(ctx context.Context, c *ent.Client, conversationID string) (Totals, error) {
	t, err := TotalsOf(ctx, c.Operation, OfConversation(conversationID))
	if err != nil {
		return Totals{}, fmt.Errorf("conversation %s: %w", conversationID, err)
	}
	return t, nil
}

// OfConversation selects the operations of conversationID's messages, in
// the query itself (a subquery on the messages; no id is read into Go).
func OfConversation(conversationID string) predicate.Operation {
	return func(s *entsql.Selector) {
		t := entsql.Dialect(s.Dialect()).Table(message.Table)
		s.Where(entsql.In(s.C(operation.FieldID),
			entsql.Dialect(s.Dialect()).Select(t.C(message.FieldOperationID)).From(t).
				Where(entsql.EQ(t.C(message.FieldConversationID), conversationID))))
	}
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
	hs, err := c.Handoff.Query().Where(handoff.WorkID(workID)).Order(ent.Desc(handoff.FieldCreatedAt)).
		Limit(maxTotalledHandoffs + 1).All(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("read work %s's handoffs: %w", workID, err)
	}
	partial := len(hs) > maxTotalledHandoffs
	if partial {
		hs = hs[:maxTotalledHandoffs]
	}
	for _, h := range hs {
		sessions = append(sessions, h.SourceSession)
		if h.DestinationSession != nil {
			sessions = append(sessions, *h.DestinationSession)
		}
	}
	t, err := SessionTotalsIn(ctx, c, sessions...)
	t.Partial = partial
	return t, err
}

func totals(ctx context.Context, c *ent.Client, where predicate.Operation) (Totals, error) {
	return TotalsOf(ctx, c.Operation, where)
}

// TotalsOf totals the send operations where selects (those whose turn
// ended with a verdict or usage) in one SQL aggregate grouped by verdict:
// the store returns a row per verdict, never a row per turn, so its cost
// does not grow in Go with the turns it sums. ops may be a transaction's
// (a conversation's token budget sums its turns inside the send's
// transaction).
func TotalsOf(ctx context.Context, ops *ent.OperationClient, where predicate.Operation) (Totals, error) {
	var rows []struct {
		Verdict   sql.NullString  `json:"verdict"`
		Turns     int64           `json:"turns"`
		Reported  sql.NullInt64   `json:"reported"`
		Input     sql.NullInt64   `json:"tokens_in"`
		Output    sql.NullInt64   `json:"tokens_out"`
		Cached    sql.NullInt64   `json:"tokens_cached"`
		Reasoning sql.NullInt64   `json:"tokens_reasoning"`
		Cost      sql.NullFloat64 `json:"cost_usd"`
	}
	err := ops.Query().
		Where(where, operation.Operation(OpSend), operation.Or(operation.VerdictNotNil(), operation.UsageNotNil())).
		GroupBy(operation.FieldVerdict).
		Aggregate(countAs("turns"), reportedCount("reported"),
			usageSum("input", "tokens_in", false), usageSum("output", "tokens_out", false),
			usageSum("cached", "tokens_cached", false), usageSum("reasoning", "tokens_reasoning", false),
			usageSum("costUsd", "cost_usd", true)).
		Scan(ctx, &rows)
	if err != nil {
		return Totals{}, fmt.Errorf("sum the sends' usage: %w", err)
	}
	var t Totals
	var sum providers.Usage
	for _, r := range rows {
		t.Turns += int(r.Turns)
		t.Reported += int(r.Reported.Int64)
		if r.Verdict.Valid {
			if t.Verdicts == nil {
				t.Verdicts = map[providers.Verdict]int{}
			}
			t.Verdicts[providers.Verdict(r.Verdict.String)] += int(r.Turns)
		}
		u := providers.Usage{InputTokens: nullInt(r.Input), OutputTokens: nullInt(r.Output),
			CachedTokens: nullInt(r.Cached), ReasoningTokens: nullInt(r.Reasoning)}
		if r.Cost.Valid {
			u.CostUSD = &r.Cost.Float64
		}
		sum.Add(&u)
	}
	if t.Reported > 0 {
		t.Usage = &sum
	}
	return t, nil
}

func nullInt(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// usageKeys are the figures of the usage JSON (providers.Usage's keys).
var usageKeys = []string{"input", "output", "cached", "reasoning", "costUsd"}

// usageFigure is the SQL expression of one figure of an operation's usage
// JSON: NULL when the provider did not report it.
func usageFigure(s *entsql.Selector, key string) string {
	c := s.C(operation.FieldUsage)
	if s.Dialect() == dialect.Postgres {
		return fmt.Sprintf("(%s->>'%s')", c, key)
	}
	return fmt.Sprintf("json_extract(%s, '$.%s')", c, key)
}

// usageSum sums one figure of the usage JSON as the column as: NULL when
// no row reported it.
func usageSum(key, as string, float bool) ent.AggregateFunc {
	return func(s *entsql.Selector) string {
		if s.Dialect() == dialect.Postgres {
			if float {
				return fmt.Sprintf("SUM(%s::double precision) AS %s", usageFigure(s, key), as)
			}
			return fmt.Sprintf("CAST(SUM(%s::bigint) AS bigint) AS %s", usageFigure(s, key), as)
		}
		return fmt.Sprintf("SUM(%s) AS %s", usageFigure(s, key), as)
	}
}

// reportedCount counts the rows whose usage reports any figure, as the
// column as.
func reportedCount(as string) ent.AggregateFunc {
	return func(s *entsql.Selector) string {
		conds := make([]string, len(usageKeys))
		for i, k := range usageKeys {
			conds[i] = usageFigure(s, k) + " IS NOT NULL"
		}
		return fmt.Sprintf("CAST(SUM(CASE WHEN %s THEN 1 ELSE 0 END) AS bigint) AS %s", strings.Join(conds, " OR "), as)
	}
}

// countAs counts the rows, as the column as.
func countAs(as string) ent.AggregateFunc {
	return func(*entsql.Selector) string { return "COUNT(*) AS " + as }
}
