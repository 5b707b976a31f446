package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/workflow"
)

// ListEvidence answers list_evidence with {evidence} metadata (the legacy
// evidence_list unwraps it to the bare array).
func (t WorkflowTools) ListEvidence(ctx context.Context, in *catalogs.ListEvidenceInput) (*catalogs.ListEvidenceOutput, error) {
	session, err := paging.Session("list_evidence", "session", in.Session, false)
	if err != nil {
		return nil, err
	}
	return answer(evidenceListAnswer)(t.Svc.ListEvidence(ctx, workflow.ListEvidenceInput{
		WorkID: in.WorkID, Session: session, Limit: in.Limit, Cursor: optString(in.Cursor),
	}))
}

// GetEvidence answers get_evidence with the full record.
func (t WorkflowTools) GetEvidence(ctx context.Context, in *catalogs.GetEvidenceInput) (*catalogs.Evidence, error) {
	return record(evidenceAnswer)(t.Svc.GetEvidence(ctx, in.EvidenceID))
}
