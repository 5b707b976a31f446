// Package registrytest provides a scriptable fake provider adapter for
// tests of the registry, the delivery log and their users.
package registrytest

import (
	"context"
	"fmt"
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// Adapter is a fake providers.Adapter. Unset function fields give
// UnsupportedError (or, for the listing calls, the Sessions field).
type Adapter struct {
	Provider providers.ID
	// EndpointName is the endpoint the fake's sessions carry; ForEndpoint
	// accepts it and any name in Endpoints.
	EndpointName string
	Endpoints    map[string]*Adapter

	mu       sync.Mutex
	Sessions []providers.Session
	ListErr  error
	Calls    map[string]int

	SendFunc       func(ctx context.Context, nativeID, text string, opts providers.SendOptions) (providers.Receipt, error)
	CancelFunc     func(ctx context.Context, nativeID string) (providers.Receipt, error)
	PermissionFunc func(ctx context.Context, nativeID, requestID, decision string) (providers.Receipt, error)
	SubscribeFunc  func(ctx context.Context, nativeID string) (<-chan providers.NativeEvent, error)
	CapsFunc       func(ctx context.Context) providers.Capabilities
	// ListFunc answers ListSessions when set (instead of Sessions).
	ListFunc func(ctx context.Context) ([]providers.Session, error)
	// Pending is what PendingPermissions answers.
	Pending []providers.PermissionRequest
	// LookupFunc answers LookupTurn; unset, the fake has no history
	// (UnsupportedError).
	LookupFunc func(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error)
	// LivenessFunc answers Liveness; unset, every session is unknown.
	LivenessFunc func(nativeID string) providers.Liveness
	// StartingFunc, when set, is the Starting role: whether the fake's
	// program is starting.
	StartingFunc func() bool
}

var _ providers.Adapter = (*Adapter)(nil)
var _ providers.EndpointRouter = (*Adapter)(nil)
var _ providers.TurnLookup = (*Adapter)(nil)
var _ providers.LivenessReporter = (*Adapter)(nil)

// Roles implements providers.Adapter: endpoints, liveness and history
// (and starts, with StartingFunc).
func (a *Adapter) Roles() providers.Roles {
	r := providers.Roles{Endpoints: a, Liveness: a, History: a}
	if a.StartingFunc != nil {
		r.Starting = startingFunc(a.StartingFunc)
	}
	return r
}

// startingFunc is a providers.StartReporter.
type startingFunc func() bool

func (f startingFunc) Starting() bool { return f() }

// LookupTurn implements providers.TurnLookup.
func (a *Adapter) LookupTurn(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
	a.count("lookup")
	if a.LookupFunc == nil {
		return providers.TurnRecord{}, a.unsupported("history lookup")
	}
	return a.LookupFunc(ctx, q)
}

// Liveness implements providers.LivenessReporter.
func (a *Adapter) Liveness(nativeID string) providers.Liveness {
	if a.LivenessFunc == nil {
		return providers.Liveness{State: providers.LiveUnknown}
	}
	return a.LivenessFunc(nativeID)
}

func (a *Adapter) count(op string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.Calls == nil {
		a.Calls = map[string]int{}
	}
	a.Calls[op]++
}

// CallCount returns how often op was called.
func (a *Adapter) CallCount(op string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.Calls[op]
}

// SetSessions replaces the listed sessions.
func (a *Adapter) SetSessions(ss []providers.Session, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Sessions, a.ListErr = ss, err
}

// Session builds a session of this fake.
func (a *Adapter) Session(nativeID, title string) providers.Session {
	return providers.Session{ID: string(a.Provider) + ":" + nativeID, Provider: a.Provider, NativeID: nativeID, Title: title, Endpoint: a.EndpointName}
}

func (a *Adapter) unsupported(op string) error {
	return &providers.UnsupportedError{Provider: a.Provider, Operation: op, Reason: "fake"}
}

// ID implements providers.Adapter.
func (a *Adapter) ID() providers.ID { return a.Provider }

// Capabilities implements providers.Adapter.
func (a *Adapter) Capabilities(ctx context.Context) providers.Capabilities {
	a.count("capabilities")
	if a.CapsFunc != nil {
		return a.CapsFunc(ctx)
	}
	ok := providers.Capability{Supported: true, State: providers.Available}
	return providers.Capabilities{Provider: a.Provider, AdapterVersion: "fake", Authorization: "unknown",
		Discovery: ok, Sessions: ok, SendMessage: ok, Cancel: ok, Events: ok, Permissions: ok}
}

// ListSessions implements providers.Adapter.
func (a *Adapter) ListSessions(ctx context.Context) ([]providers.Session, error) {
	a.count("list")
	if a.ListFunc != nil {
		return a.ListFunc(ctx)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ListErr != nil {
		return nil, a.ListErr
	}
	return append([]providers.Session(nil), a.Sessions...), nil
}

// GetSession implements providers.Adapter.
func (a *Adapter) GetSession(_ context.Context, nativeID string) (*providers.Session, error) {
	a.count("get")
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.Sessions {
		if s.NativeID == nativeID {
			return &s, nil
		}
	}
	return nil, nil
}

// CreateSession implements providers.Adapter.
func (a *Adapter) CreateSession(_ context.Context, opts providers.CreateOptions) (providers.Session, error) {
	a.count("create")
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.Session(fmt.Sprintf("new-%d", len(a.Sessions)+1), opts.Title)
	s.CWD = opts.CWD
	a.Sessions = append(a.Sessions, s)
	return s, nil
}

// ResumeSession implements providers.Adapter.
func (a *Adapter) ResumeSession(ctx context.Context, nativeID string) (providers.Session, error) {
	a.count("resume")
	s, _ := a.GetSession(ctx, nativeID)
	if s == nil {
		return providers.Session{}, fmt.Errorf("no session %s", nativeID)
	}
	return *s, nil
}

// Send implements providers.Adapter.
func (a *Adapter) Send(ctx context.Context, nativeID, text string, opts providers.SendOptions) (providers.Receipt, error) {
	a.count("send")
	if a.SendFunc == nil {
		return providers.Receipt{}, a.unsupported("send")
	}
	return a.SendFunc(ctx, nativeID, text, opts)
}

// Cancel implements providers.Adapter.
func (a *Adapter) Cancel(ctx context.Context, nativeID string) (providers.Receipt, error) {
	a.count("cancel")
	if a.CancelFunc == nil {
		return providers.Receipt{}, a.unsupported("cancel")
	}
	return a.CancelFunc(ctx, nativeID)
}

// Subscribe implements providers.Adapter.
func (a *Adapter) Subscribe(ctx context.Context, nativeID string) (<-chan providers.NativeEvent, error) {
	a.count("subscribe")
	if a.SubscribeFunc == nil {
		return nil, a.unsupported("events")
	}
	return a.SubscribeFunc(ctx, nativeID)
}

// Diff implements providers.Adapter.
func (a *Adapter) Diff(context.Context, string, providers.DiffOptions) (any, error) {
	a.count("diff")
	return nil, a.unsupported("diff")
}

// PendingPermissions implements providers.Adapter.
func (a *Adapter) PendingPermissions(context.Context) ([]providers.PermissionRequest, error) {
	a.count("permissions")
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]providers.PermissionRequest(nil), a.Pending...), nil
}

// RespondPermission implements providers.Adapter.
func (a *Adapter) RespondPermission(ctx context.Context, nativeID, requestID, decision string) (providers.Receipt, error) {
	a.count("permission")
	if a.PermissionFunc == nil {
		return providers.Receipt{}, a.unsupported("permission responses")
	}
	return a.PermissionFunc(ctx, nativeID, requestID, decision)
}

// SetModel implements providers.Adapter.
func (a *Adapter) SetModel(context.Context, string, providers.Model) (providers.Receipt, error) {
	return providers.Receipt{}, a.unsupported("model changes")
}

// SetReasoning implements providers.Adapter.
func (a *Adapter) SetReasoning(context.Context, string, string) (providers.Receipt, error) {
	return providers.Receipt{}, a.unsupported("reasoning changes")
}

// ForEndpoint implements providers.EndpointRouter.
func (a *Adapter) ForEndpoint(_ context.Context, endpoint string) (providers.Adapter, error) {
	a.count("route:" + endpoint)
	if endpoint == a.EndpointName {
		return a, nil
	}
	if b := a.Endpoints[endpoint]; b != nil {
		return b, nil
	}
	return nil, fmt.Errorf("endpoint %s is gone", endpoint)
}

// Close implements providers.Adapter.
func (a *Adapter) Close() error { a.count("close"); return nil }
