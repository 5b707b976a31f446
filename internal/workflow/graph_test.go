package workflow

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

func hasEdge(g Graph, from, to, kind string) bool {
	for _, e := range g.Edges {
		if e.From == from && e.To == to && e.Kind == kind {
			return true
		}
	}
	return false
}

func TestWorkGraph(t *testing.T) {
	sessions := fakeSessions{
		"codex:a":       {Cwd: "/repo"},
		"claude-code:b": {Cwd: "/repo"},
		"opencode:sub":  {Cwd: "/other", ParentNativeID: "main"},
	}
	f := newFixture(t, func(o *Options) { o.Sessions = sessions })
	a := f.work("a")
	b := f.work("b", a.ID)
	subject := f.evidence(a.ID, "codex:a", "diff")
	f.evidence(b.ID, "opencode:sub", "x")
	h1, err := f.svc.CreateHandoff(f.ctx, f.handoffInput(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.UpdateHandoffStatus(f.ctx, h1.ID, "superseded"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	h2, err := f.svc.CreateHandoff(f.ctx, f.handoffInput(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := f.svc.RecordReview(f.ctx, RecordReviewInput{WorkID: a.ID, SubjectEvidenceIDs: []string{subject.ID},
		ReviewerSessionID: "cursor:r", Findings: []Finding{}, Verdict: "approve"})
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	c := f.st.Client()
	c.Claim.Create().SetID("claim_1").SetWorkID(a.ID).SetSessionID("codex:a").SetResource("src/auth").
		SetAcquiredAt(now).SetExpiresAt(now.Add(time.Hour)).ExecX(f.ctx)
	c.Claim.Create().SetID("claim_2").SetWorkID(b.ID).SetSessionID("codex:a").SetResource("old").
		SetAcquiredAt(now.Add(-2 * time.Hour)).SetExpiresAt(now.Add(-time.Hour)).ExecX(f.ctx)

	g, err := f.svc.WorkGraph(f.ctx, GraphInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if g.StateRecoveryRequired != nil {
		t.Fatalf("recovery = %+v", g.StateRecoveryRequired)
	}
	if len(g.Works) != 2 || len(g.Evidence) != 3 || len(g.Handoffs) != 2 || len(g.Reviews) != 1 || len(g.Claims) != 2 {
		t.Fatalf("counts: %d works %d evidence %d handoffs %d reviews %d claims", len(g.Works), len(g.Evidence), len(g.Handoffs), len(g.Reviews), len(g.Claims))
	}
	if g.Claims[0].Status != "active" || g.Claims[1].Status != "expired" {
		t.Fatalf("claim statuses %s %s", g.Claims[0].Status, g.Claims[1].Status)
	}
	wantSessions := []string{"claude-code:b", "codex:a", "cursor:r", "opencode:main", "opencode:sub"}
	if len(g.Sessions) != len(wantSessions) {
		t.Fatalf("sessions = %+v", g.Sessions)
	}
	for i, id := range wantSessions {
		if g.Sessions[i].ID != id {
			t.Fatalf("sessions[%d] = %+v, want %s", i, g.Sessions[i], id)
		}
	}
	for _, e := range []struct{ from, to, kind string }{
		{b.ID, a.ID, EdgeDependsOn},
		{a.ID, b.ID, EdgeBlocks},
		{subject.ID, a.ID, EdgeEvidence},
		{"codex:a", "claude-code:b", EdgeHandoff},
		{h2.ID, h1.ID, EdgeSupersedes},
		{rv.ID, subject.ID, EdgeVerifies},
		{"cursor:r", "codex:a", EdgeReview},
		{"opencode:sub", "opencode:main", EdgeParent},
		{"claude-code:b", "codex:a", EdgeSharesWorkspaceWith},
		{"codex:a", a.ID, EdgeClaims},
	} {
		if !hasEdge(g, e.from, e.to, e.kind) {
			t.Errorf("missing edge %s -%s-> %s in %+v", e.from, e.kind, e.to, g.Edges)
		}
	}
	if hasEdge(g, "codex:a", b.ID, EdgeClaims) {
		t.Error("expired claim produced a claims edge")
	}
	// Accepting the dependency removes the blocks edge.
	c.WorkItem.UpdateOneID(a.ID).SetStatus("accepted").ExecX(f.ctx)
	g, _ = f.svc.WorkGraph(f.ctx, GraphInput{Limit: 100})
	if hasEdge(g, a.ID, b.ID, EdgeBlocks) || !hasEdge(g, b.ID, a.ID, EdgeDependsOn) {
		t.Error("blocks edge after the dependency was accepted")
	}
}

func TestWorkGraphReportsStoreRecovery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	if err := os.WriteFile(path, []byte("definitely not sqlite, but somebody's data"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := teststore.OpenAt(t, path)
	svc := New(st, Options{LookupEnv: fakeEnv{}.lookup})
	g, err := svc.WorkGraph(context.Background(), GraphInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	r := g.StateRecoveryRequired
	if r == nil || !r.Required || r.File != path || r.PreservedFile == "" || r.Reason == "" {
		t.Fatalf("stateRecoveryRequired = %+v", r)
	}
	if kept, _ := os.ReadFile(r.PreservedFile); string(kept) != "definitely not sqlite, but somebody's data" {
		t.Fatal("preserved file lost its content")
	}
}
