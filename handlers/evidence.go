package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/workflow"
)

// ListEvidence answers list_evidence with {evidence} metadata (the legacy
// evidence_list unwraps it to the bare array).
func (t WorkflowTools) ListEvidence(ctx context.Context, in *catalogs.ListEvidenceInput) (*catalogs.ListEvidenceOutput, error) {
	return answer(evidenceListAnswer)(t.Svc.ListEvidence(ctx, workflow.ListEvidenceInput{
		WorkID: in.WorkID, Limit: in.Limit, Cursor: optString(in.Cursor),
	}))
}

// GetEvidence answers get_evidence with the full record.
func (t WorkflowTools) GetEvidence(ctx context.Context, in *catalogs.GetEvidenceInput) (*catalogs.Evidence, error) {
	return record(evidenceAnswer)(t.Svc.GetEvidence(ctx, in.EvidenceID))
}
