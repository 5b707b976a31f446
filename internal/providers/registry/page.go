package registry

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/providers"
)

// Page sizes of the session and permission listings.
const (
	DefaultPageLimit = limits.ListAgentSessionsLimitDefault
	MaxPageLimit     = limits.ListAgentSessionsLimitMax
)

// Tools the cursors of this file are issued for.
const (
	toolSessions    = "list_agent_sessions"
	toolPermissions = "list_permission_requests"
)

// SessionQuery pages list_agent_sessions.
type SessionQuery struct {
	// Provider keeps one provider's sessions ("" lists every provider).
	Provider string
	// Limit is the page size (0 means DefaultPageLimit).
	Limit int64
	// Cursor is a nextCursor of an earlier page of the same query.
	Cursor string
}

// SessionPage is one page of list_agent_sessions: sessions in provider
// order, each provider's in the order it lists them (usually newest
// first), and the providers that failed.
type SessionPage struct {
	Sessions       []providers.Session `json:"sessions"`
	ProviderErrors []ProviderError     `json:"providerErrors"`
	NextCursor     string              `json:"nextCursor,omitempty"`

	filter paging.Filter
	host   string // this runtime's host on a team store
}

// PageLen implements paging.Cuttable.
func (p SessionPage) PageLen() int { return len(p.Sessions) }

// CutPage implements paging.Cuttable.
func (p SessionPage) CutPage(n int) any {
	last := p.Sessions[n-1]
	p.Sessions = p.Sessions[:n]
	if p.host != "" && last.Host != "" && last.Host != p.host {
		p.NextCursor = paging.Encode(toolSessions, p.filter, remoteKey, last.ID)
	} else {
		p.NextCursor = paging.Encode(toolSessions, p.filter, string(last.Provider), last.NativeID)
	}
	return p
}

// ListSessionPage answers one page of list_agent_sessions. The cursor is
// the last session delivered (provider, native ID), so sessions a provider
// adds at the front of its list while a caller pages neither repeat nor
// push others out. Providers before the cursor's are not asked again, and
// only the page's sessions are recorded in the store.
func (r *Registry) ListSessionPage(ctx context.Context, q SessionQuery) (SessionPage, error) {
	limit, err := paging.Limit(toolSessions, q.Limit, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return SessionPage{}, err
	}
	f := paging.F("provider", q.Provider)
	keys, err := paging.Decode(toolSessions, f, q.Cursor, 2)
	if err != nil {
		return SessionPage{}, err
	}
	ids := r.IDs()
	if q.Provider != "" {
		id, err := r.knownID(q.Provider)
		if err != nil {
			return SessionPage{}, err
		}
		ids = []providers.ID{id}
	}
	all := ids
	afterNative, inRemote := "", false
	if keys != nil {
		at := slices.Index(ids, providers.ID(keys[0]))
		inRemote = keys[0] == remoteKey && r.host != ""
		if (at < 0 && !inRemote) || keys[1] == "" {
			return SessionPage{}, paging.Invalid(toolSessions, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
		}
		afterNative = keys[1]
		if inRemote {
			ids = nil
		} else {
			ids = ids[at:]
		}
	}
	// Every provider is asked at once; listing them all, the page waits
	// for a slow one only up to the soft deadline and reports it late.
	flights := make([]*flight, len(ids))
	errs := make([]error, len(ids))
	for i, id := range ids {
		if a := r.adapters[id]; a != nil {
			flights[i] = r.listFlight(ctx, id, a, false)
		} else if q.Provider != "" {
			errs[i] = &NotConfiguredError{Provider: id}
		}
	}
	soft := r.soft
	if q.Provider != "" {
		soft = 0
	}
	listed, listErrs := r.awaitFlights(ctx, ids, flights, soft)
	type result struct {
		sessions []providers.Session
		err      error
	}
	results := make([]result, len(ids))
	for i := range ids {
		results[i] = result{listed[i], errors.Join(errs[i], listErrs[i])}
	}
	out := SessionPage{Sessions: []providers.Session{}, ProviderErrors: []ProviderError{}, filter: f, host: r.host}
	more := false
	for i, res := range results {
		if res.err != nil {
			out.ProviderErrors = append(out.ProviderErrors, ProviderError{Provider: ids[i], Error: res.err.Error()})
			continue
		}
		ss := res.sessions
		if i == 0 && afterNative != "" {
			page, _, found := paging.AfterKey(ss, func(s providers.Session) string { return s.NativeID }, afterNative, len(ss))
			if !found {
				return SessionPage{}, paging.Stale(toolSessions)
			}
			ss = page
		}
		for j := range ss {
			ss[j].Provider = ids[i]
		}
		room := limit - len(out.Sessions)
		if len(ss) > room {
			ss, more = ss[:room], true
		}
		if len(ss) > 0 {
			recorded, err := r.record(ctx, ids[i], ss)
			if err != nil {
				out.ProviderErrors = append(out.ProviderErrors, ProviderError{Provider: ids[i], Error: err.Error()})
				continue
			}
			out.Sessions = append(out.Sessions, recorded...)
		}
		if more {
			break
		}
	}
	if more {
		last := out.Sessions[len(out.Sessions)-1]
		out.NextCursor = paging.Encode(toolSessions, f, string(last.Provider), last.NativeID)
		return out, nil
	}
	if r.host == "" {
		return out, nil
	}
	// On a team store the sessions other hosts recorded follow the local
	// ones (most recently seen first, bounded as ListSessions bounds them).
	remote, err := r.remoteSessions(ctx, all, out.Sessions)
	if err != nil {
		return SessionPage{}, err
	}
	after := ""
	if inRemote && afterNative != remoteStart {
		after = afterNative
	}
	page, more, found := paging.AfterKey(remote, func(s providers.Session) string { return s.ID }, after, limit-len(out.Sessions))
	if !found {
		return SessionPage{}, paging.Stale(toolSessions)
	}
	out.Sessions = append(out.Sessions, page...)
	switch {
	case more && len(page) > 0:
		out.NextCursor = paging.Encode(toolSessions, f, remoteKey, page[len(page)-1].ID)
	case more: // the local sessions filled the page
		out.NextCursor = paging.Encode(toolSessions, f, remoteKey, remoteStart)
	}
	return out, nil
}

// remoteStart is the cursor key of the first session of other hosts.
const remoteStart = "^"

// remoteKey is the cursor's provider key for the sessions of other hosts.
const remoteKey = "~other-hosts"

// PermissionQuery pages list_permission_requests.
type PermissionQuery struct {
	// Session keeps one session's requests ("<provider>:<nativeId>").
	Session string
	Limit   int64
	Cursor  string
}

// PermissionPage is one page of list_permission_requests: pending
// requests, oldest first.
type PermissionPage struct {
	Pending        []providers.PermissionRequest `json:"pending"`
	ProviderErrors []ProviderError               `json:"providerErrors"`
	NextCursor     string                        `json:"nextCursor,omitempty"`

	filter paging.Filter
}

// PageLen implements paging.Cuttable.
func (p PermissionPage) PageLen() int { return len(p.Pending) }

// CutPage implements paging.Cuttable.
func (p PermissionPage) CutPage(n int) any {
	last := p.Pending[n-1]
	p.Pending = p.Pending[:n]
	p.NextCursor = paging.Encode(toolPermissions, p.filter, permissionKey(last))
	return p
}

// permissionKey orders requests by time (fixed-width, so strings compare
// like times), then provider and request ID.
func permissionKey(p providers.PermissionRequest) string {
	return p.RequestedAt.UTC().Format("2006-01-02T15:04:05.000000000Z") + "\x00" + string(p.Provider) + "\x00" + p.RequestID
}

// PendingPermissionPage answers one page of list_permission_requests,
// oldest request first. Requests answered while a caller pages simply
// drop out; the cursor is a position in that order, not a record.
func (r *Registry) PendingPermissionPage(ctx context.Context, q PermissionQuery) (PermissionPage, error) {
	limit, err := paging.Limit(toolPermissions, q.Limit, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return PermissionPage{}, err
	}
	var name, native string
	if q.Session != "" {
		var ok bool
		if name, native, ok = strings.Cut(q.Session, ":"); !ok || name == "" || native == "" {
			return PermissionPage{}, paging.Invalid(toolPermissions, "session", "must be <provider>:<nativeId>")
		}
	}
	f := paging.F("session", q.Session)
	keys, err := paging.Decode(toolPermissions, f, q.Cursor, 1)
	if err != nil {
		return PermissionPage{}, err
	}
	list, err := r.PendingPermissions(ctx, name, native)
	if err != nil {
		return PermissionPage{}, err
	}
	all := slices.Clone(list.Requests)
	slices.SortFunc(all, func(a, b providers.PermissionRequest) int { return strings.Compare(permissionKey(a), permissionKey(b)) })
	after := ""
	if keys != nil {
		after = keys[0]
	}
	page, more := paging.AfterSorted(all, permissionKey, after, limit)
	out := PermissionPage{Pending: page, ProviderErrors: list.ProviderErrors, filter: f}
	if out.Pending == nil {
		out.Pending = []providers.PermissionRequest{}
	}
	if out.ProviderErrors == nil {
		out.ProviderErrors = []ProviderError{}
	}
	if more {
		out.NextCursor = paging.Encode(toolPermissions, f, permissionKey(page[len(page)-1]))
	}
	return out, nil
}

var (
	_ paging.Cuttable = SessionPage{}
	_ paging.Cuttable = PermissionPage{}
)
