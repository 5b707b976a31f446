package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
)

// FreebuffTools answers the freebuff tool group (list_projects …
// set_thread_reasoning) over an internal/providers/freebuff Service.
// Handlers delegates to it when Deps carries a Freebuff service. List
// answers are wrapped in objects ({projects}, {threads}, {messages},
// {files}); the legacy aliases unwrap them to the 0.3.x bare arrays.
type FreebuffTools struct {
	Svc *freebuff.Service
	// Delivery records every write (send_thread_message … set_thread_reasoning)
	// before it is dispatched; the Freebuff adapter must be in its registry.
	Delivery *delivery.Service
}

// ListProjects answers list_projects with {projects, nextCursor?}.
func (t FreebuffTools) ListProjects(ctx context.Context, in *catalogs.ListProjectsInput) (*catalogs.ListProjectsOutput, error) {
	return answer(projectPageAnswer)(t.Svc.ListProjectsPage(ctx, in.Limit, optString(in.Cursor)))
}

// ListThreads answers list_threads with {threads, nextCursor?}.
func (t FreebuffTools) ListThreads(ctx context.Context, in *catalogs.ListThreadsInput) (*catalogs.ListThreadsOutput, error) {
	return answer(threadPageAnswer)(t.Svc.ListThreadsPage(ctx, optString(in.ProjectID), in.Limit, optString(in.Cursor)))
}

// GetThread answers get_thread with the thread's newest messages.
func (t FreebuffTools) GetThread(ctx context.Context, in *catalogs.GetThreadInput) (*catalogs.GetThreadOutput, error) {
	return record(threadDetailAnswer)(t.Svc.ThreadWithNewestMessages(ctx, in.ThreadID))
}

// GetThreadMessages answers get_thread_messages with {messages,
// nextCursor?}.
func (t FreebuffTools) GetThreadMessages(ctx context.Context, in *catalogs.GetThreadMessagesInput) (*catalogs.GetThreadMessagesOutput, error) {
	return answer(messagePageAnswer)(t.Svc.ThreadMessagesPage(ctx, in.ThreadID, in.Limit, optString(in.Cursor)))
}

// GetActiveWork answers get_active_work.
func (t FreebuffTools) GetActiveWork(ctx context.Context, in *catalogs.GetActiveWorkInput) (*catalogs.GetActiveWorkOutput, error) {
	ws, err := t.Svc.GetActiveWork(ctx, optString(in.ThreadID))
	if err != nil {
		return nil, err
	}
	out := &catalogs.GetActiveWorkOutput{}
	ws, out.Omitted = capList(ws, limits.ListActiveThreadsLimitDefault)
	out.Threads = mapList(ws, activeThreadAnswer)
	return out, nil
}

// GetThreadProgress answers get_thread_progress (and the legacy watch_thread
// and get_thread_progress_summary through their defaults).
func (t FreebuffTools) GetThreadProgress(ctx context.Context, in *catalogs.GetThreadProgressInput) (*catalogs.ProgressSnapshot, error) {
	return record(progressAnswer)(t.Svc.GetThreadProgress(ctx, freebuff.ProgressQuery{
		ThreadID:      in.ThreadID,
		AfterSequence: optInt(in.AfterSequence),
		Limit:         int(in.Limit),
		TimeoutMs:     int(in.TimeoutMs),
		Summary:       in.Summary,
	}))
}

// ListActiveThreads answers list_active_threads with {threads,
// nextCursor?}.
func (t FreebuffTools) ListActiveThreads(ctx context.Context, in *catalogs.ListActiveThreadsInput) (*catalogs.ListActiveThreadsOutput, error) {
	return answer(activePageAnswer)(t.Svc.ListActiveThreadsPage(ctx, in.Limit, optString(in.Cursor)))
}

// ListProjectFiles answers list_project_files with {files, nextCursor?}.
func (t FreebuffTools) ListProjectFiles(ctx context.Context, in *catalogs.ListProjectFilesInput) (*catalogs.ListProjectFilesOutput, error) {
	return answer(filePageAnswer)(t.Svc.ListProjectFilesPage(ctx, in.ProjectID, in.Relative, in.Limit, optString(in.Cursor)))
}

// ReadProjectFile answers read_project_file with {path, content}.
func (t FreebuffTools) ReadProjectFile(ctx context.Context, in *catalogs.ReadProjectFileInput) (*catalogs.ReadProjectFileOutput, error) {
	return record(func(f freebuff.FileContent) catalogs.ReadProjectFileOutput {
		return catalogs.ReadProjectFileOutput{Path: f.Path, Content: f.Content}
	})(t.Svc.ReadProjectFile(ctx, in.ProjectID, in.Path))
}

// ListModels answers list_models with {note, models}.
func (t FreebuffTools) ListModels(ctx context.Context, _ *catalogs.ListModelsInput) (*catalogs.ListModelsOutput, error) {
	return record(func(m freebuff.ModelList) catalogs.ListModelsOutput {
		return catalogs.ListModelsOutput{Note: m.Note, Models: list(m.Models)}
	})(t.Svc.ListModels(ctx))
}

// SendThreadMessage answers send_thread_message: an operation of the
// delivery ledger (recorded before it is sent, under the caller's
// idempotency key or a generated one). A repeated call with the key of the
// same prompt to the same thread answers that operation's receipt and
// sends nothing; the key of another request is refused.
func (t FreebuffTools) SendThreadMessage(ctx context.Context, in *catalogs.SendThreadMessageInput) (*catalogs.ThreadWrite, error) {
	if err := freebuff.CheckThreadID(in.ThreadID); err != nil {
		return nil, err
	}
	if err := freebuff.CheckText(in.Text); err != nil {
		return nil, err
	}
	return t.write(ctx, delivery.WriteRequest{
		NativeID: in.ThreadID, Operation: delivery.OpSend, Text: in.Text, IdempotencyKey: optString(in.IdempotencyKey),
		Dispatch: func(ctx context.Context, _ providers.Adapter, _ delivery.Operation) (providers.Receipt, error) {
			return t.Svc.SendThreadMessage(ctx, in.ThreadID, in.Text)
		},
	})
}

// StopThread answers stop_thread: a cancel in the ledger.
func (t FreebuffTools) StopThread(ctx context.Context, in *catalogs.StopThreadInput) (*catalogs.ThreadWrite, error) {
	if err := freebuff.CheckThreadID(in.ThreadID); err != nil {
		return nil, err
	}
	return t.write(ctx, delivery.WriteRequest{
		NativeID: in.ThreadID, Operation: delivery.OpCancel, IdempotencyKey: optString(in.IdempotencyKey),
		Dispatch: func(ctx context.Context, _ providers.Adapter, _ delivery.Operation) (providers.Receipt, error) {
			return t.Svc.StopThread(ctx, in.ThreadID)
		},
	})
}

// ResumeThread answers resume_thread.
func (t FreebuffTools) ResumeThread(ctx context.Context, in *catalogs.ResumeThreadInput) (*catalogs.ThreadWrite, error) {
	if err := freebuff.CheckThreadID(in.ThreadID); err != nil {
		return nil, err
	}
	return t.write(ctx, delivery.WriteRequest{
		NativeID: in.ThreadID, Operation: delivery.OpResume, IdempotencyKey: optString(in.IdempotencyKey),
		Dispatch: func(ctx context.Context, _ providers.Adapter, _ delivery.Operation) (providers.Receipt, error) {
			return t.Svc.ResumeThread(ctx, in.ThreadID)
		},
	})
}

// SetThreadModel answers set_thread_model.
func (t FreebuffTools) SetThreadModel(ctx context.Context, in *catalogs.SetThreadModelInput) (*catalogs.ThreadWrite, error) {
	if err := freebuff.CheckThreadID(in.ThreadID); err != nil {
		return nil, err
	}
	harness, err := freebuff.CheckModel(in.Model, optString(in.HarnessID))
	if err != nil {
		return nil, err
	}
	return t.write(ctx, delivery.WriteRequest{
		NativeID: in.ThreadID, Operation: delivery.OpSetModel, Request: map[string]any{"model": in.Model, "harnessId": harness},
		IdempotencyKey: optString(in.IdempotencyKey),
		Dispatch: func(ctx context.Context, _ providers.Adapter, _ delivery.Operation) (providers.Receipt, error) {
			return t.Svc.SetThreadModel(ctx, in.ThreadID, in.Model, harness)
		},
	})
}

// SetThreadReasoning answers set_thread_reasoning; a null effort clears it.
func (t FreebuffTools) SetThreadReasoning(ctx context.Context, in *catalogs.SetThreadReasoningInput) (*catalogs.ThreadWrite, error) {
	if err := freebuff.CheckThreadID(in.ThreadID); err != nil {
		return nil, err
	}
	effort, err := freebuff.NormalizeEffort(in.Effort)
	if err != nil {
		return nil, err
	}
	return t.write(ctx, delivery.WriteRequest{
		NativeID: in.ThreadID, Operation: delivery.OpSetReasoning, Request: map[string]any{"effort": effort},
		IdempotencyKey: optString(in.IdempotencyKey),
		Dispatch: func(ctx context.Context, _ providers.Adapter, _ delivery.Operation) (providers.Receipt, error) {
			return t.Svc.SetThreadReasoning(ctx, in.ThreadID, effort)
		},
	})
}

// write records and dispatches one Freebuff write through the ledger and
// maps its receipt to the answer. A write the provider refused, or that
// certainly never left, is answered as the error it was in 0.3.x, naming
// the operation that records it; an uncertain one is the ledger's
// delivery_unknown error.
func (t FreebuffTools) write(ctx context.Context, req delivery.WriteRequest) (*catalogs.ThreadWrite, error) {
	if t.Delivery == nil {
		return nil, errors.New("the Freebuff writes need the delivery ledger, which this server was built without")
	}
	req.Provider = string(providers.Freebuff)
	r, err := t.Delivery.Write(ctx, req)
	if err != nil {
		return nil, err
	}
	if r.Operation.Status == providers.StatusRejected {
		return nil, &RefusedWriteError{Reason: r.Operation.Reason(), OperationID: r.Operation.ID}
	}
	rc := r.Receipt
	return &catalogs.ThreadWrite{
		ThreadID: r.Operation.NativeID, Operation: rc.Operation, Accepted: rc.Accepted, Status: opt(string(rc.Status)),
		ProviderState: opt(rc.ProviderState), Detail: rc.Detail,
		OperationID: r.Operation.ID, IdempotencyKey: r.Operation.IdempotencyKey,
	}, nil
}

// RefusedWriteError is a Freebuff write that did not take effect: the
// provider refused it, or it certainly never left (Freebuff unavailable,
// read-only, unsupported on the CLI). The ledger recorded it rejected.
type RefusedWriteError struct {
	Reason      string
	OperationID string
}

func (e *RefusedWriteError) Error() string {
	return fmt.Sprintf("%s (recorded as operation %s, rejected; nothing was changed)", e.Reason, e.OperationID)
}

// The Freebuff pages: each keeps the service page's cut.

func projectPageAnswer(p freebuff.Page[freebuff.Project]) *catalogs.ListProjectsOutput {
	return &catalogs.ListProjectsOutput{Projects: mapList(p.Items, projectAnswer), NextCursor: opt(p.NextCursor),
		Cut: func(n int) *catalogs.ListProjectsOutput {
			return projectPageAnswer(p.CutPage(n).(freebuff.Page[freebuff.Project]))
		}}
}

func threadPageAnswer(p freebuff.Page[freebuff.ThreadSummary]) *catalogs.ListThreadsOutput {
	return &catalogs.ListThreadsOutput{Threads: mapList(p.Items, threadSummaryAnswer), NextCursor: opt(p.NextCursor),
		Cut: func(n int) *catalogs.ListThreadsOutput {
			return threadPageAnswer(p.CutPage(n).(freebuff.Page[freebuff.ThreadSummary]))
		}}
}

func messagePageAnswer(p freebuff.Page[any]) *catalogs.GetThreadMessagesOutput {
	return &catalogs.GetThreadMessagesOutput{Messages: list(p.Items), NextCursor: opt(p.NextCursor),
		Cut: func(n int) *catalogs.GetThreadMessagesOutput {
			return messagePageAnswer(p.CutPage(n).(freebuff.Page[any]))
		}}
}

func activePageAnswer(p freebuff.Page[freebuff.ProgressSnapshot]) *catalogs.ListActiveThreadsOutput {
	return &catalogs.ListActiveThreadsOutput{Threads: mapList(p.Items, progressAnswer), NextCursor: opt(p.NextCursor),
		Cut: func(n int) *catalogs.ListActiveThreadsOutput {
			return activePageAnswer(p.CutPage(n).(freebuff.Page[freebuff.ProgressSnapshot]))
		}}
}

func filePageAnswer(p freebuff.Page[string]) *catalogs.ListProjectFilesOutput {
	return &catalogs.ListProjectFilesOutput{Files: list(p.Items), NextCursor: opt(p.NextCursor),
		Cut: func(n int) *catalogs.ListProjectFilesOutput {
			return filePageAnswer(p.CutPage(n).(freebuff.Page[string]))
		}}
}
