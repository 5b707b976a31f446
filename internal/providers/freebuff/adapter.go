package freebuff

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

// AdapterVersion is reported in the capability record.
const AdapterVersion = "1.0.0"

// Reasons for the operations Freebuff does not offer.
const (
	reasonSteer       = "Freebuff exposes message send but not a separate steer contract"
	reasonDiff        = "Freebuff exposes no native diff the adapter reads"
	reasonPermissions = "Freebuff has no permission-request protocol"
	reasonCLIEvents   = "the Freebuff CLI has no live event stream; read the thread's messages instead"
	reasonPerPrompt   = "Freebuff has no per-prompt model, agent or reasoning option; set the thread's model or reasoning first"
)

// Adapter is the Freebuff provider adapter: threads are its native sessions
// ("freebuff:<threadId>").
type Adapter struct {
	svc  *Service
	host providers.Host
}

var _ providers.Adapter = (*Adapter)(nil)

// NewAdapter returns an adapter over svc. Observed send outcomes are
// reported to host (when not nil). Close closes svc.
func NewAdapter(svc *Service, host providers.Host) *Adapter {
	a := &Adapter{svc: svc, host: host}
	if host != nil {
		svc.OnOutcome(func(threadID, ref string, status providers.ReceiptStatus, reason string, turn *providers.TurnResult) {
			host.ReportOutcome(providers.Freebuff, threadID, ref, providers.Outcome{Status: status, Reason: reason, Turn: turn})
		})
	}
	return a
}

// Service returns the underlying service (the Freebuff tools use it).
func (a *Adapter) Service() *Service { return a.svc }

// ID returns providers.Freebuff.
func (a *Adapter) ID() providers.ID { return providers.Freebuff }

// Capabilities reports what works now, with the exact reasons.
func (a *Adapter) Capabilities(ctx context.Context) providers.Capabilities {
	st := a.svc.Status(ctx)
	available := st.Product != "unknown"
	writable := available && !st.ReadOnly
	transport, protocol := "http", "Freebuff Desktop HTTP + SSE (x-freebuff-launch-id)"
	if st.Product == "cli" {
		transport, protocol = "managed PTY", "Freebuff CLI terminal UI"
	}
	reasonNA := strings.Join(st.Notes, " ")
	fix := "start Freebuff Desktop, or set FREEBUFF_ORCHESTRATOR_URL and FREEBUFF_LAUNCH_ID, or install the freebuff CLI (FREEBUFF_CLI_PATH)"
	rec := func(ok bool, reason string) providers.Capability {
		c := providers.Capability{Supported: true, Transport: transport, Protocol: protocol}
		switch {
		case ok:
			c.State = providers.Available
		case available:
			c.State, c.Reason = providers.Degraded, reason
		default:
			c.State, c.Reason, c.Fix = providers.Unavailable, reasonNA, fix
		}
		return c
	}
	unsupported := func(reason string) providers.Capability {
		return providers.Capability{Supported: false, State: providers.Unavailable, Transport: transport, Protocol: protocol, Reason: reason}
	}
	writeReason := st.ReadOnlyReason
	caps := providers.Capabilities{
		Provider:        providers.Freebuff,
		AdapterVersion:  AdapterVersion,
		ProviderVersion: st.Version,
		Discovery:       rec(available, ""),
		Sessions:        rec(available, ""),
		SendMessage:     rec(writable, writeReason),
		Steer:           unsupported(reasonSteer),
		Cancel:          rec(writable, writeReason),
		Events:          rec(available, ""),
		Diff:            unsupported(reasonDiff),
		Permissions:     unsupported(reasonPermissions),
		Model:           rec(writable, writeReason),
		Reasoning:       rec(writable, writeReason),
		Limitations: []string{
			"Desktop writes require a launch id verified through /healthz",
			"a send is reported queued when accepted and completed only when its turn is observed to finish",
		},
	}
	if st.Product == "cli" {
		caps.Program = st.Endpoint
		caps.Events = unsupported(reasonCLIEvents)
		caps.Model = unsupported(ReasonCLIModel)
		caps.Reasoning = unsupported(ReasonCLIReasoning)
		caps.Limitations = append(caps.Limitations, "CLI threads are conversations in ~/.config/manicode history; only managed sessions can be driven")
	}
	switch {
	case writable:
		caps.Authorization = "authorized"
	case st.SignedIn == false || (st.Product == "desktop" && !writable):
		caps.Authorization = "unauthorized"
	default:
		caps.Authorization = "unknown"
	}
	return caps
}

// Roles implements providers.Adapter: the thread-message history, the
// thread state that settles stop/resume/model writes, the discovery
// handshake, and the discovery under way as the Starting role.
func (a *Adapter) Roles() providers.Roles {
	return providers.Roles{History: a, State: a, Handshake: a, Starting: discoveryReporter{a.svc}}
}

// discoveryReporter is the adapter's providers.StartReporter: the service
// is finding the Desktop orchestrator. That scans every process's
// environment and listening sockets (/proc) and probes what it finds,
// which takes up to most of a second on a busy machine, so a listing of
// every provider reports Freebuff late at the start grace instead of
// holding the others' answer to its soft deadline (issue 21).
type discoveryReporter struct{ svc *Service }

func (r discoveryReporter) Starting() bool { return r.svc.Discovering() }

// Probe runs Freebuff discovery (the Desktop orchestrator answering
// /healthz, else a freebuff CLI executable and the PTY start-up probe) and
// returns why nothing usable was found: the handshake `interop-runtime
// doctor` reports. A Desktop reached without a verified launch id passes
// (its capabilities say read-only); a CLI that cannot be driven does not.
// It starts no CLI session.
func (a *Adapter) Probe(ctx context.Context) error {
	st := a.svc.Status(ctx)
	switch {
	case st.Product == "unknown":
		return fmt.Errorf("freebuff discovery: %s", strings.Join(st.Notes, " "))
	case st.Product == "cli" && st.ReadOnly:
		return fmt.Errorf("freebuff CLI: %s", st.ReadOnlyReason)
	}
	return nil
}

// session maps a thread.
func (a *Adapter) session(ctx context.Context, t ThreadSummary) providers.Session {
	transport, endpoint, source := a.svc.transportInfo(ctx)
	if pid, ok := t.Metadata["pid"]; ok && transport == "managed PTY" {
		endpoint = fmt.Sprintf("freebuff pty pid %v", pid)
	}
	return providers.Session{
		ID:         string(providers.Freebuff) + ":" + t.ID,
		Provider:   providers.Freebuff,
		NativeID:   t.ID,
		Title:      t.Title,
		State:      t.State,
		Model:      t.Model,
		ProjectID:  t.ProjectID,
		CWD:        t.ProjectID,
		Transport:  transport,
		Endpoint:   endpoint,
		Provenance: providers.Provenance{DiscoveredAt: a.svc.now(), Source: source, Native: true},
		Metadata:   t.Metadata,
	}
}

// ListSessions lists every thread of every project.
func (a *Adapter) ListSessions(ctx context.Context) ([]providers.Session, error) {
	threads, err := a.svc.ListThreads(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]providers.Session, 0, len(threads))
	for _, t := range threads {
		out = append(out, a.session(ctx, t))
	}
	return out, nil
}

// GetSession returns (nil, nil) for an unknown thread.
func (a *Adapter) GetSession(ctx context.Context, nativeID string) (*providers.Session, error) {
	t, err := a.svc.GetThread(ctx, nativeID)
	var nf *NotFoundError
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := a.session(ctx, t.ThreadSummary)
	return &s, nil
}

// CreateSession creates a Desktop thread in opts.CWD, or starts a managed
// CLI session.
func (a *Adapter) CreateSession(ctx context.Context, opts providers.CreateOptions) (providers.Session, error) {
	t, err := a.svc.CreateThread(ctx, CreateThreadOptions{ProjectPath: opts.CWD, Title: opts.Title})
	if err != nil {
		return providers.Session{}, err
	}
	return a.session(ctx, t), nil
}

// ResumeSession resumes a thread and returns it.
func (a *Adapter) ResumeSession(ctx context.Context, nativeID string) (providers.Session, error) {
	if _, err := a.svc.ResumeThread(ctx, nativeID); err != nil {
		return providers.Session{}, err
	}
	s, err := a.GetSession(ctx, nativeID)
	if err != nil {
		return providers.Session{}, err
	}
	if s == nil {
		return providers.Session{}, fmt.Errorf("%s could not resume %s", providers.Freebuff, nativeID)
	}
	return *s, nil
}

// Send sends a prompt. Steering and per-prompt options are unsupported.
func (a *Adapter) Send(ctx context.Context, nativeID, text string, opts providers.SendOptions) (providers.Receipt, error) {
	if opts.Mode == "steer" {
		return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "steer", Reason: reasonSteer}
	}
	if opts.Model != nil || opts.Agent != "" || opts.Reasoning != "" {
		return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "per-prompt options", Reason: reasonPerPrompt}
	}
	return a.svc.SendThreadMessage(ctx, nativeID, text)
}

// Cancel stops the thread's turn.
func (a *Adapter) Cancel(ctx context.Context, nativeID string) (providers.Receipt, error) {
	r, err := a.svc.StopThread(ctx, nativeID)
	r.Operation = "cancel"
	return r, err
}

// Subscribe streams a Desktop thread's normalized progress events (Type is
// the progress kind, Data the event JSON). The channel closes when ctx ends
// or the Desktop event stream ends.
func (a *Adapter) Subscribe(ctx context.Context, nativeID string) (<-chan providers.NativeEvent, error) {
	return a.svc.Subscribe(ctx, nativeID)
}

// Diff is unsupported.
func (a *Adapter) Diff(context.Context, string, providers.DiffOptions) (any, error) {
	return nil, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "diff", Reason: reasonDiff}
}

// PendingPermissions is unsupported.
func (a *Adapter) PendingPermissions(context.Context) ([]providers.PermissionRequest, error) {
	return nil, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "permission requests", Reason: reasonPermissions}
}

// RespondPermission is unsupported.
func (a *Adapter) RespondPermission(context.Context, string, string, string) (providers.Receipt, error) {
	return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: "permission responses", Reason: reasonPermissions}
}

// SetModel sets the thread's model. ProviderID "codebuff" (or empty) is the
// harness; another provider id is joined to the model id as
// "<provider>/<model>" (Freebuff's model ids look like "z-ai/glm-5.3-flash").
func (a *Adapter) SetModel(ctx context.Context, nativeID string, model providers.Model) (providers.Receipt, error) {
	if model.Variant != "" {
		return providers.Receipt{}, core.NotSent(&InputError{Field: "model.variant", Msg: "Freebuff models have no variants"})
	}
	id := model.ModelID
	switch p := model.ProviderID; {
	case p == "" || p == "codebuff" || p == "freebuff" || strings.Contains(id, "/"):
	default:
		id = p + "/" + id
	}
	return a.svc.SetThreadModel(ctx, nativeID, id, "codebuff")
}

// SetReasoning sets the thread's reasoning effort.
func (a *Adapter) SetReasoning(ctx context.Context, nativeID, effort string) (providers.Receipt, error) {
	return a.svc.SetThreadReasoning(ctx, nativeID, &effort)
}

// Close closes the service.
func (a *Adapter) Close() error { return a.svc.Close() }
