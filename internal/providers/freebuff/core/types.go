package core

// Status is the runtime's view of Freebuff (the 0.3.x freebuff_status
// capabilities record, with the read-only reason spelled out).
type Status struct {
	// Product is "desktop", "cli" or "unknown".
	Product string `json:"product"`
	Version string `json:"version,omitempty"`
	// SignedIn is true, false or "unknown".
	SignedIn     any  `json:"signedIn"`
	Orchestrator bool `json:"orchestrator"`
	ReadOnly     bool `json:"readOnly"`
	// ReadOnlyReason is the exact reason writes fail, when ReadOnly.
	ReadOnlyReason string   `json:"readOnlyReason,omitempty"`
	Endpoint       string   `json:"endpoint,omitempty"`
	Endpoints      []string `json:"endpoints"`
	Notes          []string `json:"notes"`
}

// Project is one Freebuff project (0.3.x ProjectSummary). On Desktop the id
// is the project path.
type Project struct {
	ID       string         `json:"id"`
	Path     string         `json:"path"`
	Name     string         `json:"name,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ThreadSummary is one thread (0.3.x ThreadSummary). State is the Desktop
// turnState ("idle", "running") or, on the CLI, the managed session's state.
type ThreadSummary struct {
	ID        string         `json:"id"`
	ProjectID string         `json:"projectId,omitempty"`
	Title     string         `json:"title,omitempty"`
	State     string         `json:"state,omitempty"`
	Model     string         `json:"model,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// ThreadDetail is a thread with its sanitized messages, queued work and live
// progress summary (0.3.x ThreadDetail).
type ThreadDetail struct {
	ThreadSummary
	Messages []any `json:"messages,omitempty"`
	// MessagesOmitted counts older messages get_thread left out
	// (get_thread_messages pages them).
	MessagesOmitted int               `json:"messagesOmitted,omitempty"`
	ActiveWork      any               `json:"activeWork,omitempty"`
	Live            *ProgressSnapshot `json:"live,omitempty"`
}

// ActiveThread is one entry of get_active_work: a thread that is not idle,
// with its live progress summary.
type ActiveThread struct {
	ThreadSummary
	Live *ProgressSnapshot `json:"live,omitempty"`
}

// FileContent is a read_project_file answer; Content is redacted text.
type FileContent struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// ModelList is the list_models answer. Freebuff exposes no model catalog, so
// Models lists the models the known threads use and Note says how to pick
// another.
type ModelList struct {
	Note   string   `json:"note"`
	Models []string `json:"models"`
}

// ProgressQuery selects a page of a thread's live progress
// (get_thread_progress; its wait and summary options replace the 0.3.x
// watch_thread and get_thread_progress_summary).
type ProgressQuery struct {
	ThreadID string
	// AfterSequence returns events with a larger sequence (default 0).
	AfterSequence int64
	// Limit bounds the page, 1..100 (default 50).
	Limit int
	// TimeoutMs waits up to this long (capped at 30,000) for a first event
	// when none is available yet.
	TimeoutMs int
	// Summary returns the snapshot with no events.
	Summary bool
}

// Progress event kinds and phases (0.3.x).
const (
	KindTurnState     = "turn_state"
	KindAssistantText = "assistant_text"
	KindToolStart     = "tool_start"
	KindToolOutput    = "tool_output"
	KindFileChange    = "file_change"
	KindCompleted     = "completed"
	KindFailed        = "failed"
	KindUnknown       = "unknown"

	PhasePlanning     = "planning"
	PhaseReadingFiles = "reading_files"
	PhaseRunningTests = "running_tests"
	PhaseEditingFiles = "editing_files"
	PhaseReviewing    = "reviewing_changes"
	PhaseWaitingInput = "waiting_for_input"
	PhaseCompleted    = "completed"
	PhaseFailed       = "failed"
	PhaseUnknownPhase = "unknown"
)

// ProgressEvent is one normalized Desktop progress event. Raw is kept only
// for kind "unknown" (sanitized and redacted), where the normalized fields
// say nothing.
type ProgressEvent struct {
	Sequence  int64    `json:"sequence"`
	ThreadID  string   `json:"threadId"`
	Timestamp string   `json:"timestamp"`
	Kind      string   `json:"kind"`
	Phase     string   `json:"phase,omitempty"`
	State     string   `json:"state,omitempty"`
	Tool      string   `json:"tool,omitempty"`
	Command   string   `json:"command,omitempty"`
	Text      string   `json:"text,omitempty"`
	Files     []string `json:"files,omitempty"`
	Error     string   `json:"error,omitempty"`
	Raw       any      `json:"raw,omitempty"`
}

// Gap reports events that were dropped from the bounded buffer between the
// cursor and the oldest retained event.
type Gap struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// ProgressSnapshot is a page of a thread's live progress plus its summary
// (0.3.x ThreadProgressSnapshot). Next is the last delivered sequence (the
// cursor to pass back; afterSequence for an empty page) and NextSequence its
// 0.3.x alias. Stale is true unless the stream is connected and showed
// activity in the last 90 seconds.
type ProgressSnapshot struct {
	ThreadID              string          `json:"threadId"`
	CurrentState          string          `json:"currentState,omitempty"`
	Events                []ProgressEvent `json:"events"`
	NextSequence          *int64          `json:"nextSequence,omitempty"`
	Next                  *int64          `json:"next,omitempty"`
	Connected             bool            `json:"connected"`
	Stale                 bool            `json:"stale"`
	LatestEventAt         string          `json:"latestEventAt,omitempty"`
	ActiveTool            string          `json:"activeTool,omitempty"`
	FilesChanged          []string        `json:"filesChanged,omitempty"`
	Phase                 string          `json:"phase,omitempty"`
	LastMeaningfulUpdate  string          `json:"lastMeaningfulUpdate,omitempty"`
	LastError             string          `json:"lastError,omitempty"`
	SecondsSinceLastEvent *int64          `json:"secondsSinceLastEvent,omitempty"`
	Gap                   *Gap            `json:"gap,omitempty"`
}

// CreateThreadOptions are the options of a new thread.
type CreateThreadOptions struct {
	// ProjectPath is the Desktop project or the CLI working directory.
	ProjectPath string
	Title       string
}
