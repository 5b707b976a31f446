package freebuff

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/cli"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/providers/freebuff/desktop"
	"github.com/agent-interop/runtime/internal/security"
)

// backend is one way of reaching Freebuff.
// *desktop.Backend and *cli.Backend implement it.
type backend interface {
	Status(ctx context.Context) Status
	ListProjects(ctx context.Context) ([]Project, error)
	ListThreads(ctx context.Context, projectID string) ([]ThreadSummary, error)
	GetThread(ctx context.Context, id string) (ThreadDetail, error)
	ProjectRoot(ctx context.Context, projectID string) (string, error)
	ListModels(ctx context.Context) (ModelList, error)
	Send(ctx context.Context, id, text string) (providers.Receipt, error)
	Stop(ctx context.Context, id string) (providers.Receipt, error)
	Resume(ctx context.Context, id string) (providers.Receipt, error)
	CreateThread(ctx context.Context, opts CreateThreadOptions) (ThreadSummary, error)
	Close() error
}

var (
	_ backend = (*desktop.Backend)(nil)
	_ backend = (*cli.Backend)(nil)
)

// Service answers the Freebuff tools. It picks its path on every call: the
// CLI when FREEBUFF_MCP_CLI_MODE=pty, else the Desktop when an orchestrator
// is found, else the CLI when a freebuff executable is found, else nothing
// (every call then explains what was checked). Nothing is discovered or
// started before the first call. It is safe for concurrent use.
type Service struct {
	cfg     Config
	desktop *desktop.Backend
	cli     *cli.Backend
	forced  bool // FREEBUFF_MCP_CLI_MODE=pty

	hookMu  sync.Mutex
	outcome OutcomeFunc
	pending map[string][]*pendingTurn // Desktop sends awaiting a turn end
	refs    atomic.Int64
	closeCh chan struct{}
	wg      sync.WaitGroup
	closed  sync.Once
}

// pendingTurn is a Desktop send awaiting the end of the turn it started.
type pendingTurn struct {
	ref      string
	baseline int64 // lastTurnFinishedAt before the send
	accepted bool  // the send returned a receipt
	resolved bool  // the turn ended (status, reason)
	status   providers.ReceiptStatus
	reason   string
	turn     *providers.TurnResult
}

// New returns a Service. It performs no I/O.
func New(cfg Config) *Service {
	cfg = cfg.WithDefaults()
	s := &Service{
		cfg:     cfg,
		cli:     cli.New(cfg),
		forced:  strings.EqualFold(cfg.Env(EnvCLIMode), "pty"),
		pending: map[string][]*pendingTurn{},
		closeCh: make(chan struct{}),
	}
	s.desktop = desktop.New(cfg, s.turnEnded)
	return s
}

// pick returns the backend for this call, or an UnavailableError naming
// everything that was checked.
func (s *Service) pick(ctx context.Context) (backend, error) {
	if s.forced {
		return s.cli, nil
	}
	derr := s.desktop.Available(ctx)
	if derr == nil {
		return s.desktop, nil
	}
	cerr := s.cli.Found()
	if cerr == nil {
		return s.cli, nil
	}
	return nil, &UnavailableError{Reason: ReasonUnavailable + ": " + derr.Error() + "; and " + cerr.Error()}
}

// Discovering reports whether the service is looking for the Desktop
// orchestrator (its first call, or the first after ConnectionTTL): the
// process-table scan and the probes of what it found.
func (s *Service) Discovering() bool { return !s.forced && s.desktop.Discovering() }

// Status reports which Freebuff was found and whether writes are possible.
func (s *Service) Status(ctx context.Context) Status {
	b, err := s.pick(ctx)
	if err != nil {
		return Status{Product: "unknown", SignedIn: "unknown", ReadOnly: true, ReadOnlyReason: ReasonUnavailable,
			Endpoints: []string{}, Notes: []string{err.Error()}}
	}
	st := b.Status(ctx)
	if s.forced {
		st.Notes = append(st.Notes, EnvCLIMode+"=pty selects the CLI.")
	}
	return st
}

// Roots returns the approved roots the service registers projects with.
func (s *Service) Roots() *security.Roots { return s.cfg.Roots }

// ListProjects lists the Freebuff projects and approves their paths as
// known workspaces.
func (s *Service) ListProjects(ctx context.Context) ([]Project, error) {
	b, err := s.pick(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := b.ListProjects(ctx)
	if err != nil {
		return nil, err
	}
	if s.cfg.Roots != nil {
		for _, p := range ps {
			_ = s.cfg.Roots.Add(p.Path)
		}
	}
	return ps, nil
}

// ListThreads lists the threads of one project (all when projectID is "").
func (s *Service) ListThreads(ctx context.Context, projectID string) ([]ThreadSummary, error) {
	b, err := s.pick(ctx)
	if err != nil {
		return nil, err
	}
	return b.ListThreads(ctx, projectID)
}

// GetThread returns a thread with its sanitized messages, queued work and
// live progress summary.
func (s *Service) GetThread(ctx context.Context, threadID string) (ThreadDetail, error) {
	if err := validateThreadID(threadID); err != nil {
		return ThreadDetail{}, err
	}
	b, err := s.pick(ctx)
	if err != nil {
		return ThreadDetail{}, err
	}
	return b.GetThread(ctx, threadID)
}

// GetThreadMessages returns a thread's sanitized, redacted messages.
func (s *Service) GetThreadMessages(ctx context.Context, threadID string) ([]any, error) {
	t, err := s.GetThread(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if t.Messages == nil {
		return []any{}, nil
	}
	return t.Messages, nil
}

// GetActiveWork returns the threads that are not idle (only threadID when
// set), each with its live progress summary.
func (s *Service) GetActiveWork(ctx context.Context, threadID string) ([]ActiveThread, error) {
	if threadID != "" {
		if err := validateThreadID(threadID); err != nil {
			return nil, err
		}
	}
	b, err := s.pick(ctx)
	if err != nil {
		return nil, err
	}
	if c, ok := b.(*cli.Backend); ok {
		return c.ActiveWork(ctx, threadID)
	}
	threads, err := s.desktop.ListThreads(ctx, "")
	if err != nil {
		return nil, err
	}
	out := []ActiveThread{}
	known := threadID == ""
	for _, t := range threads {
		if threadID != "" && t.ID != threadID {
			continue
		}
		known = true
		if t.State != "" && t.State != "idle" {
			out = append(out, ActiveThread{ThreadSummary: t, Live: s.desktop.Live(t.ID)})
		}
	}
	if !known {
		return nil, &NotFoundError{Kind: "thread", ID: threadID}
	}
	return out, nil
}

// GetThreadProgress returns a page of a thread's live progress. With
// TimeoutMs it waits (≤ 30 s) for a first event; with Summary it returns no
// events. On the CLI there is no live stream: the answer is
// {threadId, events: [], connected: false, stale: true}.
func (s *Service) GetThreadProgress(ctx context.Context, q ProgressQuery) (ProgressSnapshot, error) {
	if err := validateThreadID(q.ThreadID); err != nil {
		return ProgressSnapshot{}, err
	}
	if q.AfterSequence < 0 {
		return ProgressSnapshot{}, &InputError{Field: "afterSequence", Msg: "afterSequence must be 0 or more"}
	}
	if q.Limit == 0 {
		q.Limit = limits.GetThreadProgressLimitDefault
	}
	if q.Limit < 1 || q.Limit > limits.GetThreadProgressLimitMax {
		return ProgressSnapshot{}, &InputError{Field: "limit", Msg: "limit must be between 1 and 100"}
	}
	if q.TimeoutMs < 0 || q.TimeoutMs > limits.GetThreadProgressTimeoutMsMax {
		return ProgressSnapshot{}, &InputError{Field: "timeoutMs", Msg: "timeoutMs must be between 0 and 30000"}
	}
	b, err := s.pick(ctx)
	if err != nil {
		return ProgressSnapshot{}, err
	}
	if _, ok := b.(*cli.Backend); ok {
		return cli.Progress(q.ThreadID), nil
	}
	return s.desktop.Progress(ctx, q)
}

// ListActiveThreads returns one-event summaries of the threads that are
// running or in an active phase (planning, running tests, editing files).
func (s *Service) ListActiveThreads(ctx context.Context) ([]ProgressSnapshot, error) {
	b, err := s.pick(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := b.(*cli.Backend); ok {
		return []ProgressSnapshot{}, nil
	}
	return s.desktop.ActiveThreads(ctx)
}

// ListProjectFiles lists the regular files directly inside relative (default
// ".") of a project; protected names are hidden.
func (s *Service) ListProjectFiles(ctx context.Context, projectID, relative string) ([]string, error) {
	root, err := s.root(ctx, projectID)
	if err != nil {
		return nil, err
	}
	return security.ListFiles(root, relative)
}

// ReadProjectFile reads a text file of a project, redacted, under every rule
// of security.ReadFile.
func (s *Service) ReadProjectFile(ctx context.Context, projectID, path string) (FileContent, error) {
	root, err := s.root(ctx, projectID)
	if err != nil {
		return FileContent{}, err
	}
	text, err := security.ReadFile(root, path)
	if err != nil {
		return FileContent{}, err
	}
	return FileContent{Path: path, Content: text}, nil
}

func (s *Service) root(ctx context.Context, projectID string) (string, error) {
	if strings.TrimSpace(projectID) == "" {
		return "", &InputError{Field: "projectId", Msg: "projectId must not be blank"}
	}
	// An absolute path may name an approved root (INTEROP_PROJECT_ROOTS, or
	// a known session's working directory) directly; no Freebuff is needed.
	if filepath.IsAbs(projectID) && s.cfg.Roots != nil {
		root, err := s.cfg.Roots.Directory(ctx, projectID)
		if err == nil || !errors.Is(err, security.ErrNotApproved) {
			return root, err
		}
	}
	b, err := s.pick(ctx)
	if err != nil {
		if filepath.IsAbs(projectID) {
			return "", &InputError{Field: "projectId", Msg: fmt.Sprintf("%s: %s is not inside an approved root (INTEROP_PROJECT_ROOTS or a known session's cwd), and no Freebuff project can be looked up: %v", security.ErrNotApproved, projectID, err)}
		}
		return "", err
	}
	root, err := b.ProjectRoot(ctx, projectID)
	if err != nil {
		return "", err
	}
	if s.cfg.Roots != nil {
		_ = s.cfg.Roots.Add(root)
	}
	return root, nil
}

// ListModels explains how models are chosen and lists the ones in use.
func (s *Service) ListModels(ctx context.Context) (ModelList, error) {
	b, err := s.pick(ctx)
	if err != nil {
		return ModelList{}, err
	}
	return b.ListModels(ctx)
}

// writeBackend picks the backend for a write; failures are NotSent.
func (s *Service) writeBackend(ctx context.Context, threadID string) (backend, error) {
	if err := validateThreadID(threadID); err != nil {
		return nil, core.NotSent(err)
	}
	b, err := s.pick(ctx)
	if err != nil {
		return nil, core.NotSent(&ReadOnlyError{Reason: err.Error()})
	}
	return b, nil
}

// SendThreadMessage sends a prompt to a thread. The receipt is queued (the
// transport accepted it), never completed; errors follow the adapter
// delivery contract (NotSentError, RejectedError, or uncertain).
func (s *Service) SendThreadMessage(ctx context.Context, threadID, text string) (providers.Receipt, error) {
	if err := validateText(text); err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	b, err := s.writeBackend(ctx, threadID)
	if err != nil {
		return providers.Receipt{}, err
	}
	if _, ok := b.(*desktop.Backend); ok {
		var baseline int64
		if s.hook() != nil {
			baseline = s.desktop.TurnBaseline(ctx, threadID)
		}
		p := s.expect(threadID, baseline)
		r, err := b.Send(ctx, threadID, text)
		if err == nil {
			r.Ref = p.ref
		}
		s.settle(threadID, p, err == nil)
		return r, err
	}
	r, err := b.Send(ctx, threadID, text)
	if err == nil {
		s.trackCLI(threadID, r)
	}
	return r, err
}

// StopThread stops a thread's running turn (Desktop stop; Esc on the CLI).
func (s *Service) StopThread(ctx context.Context, threadID string) (providers.Receipt, error) {
	b, err := s.writeBackend(ctx, threadID)
	if err != nil {
		return providers.Receipt{}, err
	}
	return b.Stop(ctx, threadID)
}

// ResumeThread resumes a thread (Desktop resume restarts its queue; the CLI
// resumes exactly that conversation with --continue <id>).
func (s *Service) ResumeThread(ctx context.Context, threadID string) (providers.Receipt, error) {
	b, err := s.writeBackend(ctx, threadID)
	if err != nil {
		return providers.Receipt{}, err
	}
	return b.Resume(ctx, threadID)
}

// SetThreadModel sets a thread's model (harnessID defaults to "codebuff").
// The CLI path reports it unsupported with the reason.
func (s *Service) SetThreadModel(ctx context.Context, threadID, model, harnessID string) (providers.Receipt, error) {
	if err := validateModel(model); err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	if harnessID == "" {
		harnessID = "codebuff"
	}
	if security.ValidateID(harnessID) != nil {
		return providers.Receipt{}, core.NotSent(&InputError{Field: "harnessId", Msg: "Invalid harnessId"})
	}
	b, err := s.writeBackend(ctx, threadID)
	if err != nil {
		return providers.Receipt{}, err
	}
	if _, ok := b.(*cli.Backend); ok {
		return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "model changes", Reason: ReasonCLIModel}
	}
	return s.desktop.SetModel(ctx, threadID, model, harnessID)
}

// SetThreadReasoning sets (or, with nil, clears) a thread's reasoning
// effort. The CLI path reports it unsupported with the reason.
func (s *Service) SetThreadReasoning(ctx context.Context, threadID string, effort *string) (providers.Receipt, error) {
	e, err := normalizeEffort(effort)
	if err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	b, err := s.writeBackend(ctx, threadID)
	if err != nil {
		return providers.Receipt{}, err
	}
	if _, ok := b.(*cli.Backend); ok {
		return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "reasoning changes", Reason: ReasonCLIReasoning}
	}
	return s.desktop.SetReasoning(ctx, threadID, e)
}

// CreateThread starts a new thread: a Desktop thread in a project, or a new
// managed CLI session.
func (s *Service) CreateThread(ctx context.Context, opts CreateThreadOptions) (ThreadSummary, error) {
	b, err := s.pick(ctx)
	if err != nil {
		return ThreadSummary{}, core.NotSent(&ReadOnlyError{Reason: err.Error()})
	}
	if _, ok := b.(*desktop.Backend); ok && opts.ProjectPath == "" {
		return ThreadSummary{}, core.NotSent(&InputError{Field: "cwd", Msg: "A Freebuff Desktop thread needs a project path (cwd)"})
	}
	return b.CreateThread(ctx, opts)
}

// Close stops the event stream, kills every managed CLI process group and
// ends outcome tracking.
func (s *Service) Close() error {
	s.closed.Do(func() { close(s.closeCh) })
	err := errors.Join(s.desktop.Close(), s.cli.Close())
	s.wg.Wait()
	return err
}

// Subscribe streams a Desktop thread's normalized progress events (Type is
// the progress kind, Data the event JSON). The channel closes when ctx
// ends, the service closes or the Desktop event stream ends. The CLI has
// no live stream: it answers an UnsupportedError.
func (s *Service) Subscribe(ctx context.Context, threadID string) (<-chan providers.NativeEvent, error) {
	if err := validateThreadID(threadID); err != nil {
		return nil, err
	}
	b, err := s.pick(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := b.(*cli.Backend); ok {
		return nil, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "events", Reason: reasonCLIEvents}
	}
	events, cancel := s.desktop.Subscribe(threadID)
	go func() {
		select {
		case <-ctx.Done():
		case <-s.closeCh:
		}
		cancel()
	}()
	return events, nil
}

// now reads the service's clock.
func (s *Service) now() time.Time { return s.cfg.Clock.Now() }

// transportInfo names the current path for session records.
func (s *Service) transportInfo(ctx context.Context) (transport, endpoint, source string) {
	b, err := s.pick(ctx)
	if err != nil {
		return "", "", "Freebuff"
	}
	if c, ok := b.(*cli.Backend); ok {
		return "managed PTY", c.Program(), "Freebuff CLI history"
	}
	return "http", s.desktop.Endpoint(), "Freebuff Desktop /api/projects"
}
