package claims_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claimconflict"
	"github.com/agent-interop/runtime/internal/claims"
)

// TestRefusalsAreRecorded: a refused acquisition leaves a claim_conflicts
// record naming who asked, for what, and the claim that refused it (the
// traffic desk shows them); an accepted one leaves none; the table keeps
// only the newest MaxConflictRecords.
func TestRefusalsAreRecorded(t *testing.T) {
	ctx := context.Background()
	s, client, clock := newService(t)
	held := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "src/auth", Kind: claims.KindDirectory})
	mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "src/auth/own.ts"})
	if n := client.ClaimConflict.Query().CountX(ctx); n != 0 {
		t.Fatalf("%d conflict records after accepted claims", n)
	}
	_, err := s.Acquire(ctx, claims.AcquireInput{WorkID: "work_b", SessionID: "claude-code:b", Resource: "./src/auth/token.ts", Mode: claims.ModeSharedRead})
	var ce *claims.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	rows := client.ClaimConflict.Query().AllX(ctx)
	if len(rows) != 1 {
		t.Fatalf("%d conflict records, want 1", len(rows))
	}
	got := rows[0]
	want := ent.ClaimConflict{WorkID: "work_b", SessionID: "claude-code:b", Resource: "src/auth/token.ts", Kind: "file", Mode: "shared_read",
		HeldClaimID: held.ID, HeldSessionID: "codex:a"}
	if got.WorkID != want.WorkID || got.SessionID != want.SessionID || got.Resource != want.Resource || got.Kind != want.Kind ||
		got.Mode != want.Mode || got.HeldClaimID != want.HeldClaimID || got.HeldSessionID != want.HeldSessionID || !got.RefusedAt.Equal(clock.Now().UTC().Truncate(1e6)) {
		t.Fatalf("record %+v, want %+v at %v", got, want, clock.Now())
	}
	if n := claimCount(t, client); n != 2 {
		t.Fatalf("claims after the refusal = %d, want 2 (nothing inserted)", n)
	}
	for range claims.MaxConflictRecords + 5 {
		if _, err := s.Acquire(ctx, claims.AcquireInput{WorkID: "work_b", SessionID: "claude-code:b", Resource: "src/auth/x.ts"}); err == nil {
			t.Fatal("a conflicting claim was accepted")
		}
	}
	if n := client.ClaimConflict.Query().CountX(ctx); n != claims.MaxConflictRecords {
		t.Fatalf("%d conflict records kept, want %d", n, claims.MaxConflictRecords)
	}
	if client.ClaimConflict.Query().Where(claimconflict.ID(got.ID)).ExistX(ctx) {
		t.Fatal("the oldest record was kept beyond the bound")
	}
}
