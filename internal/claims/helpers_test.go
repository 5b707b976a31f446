package claims_test

import (
	"context"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

// t0 is the fake clock's start.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// newClock is a fake clock standing at t0.
func newClock(t quartz.TestingT) *quartz.Mock {
	return testclock.At(t, t0)
}

// seedWork inserts work items with the given IDs.
func seedWork(t testing.TB, client *ent.Client, ids ...string) {
	t.Helper()
	for _, id := range ids {
		err := client.WorkItem.Create().
			SetID(id).
			SetObjective("objective of " + id).
			SetAcceptanceCriteria([]string{}).
			SetRisks([]string{}).
			SetUnresolvedQuestions([]string{}).
			SetChangedFiles([]string{}).
			SetCreatedAt(t0).
			SetUpdatedAt(t0).
			Exec(context.Background())
		if err != nil {
			t.Fatalf("seed work %s: %v", id, err)
		}
	}
}

// claimCount returns the number of claim rows.
func claimCount(t testing.TB, client *ent.Client) int {
	t.Helper()
	n, err := client.Claim.Query().Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func claimKind(k claims.Kind) claim.Kind { return claim.Kind(k) }
func claimMode(m claims.Mode) claim.Mode { return claim.Mode(m) }
