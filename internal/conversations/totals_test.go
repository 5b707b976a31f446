package conversations_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestConversationTotalsSumInOneAggregate: a conversation's usage total
// (read_conversation's and the desk's) sums, on SQLite and PostgreSQL,
// every figure its turns reported, counts the turns per verdict and those
// that reported usage, never another conversation's, and answers unknown
// (nil) while no turn reported usage.
func TestConversationTotalsSumInOneAggregate(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		ctx := context.Background()
		e := newEnvAt(t, location)
		e.p = e.process(t, e.disp, conversations.WithBudget(unbounded))
		e.svc = e.p.svc
		other, id := e.conv(t), e.conv(t)
		r, err := e.send(t, other, "elsewhere", "")
		if err != nil {
			t.Fatal(err)
		}
		e.setTurn(t, r.Message.ID, "answered", `{"input":5000,"output":5000,"costUsd":9}`)

		for i, tc := range []struct{ verdict, usage string }{
			{"", ""}, // queued: no verdict, no usage: not a counted turn
			{"empty", ""},
			{"answered", `{"cached":20,"reasoning":7}`},
		} {
			r, err := e.send(t, id, fmt.Sprint("turn ", i), "")
			if err != nil {
				t.Fatal(err)
			}
			e.setTurn(t, r.Message.ID, tc.verdict, tc.usage)
		}
		got, err := e.p.del.ConversationTotals(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := &providers.Usage{CachedTokens: providers.Tokens(20), ReasoningTokens: providers.Tokens(7)}
		if got.Turns != 2 || got.Reported != 1 || !reflect.DeepEqual(got.Usage, want) {
			t.Fatalf("totals with cached and reasoning only = %+v usage %s", got, got.Usage.Text())
		}

		for i, tc := range []struct{ verdict, usage string }{
			{"answered", `{"input":120,"output":30,"cached":20,"reasoning":7,"costUsd":0.25}`},
			{"failed", `{"input":10}`},
			{"", `{"output":5,"costUsd":0.5}`}, // usage stored before its verdict
		} {
			r, err := e.send(t, id, fmt.Sprint("later turn ", i), "")
			if err != nil {
				t.Fatal(err)
			}
			e.setTurn(t, r.Message.ID, tc.verdict, tc.usage)
		}
		got, err = e.p.del.ConversationTotals(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		cost := 0.75
		want = &providers.Usage{InputTokens: providers.Tokens(130), OutputTokens: providers.Tokens(35),
			CachedTokens: providers.Tokens(40), ReasoningTokens: providers.Tokens(14), CostUSD: &cost}
		wantVerdicts := map[providers.Verdict]int{providers.VerdictAnswered: 2, providers.VerdictEmpty: 1, providers.VerdictFailed: 1}
		if got.Turns != 5 || got.Reported != 4 || !reflect.DeepEqual(got.Usage, want) || !reflect.DeepEqual(got.Verdicts, wantVerdicts) || got.Partial {
			t.Fatalf("totals = %+v usage %s, want 5 turns, 4 reported, %s, %v", got, got.Usage.Text(), want.Text(), wantVerdicts)
		}
		if text := got.Text(); text != "in 130 · out 35 · cached 40 · reasoning 14 · $0.7500 over 5 turns (4 reported usage; 2 answered, 1 empty, 1 failed)" {
			t.Errorf("Text() = %q", text)
		}

		none, err := e.p.del.ConversationTotals(ctx, "conversation_missing")
		if err != nil || none.Turns != 0 || none.Usage != nil {
			t.Fatalf("totals of a conversation without messages = %+v, %v; want 0 turns, unknown usage", none, err)
		}
	})
}

// TestConversationTotalsAllocationsFlat: the total of a conversation of
// 200 turns allocates no more than that of one of 5 (one aggregate; no
// row per turn is read into Go).
func TestConversationTotalsAllocationsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 205 messages")
	}
	allocs := func(turns int) float64 {
		e, id := conversationWithUsage(t, turns)
		return testing.AllocsPerRun(20, func() {
			if _, err := e.p.del.ConversationTotals(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(5), allocs(200)
	t.Logf("allocations per total: %.0f at 5 turns, %.0f at 200", few, many)
	if many > few*1.1+5 {
		t.Fatalf("the total allocates %.0f times at 200 turns, %.0f at 5: it grows with the turns", many, few)
	}
}

// BenchmarkConversationTotals measures a conversation's usage total
// (read_conversation, the desk) as the conversation grows.
func BenchmarkConversationTotals(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			e, id := conversationWithUsage(b, turns)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.p.del.ConversationTotals(context.Background(), id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// conversationWithUsage is a conversation of the given number of
// answered turns, each of which reported usage.
func conversationWithUsage(t testing.TB, turns int) (*env, string) {
	t.Helper()
	e := newEnv(t)
	e.p = e.process(t, e.disp, conversations.WithBudget(unbounded))
	e.svc = e.p.svc
	id := e.conv(t)
	for range turns {
		if _, err := e.send(t, id, "a turn", ""); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := e.c.Operation.Update().SetVerdict("answered").SetUsage([]byte(`{"input":120,"output":30,"cached":20,"reasoning":7}`)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return e, id
}

// setTurn stores a verdict ("" none) and usage ("" none) with the
// operation of message id, as the ledger does when the turn's outcome
// reports them.
func (e *env) setTurn(t testing.TB, id, verdict, usage string) {
	t.Helper()
	if verdict != "" {
		if err := e.c.Operation.UpdateOneID(e.op(t, id).ID).SetVerdict(verdict).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if usage != "" {
		e.setUsage(t, id, usage)
	}
}
