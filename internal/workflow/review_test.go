package workflow

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRecordReview(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	subject := f.evidence(w.ID, "codex:subject", "diff")
	line := 12
	r, err := f.svc.RecordReview(f.ctx, RecordReviewInput{
		WorkID:             w.ID,
		SubjectEvidenceIDs: []string{subject.ID},
		ReviewerSessionID:  "claude-code:rev",
		Independence:       Independence{DifferentSession: true, DifferentProvider: true, FreshContext: true},
		Findings:           []Finding{{ID: "f1", Severity: "major", Title: "race", Detail: "unsynchronised map", File: "a.go", Line: &line}},
		Verdict:            "changes_requested",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "review_") || r.Provenance != "agent_claim" || r.EvidenceID == "" || len(r.Findings) != 1 {
		t.Fatalf("review = %+v", r)
	}
	e, err := f.svc.GetEvidence(f.ctx, r.EvidenceID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != "review" || e.Trust != "agent_claim" || e.Source.Adapter != "claude-code" || e.Source.Protocol != "caller submission" ||
		e.Summary != "Caller-submitted review verdict changes_requested (unverified provenance)" || *e.SessionID != "claude-code:rev" {
		t.Fatalf("review evidence = %+v", e)
	}
	var data Review
	if err := json.Unmarshal(e.Data, &data); err != nil || data.ID != r.ID || data.Verdict != r.Verdict {
		t.Fatalf("evidence data = %s (%v)", e.Data, err)
	}
	d, _ := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if len(d.Reviews) != 1 || len(d.Work.EvidenceIDs) != 2 {
		t.Fatalf("work detail = %+v", d)
	}
}

func TestRecordReviewRejects(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	ok := RecordReviewInput{WorkID: w.ID, SubjectEvidenceIDs: []string{}, ReviewerSessionID: "codex:r", Findings: []Finding{}, Verdict: "approve"}
	mod := func(fn func(*RecordReviewInput)) RecordReviewInput { in := ok; fn(&in); return in }
	neg := -1
	tests := []struct {
		name string
		in   RecordReviewInput
		kind error
		msg  string
	}{
		{"unknown work", mod(func(in *RecordReviewInput) { in.WorkID = "work_x" }), ErrNotFound, "Unknown work work_x"},
		{"unknown subject", mod(func(in *RecordReviewInput) { in.SubjectEvidenceIDs = []string{"evidence_x"} }), ErrNotFound, "Unknown evidence evidence_x"},
		{"blank reviewer", mod(func(in *RecordReviewInput) { in.ReviewerSessionID = "" }), ErrInvalid, "reviewerSessionId must not be blank"},
		{"bad verdict", mod(func(in *RecordReviewInput) { in.Verdict = "lgtm" }), ErrInvalid, `Invalid review verdict "lgtm"`},
		{"bad severity", mod(func(in *RecordReviewInput) {
			in.Findings = []Finding{{ID: "1", Severity: "huge", Title: "t", Detail: "d"}}
		}), ErrInvalid, `Invalid findings[0].severity "huge"`},
		{"blank title", mod(func(in *RecordReviewInput) { in.Findings = []Finding{{ID: "1", Severity: "note", Detail: "d"}} }), ErrInvalid, "findings[0].title must not be blank"},
		{"negative line", mod(func(in *RecordReviewInput) {
			in.Findings = []Finding{{ID: "1", Severity: "note", Title: "t", Detail: "d", Line: &neg}}
		}), ErrInvalid, "findings[0].line must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.unchanged(func() error { _, err := f.svc.RecordReview(f.ctx, tt.in); return err })
			wantErr(t, err, tt.kind, tt.msg)
		})
	}
}
