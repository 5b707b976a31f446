package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/callinfo"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/progress"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/workflow"
)

// SessionTools answers the sessions and session-control tool groups over the
// provider registry, the delivery log (every write is recorded before it is
// dispatched) and the event hub.
type SessionTools struct {
	Registry *registry.Registry
	Delivery *delivery.Service
	Events   *events.Hub
	// Claims and Workflow enforce claims at permission requests (see
	// permissions.go); without Claims no request is checked.
	Claims   *claims.Service
	Workflow *workflow.Service
}

// watchBeforeSend bounds how long a send waits for the session's event
// stream to open before it dispatches anyway.
const watchBeforeSend = 3 * time.Second

// deliveryAnswer is the answer of the delivery-logged writes: the receipt
// (0.3.x OperationReceipt, with the native turn it started) plus the stored
// operation's identity and what the runtime knows of the session now.
func (t SessionTools) deliveryAnswer(r delivery.Result) *catalogs.Delivery {
	rc := r.Receipt
	if rc.NativeTurnID == "" {
		rc.NativeTurnID = r.Operation.NativeTurnID
	}
	return &catalogs.Delivery{
		Provider:       string(rc.Provider),
		NativeID:       rc.NativeID,
		Operation:      rc.Operation,
		Accepted:       rc.Accepted,
		Status:         opt(string(rc.Status)),
		ProviderState:  opt(rc.ProviderState),
		Detail:         rc.Detail,
		NativeTurnID:   opt(rc.NativeTurnID),
		OperationID:    r.Operation.ID,
		IdempotencyKey: r.Operation.IdempotencyKey,
		Liveness:       livenessAnswer(t.Registry.Liveness(rc.Provider, rc.NativeID)),
		Turn:           turnFactsAnswer(r.Operation.Turn),
	}
}

// ProvidersAnswer is list_providers' answer for the capability records
// (doctor --json writes the same shape).
func ProvidersAnswer(list []providers.Capabilities) *catalogs.ListProvidersOutput {
	return &catalogs.ListProvidersOutput{Providers: mapList(list, capabilitiesAnswer)}
}

// ListProviders answers list_providers.
func (t SessionTools) ListProviders(ctx context.Context, _ *catalogs.ListProvidersInput) (*catalogs.ListProvidersOutput, error) {
	return ProvidersAnswer(t.Registry.ListProviders(ctx)), nil
}

// ListAgentSessions answers list_agent_sessions: a page of the providers'
// sessions, each provider's failure reported on its own.
func (t SessionTools) ListAgentSessions(ctx context.Context, in *catalogs.ListAgentSessionsInput) (*catalogs.ListAgentSessionsOutput, error) {
	p, err := t.Registry.ListSessionPage(ctx, registry.SessionQuery{Provider: optString(in.Provider), Limit: in.Limit, Cursor: optString(in.Cursor)})
	if err != nil {
		return nil, err
	}
	return sessionPageAnswer(p), nil
}

// GetSessionDiff answers get_session_diff.
func (t SessionTools) GetSessionDiff(ctx context.Context, in *catalogs.GetSessionDiffInput) (*catalogs.GetSessionDiffOutput, error) {
	d, err := t.Registry.Diff(ctx, in.Provider, in.NativeID, providers.DiffOptions{MessageID: optString(in.MessageID)})
	if err != nil {
		return nil, err
	}
	return &catalogs.GetSessionDiffOutput{Provider: in.Provider, NativeID: in.NativeID, Diff: d}, nil
}

// ReadSessionEvents answers read_session_events: a page after the cursor,
// waiting up to timeoutMs, with MCP progress while it waits.
func (t SessionTools) ReadSessionEvents(ctx context.Context, in *catalogs.ReadSessionEventsInput) (*catalogs.ReadSessionEventsOutput, error) {
	id, err := providers.ParseID(in.Provider)
	if err != nil {
		return nil, err
	}
	after := optInt(in.AfterSequence)
	if seq, ok, err := events.CursorSequence(id, in.NativeID, optString(in.Cursor)); err != nil {
		return nil, err
	} else if ok {
		if after != 0 {
			return nil, paging.Invalid("read_session_events", "cursor", "replaces afterSequence; pass one of them")
		}
		after = seq
	}
	if _, err := t.Registry.Resolve(ctx, in.Provider, in.NativeID); err != nil {
		return nil, err
	}
	req := events.ReadRequest{
		Provider:      id,
		NativeID:      in.NativeID,
		AfterSequence: after,
		Limit:         int(in.Limit),
		Timeout:       time.Duration(in.TimeoutMs) * time.Millisecond,
	}
	if progress.Requested(ctx) {
		report := progress.From(ctx)
		req.Progress = func(waited, total time.Duration) {
			report(float64(waited.Milliseconds()), float64(total.Milliseconds()), "waiting for session events")
		}
	}
	p, err := t.Events.Read(ctx, req)
	if err != nil {
		return nil, err
	}
	out := eventPageAnswer(p)
	if t.Delivery == nil || callinfo.Legacy(ctx) {
		return out, nil
	}
	// The session's totals as of the end of the wait, so a turn whose end
	// this page shows is counted.
	tot, err := t.Delivery.SessionTotals(ctx, string(id)+":"+in.NativeID)
	if err != nil {
		return nil, err
	}
	return withEventsUsage(out, usageTotalsAnswer(tot)), nil
}

// SendSessionMessage answers send_session_message.
func (t SessionTools) SendSessionMessage(ctx context.Context, in *catalogs.SendSessionMessageInput) (*catalogs.Delivery, error) {
	opts := providers.SendOptions{Mode: in.Mode, Agent: optString(in.Agent), Reasoning: optString(in.Reasoning)}
	if in.Model != nil {
		opts.Model = &providers.Model{ProviderID: in.Model.ProviderID, ModelID: in.Model.ModelID, Variant: optString(in.Model.Variant)}
	}
	// Open the session's event stream before the prompt leaves, so the
	// turn's events are in the log from its first one (best effort: the
	// send does not depend on it).
	if id, err := providers.ParseID(in.Provider); err == nil && t.Events != nil {
		_ = t.Events.Watch(ctx, id, in.NativeID, watchBeforeSend)
	}
	r, err := t.Delivery.Send(ctx, delivery.SendRequest{
		Provider: in.Provider, NativeID: in.NativeID, Text: in.Text, IdempotencyKey: optString(in.IdempotencyKey), Options: opts,
	})
	if err != nil {
		return nil, err
	}
	return t.deliveryAnswer(r), nil
}

// CancelSession answers cancel_session.
func (t SessionTools) CancelSession(ctx context.Context, in *catalogs.CancelSessionInput) (*catalogs.Delivery, error) {
	r, err := t.Delivery.Cancel(ctx, delivery.CancelRequest{Provider: in.Provider, NativeID: in.NativeID, IdempotencyKey: optString(in.IdempotencyKey)})
	if err != nil {
		return nil, err
	}
	return t.deliveryAnswer(r), nil
}

// CreateSession answers create_session.
func (t SessionTools) CreateSession(ctx context.Context, in *catalogs.CreateSessionInput) (*catalogs.Session, error) {
	s, err := t.Registry.CreateSession(ctx, in.Provider, providers.CreateOptions{CWD: optString(in.CWD), Title: optString(in.Title)})
	if err != nil {
		return nil, err
	}
	a := sessionAnswer(s)
	return &a, nil
}

// ResumeSession answers resume_session.
func (t SessionTools) ResumeSession(ctx context.Context, in *catalogs.ResumeSessionInput) (*catalogs.Session, error) {
	res, err := t.Registry.ResumeSession(ctx, in.Provider, in.NativeID, optBool(in.AllowFresh))
	if err != nil {
		return nil, err
	}
	a := sessionAnswer(res.Session)
	resumed := "requested"
	if res.Fresh {
		resumed = "fresh"
		a.ResumeNote = opt(res.Note)
	}
	a.Resumed = &resumed
	return &a, nil
}

// ListPermissionRequests answers list_permission_requests: a page of the
// held requests of every provider, oldest first (never auto-approved), each
// with the claims it would break (looked up for the page only).
func (t SessionTools) ListPermissionRequests(ctx context.Context, in *catalogs.ListPermissionRequestsInput) (*catalogs.ListPermissionRequestsOutput, error) {
	session, err := providerSession("list_permission_requests", in.Session, knownIDs(t.Registry))
	if err != nil {
		return nil, err
	}
	page, err := t.Registry.PendingPermissionPage(ctx, registry.PermissionQuery{Session: session, Limit: in.Limit, Cursor: optString(in.Cursor)})
	if err != nil {
		return nil, err
	}
	pending := make([]catalogs.PendingPermission, 0, len(page.Pending))
	for _, req := range page.Pending {
		conflicts, err := t.editConflicts(ctx, req)
		if err != nil {
			return nil, err
		}
		pending = append(pending, pendingPermissionAnswer(req, conflicts))
	}
	return permissionPageAnswer(page, pending), nil
}

// permissionPageAnswer is a page of pending requests; a cut keeps the
// first n with the conflicts already looked up.
func permissionPageAnswer(page registry.PermissionPage, pending []catalogs.PendingPermission) *catalogs.ListPermissionRequestsOutput {
	return &catalogs.ListPermissionRequestsOutput{
		Pending:        pending,
		ProviderErrors: mapList(page.ProviderErrors, providerErrorAnswer),
		NextCursor:     opt(page.NextCursor),
		Cut: func(n int) *catalogs.ListPermissionRequestsOutput {
			return permissionPageAnswer(page.CutPage(n).(registry.PermissionPage), pending[:n])
		},
	}
}

// RespondToPermission answers respond_to_permission. An allow of a request
// that would edit a path another session holds an exclusive claim on is
// refused unless override is set; an override is recorded as evidence.
func (t SessionTools) RespondToPermission(ctx context.Context, in *catalogs.RespondToPermissionInput) (*catalogs.Delivery, error) {
	if err := t.checkClaims(ctx, in); err != nil {
		return nil, err
	}
	r, err := t.Delivery.RespondPermission(ctx, delivery.PermissionResponse{
		Provider: in.Provider, NativeID: in.NativeID, RequestID: in.RequestID, Decision: in.Decision, IdempotencyKey: optString(in.IdempotencyKey),
	})
	if err != nil {
		return nil, err
	}
	return t.deliveryAnswer(r), nil
}

// SetSessionModel answers set_session_model. A string names the model as
// "providerID/modelID" or just "modelID".
func (t SessionTools) SetSessionModel(ctx context.Context, in *catalogs.SetSessionModelInput) (*catalogs.Receipt, error) {
	var m providers.Model
	switch {
	case in.Model.Text != nil:
		if p, id, ok := strings.Cut(*in.Model.Text, "/"); ok {
			m = providers.Model{ProviderID: p, ModelID: id}
		} else {
			m = providers.Model{ModelID: *in.Model.Text}
		}
	case in.Model.Object != nil:
		o := in.Model.Object
		m = providers.Model{ProviderID: o.ProviderID, ModelID: o.ModelID, Variant: optString(o.Variant)}
	}
	return receiptResult(t.Registry.SetModel(ctx, in.Provider, in.NativeID, m))
}

// SetSessionReasoning answers set_session_reasoning.
func (t SessionTools) SetSessionReasoning(ctx context.Context, in *catalogs.SetSessionReasoningInput) (*catalogs.Receipt, error) {
	return receiptResult(t.Registry.SetReasoning(ctx, in.Provider, in.NativeID, in.Effort))
}

func receiptResult(r providers.Receipt, err error) (*catalogs.Receipt, error) {
	if err != nil {
		return nil, err
	}
	a := receiptAnswer(r)
	return &a, nil
}

// knownIDs are the providers r knows; without a registry, the built-in ones.
func knownIDs(r *registry.Registry) []providers.ID {
	if r == nil {
		return providers.Order()
	}
	return r.IDs()
}

// providerSession reads a session filter of the <provider>:<nativeId> form
// (participants and permission requests are keyed by both), refusing a
// provider that is not among known with an error naming the argument.
func providerSession(tool string, s *string, known []providers.ID) (string, error) {
	v, err := paging.Session(tool, "session", s, true)
	if err != nil || v == "" {
		return v, err
	}
	name, _, _ := strings.Cut(v, ":")
	if !slices.Contains(known, providers.ID(name)) {
		names := make([]string, 0, len(known))
		for _, id := range known {
			names = append(names, string(id))
		}
		return "", paging.Invalid(tool, "session", fmt.Sprintf("names unknown provider %q; use one of %s", name, strings.Join(names, ", ")))
	}
	return v, nil
}
