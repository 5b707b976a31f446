package workflow

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/queryplan"
)

// TestListFiltersUseIndexes asks SQLite for the plan of every query
// list_work_items and list_evidence run under each filter, alone,
// combined, and on a second page: each reads its table through the index
// of its filter, never by a table scan.
func TestListFiltersUseIndexes(t *testing.T) {
	f := newFixture(t)
	var works []Work
	for i := range 12 {
		session := "codex:a"
		if i%3 == 0 {
			session = "codex:b"
		}
		w, err := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"c"}, SourceSession: &session})
		if err != nil {
			t.Fatal(err)
		}
		works = append(works, w)
		f.evidence(w.ID, session, map[string]any{"i": i})
		f.evidence(works[0].ID, session, map[string]any{"i": i})
		f.clock.Advance(time.Second)
	}
	qs := queryplan.Wrap(t, f.st)
	svc := New(qs, Options{Clock: f.clock, LookupEnv: f.env.lookup})
	since := t0.Add(3 * time.Second)
	// plan names the listing's table, its keyset column and the indexes
	// (any of them) its page queries must use.
	type plan struct {
		table, order string
		indexes      []string
	}
	tests := []struct {
		name string
		run  func(cursor string) (next string, err error)
		want plan
	}{
		{"works", func(c string) (string, error) {
			l, err := svc.ListWorks(f.ctx, ListWorksInput{Limit: 2, Cursor: c})
			return l.NextCursor, err
		}, plan{"work_items", "updated_at", []string{"workitem_updated_at_id"}}},
		{"works by status", func(c string) (string, error) {
			l, err := svc.ListWorks(f.ctx, ListWorksInput{WorkFilter: WorkFilter{Status: "open"}, Limit: 2, Cursor: c})
			return l.NextCursor, err
		}, plan{"work_items", "updated_at", []string{"workitem_status_updated_at_id"}}},
		{"works by session", func(c string) (string, error) {
			l, err := svc.ListWorks(f.ctx, ListWorksInput{WorkFilter: WorkFilter{Session: "codex:b"}, Limit: 2, Cursor: c})
			return l.NextCursor, err
		}, plan{"work_items", "updated_at", []string{"workitem_source_session_updated_at_id", "workitem_destination_session_updated_at_id"}}},
		{"works by session, status and time", func(c string) (string, error) {
			l, err := svc.ListWorks(f.ctx, ListWorksInput{WorkFilter: WorkFilter{Session: "codex:a", Status: "open", UpdatedSince: &since}, Limit: 2, Cursor: c})
			return l.NextCursor, err
		}, plan{"work_items", "updated_at", []string{"workitem_source_session_updated_at_id", "workitem_destination_session_updated_at_id"}}},
		{"evidence", func(c string) (string, error) {
			l, err := svc.ListEvidence(f.ctx, ListEvidenceInput{Limit: 2, Cursor: c})
			return l.NextCursor, err
		}, plan{"evidence", "captured_at", []string{"evidence_captured_at_id"}}},
		{"evidence by session", func(c string) (string, error) {
			l, err := svc.ListEvidence(f.ctx, ListEvidenceInput{Session: "codex:b", Limit: 2, Cursor: c})
			return l.NextCursor, err
		}, plan{"evidence", "captured_at", []string{"evidence_session_id_captured_at_id"}}},
		{"evidence by work and session", func(c string) (string, error) {
			l, err := svc.ListEvidence(f.ctx, ListEvidenceInput{WorkID: &works[0].ID, Session: "codex:a", Limit: 2, Cursor: c})
			return l.NextCursor, err
		}, plan{"evidence", "captured_at", []string{"evidence_session_id_captured_at_id", "evidence_work_id_captured_at_id"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, err := tt.run("")
			if err != nil || next == "" {
				t.Fatalf("first page: %v (next %q)", err, next)
			}
			if _, err := tt.run(next); err != nil {
				t.Fatal(err)
			}
			var pages []queryplan.Plan
			for _, p := range qs.Plans(t, tt.want.table) {
				if strings.Contains(p.Query, "ORDER BY `"+tt.want.table+"`.`"+tt.want.order+"` DESC") {
					pages = append(pages, p)
				}
			}
			if len(pages) < 2 {
				t.Fatalf("%d page queries on %s recorded, want at least one per page", len(pages), tt.want.table)
			}
			for _, p := range pages {
				if p.ScansTable(tt.want.table) {
					t.Errorf("scans the table:\n%s", p)
				}
				if !slices.ContainsFunc(tt.want.indexes, func(ix string) bool { return p.Uses(tt.want.table, ix) }) {
					t.Errorf("uses none of %v:\n%s", tt.want.indexes, p)
				}
			}
		})
	}
}
