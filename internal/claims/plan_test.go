package claims_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/queryplan"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestListFiltersUseIndexes asks SQLite for the plan of list_claims' page
// query under each filter, alone, combined and on a second page: each
// reads the claims through the index of one of its filters (ending in the
// keyset order), never by a table scan.
func TestListFiltersUseIndexes(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	seedWork(t, st.Client(), "work_a", "work_b")
	clock := newClock(t)
	live := claims.New(st, claims.WithClock(clock))
	for i := range 12 {
		work, session := "work_a", "codex:a"
		if i%3 == 0 {
			work, session = "work_b", "codex:b"
		}
		c, err := live.Acquire(ctx, claims.AcquireInput{WorkID: work, SessionID: session, Resource: fmt.Sprintf("f%d.go", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if _, err := live.Release(ctx, claims.ReleaseInput{ClaimID: c.ID}); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Second)
	}
	qs := queryplan.Wrap(t, st)
	svc := claims.New(qs, claims.WithClock(clock))
	tests := []struct {
		name    string
		in      claims.ListInput
		indexes []string // the page query uses one of them
	}{
		{"no filter", claims.ListInput{}, []string{"claim_acquired_at_id"}},
		{"session", claims.ListInput{Session: "codex:a"}, []string{"claim_session_id_acquired_at_id"}},
		{"work", claims.ListInput{WorkID: "work_a"}, []string{"claim_work_id_acquired_at_id"}},
		{"active", claims.ListInput{ActiveOnly: true}, []string{"claim_status_acquired_at_id", "claim_status_expires_at"}},
		{"session and work", claims.ListInput{Session: "codex:a", WorkID: "work_a"}, []string{"claim_session_id_acquired_at_id", "claim_work_id_acquired_at_id"}},
		{"session and active", claims.ListInput{Session: "codex:a", ActiveOnly: true}, []string{"claim_session_id_acquired_at_id", "claim_status_acquired_at_id", "claim_status_expires_at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Limit = 2
			first, err := svc.List(ctx, tt.in)
			if err != nil || first.NextCursor == "" {
				t.Fatalf("first page: %v (next %q)", err, first.NextCursor)
			}
			tt.in.Cursor = first.NextCursor
			if _, err := svc.List(ctx, tt.in); err != nil {
				t.Fatal(err)
			}
			var pages []queryplan.Plan
			for _, p := range qs.Plans(t, "claims") {
				if strings.Contains(p.Query, "ORDER BY `claims`.`acquired_at` DESC") {
					pages = append(pages, p)
				}
			}
			if len(pages) != 2 {
				t.Fatalf("%d page queries recorded, want 2", len(pages))
			}
			for _, p := range pages {
				if p.ScansTable("claims") {
					t.Errorf("scans the table:\n%s", p)
				}
				if !slices.ContainsFunc(tt.indexes, func(ix string) bool { return p.Uses("claims", ix) }) {
					t.Errorf("uses none of %v:\n%s", tt.indexes, p)
				}
			}
		})
	}
}
