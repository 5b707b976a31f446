package opencode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
)

// Subscribe streams the session's events from the adapter's shared
// /global/event connection. The channel closes when ctx ends, when the
// stream ends (the registry reopens it as a new epoch) or when the reader
// falls more than 512 events behind.
func (a *Adapter) Subscribe(ctx context.Context, nativeID string) (<-chan providers.NativeEvent, error) {
	if _, err := a.sessionDir(ctx, nativeID); err != nil {
		return nil, fmt.Errorf("subscribing to OpenCode session %s: %w", nativeID, err)
	}
	return a.hub.subscribe(ctx, nativeID)
}

// FileDiff is one file of a turn's diff (OpenCode's SnapshotFileDiff).
type FileDiff struct {
	File      string  `json:"file"`
	Patch     string  `json:"patch,omitempty"`
	Additions float64 `json:"additions"`
	Deletions float64 `json:"deletions"`
	Status    string  `json:"status,omitempty"` // added | deleted | modified
}

// DiffResult is what Diff returns: the files changed by one user turn.
type DiffResult struct {
	SessionID string     `json:"sessionId"`
	MessageID string     `json:"messageId,omitempty"` // the user message of the turn
	Files     []FileDiff `json:"files"`
}

// ocMessage is one entry of GET /session/:id/message (only what is used).
type ocMessage struct {
	Info struct {
		ID   string `json:"id"`
		Role string `json:"role"`
	} `json:"info"`
}

// Diff returns the changes of the latest user turn, or of the turn of
// opts.MessageID. OpenCode 1.18 answers [] without a messageID, so the
// latest user message is looked up first.
func (a *Adapter) Diff(ctx context.Context, nativeID string, opts providers.DiffOptions) (any, error) {
	dir, err := a.sessionDir(ctx, nativeID)
	if err != nil {
		return nil, fmt.Errorf("reading OpenCode diff of %s: %w", nativeID, err)
	}
	msgID := opts.MessageID
	if msgID == "" {
		var msgs []ocMessage
		if _, err := a.read(ctx, request{method: http.MethodGet, path: sessionPath(nativeID, "/message"), query: dirQuery(dir), out: &msgs}); err != nil {
			return nil, fmt.Errorf("reading OpenCode messages of %s: %w", nativeID, err)
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Info.Role == "user" {
				msgID = msgs[i].Info.ID
				break
			}
		}
		if msgID == "" {
			return DiffResult{SessionID: nativeID, Files: []FileDiff{}}, nil
		}
	} else if !strings.HasPrefix(msgID, "msg") {
		return nil, fmt.Errorf("reading OpenCode diff of %s: %q is not an OpenCode message id", nativeID, msgID)
	}
	q := dirQuery(dir)
	if q == nil {
		q = url.Values{}
	}
	q.Set("messageID", msgID)
	var files []FileDiff
	if _, err := a.read(ctx, request{method: http.MethodGet, path: sessionPath(nativeID, "/diff"), query: q, out: &files}); err != nil {
		return nil, fmt.Errorf("reading OpenCode diff of %s: %w", nativeID, err)
	}
	if files == nil {
		files = []FileDiff{}
	}
	return DiffResult{SessionID: nativeID, MessageID: msgID, Files: files}, nil
}

// ocPermission is OpenCode's PermissionRequest.
type ocPermission struct {
	ID         string         `json:"id"`
	SessionID  string         `json:"sessionID"`
	Permission string         `json:"permission"`
	Patterns   []string       `json:"patterns"`
	Metadata   map[string]any `json:"metadata"`
	Always     []string       `json:"always"`
	Tool       *struct {
		MessageID string `json:"messageID"`
		CallID    string `json:"callID"`
	} `json:"tool"`
}

// permissionOptions are OpenCode's three replies.
func permissionOptions() []providers.PermissionOption {
	return []providers.PermissionOption{
		{ID: "once", Name: "Allow once", Kind: "allow_once"},
		{ID: "always", Name: "Always allow", Kind: "allow_always"},
		{ID: "reject", Name: "Reject", Kind: "reject_once"},
	}
}

// recentWindow bounds which sessions PendingPermissions inspects besides
// those this adapter touched: a session waiting on a permission was updated
// when it asked.
const (
	recentSessions = 20
	recentWindow   = time.Hour
)

// PendingPermissions lists permission requests waiting for a reply.
// Permissions are scoped per directory in OpenCode, so it asks for every
// directory of the sessions this adapter knows and of recently updated ones.
func (a *Adapter) PendingPermissions(ctx context.Context) ([]providers.PermissionRequest, error) {
	var recent []ocSession
	ep, err := a.read(ctx, request{
		method: http.MethodGet, path: "/experimental/session",
		query: url.Values{"limit": {fmt.Sprint(recentSessions)}}, out: &recent,
	})
	if err != nil {
		return nil, fmt.Errorf("listing OpenCode permissions: %w", err)
	}
	dirs := map[string]bool{}
	for _, d := range a.knownDirs() {
		dirs[d] = true
	}
	since := a.clock.Now().Add(-recentWindow).UnixMilli()
	for _, s := range recent {
		a.rememberDir(s.ID, s.Directory)
		if s.Directory != "" && s.Time.Updated >= since {
			dirs[s.Directory] = true
		}
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		all   = map[string]ocPermission{}
		errs  []error
		slots = make(chan struct{}, 4)
	)
	for d := range dirs {
		wg.Add(1)
		slots <- struct{}{}
		go func(dir string) {
			defer wg.Done()
			defer func() { <-slots }()
			var list []ocPermission
			_, err := a.do(ctx, ep.base, request{method: http.MethodGet, path: "/permission", query: dirQuery(dir), out: &list})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", dir, err))
				return
			}
			for _, p := range list {
				all[p.ID] = p
			}
		}(d)
	}
	wg.Wait()
	if len(errs) > 0 && len(errs) == len(dirs) {
		return nil, fmt.Errorf("listing OpenCode permissions: %w", errors.Join(errs...))
	}
	out := make([]providers.PermissionRequest, 0, len(all))
	for _, p := range all {
		out = append(out, a.toPermission(p))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].RequestedAt.Equal(out[j].RequestedAt) {
			return out[i].RequestedAt.Before(out[j].RequestedAt)
		}
		return out[i].RequestID < out[j].RequestID
	})
	a.forgetPermissions(all)
	return out, nil
}

func (a *Adapter) toPermission(p ocPermission) providers.PermissionRequest {
	a.mu.Lock()
	at, ok := a.permSeen[p.ID]
	if !ok {
		at = a.clock.Now().UTC()
		a.permSeen[p.ID] = at
	}
	a.mu.Unlock()
	title := p.Permission
	if len(p.Patterns) > 0 {
		title += " " + strings.Join(p.Patterns, ", ")
	}
	detail := map[string]any{"permission": p.Permission, "patterns": p.Patterns, "always": p.Always}
	if p.Metadata != nil {
		detail["metadata"] = p.Metadata
	}
	if p.Tool != nil {
		detail["tool"] = map[string]any{"messageID": p.Tool.MessageID, "callID": p.Tool.CallID}
	}
	paths, unknown := editPaths(p)
	return providers.PermissionRequest{
		Provider: providers.OpenCode, RequestID: p.ID, NativeID: p.SessionID,
		Method: "permission." + p.Permission, Title: title, Options: permissionOptions(),
		RequestedAt: at, Detail: detail, Paths: paths, PathsUnknown: unknown,
	}
}

// forgetPermissions drops first-seen times of requests no longer pending.
func (a *Adapter) forgetPermissions(pending map[string]ocPermission) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id := range a.permSeen {
		if _, ok := pending[id]; !ok {
			delete(a.permSeen, id)
		}
	}
}

// replyFor maps a decision (an option kind or OpenCode's own reply) to
// OpenCode's reply.
func replyFor(decision string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(decision)) {
	case "allow_once", "once", "allow", "accept":
		return "once", true
	case "allow_always", "always", "accept_always":
		return "always", true
	case "reject", "reject_once", "reject_always", "deny", "decline":
		return "reject", true
	}
	return "", false
}

// RespondPermission answers a pending request of the session with
// POST /permission/:id/reply {reply: once|always|reject}.
func (a *Adapter) RespondPermission(ctx context.Context, nativeID, requestID, decision string) (providers.Receipt, error) {
	reply, ok := replyFor(decision)
	if !ok {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("unknown permission decision %q (allow_once, allow_always, reject, or once, always, reject)", decision)}
	}
	if !strings.HasPrefix(requestID, "per") || strings.ContainsAny(requestID, "/?#") {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("No pending permission request %s for %s", requestID, nativeID)}
	}
	ep, err := a.current(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("answering OpenCode permission: %w", err)}
	}
	dir, err := a.sessionDir(ctx, nativeID)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("answering OpenCode permission of %s: %w", nativeID, err)}
	}
	var pending []ocPermission
	if _, err := a.do(ctx, ep.base, request{method: http.MethodGet, path: "/permission", query: dirQuery(dir), out: &pending}); err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("checking OpenCode permission %s: %w", requestID, err)}
	}
	found := false
	for _, p := range pending {
		if p.ID == requestID && p.SessionID == nativeID {
			found = true
			break
		}
	}
	if !found {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("No pending permission request %s for %s", requestID, nativeID)}
	}
	var accepted bool
	if _, err := a.do(ctx, ep.base, request{
		method: http.MethodPost, path: "/permission/" + url.PathEscape(requestID) + "/reply",
		query: dirQuery(dir), body: map[string]any{"reply": reply}, out: &accepted, write: true,
	}); err != nil {
		return providers.Receipt{}, classify(err, func() { a.invalidate(ep) })
	}
	if !accepted {
		return providers.Receipt{}, &providers.RejectedError{Reason: "OpenCode answered false to the permission reply"}
	}
	return providers.Receipt{
		Provider: providers.OpenCode, NativeID: nativeID, Operation: "respond_permission",
		Accepted: true, Status: providers.StatusCompleted, ProviderState: stateDecisionSent,
		Detail: map[string]any{"requestId": requestID, "reply": reply},
	}, nil
}

// editPaths names the files an OpenCode permission would let the agent
// write. Of an "edit": the write and edit tools put the absolute path in
// metadata.filepath; apply_patch lists metadata.files (filePath and
// movePath, absolute) and puts worktree-relative paths, comma-joined, in
// filepath. Patterns are relative to the project's worktree, not to the
// session's directory, so an edit that names no absolute path is unknown.
// A "bash" command's writes are unknown until it has run.
func editPaths(p ocPermission) (paths []string, unknown bool) {
	switch p.Permission {
	case "edit":
	case "bash":
		return nil, true
	default:
		return nil, false
	}
	add := func(v any) bool {
		s, ok := v.(string)
		if ok && filepath.IsAbs(s) {
			paths = append(paths, s)
		}
		return ok && filepath.IsAbs(s)
	}
	if files, ok := p.Metadata["files"].([]any); ok {
		for _, f := range files {
			file, _ := f.(map[string]any)
			if !add(file["filePath"]) {
				unknown = true
			}
			if mv, ok := file["movePath"]; ok {
				add(mv)
			}
		}
	} else if !add(p.Metadata["filepath"]) {
		unknown = true
	}
	return paths, unknown
}
