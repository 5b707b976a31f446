package registry

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

func TestSessionPagesAcrossProvidersStayStable(t *testing.T) {
	st := teststore.Open(t)
	ctx := context.Background()
	oc := &registrytest.Adapter{Provider: providers.OpenCode}
	var ocs []providers.Session
	for i := range 5 {
		ocs = append(ocs, oc.Session(fmt.Sprintf("ses_%d", 5-i), "t")) // newest first
	}
	oc.SetSessions(ocs, nil)
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.SetSessions([]providers.Session{cx.Session("thr_b", "b"), cx.Session("thr_a", "a")}, nil)
	r, _ := New(st, []providers.Adapter{oc, cx}, Options{})

	p1, err := r.ListSessionPage(ctx, SessionQuery{Limit: 3})
	if err != nil || len(p1.Sessions) != 3 || p1.NextCursor == "" {
		t.Fatalf("page 1 = %+v, %v", p1, err)
	}
	if n := st.Client().ProviderSession.Query().CountX(ctx); n != 3 {
		t.Fatalf("recorded %d sessions, want only the page's 3", n)
	}
	// A new OpenCode session arrives at the front meanwhile.
	oc.SetSessions(append([]providers.Session{oc.Session("ses_6", "new")}, ocs...), nil)
	var got []string
	for _, s := range p1.Sessions {
		got = append(got, s.ID)
	}
	listsBefore := oc.CallCount("list")
	cursor := p1.NextCursor
	for cursor != "" {
		p, err := r.ListSessionPage(ctx, SessionQuery{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Sessions {
			got = append(got, s.ID)
		}
		cursor = p.NextCursor
	}
	want := "opencode:ses_5,opencode:ses_4,opencode:ses_3,opencode:ses_2,opencode:ses_1,codex:thr_b,codex:thr_a"
	if strings.Join(got, ",") != want {
		t.Fatalf("pages = %v\nwant    %s", got, want)
	}
	if oc.CallCount("list") != listsBefore+1 {
		t.Fatalf("OpenCode was listed %d times for the remaining pages, want once (the page after its cursor)", oc.CallCount("list")-listsBefore)
	}
	// A cursor whose session vanished is stale; one for another provider
	// filter is foreign.
	oc.SetSessions(ocs[3:], nil) // ses_3, the last of page 1, is gone
	if _, err := r.ListSessionPage(ctx, SessionQuery{Limit: 3, Cursor: p1.NextCursor}); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("stale cursor: %v", err)
	}
	if _, err := r.ListSessionPage(ctx, SessionQuery{Provider: "codex", Cursor: p1.NextCursor}); err == nil || !strings.Contains(err.Error(), "other filter") {
		t.Fatalf("cursor of another filter: %v", err)
	}
}

func TestPermissionPagesOldestFirst(t *testing.T) {
	st := teststore.Open(t)
	ctx := context.Background()
	oc := &registrytest.Adapter{Provider: providers.OpenCode}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 7 {
		oc.Pending = append(oc.Pending, providers.PermissionRequest{Provider: providers.OpenCode, RequestID: fmt.Sprint("req_", i),
			NativeID: "ses_1", RequestedAt: base.Add(time.Duration(7-i) * time.Second)})
	}
	r, _ := New(st, []providers.Adapter{oc}, Options{})
	var got []string
	for cursor, pages := "", 0; ; pages++ {
		p, err := r.PendingPermissionPage(ctx, PermissionQuery{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range p.Pending {
			got = append(got, q.RequestID)
		}
		if pages == 0 {
			oc.Pending = oc.Pending[1:] // req_0, the newest, is answered meanwhile
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if strings.Join(got, ",") != "req_6,req_5,req_4,req_3,req_2,req_1" {
		t.Fatalf("pages = %v", got)
	}
	if _, err := r.PendingPermissionPage(ctx, PermissionQuery{Session: "nocolon"}); err == nil || !strings.Contains(err.Error(), "session") {
		t.Fatalf("bad session filter: %v", err)
	}
}
