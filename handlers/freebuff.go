package handlers

import (
	"context"
	"errors"

	"github.com/agent-interop/runtime/catalogs"
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
}

// ActiveWorkList is the answer of get_active_work.
type ActiveWorkList struct {
	Threads []freebuff.ActiveThread `json:"threads"`
}

// ThreadWrite is the answer of the Freebuff write tools: what the transport
// accepted. Status is "queued" for an accepted prompt (its completion shows
// in get_thread_progress), "completed" only when the outcome was observed
// (a CLI conversation resumed and ready).
type ThreadWrite struct {
	ThreadID  string `json:"threadId"`
	Operation string `json:"operation"`
	Accepted  bool   `json:"accepted"`
	Status    string `json:"status,omitempty"`
	Detail    any    `json:"detail,omitempty"`
}

// ListProjects answers list_projects with {projects, nextCursor?}.
func (t FreebuffTools) ListProjects(ctx context.Context, in *catalogs.ListProjectsInput) (any, error) {
	return t.Svc.ListProjectsPage(ctx, in.Limit, optString(in.Cursor))
}

// ListThreads answers list_threads with {threads, nextCursor?}.
func (t FreebuffTools) ListThreads(ctx context.Context, in *catalogs.ListThreadsInput) (any, error) {
	return t.Svc.ListThreadsPage(ctx, optString(in.ProjectID), in.Limit, optString(in.Cursor))
}

// GetThread answers get_thread with the thread's newest messages.
func (t FreebuffTools) GetThread(ctx context.Context, in *catalogs.GetThreadInput) (any, error) {
	return t.Svc.ThreadWithNewestMessages(ctx, in.ThreadID)
}

// GetThreadMessages answers get_thread_messages with {messages,
// nextCursor?}.
func (t FreebuffTools) GetThreadMessages(ctx context.Context, in *catalogs.GetThreadMessagesInput) (any, error) {
	return t.Svc.ThreadMessagesPage(ctx, in.ThreadID, in.Limit, optString(in.Cursor))
}

// GetActiveWork answers get_active_work.
func (t FreebuffTools) GetActiveWork(ctx context.Context, in *catalogs.GetActiveWorkInput) (any, error) {
	ws, err := t.Svc.GetActiveWork(ctx, optString(in.ThreadID))
	if err != nil {
		return nil, err
	}
	return ActiveWorkList{Threads: freebuffSlice(ws)}, nil
}

// GetThreadProgress answers get_thread_progress (and the legacy watch_thread
// and get_thread_progress_summary through their defaults).
func (t FreebuffTools) GetThreadProgress(ctx context.Context, in *catalogs.GetThreadProgressInput) (any, error) {
	return t.Svc.GetThreadProgress(ctx, freebuff.ProgressQuery{
		ThreadID:      in.ThreadID,
		AfterSequence: optInt(in.AfterSequence),
		Limit:         int(in.Limit),
		TimeoutMs:     int(in.TimeoutMs),
		Summary:       in.Summary,
	})
}

// ListActiveThreads answers list_active_threads with {threads,
// nextCursor?}.
func (t FreebuffTools) ListActiveThreads(ctx context.Context, in *catalogs.ListActiveThreadsInput) (any, error) {
	return t.Svc.ListActiveThreadsPage(ctx, in.Limit, optString(in.Cursor))
}

// ListProjectFiles answers list_project_files with {files, nextCursor?}.
func (t FreebuffTools) ListProjectFiles(ctx context.Context, in *catalogs.ListProjectFilesInput) (any, error) {
	return t.Svc.ListProjectFilesPage(ctx, in.ProjectID, in.Relative, in.Limit, optString(in.Cursor))
}

// ReadProjectFile answers read_project_file with {path, content}.
func (t FreebuffTools) ReadProjectFile(ctx context.Context, in *catalogs.ReadProjectFileInput) (any, error) {
	return t.Svc.ReadProjectFile(ctx, in.ProjectID, in.Path)
}

// ListModels answers list_models with {note, models}.
func (t FreebuffTools) ListModels(ctx context.Context, _ *catalogs.ListModelsInput) (any, error) {
	return t.Svc.ListModels(ctx)
}

// SendThreadMessage answers send_thread_message.
func (t FreebuffTools) SendThreadMessage(ctx context.Context, in *catalogs.SendThreadMessageInput) (any, error) {
	return threadWrite(t.Svc.SendThreadMessage(ctx, in.ThreadID, in.Text))
}

// StopThread answers stop_thread.
func (t FreebuffTools) StopThread(ctx context.Context, in *catalogs.StopThreadInput) (any, error) {
	return threadWrite(t.Svc.StopThread(ctx, in.ThreadID))
}

// ResumeThread answers resume_thread.
func (t FreebuffTools) ResumeThread(ctx context.Context, in *catalogs.ResumeThreadInput) (any, error) {
	return threadWrite(t.Svc.ResumeThread(ctx, in.ThreadID))
}

// SetThreadModel answers set_thread_model.
func (t FreebuffTools) SetThreadModel(ctx context.Context, in *catalogs.SetThreadModelInput) (any, error) {
	return threadWrite(t.Svc.SetThreadModel(ctx, in.ThreadID, in.Model, optString(in.HarnessID)))
}

// SetThreadReasoning answers set_thread_reasoning; a null effort clears it.
func (t FreebuffTools) SetThreadReasoning(ctx context.Context, in *catalogs.SetThreadReasoningInput) (any, error) {
	return threadWrite(t.Svc.SetThreadReasoning(ctx, in.ThreadID, in.Effort))
}

// threadWrite maps a receipt to the answer. A request that certainly never
// left is reported with its reason alone (the "not sent" wrapper only
// matters to the delivery log); refusals and uncertain outcomes keep their
// full text.
func threadWrite(r providers.Receipt, err error) (any, error) {
	if err != nil {
		var ns *providers.NotSentError
		if errors.As(err, &ns) {
			return nil, ns.Err
		}
		return nil, err
	}
	return ThreadWrite{ThreadID: r.NativeID, Operation: r.Operation, Accepted: r.Accepted, Status: string(r.Status), Detail: r.Detail}, nil
}

// freebuffSlice turns a nil slice into an empty one so lists encode as [].
func freebuffSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
