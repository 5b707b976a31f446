package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/callinfo"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/workflow"
)

// WorkflowTools answers the work, evidence, handoffs and reviews tool groups
// over an internal/workflow Service (one file per group). Handlers
// delegates to it when Deps carries a workflow service.
type WorkflowTools struct {
	Svc *workflow.Service
	// Usage totals what the work's sessions' turns cost (nil: not shown).
	Usage *delivery.Service
}

// GetWorkGraph answers get_work_graph with one work's neighbourhood or a
// page of works (the legacy get_work_graph answers the first page).
func (t WorkflowTools) GetWorkGraph(ctx context.Context, in *catalogs.GetWorkGraphInput) (*catalogs.GetWorkGraphOutput, error) {
	session, err := paging.Session("get_work_graph", "session", in.Session, false)
	if err != nil {
		return nil, err
	}
	return answer(graphAnswer)(t.Svc.WorkGraph(ctx, workflow.GraphInput{
		WorkID:     optString(in.WorkID),
		Depth:      &in.Depth,
		WorkFilter: workflow.WorkFilter{Session: session},
		Limit:      in.Limit,
		Cursor:     optString(in.Cursor),
	}))
}

// ListWorkItems answers list_work_items with {works, nextCursor?} (the
// legacy work_list unwraps the first page to the bare array).
func (t WorkflowTools) ListWorkItems(ctx context.Context, in *catalogs.ListWorkItemsInput) (*catalogs.ListWorkItemsOutput, error) {
	session, err := paging.Session("list_work_items", "session", in.Session, false)
	if err != nil {
		return nil, err
	}
	since, err := paging.Since("list_work_items", "updatedSince", in.UpdatedSince)
	if err != nil {
		return nil, err
	}
	return answer(workListAnswer)(t.Svc.ListWorks(ctx, workflow.ListWorksInput{
		WorkFilter: workflow.WorkFilter{Status: optString(in.Status), Session: session, UpdatedSince: since},
		Limit:      in.Limit,
		Cursor:     optString(in.Cursor),
	}))
}

// GetWorkItem answers get_work_item with {work, evidence, handoffs,
// reviews, nextCursor?}: evidence as metadata, except under the legacy
// work_get, which keeps the 0.3.x full records (within the same page caps).
func (t WorkflowTools) GetWorkItem(ctx context.Context, in *catalogs.GetWorkItemInput) (*catalogs.GetWorkItemOutput, error) {
	out, err := answer(workDetailAnswer)(t.Svc.GetWork(ctx, workflow.GetWorkInput{
		WorkID:       in.WorkID,
		Limit:        in.Limit,
		Cursor:       optString(in.Cursor),
		FullEvidence: callinfo.Legacy(ctx),
	}))
	if err != nil || t.Usage == nil || callinfo.Legacy(ctx) {
		return out, err
	}
	tot, err := t.Usage.WorkTotals(ctx, in.WorkID)
	if err != nil {
		return nil, err
	}
	out.Usage = usageTotalsAnswer(tot)
	return out, nil
}

// CreateWorkItem answers create_work_item with the new work record.
func (t WorkflowTools) CreateWorkItem(ctx context.Context, in *catalogs.CreateWorkItemInput) (*catalogs.Work, error) {
	return record(workAnswer)(t.Svc.CreateWork(ctx, workflow.CreateWorkInput{
		Objective:           in.Objective,
		AcceptanceCriteria:  in.AcceptanceCriteria,
		SourceSession:       in.SourceSession,
		Risks:               in.Risks,
		UnresolvedQuestions: in.UnresolvedQuestions,
		DependsOn:           in.DependsOn,
	}))
}

// VerifyWorkItem answers verify_work_item with {commands, git, ...} (the
// legacy work_verify wraps it in a one-element array).
func (t WorkflowTools) VerifyWorkItem(ctx context.Context, in *catalogs.VerifyWorkItemInput) (*catalogs.VerifyWorkItemOutput, error) {
	cmds := make([]workflow.VerifyCommand, len(in.Commands))
	for i, c := range in.Commands {
		switch {
		case c.Text != nil:
			cmds[i] = workflow.VerifyCommand{Text: c.Text}
		case c.Object != nil:
			cmds[i] = workflow.VerifyCommand{Executable: c.Object.Executable, Args: c.Object.Args, Cwd: c.Object.CWD, Label: c.Object.Label}
		}
	}
	return record(verificationAnswer)(t.Svc.VerifyWork(ctx, workflow.VerifyInput{WorkID: in.WorkID, Cwd: in.CWD, Commands: cmds}))
}
