package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/workflow"
)

// RecordReview answers record_review with the review (provenance
// agent_claim; its evidence record is named by evidenceId).
func (t WorkflowTools) RecordReview(ctx context.Context, in *catalogs.RecordReviewInput) (*catalogs.Review, error) {
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
	return record(reviewAnswer)(t.Svc.RecordReview(ctx, workflow.RecordReviewInput{
		WorkID:             in.WorkID,
		SubjectEvidenceIDs: in.SubjectEvidenceIds,
		ReviewerSessionID:  in.ReviewerSessionID,
		Independence:       ind,
		Findings:           findings,
		Verdict:            in.Verdict,
	}))
}

// RequestReview answers request_review with {handoff, packet, evidence,
// receipt}: the subject's diff is stored as evidence, a handoff to the
// reviewer is created, and the reviewer is sent the review request through
// the delivery log (see workflow.Service.RequestReview).
func (t WorkflowTools) RequestReview(ctx context.Context, in *catalogs.RequestReviewInput) (*catalogs.RequestReviewOutput, error) {
	return record(reviewRequestAnswer)(t.Svc.RequestReview(ctx, workflow.RequestReviewInput{
		WorkID:             in.WorkID,
		SubjectProvider:    in.SubjectProvider,
		SubjectNativeID:    in.SubjectNativeID,
		ReviewerProvider:   in.ReviewerProvider,
		ReviewerNativeID:   in.ReviewerNativeID,
		Objective:          in.Objective,
		AcceptanceCriteria: in.AcceptanceCriteria,
	}))
}
