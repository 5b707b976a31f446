package handlers

import (
	"context"
	"fmt"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/workflow"
)

// RecordReview answers record_review with the review (provenance
// agent_claim; its evidence record is named by evidenceId).
func (t WorkflowTools) RecordReview(ctx context.Context, in *catalogs.RecordReviewInput) (any, error) {
	var ind workflow.Independence
	if in.Independence != nil {
		ind = workflow.Independence{
			DifferentSession:  in.Independence.DifferentSession,
			DifferentProvider: in.Independence.DifferentProvider,
			FreshContext:      in.Independence.FreshContext,
			WriteAccess:       in.Independence.WriteAccess,
		}
	}
	findings := make([]workflow.Finding, len(in.Findings))
	for i, f := range in.Findings {
		findings[i] = workflow.Finding{ID: f.ID, Severity: f.Severity, Title: f.Title, Detail: f.Detail, File: optString(f.File)}
		if f.Line != nil {
			line := int(*f.Line)
			findings[i].Line = &line
		}
	}
	return t.Svc.RecordReview(ctx, workflow.RecordReviewInput{
		WorkID:             in.WorkID,
		SubjectEvidenceIDs: in.SubjectEvidenceIds,
		ReviewerSessionID:  in.ReviewerSessionID,
		Independence:       ind,
		Findings:           findings,
		Verdict:            in.Verdict,
	})
}

// RequestReview answers request_review. It needs the subject's diff and a
// send to the reviewer session, which only a provider adapter can do; until
// the provider layer is wired in, it says so instead of pretending.
func (t WorkflowTools) RequestReview(_ context.Context, in *catalogs.RequestReviewInput) (any, error) {
	return nil, fmt.Errorf("request_review needs a provider adapter for %s; none is available", in.SubjectProvider)
}
