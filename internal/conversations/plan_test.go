package conversations_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/testutil/queryplan"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

// TestListFiltersUseIndexes asks SQLite for the plan of every query
// list_conversations runs under each filter, alone and combined with a
// cursor: the conversations are read through an index (the participant
// index for a session, updated_at for a time), never by a table scan.
func TestListFiltersUseIndexes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for i := range 30 {
		c, err := e.svc.Create(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		native := "a"
		if i%3 == 0 {
			native = "b"
		}
		if _, err := e.svc.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: native}); err != nil {
			t.Fatal(err)
		}
		testclock.Pass(ctx, e.clock, time.Second)
	}
	qs := queryplan.Wrap(t, e.st)
	svc := conversations.New(qs, nil, conversations.WithClock(e.clock))
	since := t0.Add(10 * time.Second)
	tests := []struct {
		name  string
		in    conversations.ListInput
		index string // the index the conversations query must use
	}{
		{"no filter", conversations.ListInput{}, "conversation_updated_at_id"},
		{"updatedSince", conversations.ListInput{UpdatedSince: &since}, "conversation_updated_at_id"},
		{"session", conversations.ListInput{Session: "codex:b"}, "participant_provider_native_id_conversation_id"},
		{"session and updatedSince", conversations.ListInput{Session: "codex:b", UpdatedSince: &since}, "participant_provider_native_id_conversation_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Limit = 3
			first, err := svc.List(ctx, tt.in)
			if err != nil || first.NextCursor == "" {
				t.Fatalf("first page: %v (next %q)", err, first.NextCursor)
			}
			tt.in.Cursor = first.NextCursor
			if _, err := svc.List(ctx, tt.in); err != nil {
				t.Fatal(err)
			}
			plans := append(qs.Plans(t, "conversations"), qs.Plans(t, "conversation_participants")...)
			if len(plans) == 0 {
				t.Fatal("no conversation query was recorded")
			}
			used := false
			for _, p := range plans {
				if p.ScansTable("conversations") || p.ScansTable("conversation_participants") {
					t.Errorf("scans a table:\n%s", p)
				}
				used = used || p.Uses("conversations", tt.index) || p.Uses("conversation_participants", tt.index)
				if strings.Contains(p.Query, "`conversation_participants`") && tt.in.Session != "" && !p.Uses("conversation_participants", "participant_provider_native_id_conversation_id") &&
					strings.Contains(p.Query, "`native_id`") {
					t.Errorf("looks the session up without the participant index:\n%s", p)
				}
			}
			if !used {
				t.Errorf("no query uses %s:\n%v", tt.index, plans)
			}
		})
	}
}
