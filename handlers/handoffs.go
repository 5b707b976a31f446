package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/workflow"
)

// GetHandoffPacket answers get_handoff_packet.
func (t WorkflowTools) GetHandoffPacket(ctx context.Context, in *catalogs.GetHandoffPacketInput) (*catalogs.Packet, error) {
	return record(packetAnswer)(t.Svc.GetHandoffPacket(ctx, in.HandoffID))
}

// CreateHandoff answers create_handoff with the durable handoff record.
func (t WorkflowTools) CreateHandoff(ctx context.Context, in *catalogs.CreateHandoffInput) (*catalogs.Handoff, error) {
	var v *workflow.Validation
	if lv := in.LatestValidation; lv != nil {
		v = &workflow.Validation{Label: optString(lv.Label), Command: optString(lv.Command), Outcome: lv.Outcome, ObservedAt: optString(lv.ObservedAt)}
	}
	return record(handoffAnswer)(t.Svc.CreateHandoff(ctx, workflow.CreateHandoffInput{
		WorkID:              in.WorkID,
		SourceSession:       in.SourceSession,
		DestinationSession:  in.DestinationSession,
		Objective:           in.Objective,
		AcceptanceCriteria:  in.AcceptanceCriteria,
		EvidenceIDs:         in.EvidenceIds,
		ChangedFiles:        in.ChangedFiles,
		Risks:               in.Risks,
		UnresolvedQuestions: in.UnresolvedQuestions,
		AuthorityBoundaries: in.AuthorityBoundaries,
		ContinuationState:   in.ContinuationState,
		LatestValidation:    v,
		Assumptions:         in.Assumptions,
		RollbackNotes:       in.RollbackNotes,
		NextAction:          in.NextAction,
		RepositoryRevision:  in.RepositoryRevision,
	}))
}

// UpdateHandoffStatus answers update_handoff_status with the updated record.
func (t WorkflowTools) UpdateHandoffStatus(ctx context.Context, in *catalogs.UpdateHandoffStatusInput) (*catalogs.Handoff, error) {
	return record(handoffAnswer)(t.Svc.UpdateHandoffStatus(ctx, in.HandoffID, in.Status))
}
