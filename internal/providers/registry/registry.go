// Package registry is the runtime's view of the provider adapters: it lists
// providers and sessions, records every session seen with the endpoint that
// exposed it, and routes each operation on an existing session back to that
// endpoint.
//
// On a team store (several machines on one database) every session also
// records the host that runs it: listings include the sessions of the other
// hosts (with their host), and an operation on another host's session is
// refused with an error naming that host; it is never redirected.
//
// The registry never fabricates a provider or a session. A provider whose
// program is missing, whose handshake or login failed, is reported as it is
// (capabilities with the exact reason; providerErrors in a session listing),
// and one failing provider never empties another's answer.
package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/providersession"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
)

// Options configure a Registry.
type Options struct {
	// Clock is the time source (default the wall clock).
	Clock quartz.Clock
	// CapabilityTimeout bounds one adapter's Capabilities or ListSessions
	// call inside a listing of all providers (default 20 s).
	CapabilityTimeout time.Duration
	// Host names this machine on a team store; "" on a local store, where
	// sessions carry no host.
	Host string
	// SoftDeadline is how long a page of every provider's sessions waits
	// for the slowest provider before answering without it, reported
	// late (default DefaultSoftDeadline; negative waits for every one).
	SoftDeadline time.Duration
	// StartGrace is how long such a page waits before it answers without
	// the providers still under way when every one of them is starting its
	// program (providers.StartReporter), reported late (default
	// DefaultStartGrace; negative: the soft deadline alone).
	StartGrace time.Duration
	// Logger gets a debug record of each provider listing's end (its
	// provider, how long it took, whether a listing had stopped waiting
	// for it, its error); default none.
	Logger *slog.Logger
}

// maxRemoteSessions bounds how many sessions of other hosts one listing
// adds (the most recently seen first).
const maxRemoteSessions = 200

// Registry routes calls to provider adapters.
type Registry struct {
	st       *store.Store
	adapters map[providers.ID]providers.Adapter
	order    []providers.ID // the adapters' ids in the order given
	clock    quartz.Clock
	timeout  time.Duration
	host     string
	logger   *slog.Logger

	soft  time.Duration // 0: wait for every provider
	grace time.Duration // 0: no early answer for starting programs

	mu      sync.Mutex
	known   map[providers.ID]Known // the last capability record seen per provider
	flights map[providers.ID]*flight

	bg          sync.WaitGroup  // listings running in the background
	closing     context.Context // cancelled by Close
	stopFlights context.CancelFunc
}

// Known is the last capability record the registry saw for a provider.
type Known struct {
	Capabilities providers.Capabilities
	CheckedAt    time.Time
}

// New returns a registry over the given adapters (at most one per
// provider). The ids it knows are the built-in agents' (in catalog order)
// and then the other adapters' (in the order given).
func New(st *store.Store, adapters []providers.Adapter, opts Options) (*Registry, error) {
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CapabilityTimeout <= 0 {
		opts.CapabilityTimeout = 20 * time.Second
	}
	r := &Registry{st: st, adapters: map[providers.ID]providers.Adapter{}, clock: opts.Clock, timeout: opts.CapabilityTimeout, logger: opts.Logger,
		host: opts.Host, known: map[providers.ID]Known{}, flights: map[providers.ID]*flight{}}
	switch {
	case opts.SoftDeadline == 0:
		r.soft = DefaultSoftDeadline
	case opts.SoftDeadline > 0:
		r.soft = opts.SoftDeadline
	}
	switch {
	case opts.StartGrace == 0:
		r.grace = DefaultStartGrace
	case opts.StartGrace > 0:
		r.grace = opts.StartGrace
	}
	r.closing, r.stopFlights = context.WithCancel(context.Background())
	for _, a := range adapters {
		id := a.ID()
		if _, err := providers.ParseID(string(id)); err != nil {
			return nil, fmt.Errorf("adapter for provider %q: %w", id, err)
		}
		if _, dup := r.adapters[id]; dup {
			return nil, fmt.Errorf("two adapters for provider %s", id)
		}
		r.adapters[id] = a
	}
	// The built-in agents are always known (one without an adapter is
	// listed unconfigured); a user's agents follow them.
	r.order = providers.Order()
	for _, a := range adapters {
		if !slices.Contains(r.order, a.ID()) {
			r.order = append(r.order, a.ID())
		}
	}
	return r, nil
}

// Close closes every adapter.
func (r *Registry) Close() error {
	r.closeFlights()
	var errs []error
	for _, id := range r.order {
		if a := r.adapters[id]; a != nil {
			if err := a.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s adapter: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// UnknownProviderError is returned for a provider name the runtime does
// not know.
type UnknownProviderError struct {
	Name  string
	Known []providers.ID // the ids the runtime knows
}

func (e *UnknownProviderError) Error() string {
	ids := make([]string, 0, len(e.Known))
	for _, id := range e.Known {
		ids = append(ids, string(id))
	}
	return fmt.Sprintf("Unknown provider %s. Known providers: %s", e.Name, strings.Join(ids, ", "))
}

// IDs returns the ids the registry knows, in reporting order.
func (r *Registry) IDs() []providers.ID { return slices.Clone(r.order) }

// known resolves a provider name to a known id.
func (r *Registry) knownID(name string) (providers.ID, error) {
	id := providers.ID(name)
	if !slices.Contains(r.order, id) {
		return "", &UnknownProviderError{Name: name, Known: r.IDs()}
	}
	return id, nil
}

// NotFound marks the error as a lookup miss.
func (e *UnknownProviderError) NotFound() bool { return true }

// NotConfiguredError is returned for a known provider without an adapter.
type NotConfiguredError struct{ Provider providers.ID }

func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("%s has no adapter configured in this runtime", e.Provider)
}

// UnknownSessionError is returned when a provider does not know a session.
type UnknownSessionError struct {
	Provider providers.ID
	NativeID string
	Endpoint string
}

func (e *UnknownSessionError) Error() string {
	where := ""
	if e.Endpoint != "" {
		where = " at " + e.Endpoint
	}
	return fmt.Sprintf("Unknown session %s:%s (%s%s does not know it; list_agent_sessions shows the sessions it has)", e.Provider, e.NativeID, e.Provider, where)
}

// NotFound marks the error as a lookup miss.
func (e *UnknownSessionError) NotFound() bool { return true }

// OtherHostError refuses an operation on a session that runs on another
// machine of a team store: only a runtime on that host can reach its
// provider. Nothing was recorded or sent.
type OtherHostError struct {
	Provider providers.ID
	NativeID string
	Host     string // the session's host
	Local    string // this runtime's host
}

func (e *OtherHostError) Error() string {
	return fmt.Sprintf("Session %s:%s runs on host %s, not on this machine (%s); only the runtime on %s can reach it, so nothing was sent. "+
		"Use a runtime on %s, or hand the work over (create_handoff) to a session on this machine",
		e.Provider, e.NativeID, e.Host, e.Local, e.Host, e.Host)
}

// Adapter returns the adapter for a provider name.
func (r *Registry) Adapter(name string) (providers.Adapter, error) {
	id, err := r.knownID(name)
	if err != nil {
		return nil, err
	}
	a := r.adapters[id]
	if a == nil {
		return nil, &NotConfiguredError{Provider: id}
	}
	return a, nil
}

// ListProviders returns every provider in registry order with its
// capability record; a provider without an adapter is listed as
// unavailable with the reason.
func (r *Registry) ListProviders(ctx context.Context) []providers.Capabilities {
	order := r.order
	out := make([]providers.Capabilities, len(order))
	var wg sync.WaitGroup
	for i, id := range order {
		a := r.adapters[id]
		if a == nil {
			out[i] = unconfigured(id)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := clockctx.WithTimeout(ctx, r.clock, r.timeout, "registry", "adapter call")
			defer cancel()
			out[i] = a.Capabilities(cctx)
			out[i].Provider = id
		}()
	}
	wg.Wait()
	now := r.clock.Now()
	r.mu.Lock()
	for _, c := range out {
		r.known[c.Provider] = Known{Capabilities: c, CheckedAt: now}
	}
	r.mu.Unlock()
	return out
}

// LastKnown returns the capability record of each provider from the last
// ListProviders, without contacting any provider; ok is false for a
// provider not checked yet. A provider without an adapter is always known.
func (r *Registry) LastKnown(id providers.ID) (Known, bool) {
	if r.adapters[id] == nil {
		return Known{Capabilities: unconfigured(id)}, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.known[id]
	return k, ok
}

func unconfigured(id providers.ID) providers.Capabilities {
	c := providers.Capability{Supported: false, State: providers.Unavailable, Reason: (&NotConfiguredError{Provider: id}).Error()}
	return providers.Capabilities{
		Provider: id, Authorization: "unknown",
		Discovery: c, Sessions: c, SendMessage: c, Steer: c, Cancel: c, Events: c, Diff: c, Permissions: c, Model: c, Reasoning: c,
		Limitations: []string{c.Reason},
	}
}

// ProviderError is one provider's failure inside a listing.
type ProviderError struct {
	Provider providers.ID `json:"provider"`
	Error    string       `json:"error"`
}

// SessionList is the answer of list_agent_sessions.
type SessionList struct {
	Sessions       []providers.Session `json:"sessions"`
	ProviderErrors []ProviderError     `json:"providerErrors,omitempty"`
}

// ListSessions lists the sessions of one provider (name non-empty) or of
// every configured provider, records them, and reports each provider's
// failure separately. Only an unknown provider name is an error.
func (r *Registry) ListSessions(ctx context.Context, name string) (SessionList, error) {
	ids := r.IDs()
	if name != "" {
		id, err := r.knownID(name)
		if err != nil {
			return SessionList{}, err
		}
		ids = []providers.ID{id}
	}
	type result struct {
		sessions []providers.Session
		err      error
	}
	results := make([]result, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		a := r.adapters[id]
		if a == nil {
			if name != "" {
				results[i].err = &NotConfiguredError{Provider: id}
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := clockctx.WithTimeout(ctx, r.clock, r.timeout, "registry", "adapter call")
			defer cancel()
			err := r.hintWorkspaces(cctx, id, a)
			var ss []providers.Session
			if err == nil {
				ss, err = a.ListSessions(cctx)
			}
			if err == nil {
				ss, err = r.record(cctx, id, ss)
			}
			results[i] = result{ss, err}
		}()
	}
	wg.Wait()
	out := SessionList{Sessions: []providers.Session{}}
	for i, res := range results {
		if res.err != nil {
			out.ProviderErrors = append(out.ProviderErrors, ProviderError{Provider: ids[i], Error: res.err.Error()})
			continue
		}
		for j := range res.sessions {
			l := r.Liveness(ids[i], res.sessions[j].NativeID)
			res.sessions[j].Liveness = &l
		}
		out.Sessions = append(out.Sessions, res.sessions...)
	}
	if r.host != "" {
		remote, err := r.remoteSessions(ctx, ids, out.Sessions)
		if err != nil {
			return out, err
		}
		out.Sessions = append(out.Sessions, remote...)
	}
	return out, nil
}

// maxHintedSessions bounds the recorded sessions whose workspaces a
// listing gives the adapter first.
const maxHintedSessions = 256

// hintWorkspaces gives an adapter that takes them (providers.Roles.
// Workspaces) the workspaces of this host's recorded sessions of its
// provider, the most recently seen first, bounded: a provider that lists
// per directory lists those too after a restart.
func (r *Registry) hintWorkspaces(ctx context.Context, id providers.ID, a providers.Adapter) error {
	wh := a.Roles().Workspaces
	if wh == nil {
		return nil
	}
	q := r.st.Client().ProviderSession.Query().
		Where(providersession.Provider(string(id)), providersession.CwdNEQ(""))
	if r.host != "" {
		q = q.Where(providersession.HostIn(r.host, ""))
	}
	rows, err := q.Order(ent.Desc(providersession.FieldLastSeenAt), ent.Asc(providersession.FieldID)).
		Limit(maxHintedSessions).
		Select(providersession.FieldNativeID, providersession.FieldCwd).All(ctx)
	if err != nil {
		return fmt.Errorf("read the recorded workspaces of %s sessions: %w", id, err)
	}
	// Oldest first, so the adapter learns the most recent last.
	for i := len(rows) - 1; i >= 0; i-- {
		wh.KnowWorkspace(rows[i].NativeID, rows[i].Cwd)
	}
	return nil
}

// remoteSessions returns the recorded sessions of the other hosts of a
// team store for the given providers (most recently seen first, bounded),
// except those already listed.
func (r *Registry) remoteSessions(ctx context.Context, ids []providers.ID, listed []providers.Session) ([]providers.Session, error) {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = string(id)
	}
	rows, err := r.st.Client().ProviderSession.Query().
		Where(providersession.ProviderIn(names...), providersession.HostNEQ(r.host), providersession.HostNEQ("")).
		Order(ent.Desc(providersession.FieldLastSeenAt), ent.Asc(providersession.FieldID)).
		Limit(maxRemoteSessions).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the sessions of other hosts: %w", err)
	}
	seen := make(map[string]bool, len(listed))
	for _, s := range listed {
		seen[s.ID] = true
	}
	out := make([]providers.Session, 0, len(rows))
	for _, row := range rows {
		id := row.Provider + ":" + row.NativeID
		if seen[id] {
			continue
		}
		out = append(out, providers.Session{
			ID: id, Provider: providers.ID(row.Provider), NativeID: row.NativeID, Title: row.Title, State: row.State,
			CWD: row.Cwd, Endpoint: row.Endpoint, Host: row.Host,
			Provenance: providers.Provenance{DiscoveredAt: row.LastSeenAt.UTC(), Source: "team store (recorded by " + row.Host + ")", Native: false},
		})
	}
	return out, nil
}

// Liveness returns what the runtime knows of a session now, from its
// adapter's memory (no provider is contacted): unknown when the adapter
// keeps no such state or never observed the session.
func (r *Registry) Liveness(provider providers.ID, nativeID string) providers.Liveness {
	var lr providers.LivenessReporter
	if a := r.adapters[provider]; a != nil {
		lr = a.Roles().Liveness
	}
	if lr != nil {
		l := lr.Liveness(nativeID)
		if l.State == "" {
			l.State = providers.LiveUnknown
		}
		return l
	}
	return providers.Liveness{State: providers.LiveUnknown, Reason: "this provider's adapter reports no liveness"}
}

// record upserts the sessions one provider exposed and returns them with
// the endpoint each was first seen on (a session keeps it for life).
func (r *Registry) record(ctx context.Context, id providers.ID, ss []providers.Session) ([]providers.Session, error) {
	if len(ss) == 0 {
		return ss, nil
	}
	now := r.clock.Now().UTC()
	byNative := map[string]int{}
	for i := range ss {
		ss[i].Provider = id
		if ss[i].ID == "" {
			ss[i].ID = string(id) + ":" + ss[i].NativeID
		}
		byNative[ss[i].NativeID] = i
	}
	type placed struct{ endpoint, host string }
	recorded := map[string]placed{}
	err := r.st.Tx(ctx, func(tx *ent.Tx) error {
		const chunk = 500
		for start := 0; start < len(ss); start += chunk {
			part := ss[start:min(start+chunk, len(ss))]
			builders := make([]*ent.ProviderSessionCreate, 0, len(part))
			natives := make([]string, 0, len(part))
			for _, s := range part {
				if s.NativeID == "" {
					continue
				}
				natives = append(natives, s.NativeID)
				builders = append(builders, tx.ProviderSession.Create().
					SetProvider(string(id)).SetNativeID(s.NativeID).SetEndpoint(s.Endpoint).
					SetCwd(s.CWD).SetTitle(s.Title).SetState(s.State).SetHost(r.host).
					SetFirstSeenAt(now).SetLastSeenAt(now))
			}
			err := tx.ProviderSession.CreateBulk(builders...).
				OnConflict(entsql.ConflictColumns(providersession.FieldProvider, providersession.FieldNativeID),
					entsql.ResolveWith(func(u *entsql.UpdateSet) {
						u.SetExcluded(providersession.FieldCwd)
						u.SetExcluded(providersession.FieldTitle)
						u.SetExcluded(providersession.FieldState)
						u.SetExcluded(providersession.FieldLastSeenAt)
						// The first endpoint sticks; only an empty one is filled in.
						u.Set(providersession.FieldEndpoint, stickyColumn(providersession.FieldEndpoint))
						// So does the first host.
						u.Set(providersession.FieldHost, stickyColumn(providersession.FieldHost))
					})).Exec(ctx)
			if err != nil {
				return err
			}
			rows, err := tx.ProviderSession.Query().
				Where(providersession.Provider(string(id)), providersession.NativeIDIn(natives...)).
				Select(providersession.FieldNativeID, providersession.FieldEndpoint, providersession.FieldHost).All(ctx)
			if err != nil {
				return err
			}
			for _, row := range rows {
				recorded[row.NativeID] = placed{row.Endpoint, row.Host}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record %s sessions: %w", id, err)
	}
	for native, p := range recorded {
		if i, ok := byNative[native]; ok {
			ss[i].Endpoint, ss[i].Host = p.endpoint, p.host
		}
	}
	return ss, nil
}

// stickyColumn keeps a column's stored value in an upsert and fills in an
// empty one (dialect-neutral SQL).
func stickyColumn(col string) entsql.Querier {
	stored := providersession.Table + "." + col
	return entsql.Expr("CASE WHEN " + stored + " = '' THEN excluded." + col + " ELSE " + stored + " END")
}

// IsWorkspace reports whether dir is the working directory of a session
// some runtime process recorded in the store: such a directory is an
// approved root for file reads (security.Roots.SetWorkspaceLookup). On a
// team store only this host's sessions count: another machine's directory
// names nothing on this one.
func (r *Registry) IsWorkspace(ctx context.Context, dir string) (bool, error) {
	if dir == "" {
		return false, nil
	}
	q := r.st.Client().ProviderSession.Query().Where(providersession.Cwd(dir))
	if r.host != "" {
		q = q.Where(providersession.Host(r.host))
	}
	return q.Exist(ctx)
}

// Workspace returns the working directory recorded for a session ("" when
// the session was never seen or reported none).
func (r *Registry) Workspace(ctx context.Context, provider providers.ID, nativeID string) (string, error) {
	row, err := r.st.Client().ProviderSession.Query().
		Where(providersession.Provider(string(provider)), providersession.NativeID(nativeID)).
		Only(ctx)
	if ent.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up the workspace of %s session %s: %w", provider, nativeID, err)
	}
	return row.Cwd, nil
}

// Route is where an operation on a session goes.
type Route struct {
	Provider providers.ID
	NativeID string
	Endpoint string
	Adapter  providers.Adapter
}

// Resolve finds the adapter serving an existing session: the one bound to
// the endpoint that first exposed it. A session never seen before is looked
// up with the provider (and recorded) first.
func (r *Registry) Resolve(ctx context.Context, name, nativeID string) (Route, error) {
	a, err := r.Adapter(name)
	if err != nil {
		return Route{}, err
	}
	id := a.ID()
	if strings.TrimSpace(nativeID) == "" {
		return Route{}, fmt.Errorf("a %s native session id is required", id)
	}
	row, err := r.st.Client().ProviderSession.Query().
		Where(providersession.Provider(string(id)), providersession.NativeID(nativeID)).
		Only(ctx)
	switch {
	case ent.IsNotFound(err):
		s, gerr := a.GetSession(ctx, nativeID)
		if gerr != nil {
			return Route{}, fmt.Errorf("look up %s session %s: %w", id, nativeID, gerr)
		}
		if s == nil {
			return Route{}, &UnknownSessionError{Provider: id, NativeID: nativeID}
		}
		if _, err := r.record(ctx, id, []providers.Session{*s}); err != nil {
			return Route{}, err
		}
		return r.route(ctx, a, id, nativeID, s.Endpoint)
	case err != nil:
		return Route{}, fmt.Errorf("look up %s session %s: %w", id, nativeID, err)
	}
	if r.host != "" && row.Host != "" && row.Host != r.host {
		return Route{}, &OtherHostError{Provider: id, NativeID: nativeID, Host: row.Host, Local: r.host}
	}
	if wh := a.Roles().Workspaces; wh != nil && row.Cwd != "" {
		wh.KnowWorkspace(nativeID, row.Cwd)
	}
	return r.route(ctx, a, id, nativeID, row.Endpoint)
}

func (r *Registry) route(ctx context.Context, a providers.Adapter, id providers.ID, nativeID, endpoint string) (Route, error) {
	rt := Route{Provider: id, NativeID: nativeID, Endpoint: endpoint, Adapter: a}
	if er := a.Roles().Endpoints; er != nil && endpoint != "" {
		bound, err := er.ForEndpoint(ctx, endpoint)
		if err != nil {
			return Route{}, fmt.Errorf("%s session %s cannot be reached: %w", id, nativeID, err)
		}
		rt.Adapter = bound
	}
	return rt, nil
}

// GetSession returns a session as its provider reports it now, with the
// endpoint it is routed to.
func (r *Registry) GetSession(ctx context.Context, name, nativeID string) (providers.Session, error) {
	rt, err := r.Resolve(ctx, name, nativeID)
	if err != nil {
		return providers.Session{}, err
	}
	s, err := rt.Adapter.GetSession(ctx, nativeID)
	if err != nil {
		return providers.Session{}, fmt.Errorf("read %s session %s: %w", rt.Provider, nativeID, err)
	}
	if s == nil {
		return providers.Session{}, &UnknownSessionError{Provider: rt.Provider, NativeID: nativeID, Endpoint: rt.Endpoint}
	}
	s.Endpoint = rt.Endpoint
	return *s, nil
}

// CreateSession creates a session with the provider and records it.
func (r *Registry) CreateSession(ctx context.Context, name string, opts providers.CreateOptions) (providers.Session, error) {
	a, err := r.Adapter(name)
	if err != nil {
		return providers.Session{}, err
	}
	s, err := a.CreateSession(ctx, opts)
	if err != nil {
		return providers.Session{}, fmt.Errorf("create %s session: %w", a.ID(), err)
	}
	ss, err := r.record(ctx, a.ID(), []providers.Session{s})
	if err != nil {
		return s, err
	}
	return ss[0], nil
}

// Resumed is the answer of ResumeSession: the session now open, and
// whether it is the requested one.
type Resumed struct {
	Session providers.Session
	// Fresh: Session is not the requested session but a fresh one the
	// caller accepted with allowFresh; it has none of the requested
	// one's history.
	Fresh bool
	// Lost: the provider answered that it no longer has the requested
	// session (providers.ErrSessionLost), so the fresh session was opened
	// in the requested one's recorded workspace.
	Lost bool
	// Note says what happened when Fresh, in words for the caller.
	Note string
}

// ResumeSession resumes a session on the endpoint that exposed it. When
// the requested session cannot be had — the adapter answers with another
// native session (the provider lost it, or silently started a fresh one),
// or the provider answers that it no longer has it
// (providers.ErrSessionLost) — it is refused with a *FreshSessionError
// unless allowFresh. With allowFresh, the other session is taken, or, for
// a lost session, a fresh one is created in the recorded workspace of the
// requested one; the answer says so (Fresh, Lost, Note).
func (r *Registry) ResumeSession(ctx context.Context, name, nativeID string, allowFresh bool) (Resumed, error) {
	rt, err := r.Resolve(ctx, name, nativeID)
	if err != nil {
		return Resumed{}, err
	}
	s, err := rt.Adapter.ResumeSession(ctx, nativeID)
	if reason, lost := providers.LostReason(err); lost {
		return r.replaceLost(ctx, rt, nativeID, reason, allowFresh)
	}
	if err != nil {
		return Resumed{}, fmt.Errorf("resume %s session %s: %w", rt.Provider, nativeID, err)
	}
	res := Resumed{}
	if s.NativeID != nativeID {
		fe := &FreshSessionError{Provider: rt.Provider, Requested: nativeID, Got: s.NativeID}
		if !allowFresh {
			return Resumed{}, fe
		}
		res.Fresh, res.Note = true, fe.note()
	}
	ss, err := r.record(ctx, rt.Provider, []providers.Session{s})
	if err != nil {
		return Resumed{}, err
	}
	res.Session = ss[0]
	return res, nil
}

// replaceLost answers a resume of a session the provider no longer has:
// a refusal, or with allowFresh a fresh session created on the same
// endpoint in the lost session's recorded workspace.
func (r *Registry) replaceLost(ctx context.Context, rt Route, nativeID, reason string, allowFresh bool) (Resumed, error) {
	cwd, err := r.Workspace(ctx, rt.Provider, nativeID)
	if err != nil {
		return Resumed{}, err
	}
	fe := &FreshSessionError{Provider: rt.Provider, Requested: nativeID, Lost: true, Reason: reason, Workspace: cwd}
	if !allowFresh {
		return Resumed{}, fe
	}
	s, err := rt.Adapter.CreateSession(ctx, providers.CreateOptions{CWD: cwd})
	if err != nil {
		return Resumed{}, fmt.Errorf("%s; opening a fresh session instead failed: %w", fe.lost(), err)
	}
	fe.Got = s.NativeID
	ss, err := r.record(ctx, rt.Provider, []providers.Session{s})
	if err != nil {
		return Resumed{}, err
	}
	return Resumed{Session: ss[0], Fresh: true, Lost: true, Note: fe.note()}, nil
}

// FreshSessionError refuses a resume that cannot give the requested
// session: the provider answered with another native session than the
// one asked for (Got), or answered that it no longer has it (Lost, with
// its Reason). A fresh session has none of the requested one's history.
// Nothing is recorded; resume_session's allowFresh accepts the fresh
// session instead (for a lost one, created in its recorded Workspace).
type FreshSessionError struct {
	Provider       providers.ID
	Requested, Got string
	// Lost: the provider no longer has the session; Reason is its words.
	Lost   bool
	Reason string
	// Workspace is the lost session's recorded workspace ("" when none
	// was recorded).
	Workspace string
}

// lost is the first half of a lost session's refusal.
func (e *FreshSessionError) lost() string {
	reason := e.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return fmt.Sprintf("resume %s session %s: the agent no longer has session %s (%s)", e.Provider, e.Requested, e.Requested, reason)
}

// where names the workspace a fresh session opens in.
func (e *FreshSessionError) where() string {
	if e.Workspace == "" {
		return "the agent's default workspace (none was recorded for the session)"
	}
	return e.Workspace
}

func (e *FreshSessionError) Error() string {
	if e.Lost {
		return fmt.Sprintf("%s; nothing was recorded; pass allowFresh: true to open a fresh session in %s", e.lost(), e.where())
	}
	return fmt.Sprintf("resume %s session %s: the provider answered with another session, %s, so the requested session's context is not there "+
		"(it lost the session or started a fresh one); nothing was recorded. Pass allowFresh: true to continue in the fresh session",
		e.Provider, e.Requested, e.Got)
}

// note is what an accepted fresh session's answer says happened.
func (e *FreshSessionError) note() string {
	if e.Lost {
		reason := e.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return fmt.Sprintf("the agent no longer has session %s (%s); this is a fresh session, %s, opened in %s: the old session's history is not in it",
			e.Requested, reason, e.Got, e.where())
	}
	return fmt.Sprintf("the provider answered with another session than %s, so this is a fresh session, %s: the requested session's history is not in it",
		e.Requested, e.Got)
}

// Subscribe opens a session's native event stream (the events hub's Opener).
func (r *Registry) Subscribe(ctx context.Context, provider providers.ID, nativeID string) (<-chan providers.NativeEvent, error) {
	rt, err := r.Resolve(ctx, string(provider), nativeID)
	if err != nil {
		return nil, err
	}
	return rt.Adapter.Subscribe(ctx, nativeID)
}

// Diff reads a session's diff from its endpoint.
func (r *Registry) Diff(ctx context.Context, name, nativeID string, opts providers.DiffOptions) (any, error) {
	rt, err := r.Resolve(ctx, name, nativeID)
	if err != nil {
		return nil, err
	}
	d, err := rt.Adapter.Diff(ctx, nativeID, opts)
	if err != nil {
		var un *providers.UnsupportedError
		if errors.As(err, &un) {
			return nil, fmt.Errorf("%s does not expose native diff: %w", rt.Provider, err)
		}
		return nil, fmt.Errorf("read %s diff of %s: %w", rt.Provider, nativeID, err)
	}
	return d, nil
}

// PermissionList is the answer of list_permission_requests.
type PermissionList struct {
	Requests       []providers.PermissionRequest `json:"requests"`
	ProviderErrors []ProviderError               `json:"providerErrors,omitempty"`
}

// PendingPermissions lists held permission requests of one provider (name
// non-empty) or all, optionally of one session.
func (r *Registry) PendingPermissions(ctx context.Context, name, nativeID string) (PermissionList, error) {
	ids := r.IDs()
	if name != "" {
		a, err := r.Adapter(name)
		if err != nil {
			return PermissionList{}, err
		}
		ids = []providers.ID{a.ID()}
	}
	out := PermissionList{Requests: []providers.PermissionRequest{}}
	for _, id := range ids {
		a := r.adapters[id]
		if a == nil {
			continue
		}
		ps, err := a.PendingPermissions(ctx)
		if err != nil {
			var un *providers.UnsupportedError
			if errors.As(err, &un) && name == "" {
				continue
			}
			out.ProviderErrors = append(out.ProviderErrors, ProviderError{Provider: id, Error: err.Error()})
			continue
		}
		for _, p := range ps {
			if nativeID == "" || p.NativeID == nativeID {
				out.Requests = append(out.Requests, p)
			}
		}
	}
	return out, nil
}

// SetModel applies a model selection on the session's endpoint.
func (r *Registry) SetModel(ctx context.Context, name, nativeID string, m providers.Model) (providers.Receipt, error) {
	rt, err := r.Resolve(ctx, name, nativeID)
	if err != nil {
		return providers.Receipt{}, err
	}
	return rt.Adapter.SetModel(ctx, nativeID, m)
}

// SetReasoning applies a reasoning effort on the session's endpoint.
func (r *Registry) SetReasoning(ctx context.Context, name, nativeID, effort string) (providers.Receipt, error) {
	rt, err := r.Resolve(ctx, name, nativeID)
	if err != nil {
		return providers.Receipt{}, err
	}
	return rt.Adapter.SetReasoning(ctx, nativeID, effort)
}
