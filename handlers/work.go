package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/workflow"
)

// WorkflowTools answers the work, evidence, handoffs and reviews tool groups
// over an internal/workflow Service (one file per group). Handlers
// delegates to it when Deps carries a workflow service.
type WorkflowTools struct {
	Svc *workflow.Service
}

// GetWorkGraph answers get_work_graph.
func (t WorkflowTools) GetWorkGraph(ctx context.Context, _ *catalogs.GetWorkGraphInput) (any, error) {
	return t.Svc.WorkGraph(ctx)
}

// ListWorkItems answers list_work_items with {works} (the legacy work_list
// unwraps it to the bare array).
func (t WorkflowTools) ListWorkItems(ctx context.Context, _ *catalogs.ListWorkItemsInput) (any, error) {
	return t.Svc.ListWorks(ctx)
}

// GetWorkItem answers get_work_item with {work, evidence, handoffs, reviews}.
func (t WorkflowTools) GetWorkItem(ctx context.Context, in *catalogs.GetWorkItemInput) (any, error) {
	return t.Svc.GetWork(ctx, in.WorkID)
}

// CreateWorkItem answers create_work_item with the new work record.
func (t WorkflowTools) CreateWorkItem(ctx context.Context, in *catalogs.CreateWorkItemInput) (any, error) {
	return t.Svc.CreateWork(ctx, workflow.CreateWorkInput{
		Objective:           in.Objective,
		AcceptanceCriteria:  in.AcceptanceCriteria,
		SourceSession:       in.SourceSession,
		Risks:               in.Risks,
		UnresolvedQuestions: in.UnresolvedQuestions,
		DependsOn:           in.DependsOn,
	})
}

// VerifyWorkItem answers verify_work_item with {commands, git, ...} (the
// legacy work_verify wraps it in a one-element array).
func (t WorkflowTools) VerifyWorkItem(ctx context.Context, in *catalogs.VerifyWorkItemInput) (any, error) {
	cmds := make([]workflow.VerifyCommand, len(in.Commands))
	for i, c := range in.Commands {
		switch {
		case c.Text != nil:
			cmds[i] = workflow.VerifyCommand{Text: c.Text}
		case c.Object != nil:
			cmds[i] = workflow.VerifyCommand{Executable: c.Object.Executable, Args: c.Object.Args, Cwd: c.Object.CWD, Label: c.Object.Label}
		}
	}
	return t.Svc.VerifyWork(ctx, workflow.VerifyInput{WorkID: in.WorkID, Cwd: in.CWD, Commands: cmds})
}
