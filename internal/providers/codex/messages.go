package codex

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/lazy"

	"github.com/agent-interop/runtime/internal/jsonrpc"
	"github.com/agent-interop/runtime/internal/providers"
)

// notification holds the fields of app-server notifications the adapter
// acts on; everything else is passed through as event data.
type notification struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	Turn     *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"turn"`
	Thread *struct {
		ID string `json:"id"`
	} `json:"thread"`
	RequestID json.RawMessage `json:"requestId"`
	Diff      *string         `json:"diff"`
}

func (a *Adapter) onMessage(g *generation, req *jsonrpc.Request) {
	if !req.IsNotification() {
		a.onServerRequest(g, req)
		return
	}
	var n notification
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &n)
	}
	threadID := n.ThreadID
	if threadID == "" && n.Thread != nil {
		threadID = n.Thread.ID
	}
	turnID := n.TurnID
	if turnID == "" && n.Turn != nil {
		turnID = n.Turn.ID
	}
	if threadID != "" {
		a.mu.Lock()
		a.thread(threadID).seen = a.cfg.Clock.Now()
		a.mu.Unlock()
	}
	switch req.Method {
	case "turn/started":
		if n.Turn != nil && threadID != "" {
			a.mu.Lock()
			th := a.thread(threadID)
			if !th.isFinished(n.Turn.ID) {
				th.setActive(threadID, n.Turn.ID, g)
				th.markStarted()
			}
			a.mu.Unlock()
		}
	case "turn/completed":
		if n.Turn != nil && threadID != "" {
			a.turnCompleted(threadID, n.Turn.ID, n.Turn.Status, n.Turn.Error)
		}
	case "turn/diff/updated":
		if n.Diff != nil && threadID != "" {
			a.mu.Lock()
			a.thread(threadID).addDiff(TurnDiff{NativeID: threadID, TurnID: n.TurnID, Diff: *n.Diff, UpdatedAt: a.cfg.Clock.Now()})
			a.mu.Unlock()
		}
	case "item/started", "item/completed":
		a.rememberFileChange(req.Params)
		if req.Method == "item/completed" {
			a.observeTurn(req.Method, threadID, turnID, req.Params)
		}
	case "thread/tokenUsage/updated":
		a.observeTurn(req.Method, threadID, turnID, req.Params)
	case "serverRequest/resolved":
		if len(n.RequestID) > 0 {
			a.permissionResolved(g, n.RequestID)
		}
	}
	if threadID != "" {
		a.fanout(g, threadID, req.Method, req.Params, req.Raw, turnID)
	}
}

func (a *Adapter) turnCompleted(threadID, turnID, status string, turnErr *struct {
	Message string `json:"message"`
}) {
	a.mu.Lock()
	th := a.thread(threadID)
	if th.activeTurn == turnID {
		// Observed: reported below, never by the connection's loss.
		th.turnGen.ops.Settle(turnID)
		th.turnGen.ops.Settle(interruptRef(turnID))
		th.activeTurn, th.turnGen, th.started = "", nil, false
		if th.startedCh != nil {
			close(th.startedCh)
			th.startedCh = nil
		}
	}
	th.finish(turnID)
	turn := th.endTurn(turnID, status, turnErrText(turnErr))
	interrupted := th.interrupts[turnID]
	delete(th.interrupts, turnID)
	a.mu.Unlock()
	h := a.cfg.Host
	if h == nil {
		return
	}
	reason := ""
	if turnErr != nil {
		reason = turnErr.Message
	}
	switch status {
	case "completed":
		h.ReportOutcome(providers.Codex, threadID, turnID, providers.Outcome{Status: providers.StatusCompleted, Reason: "turn completed", Turn: turn})
	case "interrupted":
		// The prompt's work did not finish: an interrupted turn is never
		// reported as completed.
		h.ReportOutcome(providers.Codex, threadID, turnID, providers.Outcome{Status: providers.StatusRejected, Reason: "turn interrupted", Turn: turn})
	case "failed":
		if reason == "" {
			reason = "turn failed"
		}
		h.ReportOutcome(providers.Codex, threadID, turnID, providers.Outcome{Status: providers.StatusRejected, Reason: reason, Turn: turn})
	default:
		// An unknown end state proves nothing: the receipt stays queued.
	}
	if interrupted {
		if status == "interrupted" {
			h.ReportOutcome(providers.Codex, threadID, interruptRef(turnID), providers.Outcome{Status: providers.StatusCompleted, Reason: "turn interrupted"})
		} else {
			h.ReportOutcome(providers.Codex, threadID, interruptRef(turnID), providers.Outcome{Status: providers.StatusRejected, Reason: "turn ended " + status + " before the interrupt took effect"})
		}
	}
}

func turnErrText(e *struct {
	Message string `json:"message"`
}) string {
	if e == nil {
		return ""
	}
	return e.Message
}

// setActive makes turn the thread's active turn on g, tracked in g.ops
// until its outcome is observed. A turn it replaces is no longer tracked
// (only the active turn is lost with its connection).
func (th *thread) setActive(threadID, turn string, g *generation) {
	if th.activeTurn == turn && th.turnGen == g {
		return
	}
	if th.turnGen != nil && th.activeTurn != "" {
		th.turnGen.ops.Settle(th.activeTurn)
		th.turnGen.ops.Settle(interruptRef(th.activeTurn))
	}
	g.ops.Add(turnOp(threadID, turn))
	if th.startedCh != nil {
		close(th.startedCh)
	}
	th.activeTurn, th.turnGen, th.started = turn, g, false
	th.startedCh = make(chan struct{})
}

func (th *thread) markStarted() {
	th.started = true
	if th.startedCh != nil {
		close(th.startedCh)
		th.startedCh = nil
	}
}

func (th *thread) finish(turn string) {
	th.finished = append(th.finished, turn)
	if len(th.finished) > recentTurns {
		th.finished = th.finished[len(th.finished)-recentTurns:]
	}
}

func (th *thread) isFinished(turn string) bool {
	for _, t := range th.finished {
		if t == turn {
			return true
		}
	}
	return false
}

func (th *thread) addDiff(d TurnDiff) {
	for i := range th.diffs {
		if th.diffs[i].TurnID == d.TurnID {
			th.diffs = append(th.diffs[:i], th.diffs[i+1:]...)
			break
		}
	}
	th.diffs = append(th.diffs, d)
	if len(th.diffs) > recentTurns {
		th.diffs = th.diffs[len(th.diffs)-recentTurns:]
	}
}

// fanout passes one message to the thread's subscribers without blocking.
func (a *Adapter) fanout(g *generation, threadID, typ string, data json.RawMessage, raw []byte, turnID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g.dead || !g.subs.Has(threadID) { // a dead connection's subscriptions are ending
		return
	}
	ts := a.cfg.Clock.Now()
	var meta struct {
		EmittedAtMs int64 `json:"emittedAtMs"`
	}
	if len(raw) > 0 && json.Unmarshal(raw, &meta) == nil && meta.EmittedAtMs > 0 {
		ts = time.UnixMilli(meta.EmittedAtMs)
	}
	ev := providers.NativeEvent{NativeID: threadID, Timestamp: ts, Type: typ, Data: data, TurnID: turnID}
	if g.subs.Publish(ev) > 0 { // too far behind: ended rather than drop events
		a.cfg.Logf("codex: subscriber of %s fell %d events behind; ending its stream", threadID, subscriberBuffer)
	}
}

// approvalMethods are the server requests held as permission requests.
var approvalMethods = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"item/commandExecution/requestApproval": true,
		"item/fileChange/requestApproval":       true,
		"item/permissions/requestApproval":      true,
		"applyPatchApproval":                    true,
		"execCommandApproval":                   true,
	}
}}

type approvalParams struct {
	ThreadID           string            `json:"threadId"`
	ConversationID     string            `json:"conversationId"`
	TurnID             string            `json:"turnId"`
	ItemID             string            `json:"itemId"`
	CallID             string            `json:"callId"`
	Command            json.RawMessage   `json:"command"`
	Cwd                string            `json:"cwd"`
	Reason             string            `json:"reason"`
	StartedAtMs        int64             `json:"startedAtMs"`
	AvailableDecisions []json.RawMessage `json:"availableDecisions"`
	Permissions        json.RawMessage   `json:"permissions"`
}

func (a *Adapter) onServerRequest(g *generation, req *jsonrpc.Request) {
	if !approvalMethods.Get()[req.Method] {
		// Questions to a user, dynamic tools, auth refresh: this runtime has
		// no one to ask. Answer at once so the turn does not hang, and show
		// the request in the session's events.
		_ = g.conn.ReplyError(req.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: "agent-interop-runtime does not handle " + req.Method})
		var p approvalParams
		_ = json.Unmarshal(req.Params, &p)
		if p.ThreadID != "" {
			a.fanout(g, p.ThreadID, req.Method, req.Params, req.Raw, p.TurnID)
		}
		return
	}
	var p approvalParams
	_ = json.Unmarshal(req.Params, &p)
	threadID := p.ThreadID
	if threadID == "" {
		threadID = p.ConversationID
	}
	options, answers := approvalOptions(req.Method, p)
	rid := requestKey(g, req.ID)
	requested := a.cfg.Clock.Now()
	if p.StartedAtMs > 0 {
		requested = time.UnixMilli(p.StartedAtMs)
	}
	paths, unknown := a.approvalPaths(req.Method, p, req.Params)
	perm := &permission{
		req: providers.PermissionRequest{
			Paths:        paths,
			PathsUnknown: unknown,
			Provider:     providers.Codex,
			RequestID:    rid,
			NativeID:     threadID,
			Method:       req.Method,
			Title:        approvalTitle(req.Method, p),
			Options:      options,
			RequestedAt:  requested,
			Detail:       req.Params,
		},
		gen:     g,
		rawID:   req.ID,
		answers: answers,
	}
	a.mu.Lock()
	dead := g.dead
	if !dead {
		a.perms[rid] = perm
		if threadID != "" {
			a.thread(threadID).seen = a.cfg.Clock.Now()
		}
	}
	a.mu.Unlock()
	if threadID != "" {
		data, _ := json.Marshal(map[string]any{"requestId": rid, "options": options, "params": req.Params})
		a.fanout(g, threadID, req.Method, data, req.Raw, p.TurnID)
	}
}

func approvalTitle(method string, p approvalParams) string {
	cmd := ""
	if len(p.Command) > 0 {
		var s string
		if json.Unmarshal(p.Command, &s) == nil {
			cmd = s
		} else {
			var parts []string
			if json.Unmarshal(p.Command, &parts) == nil {
				cmd = strings.Join(parts, " ")
			}
		}
	}
	var t string
	switch method {
	case "item/commandExecution/requestApproval", "execCommandApproval":
		t = "Run command"
		if cmd != "" {
			t += ": " + cmd
		}
	case "item/fileChange/requestApproval", "applyPatchApproval":
		t = "Apply file changes"
	case "item/permissions/requestApproval":
		t = "Grant additional permissions"
	default:
		t = method
	}
	if p.Reason != "" {
		t += " (" + p.Reason + ")"
	}
	return t
}

// approvalOptions lists the decisions a request offers and the response
// each one sends. Command approvals name their decisions in
// availableDecisions; the others use the schema's fixed sets.
func approvalOptions(method string, p approvalParams) ([]providers.PermissionOption, map[string]json.RawMessage) {
	var opts []providers.PermissionOption
	answers := map[string]json.RawMessage{}
	add := func(id, name, kind string, result any) {
		raw, _ := json.Marshal(result)
		opts = append(opts, providers.PermissionOption{ID: id, Name: name, Kind: kind})
		answers[id] = raw
	}
	standard := func() {
		add("accept", "Accept", "allow_once", map[string]any{"decision": "accept"})
		add("acceptForSession", "Accept for this session", "allow_always", map[string]any{"decision": "acceptForSession"})
		add("decline", "Decline (the turn continues)", "reject_once", map[string]any{"decision": "decline"})
		add("cancel", "Decline and interrupt the turn", "cancel", map[string]any{"decision": "cancel"})
	}
	switch method {
	case "item/commandExecution/requestApproval":
		if len(p.AvailableDecisions) == 0 {
			standard()
			break
		}
		for _, d := range p.AvailableDecisions {
			var s string
			if json.Unmarshal(d, &s) == nil {
				name, kind := decisionLabel(s)
				add(s, name, kind, map[string]any{"decision": s})
				continue
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(d, &obj) == nil && len(obj) == 1 {
				for k := range obj {
					name, kind := decisionLabel(k)
					add(k, name, kind, map[string]any{"decision": d})
				}
			}
		}
	case "item/fileChange/requestApproval":
		standard()
	case "item/permissions/requestApproval":
		perms := p.Permissions
		if len(perms) == 0 {
			perms = json.RawMessage(`{}`)
		}
		add("accept", "Grant for this turn", "allow_once", map[string]any{"permissions": perms, "scope": "turn"})
		add("acceptForSession", "Grant for this session", "allow_always", map[string]any{"permissions": perms, "scope": "session"})
		add("decline", "Grant nothing", "reject_once", map[string]any{"permissions": map[string]any{}})
	default: // legacy applyPatchApproval / execCommandApproval (ReviewDecision)
		add("approved", "Approve", "allow_once", map[string]any{"decision": "approved"})
		add("approved_for_session", "Approve for this session", "allow_always", map[string]any{"decision": "approved_for_session"})
		add("denied", "Deny (the agent continues)", "reject_once",
			map[string]any{"decision": map[string]any{"denied": map[string]string{"rejection": "declined through agent-interop-runtime"}}})
		add("abort", "Deny and stop", "cancel", map[string]any{"decision": "abort"})
	}
	return opts, answers
}

func decisionLabel(id string) (name, kind string) {
	switch id {
	case "accept":
		return "Accept", "allow_once"
	case "acceptForSession":
		return "Accept for this session", "allow_always"
	case "acceptWithExecpolicyAmendment":
		return "Accept and allow similar commands", "allow_always"
	case "applyNetworkPolicyAmendment":
		return "Apply the proposed network rule", "allow_always"
	case "decline":
		return "Decline (the turn continues)", "reject_once"
	case "cancel":
		return "Decline and interrupt the turn", "cancel"
	}
	return id, ""
}

// permissionResolved handles serverRequest/resolved.
func (a *Adapter) permissionResolved(g *generation, raw json.RawMessage) {
	rid := requestKey(g, raw)
	a.mu.Lock()
	p := a.perms[rid]
	if p != nil {
		delete(a.perms, rid)
		p.gen.ops.Settle(permissionRef(rid))
	}
	a.mu.Unlock()
	if p != nil && p.replied && a.cfg.Host != nil {
		a.cfg.Host.ReportOutcome(providers.Codex, p.req.NativeID, permissionRef(rid), providers.Outcome{Status: providers.StatusCompleted, Reason: "codex resolved the request"})
	}
}

func offeredIDs(opts []providers.PermissionOption) string {
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.ID
	}
	return strings.Join(ids, ", ")
}

func sortPermissions(ps []providers.PermissionRequest) {
	sort.Slice(ps, func(i, j int) bool {
		if !ps[i].RequestedAt.Equal(ps[j].RequestedAt) {
			return ps[i].RequestedAt.Before(ps[j].RequestedAt)
		}
		return ps[i].RequestID < ps[j].RequestID
	})
}

// fileChangeItem is the part of a fileChange item that names its files.
type fileChangeItem struct {
	Item struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Changes []struct {
			Path string `json:"path"`
		} `json:"changes"`
	} `json:"item"`
}

// maxRememberedItems bounds the fileChange items kept for approvals.
const maxRememberedItems = 256

// rememberFileChange keeps the paths of a fileChange item: the approval
// that follows names only the item.
func (a *Adapter) rememberFileChange(params json.RawMessage) {
	var it fileChangeItem
	if json.Unmarshal(params, &it) != nil || it.Item.Type != "fileChange" || it.Item.ID == "" {
		return
	}
	paths := make([]string, 0, len(it.Item.Changes))
	for _, c := range it.Item.Changes {
		if c.Path != "" {
			paths = append(paths, c.Path)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.itemPaths == nil || len(a.itemPaths) >= maxRememberedItems {
		a.itemPaths = map[string][]string{}
	}
	a.itemPaths[it.Item.ID] = paths
}

// approvalPaths names the files an approval would let Codex write: the
// remembered item's paths for item/fileChange/requestApproval (unknown
// when the item was not seen), the fileChanges keys of the older applyPatchApproval (with the root either
// asks to keep writing under, grantRoot), the write entries of a
// permissions grant. A command approval names none: what a command writes
// is known only once it has run, so its paths are unknown; so are a
// grant's pattern and special-path entries.
func (a *Adapter) approvalPaths(method string, p approvalParams, raw json.RawMessage) (paths []string, unknown bool) {
	var grant struct {
		GrantRoot   string                     `json:"grantRoot"`
		FileChanges map[string]json.RawMessage `json:"fileChanges"`
	}
	_ = json.Unmarshal(raw, &grant)
	switch method {
	case "item/commandExecution/requestApproval", "execCommandApproval":
		return nil, true
	case "item/fileChange/requestApproval":
		a.mu.Lock()
		remembered, ok := a.itemPaths[p.ItemID]
		a.mu.Unlock()
		if !ok { // the item was not seen (the connection began after it)
			unknown = true
		}
		paths = append([]string(nil), remembered...)
	case "applyPatchApproval":
		for path := range grant.FileChanges {
			paths = append(paths, path)
		}
		sort.Strings(paths)
	case "item/permissions/requestApproval":
		return grantedWrites(p.Permissions)
	default:
		return nil, false
	}
	if grant.GrantRoot != "" {
		paths = append(paths, grant.GrantRoot)
	}
	return paths, unknown
}

// grantedWrites are the paths a permissions request asks write access to
// (item/permissions/requestApproval: fileSystem.write, and the entries
// with access "write"). A pattern or special path (root, project roots,
// tmpdir, ...) cannot be named as files: unknown.
func grantedWrites(raw json.RawMessage) (paths []string, unknown bool) {
	var perms struct {
		FileSystem *struct {
			Write   []string `json:"write"`
			Entries []struct {
				Access string `json:"access"`
				Path   struct {
					Type string `json:"type"`
					Path string `json:"path"`
				} `json:"path"`
			} `json:"entries"`
		} `json:"fileSystem"`
	}
	if json.Unmarshal(raw, &perms) != nil || perms.FileSystem == nil {
		return nil, false
	}
	paths = append(paths, perms.FileSystem.Write...)
	for _, e := range perms.FileSystem.Entries {
		if e.Access != "write" {
			continue
		}
		if e.Path.Type == "path" && e.Path.Path != "" {
			paths = append(paths, e.Path.Path)
		} else {
			unknown = true
		}
	}
	return paths, unknown
}
