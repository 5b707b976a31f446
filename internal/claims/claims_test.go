package claims_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

func newService(t testing.TB) (*claims.Service, *ent.Client, *quartz.Mock) {
	t.Helper()
	st := teststore.Open(t)
	seedWork(t, st.Client(), "work_a", "work_b")
	clock := newClock(t)
	return claims.New(st, claims.WithClock(clock)), st.Client(), clock
}

func mustAcquire(t *testing.T, s *claims.Service, in claims.AcquireInput) claims.Claim {
	t.Helper()
	c, err := s.Acquire(context.Background(), in)
	if err != nil {
		t.Fatalf("Acquire(%+v): %v", in, err)
	}
	return c
}

// TestUpstreamScenario replays the 0.3.x release test: a directory claim
// blocks a file below it for another session, only the owner may release,
// and after the release the other session gets its claim.
func TestUpstreamScenario(t *testing.T) {
	ctx := context.Background()
	s, client, _ := newService(t)
	held := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "src/auth", Kind: claims.KindDirectory})

	_, err := s.Acquire(ctx, claims.AcquireInput{WorkID: "work_b", SessionID: "claude-code:b", Resource: "src/auth/token.ts", Kind: claims.KindFile})
	want := "conflicts with active claim " + held.ID + " held by codex:a"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("conflicting acquire: err = %v, want it to contain %q", err, want)
	}
	var ce *claims.ConflictError
	if !errors.As(err, &ce) || ce.Held.ID != held.ID {
		t.Fatalf("err is %T, want *ConflictError for %s", err, held.ID)
	}
	if n := claimCount(t, client); n != 1 {
		t.Fatalf("claims after refused acquire = %d, want 1", n)
	}

	_, err = s.Release(ctx, claims.ReleaseInput{ClaimID: held.ID, SessionID: "claude-code:b"})
	if err == nil || !strings.Contains(err.Error(), "belongs to codex:a") {
		t.Fatalf("release by other session: err = %v, want 'belongs to codex:a'", err)
	}
	if row := client.Claim.GetX(ctx, held.ID); row.Status != "active" || row.ReleasedAt != nil {
		t.Fatalf("refused release changed the claim: %+v", row)
	}

	rel, err := s.Release(ctx, claims.ReleaseInput{ClaimID: held.ID, SessionID: "codex:a"})
	if err != nil || rel.Status != claims.StatusReleased || rel.ReleasedAt == nil {
		t.Fatalf("owner release = %+v, %v", rel, err)
	}
	got := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_b", SessionID: "claude-code:b", Resource: "src/auth/token.ts"})
	if got.Status != claims.StatusActive {
		t.Fatalf("acquire after release: status %s, want active", got.Status)
	}
}

func TestAcquireDefaultsAndNormalization(t *testing.T) {
	s, _, _ := newService(t)
	c := mustAcquire(t, s, claims.AcquireInput{WorkID: " work_a ", SessionID: " codex:a ", Resource: `./src\auth//`})
	if c.Kind != claims.KindFile || c.Mode != claims.ModeExclusive || c.Status != claims.StatusActive {
		t.Errorf("defaults: kind %s mode %s status %s", c.Kind, c.Mode, c.Status)
	}
	if c.WorkID != "work_a" || c.SessionID != "codex:a" || c.Resource != "src/auth" {
		t.Errorf("normalization: %+v", c)
	}
	if !c.AcquiredAt.Equal(t0) || !c.ExpiresAt.Equal(t0.Add(900*time.Second)) {
		t.Errorf("times: acquired %s expires %s", c.AcquiredAt, c.ExpiresAt)
	}
	if !strings.HasPrefix(c.ID, "claim_") {
		t.Errorf("id %q lacks the claim_ prefix", c.ID)
	}
	for _, ttl := range []int{30, 3600} {
		c := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "ttl", TTLSeconds: ttl})
		if got := c.ExpiresAt.Sub(c.AcquiredAt); got != time.Duration(ttl)*time.Second {
			t.Errorf("ttl %d: lease %s", ttl, got)
		}
	}
}

func TestAcquireRejections(t *testing.T) {
	long := strings.Repeat("x", claims.MaxResourceLen+1)
	tests := []struct {
		name string
		in   claims.AcquireInput
		want string
	}{
		{"blank work", claims.AcquireInput{WorkID: " ", SessionID: "s", Resource: "r"}, "workId must not be blank"},
		{"blank session", claims.AcquireInput{WorkID: "work_a", SessionID: "\t", Resource: "r"}, "sessionId must not be blank"},
		{"blank resource", claims.AcquireInput{WorkID: "work_a", SessionID: "s", Resource: "  "}, "resource must not be blank"},
		{"long resource", claims.AcquireInput{WorkID: "work_a", SessionID: "s", Resource: long}, "resource must be at most 2000 characters; received 2001"},
		{"bad kind", claims.AcquireInput{WorkID: "work_a", SessionID: "s", Resource: "r", Kind: "socket"}, `kind must be one of file, directory, interface, workspace; received "socket"`},
		{"bad mode", claims.AcquireInput{WorkID: "work_a", SessionID: "s", Resource: "r", Mode: "shared"}, `mode must be one of exclusive, shared_read; received "shared"`},
		{"ttl too short", claims.AcquireInput{WorkID: "work_a", SessionID: "s", Resource: "r", TTLSeconds: 29}, "ttlSeconds must be between 30 and 3600; received 29"},
		{"ttl too long", claims.AcquireInput{WorkID: "work_a", SessionID: "s", Resource: "r", TTLSeconds: 3601}, "ttlSeconds must be between 30 and 3600; received 3601"},
		{"negative ttl", claims.AcquireInput{WorkID: "work_a", SessionID: "s", Resource: "r", TTLSeconds: -1}, "ttlSeconds must be between 30 and 3600; received -1"},
		{"unknown work", claims.AcquireInput{WorkID: "work_zz", SessionID: "s", Resource: "r"}, "Unknown work work_zz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, client, _ := newService(t)
			mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "other", Resource: "elsewhere"})
			_, err := s.Acquire(context.Background(), tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if n := claimCount(t, client); n != 1 {
				t.Fatalf("claims after rejection = %d, want 1", n)
			}
		})
	}
}

func TestConflictMatrix(t *testing.T) {
	type spec struct {
		session  string
		kind     claims.Kind
		mode     claims.Mode
		resource string
	}
	tests := []struct {
		name     string
		held     spec
		req      spec
		conflict bool
	}{
		{"exclusive same file", spec{"a", "file", "exclusive", "x.go"}, spec{"b", "file", "exclusive", "x.go"}, true},
		{"shared readers", spec{"a", "file", "shared_read", "x.go"}, spec{"b", "file", "shared_read", "x.go"}, false},
		{"reader then writer", spec{"a", "file", "shared_read", "x.go"}, spec{"b", "file", "exclusive", "x.go"}, true},
		{"writer then reader", spec{"a", "directory", "exclusive", "src"}, spec{"b", "file", "shared_read", "src/x.go"}, true},
		{"same session overlaps itself", spec{"a", "directory", "exclusive", "src"}, spec{"a", "file", "exclusive", "src/x.go"}, false},
		{"disjoint paths", spec{"a", "directory", "exclusive", "src/auth"}, spec{"b", "directory", "exclusive", "src/authz"}, false},
		{"workspace blocks interface", spec{"a", "workspace", "exclusive", "/repo"}, spec{"b", "interface", "exclusive", "Auth"}, true},
		{"file blocks workspace", spec{"a", "file", "exclusive", "x.go"}, spec{"b", "workspace", "exclusive", "/repo"}, true},
		{"shared workspace readers", spec{"a", "workspace", "shared_read", "/repo"}, spec{"b", "workspace", "shared_read", "/repo"}, false},
		{"same interface", spec{"a", "interface", "exclusive", "Auth"}, spec{"b", "interface", "exclusive", "Auth"}, true},
		{"other interface", spec{"a", "interface", "exclusive", "Auth"}, spec{"b", "interface", "exclusive", "Billing"}, false},
		{"interface vs file of same name", spec{"a", "interface", "exclusive", "x.go"}, spec{"b", "file", "exclusive", "x.go"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, client, _ := newService(t)
			held := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: tt.held.session, Kind: tt.held.kind, Mode: tt.held.mode, Resource: tt.held.resource})
			_, err := s.Acquire(context.Background(), claims.AcquireInput{WorkID: "work_b", SessionID: tt.req.session, Kind: tt.req.kind, Mode: tt.req.mode, Resource: tt.req.resource})
			if !tt.conflict {
				if err != nil {
					t.Fatalf("unexpected refusal: %v", err)
				}
				return
			}
			want := "conflicts with active claim " + held.ID + " held by " + tt.held.session
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want it to contain %q", err, want)
			}
			if n := claimCount(t, client); n != 1 {
				t.Fatalf("claims after conflict = %d, want 1", n)
			}
		})
	}
}

func TestConflictMessage(t *testing.T) {
	s, _, _ := newService(t)
	held := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "src/auth", Kind: claims.KindDirectory, TTLSeconds: 60})
	_, err := s.Acquire(context.Background(), claims.AcquireInput{WorkID: "work_b", SessionID: "cursor:c", Resource: "src/auth/x.ts"})
	want := "Claim on file src/auth/x.ts (exclusive) conflicts with active claim " + held.ID +
		" held by codex:a (directory src/auth, exclusive, expires 2025-03-01T12:01:00Z)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
}

// TestLazyExpiry checks that a lease stops counting exactly at expiresAt,
// including across the sub-second boundary the store keeps.
func TestLazyExpiry(t *testing.T) {
	ctx := context.Background()
	s, client, clock := newService(t)
	held := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "x.go", TTLSeconds: 30})

	clock.Advance(30*time.Second - time.Millisecond)
	if _, err := s.Acquire(ctx, claims.AcquireInput{WorkID: "work_b", SessionID: "cursor:c", Resource: "x.go"}); err == nil {
		t.Fatal("claim 1 ms before expiry did not conflict")
	}
	active, err := s.List(ctx, claims.ListInput{ActiveOnly: true})
	if err != nil || len(active.Claims) != 1 {
		t.Fatalf("active before expiry = %v, %v", active, err)
	}

	clock.Advance(time.Millisecond)
	allPage, err := s.List(ctx, claims.ListInput{})
	all := allPage.Claims
	if err != nil || len(all) != 1 || all[0].Status != claims.StatusExpired {
		t.Fatalf("list at expiry = %+v, %v; want one expired claim", all, err)
	}
	if active, _ := s.List(ctx, claims.ListInput{ActiveOnly: true}); len(active.Claims) != 0 {
		t.Fatalf("activeOnly at expiry = %+v, want none", active)
	}
	if row := client.Claim.GetX(ctx, held.ID); row.Status != "active" {
		t.Fatalf("expiry rewrote the row: status %s", row.Status)
	}
	got := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_b", SessionID: "cursor:c", Resource: "x.go"})
	if got.Status != claims.StatusActive {
		t.Fatalf("acquire after expiry: %+v", got)
	}
	rel, err := s.Release(ctx, claims.ReleaseInput{ClaimID: held.ID})
	if err != nil || rel.Status != claims.StatusReleased {
		t.Fatalf("release of an expired claim = %+v, %v", rel, err)
	}
}

func TestRelease(t *testing.T) {
	ctx := context.Background()
	t.Run("unknown claim", func(t *testing.T) {
		s, _, _ := newService(t)
		_, err := s.Release(ctx, claims.ReleaseInput{ClaimID: "claim_nope"})
		if err == nil || err.Error() != "Unknown claim claim_nope" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("blank id", func(t *testing.T) {
		s, _, _ := newService(t)
		_, err := s.Release(ctx, claims.ReleaseInput{ClaimID: " "})
		if err == nil || err.Error() != "claimId must not be blank" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("wrong session", func(t *testing.T) {
		s, _, _ := newService(t)
		c := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "x"})
		_, err := s.Release(ctx, claims.ReleaseInput{ClaimID: c.ID, SessionID: "cursor:c"})
		want := "Claim " + c.ID + " belongs to codex:a, not cursor:c"
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v, want %q", err, want)
		}
	})
	t.Run("without session, then again", func(t *testing.T) {
		s, _, clock := newService(t)
		c := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "x"})
		clock.Advance(time.Second)
		first, err := s.Release(ctx, claims.ReleaseInput{ClaimID: c.ID})
		if err != nil || first.Status != claims.StatusReleased || !first.ReleasedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("release = %+v, %v", first, err)
		}
		clock.Advance(time.Second)
		again, err := s.Release(ctx, claims.ReleaseInput{ClaimID: c.ID, SessionID: "codex:a"})
		if err != nil || !again.ReleasedAt.Equal(*first.ReleasedAt) {
			t.Fatalf("second release = %+v, %v; want unchanged", again, err)
		}
	})
}

func TestList(t *testing.T) {
	ctx := context.Background()
	s, _, clock := newService(t)
	a1 := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "a1"})
	clock.Advance(time.Second)
	b1 := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_b", SessionID: "codex:b", Resource: "b1"})
	clock.Advance(time.Second)
	a2 := mustAcquire(t, s, claims.AcquireInput{WorkID: "work_a", SessionID: "codex:a", Resource: "a2"})
	if _, err := s.Release(ctx, claims.ReleaseInput{ClaimID: a1.ID}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   claims.ListInput
		want []string
	}{
		{claims.ListInput{}, []string{a2.ID, b1.ID, a1.ID}},
		{claims.ListInput{WorkID: "work_a"}, []string{a2.ID, a1.ID}},
		{claims.ListInput{ActiveOnly: true}, []string{a2.ID, b1.ID}},
		{claims.ListInput{WorkID: "work_a", ActiveOnly: true}, []string{a2.ID}},
		{claims.ListInput{Session: "codex:b"}, []string{b1.ID}},
		{claims.ListInput{WorkID: "work_none"}, nil},
	}
	for _, tt := range tests {
		got, err := s.List(ctx, tt.in)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got.Claims {
			ids = append(ids, c.ID)
		}
		if strings.Join(ids, ",") != strings.Join(tt.want, ",") {
			t.Errorf("List(%+v) = %v, want %v", tt.in, ids, tt.want)
		}
	}
}

// TestWorkForeignKey checks that the database itself refuses a claim on an
// unknown work item, whatever code inserts it.
func TestWorkForeignKey(t *testing.T) {
	_, client, _ := newService(t)
	err := client.Claim.Create().SetID("claim_x").SetWorkID("work_missing").SetSessionID("s").
		SetResource("r").SetAcquiredAt(t0).SetExpiresAt(t0.Add(time.Minute)).Exec(context.Background())
	if !ent.IsConstraintError(err) && (err == nil || !strings.Contains(err.Error(), "FOREIGN KEY")) {
		t.Fatalf("insert with unknown work: err = %v, want a foreign key failure", err)
	}
}
