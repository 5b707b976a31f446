package opencode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-interop/runtime/internal/lazy"
	"github.com/agent-interop/runtime/internal/providers"
)

// ocSession is OpenCode's Session (and GlobalSession, which adds project).
type ocSession struct {
	ID          string `json:"id"`
	Slug        string `json:"slug"`
	ProjectID   string `json:"projectID"`
	WorkspaceID string `json:"workspaceID"`
	Directory   string `json:"directory"`
	ParentID    string `json:"parentID"`
	Title       string `json:"title"`
	Agent       string `json:"agent"`
	Version     string `json:"version"`
	Model       *struct {
		ID         string `json:"id"`
		ProviderID string `json:"providerID"`
		Variant    string `json:"variant"`
	} `json:"model"`
	Time struct {
		Created  int64   `json:"created"`
		Updated  int64   `json:"updated"`
		Archived float64 `json:"archived"`
	} `json:"time"`
	Project *struct {
		ID       string `json:"id"`
		Worktree string `json:"worktree"`
	} `json:"project"`
}

// sessionIDPattern is the shape of OpenCode session ids ("ses_…").
var sessionIDPattern = lazy.Regexp{Expr: `^ses[A-Za-z0-9_-]{1,120}$`}

func validSessionID(id string) bool { return sessionIDPattern.Get().MatchString(id) }

func sessionPath(id string, suffix string) string {
	return "/session/" + url.PathEscape(id) + suffix
}

// toSession maps an OpenCode session to the runtime's shape.
func (a *Adapter) toSession(s ocSession, base, source string) providers.Session {
	out := providers.Session{
		ID:        string(providers.OpenCode) + ":" + s.ID,
		Provider:  providers.OpenCode,
		NativeID:  s.ID,
		Title:     s.Title,
		ProjectID: s.ProjectID,
		CWD:       s.Directory,
		Transport: "http",
		Endpoint:  base,
		Provenance: providers.Provenance{
			DiscoveredAt: a.clock.Now().UTC(),
			Source:       source,
			Native:       true,
		},
		Metadata: map[string]any{},
	}
	if s.Model != nil && s.Model.ID != "" {
		out.Model = s.Model.ProviderID + "/" + s.Model.ID
		if s.Model.Variant != "" {
			out.Metadata["variant"] = s.Model.Variant
		}
	}
	put := func(k, v string) {
		if v != "" {
			out.Metadata[k] = v
		}
	}
	put("slug", s.Slug)
	put("parentID", s.ParentID)
	put("agent", s.Agent)
	put("version", s.Version)
	put("workspaceID", s.WorkspaceID)
	if s.Project != nil {
		put("worktree", s.Project.Worktree)
	}
	if s.Time.Created > 0 {
		out.Metadata["createdAt"] = time.UnixMilli(s.Time.Created).UTC().Format(time.RFC3339Nano)
	}
	if s.Time.Updated > 0 {
		out.Metadata["updatedAt"] = time.UnixMilli(s.Time.Updated).UTC().Format(time.RFC3339Nano)
	}
	if s.Time.Archived > 0 {
		out.Metadata["archived"] = true
	}
	if len(out.Metadata) == 0 {
		out.Metadata = nil
	}
	a.rememberDir(s.ID, s.Directory)
	return out
}

// read performs a side-effect-free request, resolving the server again once
// when the connection to the current one fails.
func (a *Adapter) read(ctx context.Context, r request) (*endpoint, error) {
	for attempt := 0; ; attempt++ {
		ep, err := a.current(ctx)
		if err != nil {
			return nil, err
		}
		_, err = a.do(ctx, ep.base, r)
		var te *transportError
		if errors.As(err, &te) && attempt == 0 && ctx.Err() == nil {
			a.invalidate(ep)
			continue
		}
		return ep, err
	}
}

// ListSessions lists the sessions of every directory the server knows.
func (a *Adapter) ListSessions(ctx context.Context) ([]providers.Session, error) {
	var list []ocSession
	ep, err := a.read(ctx, request{method: http.MethodGet, path: "/experimental/session", out: &list})
	if err != nil {
		return nil, fmt.Errorf("listing OpenCode sessions: %w", err)
	}
	out := make([]providers.Session, 0, len(list))
	for _, s := range list {
		if s.ID == "" {
			continue
		}
		out = append(out, a.toSession(s, ep.base, "GET /experimental/session"))
	}
	return out, nil
}

// fetchSession reads one session; a 404 is ErrUnknownSession.
func (a *Adapter) fetchSession(ctx context.Context, nativeID string) (ocSession, *endpoint, error) {
	if !validSessionID(nativeID) {
		return ocSession{}, nil, fmt.Errorf("%w: %q is not an OpenCode session id", ErrUnknownSession, nativeID)
	}
	var s ocSession
	ep, err := a.read(ctx, request{method: http.MethodGet, path: sessionPath(nativeID, ""), out: &s})
	if err != nil {
		return ocSession{}, ep, err
	}
	if s.ID == "" {
		return ocSession{}, ep, fmt.Errorf("opencode GET /session/%s: answer without an id", nativeID)
	}
	return s, ep, nil
}

// GetSession returns the session, or (nil, nil) when the server does not
// know it.
func (a *Adapter) GetSession(ctx context.Context, nativeID string) (*providers.Session, error) {
	s, ep, err := a.fetchSession(ctx, nativeID)
	if errors.Is(err, ErrUnknownSession) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading OpenCode session %s: %w", nativeID, err)
	}
	out := a.toSession(s, ep.base, "GET /session/:id")
	return &out, nil
}

// ResumeSession returns a known session; an unknown id (the server's 404)
// wraps ErrUnknownSession and providers.ErrSessionLost, with the server's
// words. OpenCode sessions need no explicit resume: any call on the
// session loads it.
func (a *Adapter) ResumeSession(ctx context.Context, nativeID string) (providers.Session, error) {
	s, ep, err := a.fetchSession(ctx, nativeID)
	if errors.Is(err, ErrUnknownSession) {
		words := err.Error()
		var ae *APIError
		if errors.As(err, &ae) && ae.Message != "" {
			words = ae.Message
		}
		return providers.Session{}, fmt.Errorf("resuming OpenCode session %s: %w (%w)", nativeID, err, providers.SessionLost(words))
	}
	if err != nil {
		return providers.Session{}, fmt.Errorf("resuming OpenCode session %s: %w", nativeID, err)
	}
	return a.toSession(s, ep.base, "GET /session/:id"), nil
}

// CreateSession creates a session in opts.CWD (an existing absolute
// directory; empty means the server's own directory).
func (a *Adapter) CreateSession(ctx context.Context, opts providers.CreateOptions) (providers.Session, error) {
	q := url.Values{}
	if opts.CWD != "" {
		if !filepath.IsAbs(opts.CWD) {
			return providers.Session{}, fmt.Errorf("creating OpenCode session: cwd %q must be an absolute path", opts.CWD)
		}
		if fi, err := os.Stat(opts.CWD); err != nil || !fi.IsDir() {
			return providers.Session{}, fmt.Errorf("creating OpenCode session: cwd %q is not a directory", opts.CWD)
		}
		q.Set("directory", filepath.Clean(opts.CWD))
	}
	body := map[string]any{}
	if opts.Title != "" {
		body["title"] = opts.Title
	}
	ep, err := a.current(ctx)
	if err != nil {
		return providers.Session{}, fmt.Errorf("creating OpenCode session: %w", err)
	}
	var s ocSession
	if _, err := a.do(ctx, ep.base, request{method: http.MethodPost, path: "/session", query: q, body: body, out: &s}); err != nil {
		if notSent(err) {
			a.invalidate(ep)
		}
		return providers.Session{}, fmt.Errorf("creating OpenCode session: %w", err)
	}
	if s.ID == "" {
		return providers.Session{}, errors.New("creating OpenCode session: answer without an id")
	}
	return a.toSession(s, ep.base, "POST /session"), nil
}

// sessionDir returns the directory of a session, from memory or the server.
func (a *Adapter) sessionDir(ctx context.Context, nativeID string) (string, error) {
	if !validSessionID(nativeID) {
		return "", fmt.Errorf("%w: %q is not an OpenCode session id", ErrUnknownSession, nativeID)
	}
	a.mu.Lock()
	dir, ok := a.dirs[nativeID]
	a.mu.Unlock()
	if ok {
		return dir, nil
	}
	s, _, err := a.fetchSession(ctx, nativeID)
	if err != nil {
		return "", err
	}
	a.rememberDir(s.ID, s.Directory)
	return s.Directory, nil
}

// dirQuery is the ?directory= of a session-scoped call.
func dirQuery(dir string) url.Values {
	if dir == "" {
		return nil
	}
	return url.Values{"directory": {dir}}
}
