package freebuff

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

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/security"
)

// HeaderLaunchID is the Desktop's authorization header.
const HeaderLaunchID = "x-freebuff-launch-id"

// maxResponseBytes bounds one Desktop JSON answer.
const maxResponseBytes = 32 << 20

// desktopBackend drives the Desktop orchestrator over loopback HTTP.
type desktopBackend struct {
	cfg    Config
	client *http.Client // reads
	writer *http.Client // writes: a fresh connection each, so a dead pooled
	// connection never turns a request that never left into an uncertain one
	stream *http.Client // the SSE stream
	store  *progressStore
	norm   *normalizer
	events *eventClient
	// onTurnEnd is told about finished turns (set once, before use).
	onTurnEnd func(turnEnd)

	discoverMu sync.Mutex // one discovery at a time
	mu         sync.Mutex
	gen        uint64 // discoveries completed
	conn       *desktopConn
	connErr    error
	connAt     int64 // clock time of the last discovery, UnixNano
}

func newDesktop(cfg Config) *desktopBackend {
	d := &desktopBackend{
		cfg:    cfg,
		client: newLoopbackClient(0, true),
		writer: newLoopbackClient(0, false),
		stream: newLoopbackClient(0, true),
		store:  newProgressStore(cfg.Clock),
		norm:   newNormalizer(cfg.Clock),
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
	if v, err := decodeJSON(r.body); err == nil {
		m := asMap(v)
		switch e := m["error"].(type) {
		case string:
			msg = e
		case map[string]any:
			msg = firstStr(e, "message", "kind")
		}
		if msg == "" {
			msg = firstStr(m, "message")
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(r.body))
	}
	msg = cut(security.RedactString(msg), 300)
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
func (d *desktopBackend) do(ctx context.Context, conn *desktopConn, method, p string, body any) (response, error) {
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
// forced or when the cached result is older than connectionTTL. A failed
// discovery is cached for the same time so reads do not rescan on every
// call.
func (d *desktopBackend) connection(ctx context.Context, force bool) (*desktopConn, error) {
	d.mu.Lock()
	now := d.cfg.Clock.Now().UnixNano()
	if !force && d.connAt != 0 && now-d.connAt < int64(connectionTTL) {
		c, err := d.conn, d.connErr
		d.mu.Unlock()
		return c, err
	}
	gen := d.gen
	d.mu.Unlock()
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

// cached returns the last discovered connection without probing.
func (d *desktopBackend) cached() *desktopConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conn
}

// invalidate forgets the cached connection.
func (d *desktopBackend) invalidate() {
	d.mu.Lock()
	d.connAt = 0
	d.mu.Unlock()
}

// get reads a JSON answer. A transport failure or an authorization refusal
// triggers one re-discovery and one retry (reads are safe to repeat).
func (d *desktopBackend) get(ctx context.Context, p string) (any, response, error) {
	for attempt := 0; ; attempt++ {
		conn, err := d.connection(ctx, attempt > 0)
		if err != nil {
			return nil, response{}, err
		}
		rctx, cancel := withTimeout(ctx, d.cfg.RequestTimeout)
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
		v, err := decodeJSON(res.body)
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
func (d *desktopBackend) rawProjects(ctx context.Context) ([]map[string]any, error) {
	v, _, err := d.get(ctx, "/api/projects")
	if err != nil {
		return nil, err
	}
	list, ok := asMap(v)["projects"].([]any)
	if !ok {
		return nil, errors.New("Invalid Freebuff /api/projects response")
	}
	out := make([]map[string]any, 0, len(list))
	for _, p := range list {
		if m := asMap(p); m != nil && str(m["path"]) != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

func (d *desktopBackend) listProjects(ctx context.Context) ([]Project, error) {
	raw, err := d.rawProjects(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Project, 0, len(raw))
	for _, p := range raw {
		pp := str(p["path"])
		threads, _ := p["threads"].([]any)
		out = append(out, Project{ID: pp, Path: pp, Name: path.Base(pp), Metadata: map[string]any{"threadCount": len(threads)}})
	}
	return out, nil
}

// summaryKeys are the thread fields lifted out of metadata.
var summaryKeys = map[string]struct{}{"id": {}, "projectId": {}, "projectPath": {}, "title": {}, "turnState": {}, "model": {}}

// threadSummary maps a Desktop thread object.
func threadSummary(t map[string]any, projectID string) ThreadSummary {
	s := ThreadSummary{
		ID:        str(t["id"]),
		ProjectID: firstStr(t, "projectPath", "projectId"),
		Title:     security.RedactString(str(t["title"])),
		State:     str(t["turnState"]),
		Model:     str(t["model"]),
	}
	if s.ProjectID == "" {
		s.ProjectID = projectID
	}
	meta := map[string]any{}
	for k, v := range t {
		if _, skip := summaryKeys[k]; !skip {
			meta[k] = v
		}
	}
	if len(meta) > 0 {
		s.Metadata, _ = security.SanitizeFreebuff(meta).(map[string]any)
	}
	return s
}

func (d *desktopBackend) listThreads(ctx context.Context, projectID string) ([]ThreadSummary, error) {
	raw, err := d.rawProjects(ctx)
	if err != nil {
		return nil, err
	}
	found := projectID == ""
	var out []ThreadSummary
	for _, p := range raw {
		pp := str(p["path"])
		if projectID != "" && projectID != pp {
			continue
		}
		found = true
		threads, _ := p["threads"].([]any)
		for _, t := range threads {
			if tm := asMap(t); tm != nil && security.ValidateID(str(tm["id"])) == nil {
				out = append(out, threadSummary(tm, pp))
			}
		}
	}
	if !found {
		return nil, &NotFoundError{Kind: "project", ID: projectID}
	}
	if out == nil {
		out = []ThreadSummary{}
	}
	return out, nil
}

func (d *desktopBackend) getThread(ctx context.Context, id string) (ThreadDetail, error) {
	v, res, err := d.get(ctx, threadPath(id, ""))
	if err != nil {
		if res.status == http.StatusNotFound {
			return ThreadDetail{}, &NotFoundError{Kind: "thread", ID: id}
		}
		return ThreadDetail{}, err
	}
	m := asMap(v)
	if m == nil {
		return ThreadDetail{}, errors.New("Invalid Freebuff thread response")
	}
	// The orchestrator answers {thread, messages, items}; older builds
	// answered the thread fields flat.
	t := asMap(m["thread"])
	if t == nil {
		t = m
	}
	if str(t["id"]) == "" {
		t["id"] = id
	}
	det := ThreadDetail{ThreadSummary: threadSummary(t, "")}
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

func (d *desktopBackend) progress(ctx context.Context, q ProgressQuery) (ProgressSnapshot, error) {
	if _, err := d.connection(ctx, false); err != nil {
		return ProgressSnapshot{}, err
	}
	return d.store.wait(ctx, q), nil
}

func (d *desktopBackend) activeThreads(ctx context.Context) ([]ProgressSnapshot, error) {
	if _, err := d.connection(ctx, false); err != nil {
		return nil, err
	}
	ids := d.store.active()
	sort.Strings(ids)
	out := make([]ProgressSnapshot, 0, len(ids))
	for _, id := range ids {
		s, _ := d.store.read(id, 0, 1, true, false)
		out = append(out, s)
	}
	return out, nil
}

func (d *desktopBackend) live(threadID string) *ProgressSnapshot {
	s, _ := d.store.read(threadID, 0, 1, true, false)
	return &s
}

func (d *desktopBackend) listModels(ctx context.Context) (ModelList, error) {
	threads, err := d.listThreads(ctx, "")
	if err != nil {
		return ModelList{}, err
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
	return ModelList{
		Note:   "The Freebuff Desktop exposes no model-catalog route; models lists the models its threads use. set_thread_model validates a model with the Desktop (harness codebuff).",
		Models: models,
	}, nil
}

func (d *desktopBackend) status(ctx context.Context) Status {
	conn, err := d.connection(ctx, false)
	if err != nil {
		return Status{Product: "unknown", SignedIn: "unknown", ReadOnly: true, ReadOnlyReason: ReasonUnavailable,
			Endpoints: []string{}, Notes: []string{err.Error()}}
	}
	st := Status{
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
		st.ReadOnlyReason = ReasonDesktopUnverified
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
func (d *desktopBackend) signedIn(ctx context.Context, conn *desktopConn) any {
	pctx, cancel := withTimeout(ctx, d.cfg.ProbeTimeout)
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

// projectRoot returns the path of a Desktop project.
func (d *desktopBackend) projectRoot(ctx context.Context, projectID string) (string, error) {
	raw, err := d.rawProjects(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range raw {
		if pp := str(p["path"]); pp == projectID {
			return pp, nil
		}
	}
	return "", &NotFoundError{Kind: "project", ID: projectID}
}

// --- writes ----------------------------------------------------------------

// write performs one Desktop mutation under the delivery contract:
//   - the connection is re-discovered first, and a write needs a launch id
//     verified through /healthz (otherwise NotSent with the 0.3.x reason);
//   - a write refused for authorization (401/403: a rotated launch id or a
//     new port) is retried exactly once after re-discovery; so is a write
//     whose connection could not even be opened;
//   - a timeout or a connection cut after the request may have left is
//     returned as an uncertain error and never retried;
//   - any other 4xx is a RejectedError with the provider's reason.
func (d *desktopBackend) write(ctx context.Context, op, threadID, p string, body any) (providers.Receipt, error) {
	for attempt := 0; attempt < 2; attempt++ {
		conn, err := d.connection(ctx, true)
		if err != nil {
			return providers.Receipt{}, notSent(err)
		}
		if !conn.Verified {
			return providers.Receipt{}, notSent(&ReadOnlyError{Reason: ReasonDesktopUnverified})
		}
		rctx, cancel := withTimeout(ctx, d.cfg.RequestTimeout)
		res, err := d.do(rctx, conn, http.MethodPost, p, body)
		cancel()
		if err != nil {
			var se *sendError
			if errors.As(err, &se) && !se.sent {
				if attempt == 0 && ctx.Err() == nil {
					continue
				}
				return providers.Receipt{}, notSent(fmt.Errorf("Freebuff Desktop %s: %w", op, err))
			}
			return providers.Receipt{}, fmt.Errorf("Freebuff Desktop %s outcome unknown (the request may have been delivered): %w", op, err)
		}
		switch {
		case res.status >= 300 && res.status < 400:
			return providers.Receipt{}, &providers.RejectedError{Reason: fmt.Sprintf("Freebuff Desktop answered HTTP %d with a redirect; redirects are refused", res.status)}
		case res.status == http.StatusUnauthorized || res.status == http.StatusForbidden:
			if attempt == 0 {
				d.cfg.Logger.Info("freebuff desktop write refused for authorization; re-discovering", "op", op, "status", res.status)
				continue
			}
			return providers.Receipt{}, &providers.RejectedError{Reason: res.reason() + " (launch authorization refused after re-discovery)"}
		case res.status >= 400 && res.status < 500:
			if res.status == http.StatusNotFound && threadID != "" {
				return providers.Receipt{}, &providers.RejectedError{Reason: (&NotFoundError{Kind: "thread", ID: threadID}).Error() + " (" + res.reason() + ")"}
			}
			return providers.Receipt{}, &providers.RejectedError{Reason: res.reason()}
		case res.status >= 500:
			return providers.Receipt{}, fmt.Errorf("Freebuff Desktop %s outcome unknown: %s", op, res.reason())
		case res.status < 200 || res.status > 299:
			return providers.Receipt{}, fmt.Errorf("Freebuff Desktop %s outcome unknown: unexpected HTTP %d", op, res.status)
		}
		var detail any = map[string]any{}
		if len(bytes.TrimSpace(res.body)) > 0 {
			if v, err := decodeJSON(res.body); err == nil {
				detail = security.SanitizeFreebuff(v)
			}
		}
		return providers.Receipt{
			Provider:      providers.Freebuff,
			NativeID:      threadID,
			Operation:     op,
			Accepted:      true,
			Status:        providers.StatusQueued,
			ProviderState: "accepted",
			Detail:        detail,
		}, nil
	}
	return providers.Receipt{}, notSent(errors.New("Freebuff Desktop write was not attempted"))
}

func (d *desktopBackend) send(ctx context.Context, id, text string) (providers.Receipt, error) {
	return d.write(ctx, "send", id, threadPath(id, "/message"), map[string]any{"text": text})
}

func (d *desktopBackend) stop(ctx context.Context, id string) (providers.Receipt, error) {
	return d.write(ctx, "stop", id, threadPath(id, "/stop"), map[string]any{})
}

func (d *desktopBackend) resume(ctx context.Context, id string) (providers.Receipt, error) {
	return d.write(ctx, "resume", id, threadPath(id, "/resume"), map[string]any{})
}

func (d *desktopBackend) setModel(ctx context.Context, id, model, harness string) (providers.Receipt, error) {
	return d.write(ctx, "set_model", id, threadPath(id, "/agent"), map[string]any{"model": model, "harnessId": harness})
}

func (d *desktopBackend) setReasoning(ctx context.Context, id string, effort *string) (providers.Receipt, error) {
	var e any
	if effort != nil {
		e = *effort
	}
	return d.write(ctx, "set_reasoning", id, threadPath(id, "/effort"), map[string]any{"effort": e})
}

// createThread creates a Desktop thread in a project.
func (d *desktopBackend) createThread(ctx context.Context, opts CreateThreadOptions) (ThreadSummary, error) {
	body := map[string]any{"projectPath": opts.ProjectPath}
	if opts.Title != "" {
		body["title"] = opts.Title
	}
	rec, err := d.write(ctx, "create", "", "/api/threads", body)
	if err != nil {
		return ThreadSummary{}, err
	}
	t := asMap(rec.Detail)
	if inner := asMap(t["thread"]); inner != nil {
		t = inner
	}
	if security.ValidateID(str(t["id"])) != nil {
		return ThreadSummary{}, errors.New("Freebuff created a thread but returned no valid id")
	}
	return threadSummary(t, opts.ProjectPath), nil
}

func (d *desktopBackend) close() error {
	d.events.stop()
	d.client.CloseIdleConnections()
	d.stream.CloseIdleConnections()
	d.writer.CloseIdleConnections()
	return nil
}
