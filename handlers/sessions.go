package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/agent-interop/runtime/catalogs"
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

// ProviderList is the answer of list_providers.
type ProviderList struct {
	Providers []providers.Capabilities `json:"providers"`
}

// DiffAnswer is the answer of get_session_diff.
type DiffAnswer struct {
	Provider string `json:"provider"`
	NativeID string `json:"nativeId"`
	Diff     any    `json:"diff"`
}

// PermissionRequests is the answer of list_permission_requests: one page
// of held requests, each with the claims it would break.
type PermissionRequests struct {
	Pending        []PendingPermission      `json:"pending"`
	ProviderErrors []registry.ProviderError `json:"providerErrors"`
	NextCursor     string                   `json:"nextCursor,omitempty"`

	page registry.PermissionPage
}

// PageLen implements paging.Cuttable.
func (p PermissionRequests) PageLen() int { return len(p.Pending) }

// CutPage implements paging.Cuttable.
func (p PermissionRequests) CutPage(n int) any {
	p.NextCursor = p.page.CutPage(n).(registry.PermissionPage).NextCursor
	p.Pending = p.Pending[:n]
	return p
}

var _ paging.Cuttable = PermissionRequests{}

// DeliveryAnswer is the answer of the delivery-logged writes: the receipt
// (0.3.x OperationReceipt, with the native turn it started) plus the stored
// operation's identity and what the runtime knows of the session now.
type DeliveryAnswer struct {
	providers.Receipt
	OperationID    string             `json:"operationId"`
	IdempotencyKey string             `json:"idempotencyKey"`
	Liveness       providers.Liveness `json:"liveness"`
}

func (t SessionTools) deliveryAnswer(r delivery.Result) DeliveryAnswer {
	if r.Receipt.NativeTurnID == "" {
		r.Receipt.NativeTurnID = r.Operation.NativeTurnID
	}
	return DeliveryAnswer{Receipt: r.Receipt, OperationID: r.Operation.ID, IdempotencyKey: r.Operation.IdempotencyKey,
		Liveness: t.Registry.Liveness(r.Receipt.Provider, r.Receipt.NativeID)}
}

// ListProviders answers list_providers.
func (t SessionTools) ListProviders(ctx context.Context, _ *catalogs.ListProvidersInput) (any, error) {
	return ProviderList{Providers: t.Registry.ListProviders(ctx)}, nil
}

// ListAgentSessions answers list_agent_sessions: a page of the providers'
// sessions, each provider's failure reported on its own.
func (t SessionTools) ListAgentSessions(ctx context.Context, in *catalogs.ListAgentSessionsInput) (any, error) {
	return t.Registry.ListSessionPage(ctx, registry.SessionQuery{Provider: optString(in.Provider), Limit: in.Limit, Cursor: optString(in.Cursor)})
}

// GetSessionDiff answers get_session_diff.
func (t SessionTools) GetSessionDiff(ctx context.Context, in *catalogs.GetSessionDiffInput) (any, error) {
	d, err := t.Registry.Diff(ctx, in.Provider, in.NativeID, providers.DiffOptions{MessageID: optString(in.MessageID)})
	if err != nil {
		return nil, err
	}
	return DiffAnswer{Provider: in.Provider, NativeID: in.NativeID, Diff: d}, nil
}

// ReadSessionEvents answers read_session_events: a page after the cursor,
// waiting up to timeoutMs, with MCP progress while it waits.
func (t SessionTools) ReadSessionEvents(ctx context.Context, in *catalogs.ReadSessionEventsInput) (any, error) {
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
	return t.Events.Read(ctx, req)
}

// SendSessionMessage answers send_session_message.
func (t SessionTools) SendSessionMessage(ctx context.Context, in *catalogs.SendSessionMessageInput) (any, error) {
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
func (t SessionTools) CancelSession(ctx context.Context, in *catalogs.CancelSessionInput) (any, error) {
	r, err := t.Delivery.Cancel(ctx, delivery.CancelRequest{Provider: in.Provider, NativeID: in.NativeID, IdempotencyKey: optString(in.IdempotencyKey)})
	if err != nil {
		return nil, err
	}
	return t.deliveryAnswer(r), nil
}

// CreateSession answers create_session.
func (t SessionTools) CreateSession(ctx context.Context, in *catalogs.CreateSessionInput) (any, error) {
	return t.Registry.CreateSession(ctx, in.Provider, providers.CreateOptions{CWD: optString(in.CWD), Title: optString(in.Title)})
}

// ResumeSession answers resume_session.
func (t SessionTools) ResumeSession(ctx context.Context, in *catalogs.ResumeSessionInput) (any, error) {
	return t.Registry.ResumeSession(ctx, in.Provider, in.NativeID)
}

// ListPermissionRequests answers list_permission_requests: a page of the
// held requests of every provider, oldest first (never auto-approved), each
// with the claims it would break (looked up for the page only).
func (t SessionTools) ListPermissionRequests(ctx context.Context, in *catalogs.ListPermissionRequestsInput) (any, error) {
	page, err := t.Registry.PendingPermissionPage(ctx, registry.PermissionQuery{Limit: in.Limit, Cursor: optString(in.Cursor)})
	if err != nil {
		return nil, err
	}
	out := PermissionRequests{Pending: make([]PendingPermission, 0, len(page.Pending)), ProviderErrors: page.ProviderErrors,
		NextCursor: page.NextCursor, page: page}
	for _, req := range page.Pending {
		conflicts, err := t.editConflicts(ctx, req)
		if err != nil {
			return nil, err
		}
		out.Pending = append(out.Pending, PendingPermission{PermissionRequest: req, Conflicts: conflicts})
	}
	return out, nil
}

// RespondToPermission answers respond_to_permission. An allow of a request
// that would edit a path another session holds an exclusive claim on is
// refused unless override is set; an override is recorded as evidence.
func (t SessionTools) RespondToPermission(ctx context.Context, in *catalogs.RespondToPermissionInput) (any, error) {
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
func (t SessionTools) SetSessionModel(ctx context.Context, in *catalogs.SetSessionModelInput) (any, error) {
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
	return t.Registry.SetModel(ctx, in.Provider, in.NativeID, m)
}

// SetSessionReasoning answers set_session_reasoning.
func (t SessionTools) SetSessionReasoning(ctx context.Context, in *catalogs.SetSessionReasoningInput) (any, error) {
	return t.Registry.SetReasoning(ctx, in.Provider, in.NativeID, in.Effort)
}
