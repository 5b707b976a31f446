package claims_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/claims"
)

// TestNarrowedQueryMatchesRule compares Acquire (which reads only the rows
// its query narrows to) against the exact rule applied to every stored
// claim, over random claim sets and requests.
func TestNarrowedQueryMatchesRule(t *testing.T) {
	ctx := context.Background()
	s, client, clock := newService(t)
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{".", "/", "src", "src/auth", "src/auth/token.ts", "src/authz", "src/auth_x", "src/a%b",
		"SRC/auth", "/repo", "/repo/src", "/repo/src/a.go", "docs/x.md", "src/auth/deep/er.go"}
	kinds := []claims.Kind{claims.KindFile, claims.KindDirectory, claims.KindInterface, claims.KindWorkspace}
	modes := []claims.Mode{claims.ModeExclusive, claims.ModeSharedRead}
	sessions := []string{"codex:a", "codex:b", "cursor:c"}
	pick := func() claims.Claim {
		return claims.Claim{
			WorkID: "work_a", SessionID: sessions[rng.IntN(len(sessions))],
			Kind: kinds[rng.IntN(len(kinds))], Mode: modes[rng.IntN(len(modes))], Resource: paths[rng.IntN(len(paths))],
		}
	}
	for round := range 40 {
		if _, err := client.Claim.Delete().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var held []claims.Claim
		for i := range 1 + rng.IntN(6) {
			h := pick()
			h.ID = "claim_r" + strconv.Itoa(round) + "_" + strconv.Itoa(i)
			// Written directly so that held claims may conflict with each other.
			err := client.Claim.Create().SetID(h.ID).SetWorkID(h.WorkID).SetSessionID(h.SessionID).
				SetResource(h.Resource).SetKind(claimKind(h.Kind)).SetMode(claimMode(h.Mode)).
				SetAcquiredAt(clock.Now()).SetExpiresAt(clock.Now().Add(time.Hour)).Exec(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, h)
		}
		for range 25 {
			req := pick()
			want := false
			for _, h := range held {
				want = want || claims.Conflicts(req, h)
			}
			c, err := s.Acquire(ctx, claims.AcquireInput{WorkID: req.WorkID, SessionID: req.SessionID,
				Kind: req.Kind, Mode: req.Mode, Resource: req.Resource})
			var ce *claims.ConflictError
			if got := errors.As(err, &ce); got != want {
				t.Fatalf("round %d: held %+v, request %+v: conflict = %v (%v), rule says %v", round, held, req, got, err, want)
			}
			if err == nil {
				client.Claim.DeleteOneID(c.ID).ExecX(ctx)
			}
		}
	}
}
