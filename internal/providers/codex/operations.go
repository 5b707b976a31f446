package codex

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/jsonrpc"
	"github.com/agent-interop/runtime/internal/providers"
)

var _ providers.Adapter = (*Adapter)(nil)
var _ providers.EndpointRouter = (*Adapter)(nil)

// trackedCall is call for a request about one thread: while it is
// unanswered, losing the connection counts as a loss for that thread.
func (a *Adapter) trackedCall(ctx context.Context, g *generation, thread, method string, params, result any) error {
	a.mu.Lock()
	g.inflight[thread]++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		g.inflight[thread]--
		if g.inflight[thread] <= 0 {
			delete(g.inflight, thread)
		}
		a.mu.Unlock()
	}()
	return a.call(ctx, g, method, params, result)
}

// call runs one request with the configured timeout.
func (a *Adapter) call(ctx context.Context, g *generation, method string, params, result any) error {
	ctx, cancel := clockctx.WithTimeout(ctx, a.cfg.Clock, a.cfg.CallTimeout, "codex", "call")
	defer cancel()
	if params == nil {
		params = struct{}{} // app-server wants "params" on every request
	}
	return g.conn.Call(ctx, method, params, result)
}

// deliveryError maps a failed operation call onto the delivery contract:
// a peer's refusal is a RejectedError, a request that never left is a
// NotSentError, and anything else stays uncertain.
func deliveryError(op string, err error) error {
	var rpc *jsonrpc.Error
	if jsonrpc.IsMethodNotSupported(err) && errors.As(err, &rpc) {
		return &providers.UnsupportedError{Provider: providers.Codex, Operation: op, Reason: "this codex app-server does not know " + op + ": " + rpc.Message}
	}
	if errors.As(err, &rpc) {
		return &providers.RejectedError{Reason: rpc.Message, Detail: map[string]any{"code": rpc.Code, "operation": op}}
	}
	if !jsonrpc.WasSent(err) {
		return &providers.NotSentError{Err: fmt.Errorf("codex %s: %w", op, err)}
	}
	return fmt.Errorf("codex %s: outcome unknown: %w", op, err)
}

// Capabilities implements providers.Adapter. It starts the app-server (at
// most every RetryAfter after a failure) to report what is true now.
func (a *Adapter) Capabilities(ctx context.Context) providers.Capabilities {
	caps := providers.Capabilities{
		Provider:       providers.Codex,
		AdapterVersion: AdapterVersion,
		Authorization:  "unknown",
		Limitations: []string{
			"events are the live notifications of this runtime's app-server; codex does not replay them after a restart",
			"diff is the latest turn/diff/updated seen per thread by this runtime",
			"model and reasoning are per-turn overrides applied with the next turn/start",
		},
	}
	if p := a.program(); p.err == nil {
		caps.Program = p.argv[0]
	}
	avail := func(reason string) providers.Capability {
		return providers.Capability{Supported: true, State: providers.Available, Transport: transport, Protocol: protocol, Reason: reason}
	}
	steer := providers.Capability{Supported: false, State: providers.Unavailable, Transport: transport, Protocol: protocol,
		Reason: "codex app-server folds a prompt sent during a turn into that turn; a separate steer is not exposed"}
	g, err := a.ensure(ctx)
	if err != nil {
		fix := ""
		var miss *errProgramMissing
		if errors.As(err, &miss) {
			fix = installFix
		}
		down := providers.Capability{Supported: true, State: providers.Unavailable, Transport: transport, Protocol: protocol, Reason: err.Error(), Fix: fix}
		caps.Discovery, caps.Sessions, caps.SendMessage, caps.Cancel = down, down, down, down
		caps.Events, caps.Diff, caps.Permissions, caps.Model, caps.Reasoning = down, down, down, down, down
		caps.Steer = steer
		return caps
	}
	caps.ProviderVersion = versionFromUserAgent(g.userAgent)
	caps.Authorization = g.auth
	if g.authDetail != "" {
		caps.Limitations = append(caps.Limitations, g.authDetail)
	}
	caps.Discovery = avail("")
	caps.Sessions = avail("")
	caps.SendMessage = avail("")
	caps.Steer = steer
	caps.Cancel = avail("turn/interrupt")
	caps.Events = avail("live app-server notifications, not replayed after a restart")
	d := avail("latest turn/diff/updated per thread seen by this runtime")
	d.State = providers.Degraded
	caps.Diff = d
	caps.Permissions = avail("approval requests are held until answered")
	caps.Model = avail("per-turn override applied with the next turn/start")
	caps.Reasoning = avail("per-turn effort override applied with the next turn/start")
	return caps
}

// versionFromUserAgent takes "name/0.171.0 (...)" to "0.171.0".
func versionFromUserAgent(ua string) string {
	_, rest, ok := strings.Cut(ua, "/")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, " ")
	return v
}

// threadInfo is the part of a codex Thread the adapter maps to a Session.
type threadInfo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Preview       string `json:"preview"`
	Cwd           string `json:"cwd"`
	Model         string `json:"model"`
	ModelProvider string `json:"modelProvider"`
	CreatedAt     int64  `json:"createdAt"`
	UpdatedAt     int64  `json:"updatedAt"`
	Path          string `json:"path"`
	Status        struct {
		Type        string   `json:"type"`
		ActiveFlags []string `json:"activeFlags"`
	} `json:"status"`
}

func (a *Adapter) session(t threadInfo, source string) providers.Session {
	title := t.Name
	if title == "" {
		title = truncate(strings.TrimSpace(t.Preview), 80)
	}
	md := map[string]any{}
	if t.ModelProvider != "" {
		md["modelProvider"] = t.ModelProvider
	}
	if t.CreatedAt > 0 {
		md["createdAt"] = time.Unix(t.CreatedAt, 0).UTC()
	}
	if t.UpdatedAt > 0 {
		md["updatedAt"] = time.Unix(t.UpdatedAt, 0).UTC()
	}
	if len(t.Status.ActiveFlags) > 0 {
		md["activeFlags"] = t.Status.ActiveFlags
	}
	if len(md) == 0 {
		md = nil
	}
	return providers.Session{
		ID:         string(providers.Codex) + ":" + t.ID,
		Provider:   providers.Codex,
		NativeID:   t.ID,
		Title:      title,
		State:      t.Status.Type,
		Model:      t.Model,
		CWD:        t.Cwd,
		Transport:  transport,
		Endpoint:   a.program().endpoint,
		Provenance: providers.Provenance{DiscoveredAt: a.cfg.Clock.Now(), Source: source, Native: true},
		Metadata:   md,
	}
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// ListSessions implements providers.Adapter (thread/list, every page up to
// 2,000 threads, archived threads excluded).
func (a *Adapter) ListSessions(ctx context.Context) ([]providers.Session, error) {
	g, err := a.ensure(ctx)
	if err != nil {
		return nil, err
	}
	var out []providers.Session
	cursor := ""
	for page := 0; page < 20; page++ {
		params := map[string]any{"limit": 100}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res struct {
			Data       []threadInfo `json:"data"`
			NextCursor *string      `json:"nextCursor"`
		}
		if err := a.call(ctx, g, "thread/list", params, &res); err != nil {
			if jsonrpc.IsMethodNotSupported(err) {
				return nil, &providers.UnsupportedError{Provider: providers.Codex, Operation: "session listing", Reason: "this codex app-server does not know thread/list"}
			}
			return out, fmt.Errorf("codex thread/list: %w", err)
		}
		for _, t := range res.Data {
			out = append(out, a.session(t, "codex app-server thread/list"))
		}
		if res.NextCursor == nil || *res.NextCursor == "" || len(res.Data) == 0 {
			break
		}
		cursor = *res.NextCursor
	}
	return out, nil
}

// isUnknownThread recognises codex's answers for a thread it does not have.
func isUnknownThread(err error) bool {
	_, ok := unknownThread(err)
	return ok
}

// unknownThread returns codex's words when err is its answer for a thread
// it does not have (thread/resume: "no rollout found for thread id <id>";
// thread/read: "thread not loaded: <id>"; turn/start: "thread not found").
func unknownThread(err error) (string, bool) {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		return "", false
	}
	m := strings.ToLower(rpc.Message)
	for _, s := range []string{"thread not loaded", "thread not found", "invalid thread id", "no rollout found"} {
		if strings.Contains(m, s) {
			return rpc.Message, true
		}
	}
	return "", false
}

// GetSession implements providers.Adapter (thread/read).
func (a *Adapter) GetSession(ctx context.Context, nativeID string) (*providers.Session, error) {
	g, err := a.ensure(ctx)
	if err != nil {
		return nil, err
	}
	var res struct {
		Thread threadInfo `json:"thread"`
	}
	if err := a.call(ctx, g, "thread/read", map[string]any{"threadId": nativeID}, &res); err != nil {
		if isUnknownThread(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("codex thread/read %s: %w", nativeID, err)
	}
	s := a.session(res.Thread, "codex app-server thread/read")
	return &s, nil
}

// CreateSession implements providers.Adapter (thread/start, then
// thread/name/set when a title is given).
func (a *Adapter) CreateSession(ctx context.Context, opts providers.CreateOptions) (providers.Session, error) {
	g, err := a.ensure(ctx)
	if err != nil {
		return providers.Session{}, err
	}
	params := a.threadParams()
	if opts.CWD != "" {
		params["cwd"] = resolvedDir(opts.CWD)
	}
	var res struct {
		Thread threadInfo `json:"thread"`
	}
	if err := a.call(ctx, g, "thread/start", params, &res); err != nil {
		return providers.Session{}, fmt.Errorf("codex thread/start: %w", err)
	}
	a.mu.Lock()
	g.loaded[res.Thread.ID] = true
	a.mu.Unlock()
	if opts.Title != "" {
		switch err := a.call(ctx, g, "thread/name/set", map[string]any{"threadId": res.Thread.ID, "name": opts.Title}, nil); {
		case err == nil:
			res.Thread.Name = opts.Title
		case jsonrpc.IsMethodNotSupported(err):
			// An older server without thread names: the thread stays untitled.
		default:
			return a.session(res.Thread, "codex app-server thread/start"), fmt.Errorf("codex thread/name/set (thread %s was created): %w", res.Thread.ID, err)
		}
	}
	return a.session(res.Thread, "codex app-server thread/start"), nil
}

// ResumeSession implements providers.Adapter (thread/resume).
func (a *Adapter) ResumeSession(ctx context.Context, nativeID string) (providers.Session, error) {
	g, err := a.ensure(ctx)
	if err != nil {
		return providers.Session{}, err
	}
	t, err := a.resume(ctx, g, nativeID)
	if err != nil {
		return providers.Session{}, err
	}
	return a.session(t, "codex app-server thread/resume"), nil
}

func (a *Adapter) resume(ctx context.Context, g *generation, id string) (threadInfo, error) {
	var res struct {
		Thread threadInfo `json:"thread"`
	}
	params := a.threadParams()
	params["threadId"], params["excludeTurns"] = id, true
	// An app-server left behind by a runtime that died keeps the thread's
	// writer until it notices its input closed and exits; resuming (which
	// sends nothing to the model) is tried again until then, bounded.
	wait := 100 * time.Millisecond
	deadline := a.cfg.Clock.Now().Add(a.cfg.WriterWait)
	for {
		err := a.call(ctx, g, "thread/resume", params, &res)
		if err == nil {
			break
		}
		if words, ok := unknownThread(err); ok {
			// The app-server has no rollout of the thread: it lost it.
			return threadInfo{}, fmt.Errorf("codex thread/resume %s: %w", id, providers.SessionLost(words))
		}
		if !activeWriter(err) || !a.cfg.Clock.Now().Add(wait).Before(deadline) {
			return threadInfo{}, fmt.Errorf("codex thread/resume %s: %w", id, err)
		}
		t := a.cfg.Clock.NewTimer(wait, "codex", "resume-retry")
		select {
		case <-ctx.Done():
			t.Stop()
			return threadInfo{}, fmt.Errorf("codex thread/resume %s: %w (waiting for another app-server to release the thread)", id, err)
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
	a.mu.Lock()
	g.loaded[id] = true
	a.mu.Unlock()
	return res.Thread, nil
}

func (a *Adapter) threadParams() map[string]any {
	p := make(map[string]any, len(a.cfg.ThreadParams)+2)
	for k, v := range a.cfg.ThreadParams {
		p[k] = v
	}
	return p
}

// activeWriter recognises codex's refusal while another app-server holds
// the thread.
func activeWriter(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && strings.Contains(strings.ToLower(rpc.Message), "active writer")
}

// load makes sure the thread is loaded on this connection (so turns can
// start and its notifications arrive).
func (a *Adapter) load(ctx context.Context, g *generation, id string) error {
	a.mu.Lock()
	ok := g.loaded[id]
	a.mu.Unlock()
	if ok {
		return nil
	}
	_, err := a.resume(ctx, g, id)
	return err
}

// Send implements providers.Adapter with turn/start. The receipt is queued
// (the app-server accepted the turn); its Ref is the turn id, whose
// turn/completed later reports completed or rejected.
func (a *Adapter) Send(ctx context.Context, nativeID, text string, opts providers.SendOptions) (providers.Receipt, error) {
	if opts.Agent != "" {
		return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.Codex, Operation: "agent selection",
			Reason: "Codex App Server does not expose a separate agent control"}
	}
	if opts.Mode == "steer" {
		return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.Codex, Operation: "steer",
			Reason: "codex app-server folds a prompt sent during a turn into that turn; send it with mode send"}
	}
	g, err := a.ensure(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("codex app-server unavailable: %w", err)}
	}
	if err := a.load(ctx, g, nativeID); err != nil {
		// The turn itself was never sent.
		return providers.Receipt{}, &providers.NotSentError{Err: err}
	}
	a.mu.Lock()
	th := a.thread(nativeID)
	model, effort := th.model, th.effort
	th.seen = a.cfg.Clock.Now()
	a.mu.Unlock()
	if opts.Model != nil && opts.Model.ModelID != "" {
		model = opts.Model.ModelID
	}
	if opts.Reasoning != "" {
		effort = opts.Reasoning
	}
	params := map[string]any{
		"threadId": nativeID,
		"input":    []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}},
	}
	if model != "" {
		params["model"] = model
	}
	if effort != "" {
		params["effort"] = effort
	}
	if opts.CorrelationID != "" {
		// Stored with the user message (clientId), so a runtime that
		// restarts finds this turn in thread/read (LookupTurn).
		params["clientUserMessageId"] = opts.CorrelationID
	}
	var res struct {
		Turn struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"turn"`
	}
	if err := a.trackedCall(ctx, g, nativeID, "turn/start", params, &res); err != nil {
		return providers.Receipt{}, deliveryError("turn/start", err)
	}
	a.mu.Lock()
	if !th.isFinished(res.Turn.ID) {
		th.setActive(nativeID, res.Turn.ID, g)
	}
	a.mu.Unlock()
	return providers.Receipt{
		Provider:      providers.Codex,
		NativeID:      nativeID,
		Operation:     "send",
		Accepted:      true,
		Status:        providers.StatusQueued,
		ProviderState: "turn_" + res.Turn.Status,
		Detail:        map[string]any{"turnId": res.Turn.ID, "delivery": "transport_accepted", "completion": "not_observed"},
		NativeTurnID:  res.Turn.ID,
		Ref:           res.Turn.ID,
	}, nil
}

// Cancel implements providers.Adapter with turn/interrupt on the thread's
// active turn. The receipt is queued until turn/completed shows the turn
// interrupted.
func (a *Adapter) Cancel(ctx context.Context, nativeID string) (providers.Receipt, error) {
	g, err := a.ensure(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("codex app-server unavailable: %w", err)}
	}
	a.mu.Lock()
	th := a.threads[nativeID]
	var turn string
	var started <-chan struct{}
	if th != nil && th.turnGen == g {
		turn = th.activeTurn
		if !th.started {
			started = th.startedCh
		}
	}
	a.mu.Unlock()
	if turn == "" {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("codex thread %s has no active turn to interrupt", nativeID)}
	}
	if started != nil {
		// turn/interrupt before turn/started is refused ("no active turn");
		// wait for it, bounded.
		t := a.cfg.Clock.NewTimer(a.cfg.InterruptWait, "codex", "interrupt-wait")
		select {
		case <-started:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return providers.Receipt{}, &providers.NotSentError{Err: ctx.Err()}
		}
		t.Stop()
	}
	a.mu.Lock()
	th.interrupts[turn] = true
	g.ops.Add(interruptOp(nativeID, turn))
	a.mu.Unlock()
	if err := a.trackedCall(ctx, g, nativeID, "turn/interrupt", map[string]any{"threadId": nativeID, "turnId": turn}, nil); err != nil {
		if !jsonrpc.WasSent(err) || errors.As(err, new(*jsonrpc.Error)) {
			a.mu.Lock()
			delete(th.interrupts, turn)
			g.ops.Settle(interruptRef(turn))
			a.mu.Unlock()
		}
		return providers.Receipt{}, deliveryError("turn/interrupt", err)
	}
	return providers.Receipt{
		Provider:      providers.Codex,
		NativeID:      nativeID,
		Operation:     "cancel",
		Accepted:      true,
		Status:        providers.StatusQueued,
		ProviderState: "interrupt_requested",
		Detail:        map[string]any{"turnId": turn},
		Ref:           interruptRef(turn),
	}, nil
}

// Subscribe implements providers.Adapter: the thread's live notifications
// (and approval requests) until ctx ends or the app-server connection ends.
func (a *Adapter) Subscribe(ctx context.Context, nativeID string) (<-chan providers.NativeEvent, error) {
	g, err := a.ensure(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.load(ctx, g, nativeID); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if g.dead {
		return nil, errors.New("codex app-server connection ended while subscribing")
	}
	s := g.subs.Add(nativeID)
	g.subs.RemoveOnDone(ctx, s, nil)
	return s.C(), nil
}

// Diff implements providers.Adapter: the latest turn/diff/updated of the
// thread, or of the turn named by opts.MessageID.
func (a *Adapter) Diff(_ context.Context, nativeID string, opts providers.DiffOptions) (any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	res := DiffResult{NativeID: nativeID, Source: "codex turn/diff/updated"}
	th := a.threads[nativeID]
	if th == nil || len(th.diffs) == 0 {
		if opts.MessageID != "" {
			return nil, fmt.Errorf("no diff observed for codex turn %s of thread %s", opts.MessageID, nativeID)
		}
		return res, nil
	}
	d := th.diffs[len(th.diffs)-1]
	if opts.MessageID != "" {
		found := false
		for _, x := range th.diffs {
			if x.TurnID == opts.MessageID {
				d, found = x, true
			}
		}
		if !found {
			return nil, fmt.Errorf("no diff observed for codex turn %s of thread %s", opts.MessageID, nativeID)
		}
	}
	res.TurnID, res.Diff, res.Observed = d.TurnID, d.Diff, true
	at := d.UpdatedAt
	res.UpdatedAt = &at
	return res, nil
}

// PendingPermissions implements providers.Adapter.
func (a *Adapter) PendingPermissions(context.Context) ([]providers.PermissionRequest, error) {
	a.mu.Lock()
	out := make([]providers.PermissionRequest, 0, len(a.perms))
	for _, p := range a.perms {
		if !p.replied && !p.gen.dead {
			out = append(out, p.req)
		}
	}
	a.mu.Unlock()
	sortPermissions(out)
	return out, nil
}

// RespondPermission implements providers.Adapter. decision must be the id of
// one of the options the request offered.
func (a *Adapter) RespondPermission(_ context.Context, nativeID, requestID, decision string) (providers.Receipt, error) {
	a.mu.Lock()
	p := a.perms[requestID]
	if p == nil || p.replied || p.req.NativeID != nativeID {
		a.mu.Unlock()
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("No pending permission request %s for %s", requestID, nativeID)}
	}
	answer, ok := p.answers[decision]
	if !ok {
		a.mu.Unlock()
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("decision %q is not offered by permission request %s; offered: %s",
			decision, requestID, offeredIDs(p.req.Options))}
	}
	if p.gen.dead {
		a.mu.Unlock()
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("the codex app-server that asked permission request %s has exited", requestID)}
	}
	p.replied = true
	g := p.gen
	g.ops.Add(permissionOp(nativeID, requestID)) // g is not dead: its loss comes later
	a.mu.Unlock()
	if err := g.conn.Reply(p.rawID, answer); err != nil {
		if !jsonrpc.WasSent(err) {
			a.mu.Lock()
			p.replied = false
			g.ops.Settle(permissionRef(requestID))
			a.mu.Unlock()
			return providers.Receipt{}, &providers.NotSentError{Err: err}
		}
		return providers.Receipt{}, fmt.Errorf("codex permission reply: outcome unknown: %w", err)
	}
	return providers.Receipt{
		Provider:      providers.Codex,
		NativeID:      nativeID,
		Operation:     "permission",
		Accepted:      true,
		Status:        providers.StatusQueued,
		ProviderState: "decision_sent",
		Detail:        map[string]any{"requestId": requestID, "decision": decision},
		Ref:           permissionRef(requestID),
	}, nil
}

// SetModel implements providers.Adapter: the model is sent with the
// thread's next turn/start (codex applies it to that and later turns).
func (a *Adapter) SetModel(_ context.Context, nativeID string, model providers.Model) (providers.Receipt, error) {
	if model.ModelID == "" {
		return providers.Receipt{}, &providers.NotSentError{Err: errors.New("model id is empty")}
	}
	a.mu.Lock()
	a.thread(nativeID).model = model.ModelID
	a.mu.Unlock()
	return providers.Receipt{Provider: providers.Codex, NativeID: nativeID, Operation: "set_model", Accepted: true,
		Status: providers.StatusCompleted, ProviderState: "applies_to_next_turn", Detail: map[string]any{"model": model.ModelID}}, nil
}

// SetReasoning implements providers.Adapter like SetModel, for the effort.
func (a *Adapter) SetReasoning(_ context.Context, nativeID, effort string) (providers.Receipt, error) {
	if effort == "" {
		return providers.Receipt{}, &providers.NotSentError{Err: errors.New("reasoning effort is empty")}
	}
	a.mu.Lock()
	a.thread(nativeID).effort = effort
	a.mu.Unlock()
	return providers.Receipt{Provider: providers.Codex, NativeID: nativeID, Operation: "set_reasoning", Accepted: true,
		Status: providers.StatusCompleted, ProviderState: "applies_to_next_turn", Detail: map[string]any{"effort": effort}}, nil
}

// resolvedDir is dir with its symbolic links resolved (dir itself when it
// cannot be resolved). Codex's sandbox grants writes under the real path of
// the thread's working directory, so a thread started in a symlinked
// directory could read its workspace but never write to it.
func resolvedDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}
