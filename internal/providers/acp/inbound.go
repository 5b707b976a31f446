package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agent-interop/runtime/internal/providers"
)

// handleNotification maps the agent's notifications to events. session/update
// becomes an event typed by its sessionUpdate kind whose data is the raw
// update object; any other notification becomes an event typed by its method
// with the raw params, for the session it names (or the one session with a
// prompt in flight).
func (c *Client) handleNotification(method string, params json.RawMessage) {
	if method == "session/update" {
		var p struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		}
		if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
			c.log.Debug("malformed session/update", "params", string(params))
			return
		}
		var k struct {
			Kind string `json:"sessionUpdate"`
		}
		_ = json.Unmarshal(p.Update, &k)
		kind := k.Kind
		if kind == "" {
			kind = "session/update" // no kind given: keep it raw under the method name
		}
		turn := ""
		if s := c.lookup(p.SessionID); s != nil {
			s.observe(kind, p.Update, c.clock.Now())
			if t := s.turn(); t != nil {
				turn = t.ID
			}
		}
		if c.cfg.Observe != nil {
			c.cfg.Observe(p.SessionID, kind, p.Update, turn)
		}
		c.emit(p.SessionID, kind, p.Update)
		return
	}
	if sid := c.sessionFor(params); sid != "" {
		c.emit(sid, method, params)
		return
	}
	c.log.Debug("notification not attributable to a session", "method", method)
}

// sessionFor finds the session an inbound message belongs to: its sessionId
// param, else the only session with a prompt in flight.
func (c *Client) sessionFor(params json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) == nil && p.SessionID != "" {
		return p.SessionID
	}
	return c.ActiveSession()
}

// ActiveSession returns the id of the only session with a prompt in flight,
// or "" when there is none or more than one.
func (c *Client) ActiveSession() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	found := ""
	for id, s := range c.sessions {
		if s.turn() != nil {
			if found != "" {
				return ""
			}
			found = id
		}
	}
	return found
}

func (c *Client) handleRequest(ctx context.Context, method string, params json.RawMessage) (any, *RPCError) {
	switch method {
	case "session/request_permission":
		return c.requestPermission(ctx, params)
	case "fs/read_text_file":
		if !c.cfg.NoFileReads {
			return c.readTextFile(params)
		}
	}
	if c.cfg.Extension != nil {
		if res, rerr, handled := c.cfg.Extension(ctx, Inbound{Client: c, Method: method, Params: params}); handled {
			return res, rerr
		}
	}
	return nil, methodNotFound(method)
}

func (c *Client) requestPermission(ctx context.Context, params json.RawMessage) (any, *RPCError) {
	var p struct {
		SessionID string             `json:"sessionId"`
		ToolCall  json.RawMessage    `json:"toolCall"`
		Options   []permissionOption `json:"options"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, invalidParams("session/request_permission needs sessionId, toolCall and options")
	}
	title, paths := permissionTarget(p.ToolCall)
	opts := make([]providers.PermissionOption, 0, len(p.Options))
	for _, o := range p.Options {
		opts = append(opts, providers.PermissionOption{ID: o.OptionID, Name: o.Name, Kind: o.Kind})
	}
	c.observeToolCall(p.SessionID, p.ToolCall)
	c.emit(p.SessionID, "session/request_permission", params)
	// The request is held (listed, answerable) only once the subscribers
	// took the updates that came before it, such as its tool_call.
	if s := c.lookup(p.SessionID); s != nil {
		s.awaitDelivery(c.clock)
	}
	d, err := c.Hold(ctx, p.SessionID, "session/request_permission", title, opts, json.RawMessage(params), paths)
	if err != nil {
		return nil, &RPCError{Code: CodeInternalError, Message: "Internal error: " + err.Error()}
	}
	if d.Cancelled {
		return d.Ack(sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}), nil
	}
	return d.Ack(sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(d.Option.ID))}), nil
}

// observeToolCall hands the tool call of a permission request to the
// Observe hook as the tool_call_update it is in ACP: an agent may carry the
// edit's diff content there only (opencode acp puts it in the request and
// ends the call without it), and the call's later updates complete it.
func (c *Client) observeToolCall(sessionID string, toolCall json.RawMessage) {
	if c.cfg.Observe == nil || len(toolCall) == 0 {
		return
	}
	turn := ""
	if s := c.lookup(sessionID); s != nil {
		if t := s.turn(); t != nil {
			turn = t.ID
		}
	}
	c.cfg.Observe(sessionID, "tool_call_update", toolCall, turn)
}

// permissionTarget reads the title of a permission request's tool call and
// the paths it would let the agent write: its locations and the file path
// of its raw input for an edit, delete or move (or a call of no kind), and
// Unknown for a command, whose writes are known only once it has run (a
// claim cannot be checked against it). Other kinds write nothing.
func permissionTarget(toolCall json.RawMessage) (string, Paths) {
	var tc struct {
		Title     string `json:"title"`
		Kind      string `json:"kind"`
		Locations []struct {
			Path string `json:"path"`
		} `json:"locations"`
		RawInput struct {
			FilePath     string `json:"file_path"`
			Path         string `json:"path"`
			NotebookPath string `json:"notebook_path"`
			// opencode's filePath (and its permission metadata's
			// filepath: names match case-insensitively).
			CamelPath string `json:"filePath"`
		} `json:"rawInput"`
	}
	_ = json.Unmarshal(toolCall, &tc)
	var paths Paths
	switch tc.Kind {
	case "execute":
		paths.Unknown = true
	case "edit", "delete", "move", "":
		seen := map[string]bool{}
		add := func(p string) {
			if p != "" && !seen[p] {
				seen[p] = true
				paths.Known = append(paths.Known, p)
			}
		}
		for _, l := range tc.Locations {
			add(l.Path)
		}
		add(tc.RawInput.FilePath)
		add(tc.RawInput.Path)
		add(tc.RawInput.NotebookPath)
		add(tc.RawInput.CamelPath)
	}
	return tc.Title, paths
}

// --- held requests ---------------------------------------------------------

// Paths is what a held request would let the agent write: the files it
// names, or Unknown when that is known only once it has run (a command).
type Paths struct {
	Known   []string
	Unknown bool
}

// Decision is how a held request was answered: one of its options, or
// cancelled.
type Decision struct {
	Option    *providers.PermissionOption
	Cancelled bool
	written   chan error
}

// Ack wraps the reply to a held request so that Respond returns once the
// reply was written. An extension handler returns Ack(result) as its result.
func (d Decision) Ack(result any) any {
	if d.written == nil {
		return result
	}
	return ackedResult{result: result, written: d.written}
}

// ackedResult is a reply whose write outcome is reported on written.
type ackedResult struct {
	result  any
	written chan error
}

type held struct {
	req       providers.PermissionRequest
	sessionID string
	answer    chan Decision
}

// Hold registers a request that waits for a decision (a permission request,
// or an extension's blocking question), until Respond or Cancel answers it
// or the connection ends. It is never answered automatically.
// paths are the files the request would edit (see providers.PermissionRequest).
func (c *Client) Hold(ctx context.Context, sessionID, method, title string, options []providers.PermissionOption, detail any, paths Paths) (Decision, error) {
	c.mu.Lock()
	c.heldSeq++
	id := c.tag + "-" + strconv.Itoa(c.heldSeq)
	h := &held{
		req: providers.PermissionRequest{
			Provider: c.cfg.Provider, RequestID: id, NativeID: sessionID, Method: method,
			Title: title, Options: options, RequestedAt: c.clock.Now(), Detail: detail, Paths: paths.Known, PathsUnknown: paths.Unknown,
		},
		sessionID: sessionID,
		answer:    make(chan Decision, 1),
	}
	c.held[id] = h
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.held, id)
		c.mu.Unlock()
	}()
	select {
	case d := <-h.answer:
		return d, nil
	case <-ctx.Done():
		return Decision{}, fmt.Errorf("request %s abandoned: %w", id, ctx.Err())
	}
}

// Pending lists the held requests, oldest first.
func (c *Client) Pending() []providers.PermissionRequest {
	c.mu.Lock()
	out := make([]providers.PermissionRequest, 0, len(c.held))
	for _, h := range c.held {
		out = append(out, h.req)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].RequestedAt.Equal(out[j].RequestedAt) {
			return out[i].RequestedAt.Before(out[j].RequestedAt)
		}
		return out[i].RequestID < out[j].RequestID
	})
	return out
}

// ErrUnknownRequest says no held request has the given id.
var ErrUnknownRequest = errors.New("no pending request with that id")

// DecisionError says a decision names neither an offered option kind nor id.
type DecisionError struct {
	Decision string
	Kinds    []string
	IDs      []string
}

func (e *DecisionError) Error() string {
	return fmt.Sprintf("decision %q is not offered; offered kinds: %s (option ids: %s), or cancelled",
		e.Decision, strings.Join(e.Kinds, ", "), strings.Join(e.IDs, ", "))
}

// Respond answers a held request. decision is an offered option KIND
// (allow_once, allow_always, reject_once, reject_always, ...), else an
// offered option id, else "cancelled". Anything else is refused with a
// *DecisionError naming the offered kinds, and nothing is written. It
// returns once the reply was written (a *NotWrittenError if it could not
// be); sessionID, when not empty, must match the request's session.
func (c *Client) Respond(ctx context.Context, sessionID, requestID, decision string) (Decision, error) {
	c.mu.Lock()
	h := c.held[requestID]
	if h == nil || (sessionID != "" && h.sessionID != "" && h.sessionID != sessionID) {
		c.mu.Unlock()
		return Decision{}, &NotWrittenError{Err: fmt.Errorf("%w: %s", ErrUnknownRequest, requestID)}
	}
	d, err := resolveDecision(h.req.Options, decision)
	if err != nil {
		c.mu.Unlock()
		return Decision{}, &NotWrittenError{Err: err}
	}
	delete(c.held, requestID) // answered once only
	c.mu.Unlock()
	d.written = make(chan error, 1)
	h.answer <- d
	select {
	case err := <-d.written:
		if err != nil {
			return d, err
		}
		return d, nil
	case <-c.conn.Done():
		return d, fmt.Errorf("replying to %s: %w: %w", requestID, ErrConnectionClosed, c.conn.Err())
	case <-ctx.Done():
		return d, fmt.Errorf("waiting for the reply to be written: %w", ctx.Err())
	}
}

func resolveDecision(options []providers.PermissionOption, decision string) (Decision, error) {
	for i := range options {
		if options[i].Kind != "" && options[i].Kind == decision {
			o := options[i]
			return Decision{Option: &o}, nil
		}
	}
	for i := range options {
		if options[i].ID == decision {
			o := options[i]
			return Decision{Option: &o}, nil
		}
	}
	if decision == "cancelled" {
		return Decision{Cancelled: true}, nil
	}
	e := &DecisionError{Decision: decision}
	for _, o := range options {
		if o.Kind != "" && !contains(e.Kinds, o.Kind) {
			e.Kinds = append(e.Kinds, o.Kind)
		}
		e.IDs = append(e.IDs, o.ID)
	}
	return Decision{}, e
}

// cancelHeld answers the session's held requests with "cancelled".
func (c *Client) cancelHeld(sessionID string) {
	c.mu.Lock()
	var hs []*held
	for id, h := range c.held {
		if h.sessionID == sessionID {
			hs = append(hs, h)
			delete(c.held, id)
		}
	}
	c.mu.Unlock()
	for _, h := range hs {
		h.answer <- Decision{Cancelled: true}
	}
}

// dropHeld forgets every held request (the connection ended).
func (c *Client) dropHeld() {
	c.mu.Lock()
	c.held = make(map[string]*held)
	c.mu.Unlock()
}

// --- fs/read_text_file -------------------------------------------------------

func (c *Client) readTextFile(params json.RawMessage) (any, *RPCError) {
	var p struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
		Line      *int   `json:"line"`
		Limit     *int   `json:"limit"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" || p.Path == "" {
		return nil, invalidParams("fs/read_text_file needs sessionId and path")
	}
	s := c.lookup(p.SessionID)
	if s == nil {
		return nil, invalidParams(fmt.Sprintf("session %s is not open in this client", p.SessionID))
	}
	s.mu.Lock()
	root := s.cwd
	s.mu.Unlock()
	if root == "" {
		return nil, invalidParams("the session has no recorded workspace")
	}
	line, limit := 0, 0
	if p.Line != nil {
		line = *p.Line
	}
	if p.Limit != nil {
		limit = *p.Limit
	}
	text, err := c.cfg.FileReader.ReadText(root, p.Path, line, limit)
	if err != nil {
		if errors.Is(err, ErrFileNotFound) {
			data, _ := json.Marshal(map[string]string{"path": p.Path, "details": err.Error()})
			return nil, &RPCError{Code: CodeNotFound, Message: "Resource not found", Data: data}
		}
		return nil, invalidParams(err.Error())
	}
	return sdk.ReadTextFileResponse{Content: text}, nil
}
