package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClaimTools drives the claims tools from raw arguments through the
// generated decoders, so the defaults the spec declares reach the service.
func TestClaimTools(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	st.Client().WorkItem.Create().SetID("work_1").SetObjective("o").SetAcceptanceCriteria([]string{}).
		SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).
		SetCreatedAt(now).SetUpdatedAt(now).ExecX(ctx)
	tools := ClaimTools{Svc: claims.New(st)}

	in, err := catalogs.DecodeAcquireClaim(json.RawMessage(`{"workId":"work_1","sessionId":"codex:a","resource":"src/auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tools.AcquireClaim(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	c := out
	acquired, _ := time.Parse(time.RFC3339Nano, c.AcquiredAt)
	expires, _ := time.Parse(time.RFC3339Nano, c.ExpiresAt)
	if c.Kind != "file" || c.Mode != "exclusive" || expires.Sub(acquired) != 900*time.Second {
		t.Fatalf("defaults not applied: %+v", c)
	}
	in2, _ := catalogs.DecodeAcquireClaim(json.RawMessage(`{"workId":"work_1","sessionId":"cursor:b","resource":"src/auth/x.go"}`))
	if _, err := tools.AcquireClaim(ctx, in2); err == nil || !strings.Contains(err.Error(), "conflicts with active claim "+c.ID+" held by codex:a") {
		t.Fatalf("conflict: %v", err)
	}
	other := "cursor:b"
	if _, err := tools.ReleaseClaim(ctx, &catalogs.ReleaseClaimInput{ClaimID: c.ID, SessionID: &other}); err == nil ||
		!strings.Contains(err.Error(), "belongs to codex:a") {
		t.Fatalf("release by other: %v", err)
	}
	list, err := tools.ListClaims(ctx, &catalogs.ListClaimsInput{ActiveOnly: ptrBool(true)})
	if err != nil || !strings.HasPrefix(mustJSON(t, list), `{"claims":[{"id":"`+c.ID+`","workId":"work_1","sessionId":"codex:a","resource":"src/auth","kind":"file","mode":"exclusive","status":"active"`) {
		t.Fatalf("list = %s, %v", mustJSON(t, list), err)
	}
	rel, err := tools.ReleaseClaim(ctx, &catalogs.ReleaseClaimInput{ClaimID: c.ID})
	if err != nil || rel.Status != "released" {
		t.Fatalf("release = %+v, %v", rel, err)
	}
	empty, _ := tools.ListClaims(ctx, &catalogs.ListClaimsInput{ActiveOnly: ptrBool(true)})
	if got := mustJSON(t, empty); got != `{"claims":[]}` {
		t.Fatalf("empty list = %s", got)
	}
}

func ptrBool(b bool) *bool { return &b }
