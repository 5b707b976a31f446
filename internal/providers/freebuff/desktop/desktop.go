package desktop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agent-interop/runtime/internal/lazy"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/security"
)

// HeaderLaunchID is the Desktop's authorization header.
const HeaderLaunchID = "x-freebuff-launch-id"

// maxResponseBytes bounds one Desktop JSON answer.
const maxResponseBytes = 32 << 20

// Backend drives the Desktop orchestrator over loopback HTTP. It is safe
// for concurrent use.
type Backend struct {
	cfg    core.Config
	client *http.Client // reads
	writer *http.Client // writes: a fresh connection each, so a dead pooled
	// connection never turns a request that never left into an uncertain one
	stream *http.Client // the SSE stream
	store  *progressStore
	norm   *normalizer
	events *eventClient
	// onTurnEnd is told about finished turns (nil: nobody listens).
	onTurnEnd func(TurnEnd)

	discoverMu sync.Mutex // one discovery at a time
	// discovering counts the callers running a discovery or waiting for
	// one (Discovering).
	discovering atomic.Int32
	mu          sync.Mutex
	gen         uint64 // discoveries completed
	conn        *desktopConn
	connErr     error
	connAt      int64 // clock time of the last discovery, UnixNano
}

// New returns a Backend for cfg (with its defaults filled in); onTurnEnd
// (optional) is told about every turn the event stream sees finish. It
// performs no I/O: discovery runs on first use.
func New(cfg core.Config, onTurnEnd func(TurnEnd)) *Backend {
	cfg = cfg.WithDefaults()
	d := &Backend{
		cfg:       cfg,
		onTurnEnd: onTurnEnd,
		client:    newLoopbackClient(0, true),
		writer:    newLoopbackClient(0, false),
		stream:    newLoopbackClient(0, true),
		store:     newProgressStore(cfg.Clock),
		norm:      newNormalizer(cfg.Clock),
	}
	d.events = newEventClient(d)
	return d
}

// response is one Desktop answer.
type response struct {
	status int
	body   []byte
}

// reason renders a non-2xx answer, keeping the provider's own message.
func (r response) reason() string {
	if r.status >= 300 && r.status < 400 {
		return fmt.Sprintf("Freebuff Desktop answered HTTP %d with a redirect; redirects are refused", r.status)
	}
	msg := ""
	if v, err := core.DecodeJSON(r.body); err == nil {
		m := core.AsMap(v)
		switch e := m["error"].(type) {
		case string:
			msg = e
		case map[string]any:
			msg = core.FirstStr(e, "message", "kind")
		}
		if msg == "" {
			msg = core.FirstStr(m, "message")
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(r.body))
	}
	msg = core.Cut(security.RedactString(msg), 300)
	if msg == "" {
		return fmt.Sprintf("Freebuff returned HTTP %d", r.status)
	}
	return fmt.Sprintf("Freebuff returned HTTP %d: %s", r.status, msg)
}

// sendError is a transport failure; sent says whether a connection was
// obtained (so the request may have left).
type sendError struct {
	err  error
	sent bool
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// do performs one request against conn. A transport failure is a
// *sendError recording whether the request could have left.
func (d *Backend) do(ctx context.Context, conn *desktopConn, method, p string, body any) (response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return response{}, &sendError{err: fmt.Errorf("encode request: %w", err)}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, conn.Base+p, rd)
	if err != nil {
		return response{}, &sendError{err: err}
	}
	req.Header.Set("accept", "application/json")
	if body != nil {
		req.Header.Set("content-type", "application/json")
	}
	if conn.LaunchID != "" {
		req.Header.Set(HeaderLaunchID, conn.LaunchID)
	}
	var gotConn bool
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn = true },
	}))
	client := d.client
	if method != http.MethodGet {
		client = d.writer
	}
	resp, err := client.Do(req)
	if err != nil {
		return response{}, &sendError{err: err, sent: gotConn}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return response{}, &sendError{err: fmt.Errorf("read Freebuff response: %w", err), sent: true}
	}
	if len(b) > maxResponseBytes {
		return response{}, &sendError{err: errors.New("Freebuff response exceeds 32 MiB"), sent: true}
	}
	return response{status: resp.StatusCode, body: b}, nil
}

// connection returns the current Desktop connection, running discovery when
// forced or when the cached result is older than ConnectionTTL. A failed
// discovery is cached for the same time so reads do not rescan on every
// call.
func (d *Backend) connection(ctx context.Context, force bool) (*desktopConn, error) {
	d.mu.Lock()
	now := d.cfg.Clock.Now().UnixNano()
	if !force && d.connAt != 0 && now-d.connAt < int64(ConnectionTTL) {
		c, err := d.conn, d.connErr
		d.mu.Unlock()
		return c, err
	}
	gen := d.gen
	d.mu.Unlock()
	d.discovering.Add(1)
	defer d.discovering.Add(-1)
	d.discoverMu.Lock()
	defer d.discoverMu.Unlock()
	// A discovery that started and finished while this caller waited is
	// reused, even by a forced caller: it is newer than the request.
	d.mu.Lock()
	if d.gen > gen+1 || (d.gen > gen && !force) {
		c, err := d.conn, d.connErr
		d.mu.Unlock()
		return c, err
	}
	d.mu.Unlock()
	c, err := d.discover(ctx)
	d.mu.Lock()
	d.conn, d.connErr, d.connAt = c, err, d.cfg.Clock.Now().UnixNano()
	d.gen++
	d.mu.Unlock()
	if c != nil {
		d.events.start()
	}
	return c, err
}

// Discovering reports whether a discovery is under way: the process table
// scanned for an orchestrator (its environment and listening sockets) and
// each candidate probed. On a machine with many processes the scan alone
// can take most of a second.
func (d *Backend) Discovering() bool { return d.discovering.Load() > 0 }

// Available reports why no orchestrator can be used for reads, or nil. A
// result is reused for ConnectionTTL.
func (d *Backend) Available(ctx context.Context) error {
	_, err := d.connection(ctx, false)
	return err
}

// Endpoint returns the base URL of the last discovered orchestrator, "" when
// none was found yet. It does not probe.
func (d *Backend) Endpoint() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		return ""
	}
	return d.conn.Base
}

// Subscribe streams one thread's normalized progress events (Type is the
// progress kind, Data the event JSON) and starts the event stream. The
// channel closes when the event stream ends, when the reader falls behind,
// or when cancel is called.
func (d *Backend) Subscribe(threadID string) (events <-chan providers.NativeEvent, cancel func()) {
	sub := d.store.subs.Add(threadID)
	d.events.start()
	return sub.C(), func() { d.store.subs.Remove(sub) }
}

// invalidate forgets the cached connection.
func (d *Backend) invalidate() {
	d.mu.Lock()
	d.connAt = 0
	d.mu.Unlock()
}

// get reads a JSON answer. A transport failure or an authorization refusal
// triggers one re-discovery and one retry (reads are safe to repeat).
func (d *Backend) get(ctx context.Context, p string) (any, response, error) {
	for attempt := 0; ; attempt++ {
		conn, err := d.connection(ctx, attempt > 0)
		if err != nil {
			return nil, response{}, err
		}
		rctx, cancel := d.withTimeout(ctx, d.cfg.RequestTimeout, TagRequest)
		res, err := d.do(rctx, conn, http.MethodGet, p, nil)
		cancel()
		retry := err != nil || res.status == http.StatusUnauthorized || res.status == http.StatusForbidden
		if retry && attempt == 0 && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return nil, response{}, fmt.Errorf("Freebuff Desktop request GET %s failed: %w", p, err)
		}
		if res.status < 200 || res.status > 299 {
			return nil, res, errors.New(res.reason())
		}
		v, err := core.DecodeJSON(res.body)
		if err != nil {
			return nil, res, fmt.Errorf("Freebuff returned invalid JSON for GET %s: %w", p, err)
		}
		return v, res, nil
	}
}

// threadPath returns /api/thread/<id><suffix>.
func threadPath(id, suffix string) string {
	return "/api/thread/" + url.PathEscape(id) + suffix
}

// --- reads -----------------------------------------------------------------

// rawProjects returns the /api/projects project objects.
func (d *Backend) rawProjects(ctx context.Context) ([]map[string]any, error) {
	v, _, err := d.get(ctx, "/api/projects")
	if err != nil {
		return nil, err
	}
	list, ok := core.AsMap(v)["projects"].([]any)
	if !ok {
		return nil, errors.New("Invalid Freebuff /api/projects response")
	}
	out := make([]map[string]any, 0, len(list))
	for _, p := range list {
		if m := core.AsMap(p); m != nil && core.Str(m["path"]) != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// ListProjects lists the projects of GET /api/projects (the id is the path).
func (d *Backend) ListProjects(ctx context.Context) ([]core.Project, error) {
	raw, err := d.rawProjects(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]core.Project, 0, len(raw))
	for _, p := range raw {
		pp := core.Str(p["path"])
		threads, _ := p["threads"].([]any)
		out = append(out, core.Project{ID: pp, Path: pp, Name: path.Base(pp), Metadata: map[string]any{"threadCount": len(threads)}})
	}
	return out, nil
}

// summaryKeys are the thread fields lifted out of metadata.
var summaryKeys = lazy.Value[map[string]struct{}]{New: func() map[string]struct{} {
	return map[string]struct{}{"id": {}, "projectId": {}, "projectPath": {}, "title": {}, "turnState": {}, "model": {}}
}}

// threadSummary maps a Desktop thread object.
func threadSummary(t map[string]any, projectID string) core.ThreadSummary {
	s := core.ThreadSummary{
		ID:        core.Str(t["id"]),
		ProjectID: core.FirstStr(t, "projectPath", "projectId"),
		Title:     security.RedactString(core.Str(t["title"])),
		State:     core.Str(t["turnState"]),
		Model:     core.Str(t["model"]),
	}
	if s.ProjectID == "" {
		s.ProjectID = projectID
	}
	meta := map[string]any{}
	for k, v := range t {
		if _, skip := summaryKeys.Get()[k]; !skip {
			meta[k] = v
		}
	}
	if len(meta) > 0 {
		s.Metadata, _ = security.SanitizeFreebuff(meta).(map[string]any)
	}
	return s
}

// ListThreads lists the threads of one project (every project's when
// projectID is "").
func (d *Backend) ListThreads(ctx context.Context, projectID string) ([]core.ThreadSummary, error) {
	raw, err := d.rawProjects(ctx)
	if err != nil {
		return nil, err
	}
	found := projectID == ""
	var out []core.ThreadSummary
	for _, p := range raw {
		pp := core.Str(p["path"])
		if projectID != "" && projectID != pp {
			continue
		}
		found = true
		threads, _ := p["threads"].([]any)
		for _, t := range threads {
			if tm := core.AsMap(t); tm != nil && security.ValidateID(core.Str(tm["id"])) == nil {
				out = append(out, threadSummary(tm, pp))
			}
		}
	}
	if !found {
		return nil, &core.NotFoundError{Kind: "project", ID: projectID}
	}
	if out == nil {
		out = []core.ThreadSummary{}
	}
	return out, nil
}

// GetThread returns a thread with its sanitized messages, queued work and
// live progress summary.
func (d *Backend) GetThread(ctx context.Context, id string) (core.ThreadDetail, error) {
	v, res, err := d.get(ctx, threadPath(id, ""))
	if err != nil {
		if res.status == http.StatusNotFound {
			return core.ThreadDetail{}, &core.NotFoundError{Kind: "thread", ID: id}
		}
		return core.ThreadDetail{}, err
	}
	m := core.AsMap(v)
	if m == nil {
		return core.ThreadDetail{}, errors.New("Invalid Freebuff thread response")
	}
	// The orchestrator answers {thread, messages, items}; older builds
	// answered the thread fields flat.
	t := core.AsMap(m["thread"])
	if t == nil {
		t = m
	}
	if core.Str(t["id"]) == "" {
		t["id"] = id
	}
	det := core.ThreadDetail{ThreadSummary: threadSummary(t, "")}
	delete(det.Metadata, "messages")
	delete(det.Metadata, "items")
	delete(det.Metadata, "activeWork")
	if msgs, ok := m["messages"].([]any); ok {
		det.Messages, _ = security.SanitizeFreebuff(msgs).([]any)
		if det.Messages == nil {
			det.Messages = []any{}
		}
	}
	if items, ok := m["items"]; ok {
		det.ActiveWork = security.SanitizeFreebuff(items)
	} else if aw, ok := m["activeWork"]; ok {
		det.ActiveWork = security.SanitizeFreebuff(aw)
	}
	live, _ := d.store.read(det.ID, 0, 1, true, false)
	det.Live = &live
	return det, nil
}

// Progress returns a page of a thread's live progress, waiting as q says.
func (d *Backend) Progress(ctx context.Context, q core.ProgressQuery) (core.ProgressSnapshot, error) {
	if _, err := d.connection(ctx, false); err != nil {
		return core.ProgressSnapshot{}, err
	}
	return d.store.wait(ctx, q), nil
}

// ActiveThreads returns the one-event summaries of the threads that are
// running or in an active phase, by thread id.
func (d *Backend) ActiveThreads(ctx context.Context) ([]core.ProgressSnapshot, error) {
	if _, err := d.connection(ctx, false); err != nil {
		return nil, err
	}
	ids := d.store.active()
	sort.Strings(ids)
	out := make([]core.ProgressSnapshot, 0, len(ids))
	for _, id := range ids {
		s, _ := d.store.read(id, 0, 1, true, false)
		out = append(out, s)
	}
	return out, nil
}

// Live returns a thread's live progress summary (no events).
func (d *Backend) Live(threadID string) *core.ProgressSnapshot {
	s, _ := d.store.read(threadID, 0, 1, true, false)
	return &s
}

// ListModels lists the models the threads use (the Desktop has no model
// catalog).
func (d *Backend) ListModels(ctx context.Context) (core.ModelList, error) {
	threads, err := d.ListThreads(ctx, "")
	if err != nil {
		return core.ModelList{}, err
	}
	seen := map[string]struct{}{}
	models := []string{}
	for _, t := range threads {
		if _, ok := seen[t.Model]; t.Model != "" && !ok {
			seen[t.Model] = struct{}{}
			models = append(models, t.Model)
		}
	}
	sort.Strings(models)
	return core.ModelList{
		Note:   "The Freebuff Desktop exposes no model-catalog route; models lists the models its threads use. set_thread_model validates a model with the Desktop (harness codebuff).",
		Models: models,
	}, nil
}

// Status reports the orchestrator found and whether writes are possible.
func (d *Backend) Status(ctx context.Context) core.Status {
	conn, err := d.connection(ctx, false)
	if err != nil {
		return core.Status{Product: "unknown", SignedIn: "unknown", ReadOnly: true, ReadOnlyReason: core.ReasonUnavailable,
			Endpoints: []string{}, Notes: []string{err.Error()}}
	}
	st := core.Status{
		Product:      "desktop",
		SignedIn:     d.signedIn(ctx, conn),
		Orchestrator: true,
		ReadOnly:     !conn.Verified,
		Endpoint:     conn.Base,
		Endpoints:    []string{"/api/projects", "/api/thread/:id", "/api/events"},
		Notes:        []string{fmt.Sprintf("Desktop connected at %s via %s.", conn.Base, conn.Source)},
	}
	if conn.PID > 0 {
		st.Notes[0] = fmt.Sprintf("Desktop connected at %s via %s (PID %d).", conn.Base, conn.Source, conn.PID)
	}
	if conn.Verified {
		st.Endpoints = append(st.Endpoints, "/api/thread/:id/message", "/api/thread/:id/stop", "/api/thread/:id/resume",
			"/api/thread/:id/agent", "/api/thread/:id/effort", "/api/threads")
		st.Notes = append(st.Notes, "Writes are enabled: the launch id was verified through /healthz.")
	} else {
		st.ReadOnlyReason = core.ReasonDesktopUnverified
		st.Notes = append(st.Notes, "Desktop connected read-only: "+conn.Note+".")
	}
	d.store.mu.Lock()
	connected := d.store.connected
	d.store.mu.Unlock()
	if connected {
		st.Notes = append(st.Notes, "Live progress stream connected.")
	} else {
		st.Notes = append(st.Notes, "Live progress stream not connected yet; get_thread_progress reports stale until it is.")
	}
	return st
}

// signedIn asks GET /api/auth/status; anything but a clear answer is "unknown".
func (d *Backend) signedIn(ctx context.Context, conn *desktopConn) any {
	pctx, cancel := d.withTimeout(ctx, d.cfg.ProbeTimeout, TagProbe)
	defer cancel()
	res, err := d.do(pctx, conn, http.MethodGet, "/api/auth/status", nil)
	if err != nil || res.status != http.StatusOK {
		return "unknown"
	}
	var body struct {
		Authed *bool `json:"authed"`
	}
	if json.Unmarshal(res.body, &body) != nil || body.Authed == nil {
		return "unknown"
	}
	return *body.Authed
}

// ProjectRoot returns the path of a Desktop project.
func (d *Backend) ProjectRoot(ctx context.Context, projectID string) (string, error) {
	raw, err := d.rawProjects(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range raw {
		if pp := core.Str(p["path"]); pp == projectID {
			return pp, nil
		}
	}
	return "", &core.NotFoundError{Kind: "project", ID: projectID}
}

// Close stops the event stream and closes idle connections.
func (d *Backend) Close() error {
	d.events.stop()
	d.client.CloseIdleConnections()
	d.stream.CloseIdleConnections()
	d.writer.CloseIdleConnections()
	return nil
}

// TurnBaseline returns the lastTurnFinishedAt a new send's turn must exceed
// to count as finished: from the event stream when it has seen the thread,
// else from GET /api/thread/:id (0 when neither answers).
func (d *Backend) TurnBaseline(ctx context.Context, threadID string) int64 {
	if at, ok := d.norm.finishedAt(threadID); ok {
		return at
	}
	v, _, err := d.get(ctx, threadPath(threadID, ""))
	if err != nil {
		return 0
	}
	m := core.AsMap(v)
	if t := core.AsMap(m["thread"]); t != nil {
		m = t
	}
	at, _ := core.Num(m["lastTurnFinishedAt"])
	return at
}
