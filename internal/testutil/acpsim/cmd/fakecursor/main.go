// Command fakecursor is a simulated Cursor CLI speaking `agent acp`: ACP v1
// over stdio with Cursor's flavour (cursor_login, hyphenated permission
// option ids, agent/plan/ask modes, parameterized model ids and the blocking
// cursor/* extension requests), built from the documented protocol
// (shared/reference/cursor-freebuff-protocols.md §1). What it reproduces is
// listed in ../../CHECKLIST.md.
//
// The agent's turns are scripted by words in the prompt text (SLOWREPLY,
// PERMISSION, WRITEFILE, ASKQUESTION, CREATEPLAN, TODOS, TASK, READFILE
// <path>, UNKNOWNUPDATE, BOGUSREQUEST); anything else gets a short reply.
//
// Environment:
//
//	FAKECURSOR_AUTH=signed_out     authenticate fails, session/new needs auth
//	FAKECURSOR_BUILTINS_ASK=1      built-in writes ask permission (default: they do not)
//	FAKECURSOR_NOW=<RFC 3339>      fixed clock for updatedAt (fixtures)
//	FAKECURSOR_SLOW=<duration>     how long SLOWREPLY waits for a cancel (default 30s)
//	FAKECURSOR_MODES=<id,id,...>   the modes offered (default agent,plan,ask); a
//	                               session starts in the first (claude-agent-acp
//	                               0.101.0's flavour: auto,default,acceptEdits,plan)
//	FAKECURSOR_SET_MODE=fail       session/set_mode answers -32603
//	FAKECURSOR_LOAD_MODE=<id>      a session loaded into a process that does not have
//	                               it open reopens in this mode (claude-agent-acp
//	                               0.101.0 reopens a session with no user message
//	                               in auto, whatever mode it was switched to)
//
// Chats are stored as JSON under $HOME/.cursor/chats/<md5(cwd)>/<id>/chat.json
// so that a second process can list and load them.
package main

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"

	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "acp" {
		fmt.Fprintln(os.Stderr, "usage: fakecursor acp")
		os.Exit(2)
	}
	a := newAgent(os.Stdin, os.Stdout)
	a.run()
}

type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func methodNotFound(m string) *rpcError {
	return &rpcError{Code: -32601, Message: fmt.Sprintf("%q: %s", "Method not found", m), Data: map[string]string{"method": m}}
}

func invalidParams(msg string) *rpcError {
	return &rpcError{Code: -32602, Message: "Invalid params", Data: map[string]string{"message": msg}}
}

func zod(path, expected string) *rpcError {
	return &rpcError{Code: -32603, Message: "Internal error", Data: map[string]any{"issues": []map[string]any{{
		"code": "invalid_type", "expected": expected, "received": "undefined", "path": []string{path}, "message": "Required",
	}}}}
}

type update = map[string]any

type chat struct {
	SessionID string   `json:"sessionId"`
	CWD       string   `json:"cwd"`
	Title     string   `json:"title,omitempty"`
	UpdatedAt string   `json:"updatedAt"`
	Mode      string   `json:"mode"`
	Model     string   `json:"model"`
	Reasoning string   `json:"reasoning"`
	History   []update `json:"history"`
}

type session struct {
	chat   *chat
	cancel context.CancelFunc // of the running prompt
}

type agent struct {
	in  io.Reader
	out io.Writer

	wmu sync.Mutex

	// afters tracks the notifications a reply promised (like the
	// available_commands_update after session/new): the next request is
	// handled only once they are out, so the transcript order is fixed.
	afters sync.WaitGroup

	mu        sync.Mutex
	nextID    int
	pending   map[string]chan *message
	sessions  map[string]*session
	readText  bool
	picker    bool
	signedOut bool
	toolSeq   int
}

func newAgent(in io.Reader, out io.Writer) *agent {
	return &agent{
		in: in, out: out,
		pending:   map[string]chan *message{},
		sessions:  map[string]*session{},
		signedOut: os.Getenv("FAKECURSOR_AUTH") == "signed_out",
	}
}

func (a *agent) run() {
	sc := bufio.NewScanner(a.in)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			a.send(message{Error: &rpcError{Code: -32700, Message: "Parse error"}, ID: rawNull()})
			continue
		}
		switch {
		case m.Method == "" && m.ID != nil:
			a.mu.Lock()
			ch := a.pending[string(*m.ID)]
			delete(a.pending, string(*m.ID))
			a.mu.Unlock()
			if ch != nil {
				ch <- &m
			}
		case m.ID != nil:
			mm := m
			a.afters.Wait()
			go a.serve(&mm)
		default:
			a.notification(&m)
		}
	}
	// stdin closed: exit like the real CLI does.
	os.Exit(0)
}

func rawNull() *json.RawMessage { r := json.RawMessage("null"); return &r }

func (a *agent) send(m message) {
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	a.wmu.Lock()
	defer a.wmu.Unlock()
	_, _ = a.out.Write(append(b, '\n'))
}

func (a *agent) notify(method string, params any) {
	b, _ := json.Marshal(params)
	a.send(message{Method: method, Params: b})
}

func (a *agent) sessionUpdate(sid string, u update) {
	a.notify("session/update", map[string]any{"sessionId": sid, "update": u})
}

// request sends a request to the client and waits for its answer or ctx.
func (a *agent) request(ctx context.Context, method string, params any) (*message, error) {
	a.mu.Lock()
	a.nextID++
	id := json.RawMessage(fmt.Sprint(a.nextID))
	ch := make(chan *message, 1)
	a.pending[string(id)] = ch
	a.mu.Unlock()
	b, _ := json.Marshal(params)
	a.send(message{ID: &id, Method: method, Params: b})
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *agent) serve(m *message) {
	result, rerr, after := a.handle(m)
	reply := message{ID: m.ID}
	if rerr != nil {
		reply.Error = rerr
	} else {
		b, _ := json.Marshal(result)
		reply.Result = b
	}
	if after != nil {
		a.afters.Add(1) // before the reply: the client's next request cannot precede it
		defer a.afters.Done()
	}
	a.send(reply)
	if after != nil {
		after()
	}
}

func now() string {
	if v := os.Getenv("FAKECURSOR_NOW"); v != "" {
		return v
	}
	return time.Now().UTC().Format(time.RFC3339)
}

func (a *agent) handle(m *message) (any, *rpcError, func()) {
	switch m.Method {
	case "initialize":
		var p struct {
			ClientCapabilities struct {
				Fs struct {
					ReadTextFile bool `json:"readTextFile"`
				} `json:"fs"`
				Meta struct {
					Picker bool `json:"parameterizedModelPicker"`
				} `json:"_meta"`
			} `json:"clientCapabilities"`
		}
		_ = json.Unmarshal(m.Params, &p)
		a.mu.Lock()
		a.readText = p.ClientCapabilities.Fs.ReadTextFile
		a.picker = p.ClientCapabilities.Meta.Picker
		a.mu.Unlock()
		return json.RawMessage(initializeResult), nil, nil
	case "authenticate":
		var p struct {
			MethodID string `json:"methodId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.MethodID != "cursor_login" {
			return nil, invalidParams(fmt.Sprintf("Unknown auth method %q", p.MethodID)), nil
		}
		if a.signedOut {
			return nil, &rpcError{Code: -32602, Message: "Failed to open browser for login. Please visit: https://cursor.com/loginDeepControl?challenge=fakecursor"}, nil
		}
		return map[string]any{}, nil, nil
	case "session/new":
		return a.newSession(m.Params)
	case "session/load":
		return a.loadSession(m.Params)
	case "session/list":
		return a.listSessions(m.Params)
	case "session/prompt":
		return a.prompt(m.Params)
	case "session/set_mode":
		return a.setMode(m.Params)
	case "session/set_config_option":
		return a.setConfigOption(m.Params)
	case "session/set_model":
		return a.setModel(m.Params)
	}
	return nil, methodNotFound(m.Method), nil
}

func (a *agent) notification(m *message) {
	if m.Method != "session/cancel" {
		return // unknown notifications are ignored
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	a.mu.Lock()
	s := a.sessions[p.SessionID]
	var cancel context.CancelFunc
	if s != nil {
		cancel = s.cancel
	}
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// --- sessions --------------------------------------------------------------

const initializeResult = `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true,"sse":true},"promptCapabilities":{"audio":false,"embeddedContext":false,"image":true},"sessionCapabilities":{"list":{}}},"authMethods":[{"id":"cursor_login","name":"Cursor Login","description":"Authenticate using existing Cursor login credentials. Run 'agent login' first if not logged in."}]}`

var models = []map[string]string{
	{"modelId": "default[]", "name": "Auto"},
	{"modelId": "gpt-5.3-codex[reasoning=medium,fast=false]", "name": "GPT-5.3 Codex"},
	{"modelId": "claude-4.6-sonnet[thinking=true]", "name": "Claude 4.6 Sonnet"},
}

func modelSlug(id string) string {
	if i := strings.IndexByte(id, '['); i >= 0 {
		return id[:i]
	}
	return id
}

// modeIDs are the modes offered (FAKECURSOR_MODES, default Cursor's);
// a new session starts in the first.
func modeIDs() []string {
	if v := strings.TrimSpace(os.Getenv("FAKECURSOR_MODES")); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"agent", "plan", "ask"}
}

var modeText = map[string][2]string{
	"agent": {"Agent", "Full agent: reads, edits and runs commands"},
	"plan":  {"Plan", "Plans without editing"},
	"ask":   {"Ask", "Answers questions, read-only"},
}

func (a *agent) setup(c *chat, withID bool) map[string]any {
	var modes []map[string]string
	for _, id := range modeIDs() {
		t, ok := modeText[id]
		if !ok {
			t = [2]string{id, id + " mode"}
		}
		modes = append(modes, map[string]string{"id": id, "name": t[0], "description": t[1]})
	}
	out := map[string]any{
		"modes":         map[string]any{"currentModeId": c.Mode, "availableModes": modes},
		"models":        map[string]any{"currentModelId": currentModelID(c.Model), "availableModels": models},
		"configOptions": a.configOptions(c),
	}
	if withID {
		out["sessionId"] = c.SessionID
	}
	return out
}

func currentModelID(slug string) string {
	for _, m := range models {
		if modelSlug(m["modelId"]) == slug {
			return m["modelId"]
		}
	}
	return "default[]"
}

func modeOptions() []map[string]string {
	var out []map[string]string
	for _, id := range modeIDs() {
		name := id
		if t, ok := modeText[id]; ok {
			name = t[0]
		}
		out = append(out, map[string]string{"value": id, "name": name})
	}
	return out
}

func (a *agent) configOptions(c *chat) []map[string]any {
	opts := []map[string]any{
		{"id": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": c.Mode, "options": modeOptions()},
		{"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": c.Model,
			"options": []map[string]string{{"value": "default", "name": "Auto"}, {"value": "gpt-5.3-codex", "name": "GPT-5.3 Codex"}, {"value": "claude-4.6-sonnet", "name": "Claude 4.6 Sonnet"}}},
	}
	a.mu.Lock()
	picker := a.picker
	a.mu.Unlock()
	if picker {
		opts = append(opts, map[string]any{"id": "reasoning", "name": "Reasoning", "category": "thought_level", "type": "select", "currentValue": c.Reasoning,
			"options": []map[string]string{{"value": "low", "name": "Low"}, {"value": "medium", "name": "Medium"}, {"value": "high", "name": "High"}}})
	}
	return opts
}

func chatsDir() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cursor", "chats")
}

func chatPath(cwd, id string) string {
	sum := md5.Sum([]byte(cwd))
	return filepath.Join(chatsDir(), hex.EncodeToString(sum[:]), id, "chat.json")
}

func (a *agent) save(c *chat) {
	p := chatPath(c.CWD, c.SessionID)
	_ = os.MkdirAll(filepath.Dir(p), 0o700)
	b, _ := json.MarshalIndent(c, "", " ")
	_ = os.WriteFile(p, b, 0o600)
}

func allChats() []*chat {
	var out []*chat
	matches, _ := filepath.Glob(filepath.Join(chatsDir(), "*", "*", "chat.json"))
	for _, p := range matches {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var c chat
		if json.Unmarshal(b, &c) == nil {
			out = append(out, &c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SessionID < out[j].SessionID })
	return out
}

func (a *agent) newSession(params json.RawMessage) (any, *rpcError, func()) {
	var p struct {
		CWD        *string          `json:"cwd"`
		MCPServers *json.RawMessage `json:"mcpServers"`
	}
	_ = json.Unmarshal(params, &p)
	if p.CWD == nil {
		return nil, zod("cwd", "string"), nil
	}
	if p.MCPServers == nil || !strings.HasPrefix(strings.TrimSpace(string(*p.MCPServers)), "[") {
		return nil, zod("mcpServers", "array"), nil
	}
	if !filepath.IsAbs(*p.CWD) {
		return nil, invalidParams("cwd must be an absolute path"), nil
	}
	if a.signedOut {
		return nil, &rpcError{Code: -32000, Message: "Authentication required"}, nil
	}
	n := len(allChats()) + 1
	a.mu.Lock()
	for a.sessions[sessionID(n)] != nil {
		n++
	}
	c := &chat{SessionID: sessionID(n), CWD: *p.CWD, UpdatedAt: now(), Mode: modeIDs()[0], Model: "default", Reasoning: "medium"}
	a.sessions[c.SessionID] = &session{chat: c}
	a.mu.Unlock()
	a.save(c)
	return a.setup(c, true), nil, func() { a.sendCommands(c.SessionID) }
}

func sessionID(n int) string { return fmt.Sprintf("0c0ffee0-0000-4000-8000-%012d", n) }

func (a *agent) sendCommands(sid string) {
	a.sessionUpdate(sid, update{"sessionUpdate": "available_commands_update", "availableCommands": []map[string]any{
		{"name": "plan", "description": "Switch to plan mode"},
		{"name": "ask", "description": "Switch to ask mode"},
	}})
}

func (a *agent) loadSession(params json.RawMessage) (any, *rpcError, func()) {
	var p struct {
		SessionID  string           `json:"sessionId"`
		CWD        *string          `json:"cwd"`
		MCPServers *json.RawMessage `json:"mcpServers"`
	}
	_ = json.Unmarshal(params, &p)
	if p.CWD == nil {
		return nil, zod("cwd", "string"), nil
	}
	if p.MCPServers == nil {
		return nil, zod("mcpServers", "array"), nil
	}
	var found *chat
	for _, c := range allChats() {
		if c.SessionID == p.SessionID {
			found = c
		}
	}
	if found == nil {
		return nil, &rpcError{Code: -32602, Message: "Invalid params", Data: map[string]string{"message": fmt.Sprintf("Session %q not found", p.SessionID)}}, nil
	}
	a.mu.Lock()
	if s := a.sessions[found.SessionID]; s != nil {
		found = s.chat
	} else {
		if m := os.Getenv("FAKECURSOR_LOAD_MODE"); m != "" {
			found.Mode = m
		}
		a.sessions[found.SessionID] = &session{chat: found}
	}
	a.mu.Unlock()
	// Replay before answering; the answer omits sessionId.
	for _, u := range found.History {
		a.sessionUpdate(found.SessionID, u)
	}
	return a.setup(found, false), nil, nil
}

func (a *agent) listSessions(params json.RawMessage) (any, *rpcError, func()) {
	var p struct {
		CWD string `json:"cwd"`
	}
	_ = json.Unmarshal(params, &p)
	if os.Getenv("FAKECURSOR_LIST") == "auth-required" {
		// As codex-acp 0.16.0 in a home where nobody has signed in.
		return nil, &rpcError{Code: -32000, Message: "Authentication required"}, nil
	}
	if p.CWD == "" && os.Getenv("FAKECURSOR_LIST") == "own-dir" {
		// As Qwen Code and opencode: without a cwd, the sessions of the
		// directory the agent runs in only.
		p.CWD, _ = os.Getwd()
	}
	list := []map[string]any{}
	for _, c := range allChats() {
		if p.CWD != "" && c.CWD != p.CWD {
			continue
		}
		list = append(list, map[string]any{"sessionId": c.SessionID, "cwd": c.CWD, "title": c.Title, "updatedAt": c.UpdatedAt})
	}
	return map[string]any{"sessions": list}, nil, nil
}

func (a *agent) lookup(sid string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[sid]
}

func (a *agent) setMode(params json.RawMessage) (any, *rpcError, func()) {
	var p struct {
		SessionID string `json:"sessionId"`
		ModeID    string `json:"modeId"`
	}
	_ = json.Unmarshal(params, &p)
	s := a.lookup(p.SessionID)
	if s == nil {
		return nil, invalidParams(fmt.Sprintf("Session %q not found", p.SessionID)), nil
	}
	if !slices.Contains(modeIDs(), p.ModeID) {
		return nil, invalidParams(fmt.Sprintf("Unknown mode %q", p.ModeID)), nil
	}
	if os.Getenv("FAKECURSOR_SET_MODE") == "fail" {
		return nil, &rpcError{Code: -32603, Message: "Internal error: set mode failed"}, nil
	}
	a.mu.Lock()
	s.chat.Mode = p.ModeID
	a.mu.Unlock()
	a.save(s.chat)
	return map[string]any{}, nil, func() {
		a.sessionUpdate(p.SessionID, update{"sessionUpdate": "current_mode_update", "currentModeId": p.ModeID})
	}
}

func (a *agent) setConfigOption(params json.RawMessage) (any, *rpcError, func()) {
	var p struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Value     json.RawMessage `json:"value"`
	}
	_ = json.Unmarshal(params, &p)
	s := a.lookup(p.SessionID)
	if s == nil {
		return nil, invalidParams(fmt.Sprintf("Session %q not found", p.SessionID)), nil
	}
	var v string
	_ = json.Unmarshal(p.Value, &v)
	var target *string
	for _, o := range a.configOptions(s.chat) {
		if o["id"] != p.ConfigID {
			continue
		}
		ok := false
		for _, c := range o["options"].([]map[string]string) {
			ok = ok || c["value"] == v
		}
		if !ok {
			return nil, invalidParams(fmt.Sprintf("Invalid value %q for %s", v, p.ConfigID)), nil
		}
		switch p.ConfigID {
		case "mode":
			target = &s.chat.Mode
		case "model":
			target = &s.chat.Model
		case "reasoning":
			target = &s.chat.Reasoning
		}
	}
	if target == nil {
		return nil, invalidParams(fmt.Sprintf("Unknown config option %q", p.ConfigID)), nil
	}
	a.mu.Lock()
	*target = v
	a.mu.Unlock()
	a.save(s.chat)
	return map[string]any{"configOptions": a.configOptions(s.chat)}, nil, nil
}

func (a *agent) setModel(params json.RawMessage) (any, *rpcError, func()) {
	var p struct {
		SessionID string `json:"sessionId"`
		ModelID   string `json:"modelId"`
	}
	_ = json.Unmarshal(params, &p)
	s := a.lookup(p.SessionID)
	if s == nil {
		return nil, invalidParams(fmt.Sprintf("Session %q not found", p.SessionID)), nil
	}
	for _, m := range models {
		if m["modelId"] == p.ModelID {
			a.mu.Lock()
			s.chat.Model = modelSlug(p.ModelID)
			a.mu.Unlock()
			a.save(s.chat)
			return map[string]any{}, nil, nil
		}
	}
	return nil, invalidParams(fmt.Sprintf("Model %q is not a valid model id; use a parameterized id such as %q", p.ModelID, models[0]["modelId"])), nil
}

// --- prompts -----------------------------------------------------------------

type turn struct {
	a       *agent
	ctx     context.Context
	sid     string
	cwd     string
	mode    string
	history []update
	reply   strings.Builder
}

func (t *turn) update(u update, keep bool) {
	t.a.sessionUpdate(t.sid, u)
	if keep {
		t.history = append(t.history, u)
	}
}

// say streams text in 2-4 character chunks, as Cursor does.
func (t *turn) say(text string) {
	t.reply.WriteString(text)
	for i := 0; i < len(text); {
		n := 2 + i%3
		if i+n > len(text) {
			n = len(text) - i
		}
		t.update(update{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": text[i : i+n]}}, false)
		i += n
	}
}

func (t *turn) think(text string) {
	t.update(update{"sessionUpdate": "agent_thought_chunk", "content": map[string]string{"type": "text", "text": text}}, false)
}

func (t *turn) toolID() string {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	t.a.toolSeq++
	return fmt.Sprintf("tool_%d", t.a.toolSeq)
}

func (a *agent) prompt(params json.RawMessage) (any, *rpcError, func()) {
	var p struct {
		SessionID string `json:"sessionId"`
		Prompt    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"prompt"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Prompt == nil {
		return nil, zod("prompt", "array"), nil
	}
	s := a.lookup(p.SessionID)
	if s == nil {
		return nil, invalidParams(fmt.Sprintf("Session %q not found", p.SessionID)), nil
	}
	var text strings.Builder
	for _, b := range p.Prompt {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	if s.cancel != nil {
		a.mu.Unlock()
		cancel()
		return nil, &rpcError{Code: -32603, Message: "Internal error", Data: map[string]string{"details": "A prompt is already running for this session"}}, nil
	}
	s.cancel = cancel
	c := s.chat
	t := &turn{a: a, ctx: ctx, sid: p.SessionID, cwd: c.CWD, mode: c.Mode}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		s.cancel = nil
		a.mu.Unlock()
		cancel()
	}()

	stop := t.script(text.String())

	a.mu.Lock()
	c.History = append(c.History, update{"sessionUpdate": "user_message_chunk", "content": map[string]string{"type": "text", "text": text.String()}})
	c.History = append(c.History, t.history...)
	if t.reply.Len() > 0 {
		c.History = append(c.History, update{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": t.reply.String()}})
	}
	c.UpdatedAt = now()
	firstTitle := c.Title == ""
	if firstTitle {
		c.Title = title(text.String())
	}
	a.mu.Unlock()
	a.save(c)
	if firstTitle {
		a.sessionUpdate(p.SessionID, update{"sessionUpdate": "session_info_update", "title": c.Title})
	}
	return map[string]string{"stopReason": stop}, nil, nil
}

func title(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

func (t *turn) cancelled() bool { return t.ctx.Err() != nil }

// script runs the scripted turn and returns the stopReason.
func (t *turn) script(text string) string {
	switch {
	case strings.Contains(text, "SLOWREPLY"):
		t.say("Working")
		wait := 30 * time.Second
		if d, err := time.ParseDuration(os.Getenv("FAKECURSOR_SLOW")); err == nil {
			wait = d
		}
		select {
		case <-t.ctx.Done():
			return "cancelled"
		case <-time.After(wait):
			t.say(" done.")
			return "end_turn"
		}
	case strings.Contains(text, "PERMISSION"):
		return t.permissionTool()
	case strings.Contains(text, "WRITEFILE"):
		return t.writeFile()
	case strings.Contains(text, "ASKQUESTION"):
		return t.askQuestion()
	case strings.Contains(text, "CREATEPLAN"):
		return t.createPlan()
	case strings.Contains(text, "TODOS"):
		return t.todos()
	case strings.Contains(text, "TASK"):
		t.a.notify("cursor/task", map[string]any{"toolCallId": t.toolID(), "description": "Explore the repo", "prompt": "List the files", "subagentType": "explore"})
		t.say("Task started.")
		return "end_turn"
	case strings.Contains(text, "READFILE"):
		return t.readFile(text)
	case strings.Contains(text, "UNKNOWNUPDATE"):
		t.update(update{"sessionUpdate": "future_widget_update", "content": map[string]string{"type": "text", "text": "not a user message"}, "widget": map[string]int{"id": 1}}, false)
		t.update(update{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "hologram", "uri": "holo://1"}}, false)
		t.say("Sent an unknown update.")
		return "end_turn"
	case strings.Contains(text, "BOGUSREQUEST"):
		m, err := t.a.request(t.ctx, "cursor/not_a_real_method", map[string]any{"toolCallId": t.toolID()})
		if err != nil {
			return "cancelled"
		}
		if m.Error != nil {
			t.say(fmt.Sprintf("Client answered %d.", m.Error.Code))
		} else {
			t.say("Client answered a result.")
		}
		return "end_turn"
	}
	t.think("Thinking about it.")
	t.say("Hello from fake cursor.")
	return "end_turn"
}

// permissionOptions are Cursor's hyphenated ids with snake_case kinds.
var permissionOptions = []map[string]string{
	{"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
	{"optionId": "allow-always", "name": "Allow always", "kind": "allow_always"},
	{"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
}

// askPermission sends session/request_permission and returns the chosen
// option id, or "" for cancelled (a flat reply counts as a cancel). After a
// session/cancel it still waits (up to 5 s) for the client's "cancelled".
func (t *turn) askPermission(toolCall update) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-t.ctx.Done():
			time.Sleep(5 * time.Second)
			cancel()
		case <-ctx.Done():
		}
	}()
	m, err := t.a.request(ctx, "session/request_permission", map[string]any{"sessionId": t.sid, "toolCall": toolCall, "options": permissionOptions})
	if err != nil || m.Error != nil {
		return ""
	}
	var r struct {
		Outcome json.RawMessage `json:"outcome"`
	}
	_ = json.Unmarshal(m.Result, &r)
	var o struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	}
	if json.Unmarshal(r.Outcome, &o) != nil || o.Outcome != "selected" {
		return ""
	}
	return o.OptionID
}

func (t *turn) permissionTool() string {
	id := t.toolID()
	tc := update{"toolCallId": id, "title": "srv-tool: tool", "kind": "other", "status": "pending",
		"content": []map[string]any{{"type": "content", "content": map[string]string{"type": "text", "text": "Run srv-tool"}}}}
	t.update(update{"sessionUpdate": "tool_call", "toolCallId": id, "title": "srv-tool: tool", "kind": "other", "status": "pending"}, true)
	choice := t.askPermission(tc)
	switch {
	case t.cancelled() || choice == "":
		t.update(update{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed", "rawOutput": map[string]bool{"cancelled": true}}, true)
		return "cancelled"
	case strings.HasPrefix(choice, "allow"):
		t.update(update{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed", "rawOutput": map[string]bool{"ok": true}}, true)
		t.say("Tool ran.")
	default:
		t.update(update{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed", "rawOutput": map[string]bool{"rejected": true}}, true)
		t.say("Tool was rejected.")
	}
	return "end_turn"
}

func (t *turn) writeFile() string {
	id := t.toolID()
	path := filepath.Join(t.cwd, "hello.txt")
	t.update(update{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Write hello.txt", "kind": "edit", "status": "pending",
		"locations": []map[string]string{{"path": path}}}, true)
	if t.mode == "plan" || t.mode == "ask" {
		t.update(update{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed", "rawOutput": map[string]string{"error": t.mode + " mode: writes are blocked"}}, true)
		t.say("Writes are blocked in " + t.mode + " mode.")
		return "end_turn"
	}
	if os.Getenv("FAKECURSOR_BUILTINS_ASK") == "1" {
		choice := t.askPermission(update{"toolCallId": id, "title": "Write hello.txt", "kind": "edit", "status": "pending"})
		if t.cancelled() || choice == "" {
			return "cancelled"
		}
		if !strings.HasPrefix(choice, "allow") {
			t.update(update{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed", "rawOutput": map[string]bool{"rejected": true}}, true)
			t.say("Write rejected.")
			return "end_turn"
		}
	}
	if err := os.WriteFile(path, []byte("hello from fake cursor\n"), 0o644); err != nil {
		t.update(update{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed", "rawOutput": map[string]string{"error": err.Error()}}, true)
		return "end_turn"
	}
	t.update(update{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed", "rawOutput": map[string]any{"bytes": 23}}, true)
	t.say("Wrote hello.txt.")
	return "end_turn"
}

// extension sends a blocking cursor/* request. An error answer (such as
// -32601) leaves the turn stalled until it is cancelled, as the real agent
// does.
func (t *turn) extension(method string, params any) (json.RawMessage, bool) {
	m, err := t.a.request(t.ctx, method, params)
	if err != nil {
		return nil, false
	}
	if m.Error != nil {
		<-t.ctx.Done()
		return nil, false
	}
	var r struct {
		Outcome json.RawMessage `json:"outcome"`
	}
	_ = json.Unmarshal(m.Result, &r)
	return r.Outcome, true
}

func (t *turn) askQuestion() string {
	out, ok := t.extension("cursor/ask_question", map[string]any{
		"toolCallId": t.toolID(), "title": "Pick a colour",
		"questions": []map[string]any{{"id": "q1", "prompt": "Which colour?", "allowMultiple": false,
			"options": []map[string]string{{"id": "red", "label": "Red"}, {"id": "blue", "label": "Blue"}}}},
	})
	if !ok {
		return "cancelled"
	}
	var o struct {
		Outcome string `json:"outcome"`
		Answers []struct {
			QuestionID        string   `json:"questionId"`
			SelectedOptionIDs []string `json:"selectedOptionIds"`
		} `json:"answers"`
	}
	_ = json.Unmarshal(out, &o)
	switch o.Outcome {
	case "answered":
		var picked []string
		for _, a := range o.Answers {
			picked = append(picked, a.SelectedOptionIDs...)
		}
		t.say("You chose " + strings.Join(picked, ",") + ".")
	case "skipped":
		t.say("Question skipped.")
	default:
		return "cancelled"
	}
	return "end_turn"
}

func (t *turn) createPlan() string {
	out, ok := t.extension("cursor/create_plan", map[string]any{
		"toolCallId": t.toolID(), "name": "Refactor", "overview": "Split the module",
		"plan": "1. Move code\n2. Update imports", "isProject": false,
		"todos": []map[string]string{{"id": "t1", "content": "Move code", "status": "pending"}, {"id": "t2", "content": "Update imports", "status": "pending"}},
	})
	if !ok {
		return "cancelled"
	}
	var o struct {
		Outcome string `json:"outcome"`
	}
	_ = json.Unmarshal(out, &o)
	switch o.Outcome {
	case "accepted":
		t.say("Plan accepted.")
	case "rejected":
		t.say("Plan rejected.")
	default:
		return "cancelled"
	}
	return "end_turn"
}

func (t *turn) todos() string {
	todos := []map[string]string{{"id": "t1", "content": "Write tests", "status": "in_progress"}}
	t.a.notify("cursor/update_todos", map[string]any{"toolCallId": t.toolID(), "todos": todos, "merge": false})
	m, err := t.a.request(t.ctx, "cursor/update_todos", map[string]any{"toolCallId": t.toolID(), "todos": todos, "merge": true})
	if err != nil {
		return "cancelled"
	}
	if m.Error != nil {
		t.say(fmt.Sprintf("Todos refused (%d).", m.Error.Code))
		return "end_turn"
	}
	t.say("Todos updated.")
	return "end_turn"
}

func (t *turn) readFile(text string) string {
	t.a.mu.Lock()
	can := t.a.readText
	t.a.mu.Unlock()
	if !can {
		t.say("Client cannot read files.")
		return "end_turn"
	}
	rel := ""
	if f := strings.Fields(text[strings.Index(text, "READFILE")+len("READFILE"):]); len(f) > 0 {
		rel = f[0]
	}
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(t.cwd, rel)
	}
	m, err := t.a.request(t.ctx, "fs/read_text_file", map[string]any{"sessionId": t.sid, "path": path, "line": 1, "limit": 5})
	if err != nil {
		return "cancelled"
	}
	if m.Error != nil {
		t.say(fmt.Sprintf("Read failed (%d): %s", m.Error.Code, m.Error.Message))
		return "end_turn"
	}
	var r struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(m.Result, &r)
	t.say("Read: " + r.Content)
	return "end_turn"
}
