package freebuffsim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AuthProfile selects how a Desktop version answers a missing or wrong
// x-freebuff-launch-id.
type AuthProfile int

const (
	// AuthLatest guards every route: 401
	// {"error":{"kind":"bad_request","message":"missing or invalid token"}}.
	AuthLatest AuthProfile = iota
	// AuthV0156 guards every route: 401 {"error":"unauthorized"}.
	AuthV0156
	// AuthV0124 leaves GETs open; a write with a wrong header gets 403
	// {"error":"forbidden"} and /healthz with a wrong one 401
	// {"error":"invalid launch id"}.
	AuthV0124
)

// TurnMode selects what a prompt does.
type TurnMode int

const (
	// TurnComplete runs the turn at once: running, agent text and finish
	// frames, then idle with lastTurnOutcome "closed".
	TurnComplete TurnMode = iota
	// TurnFail ends the turn with an agent error frame and outcome "error".
	TurnFail
	// TurnNever queues the prompt as an item that never runs.
	TurnNever
	// TurnHold starts the turn (running) and finishes it on ReleaseTurns.
	TurnHold
	// TurnEmpty runs a turn that ends "closed" without text or a tool call.
	TurnEmpty
)

// HeaderLaunchID is the authorization header.
const HeaderLaunchID = "x-freebuff-launch-id"

// DefaultModels are the models the simulated harness accepts.
var DefaultModels = []string{"z-ai/glm-5.3-flash", "anthropic/claude-sonnet-4.5", "openai/gpt-5.1"}

// Options configure a Desktop.
type Options struct {
	LaunchID string        // default: a random UUID
	Auth     AuthProfile   // default AuthLatest
	Port     int           // 0: an ephemeral port
	Pings    time.Duration // keep-alive comment interval; 0: none
	Models   []string      // default DefaultModels
	PID      int           // reported by /healthz; default os.Getpid()
}

// Request is one recorded write.
type Request struct {
	Method   string
	Path     string
	Body     string
	LaunchID string
	Status   int
}

// Message is one thread message.
type Message struct {
	Role string
	Text string
}

type thread struct {
	ID, ProjectPath, Title, Status, HarnessID, Model, AgentMode, TurnState, LastTurnOutcome, LastError string
	ReasoningEffort                                                                                    *string
	QueuePaused, Stopping, Draft                                                                       bool
	LastTurnFinishedAt, CreatedAt, UpdatedAt, LastPromptAt                                             int64
	Messages                                                                                           []Message
	Items                                                                                              []map[string]any
}

func (t *thread) json() map[string]any {
	var effort any
	if t.ReasoningEffort != nil {
		effort = *t.ReasoningEffort
	}
	m := map[string]any{
		"id": t.ID, "projectId": t.ProjectPath, "projectPath": t.ProjectPath, "title": t.Title, "status": t.Status,
		"harnessId": t.HarnessID, "model": t.Model, "reasoningEffort": effort, "agentMode": t.AgentMode,
		"turnState": t.TurnState, "queuePaused": t.QueuePaused, "stopping": t.Stopping,
		"createdAt": t.CreatedAt, "updatedAt": t.UpdatedAt,
	}
	if t.LastTurnOutcome != "" {
		m["lastTurnOutcome"] = t.LastTurnOutcome
		m["lastTurnFinishedAt"] = t.LastTurnFinishedAt
	}
	if t.LastPromptAt > 0 {
		m["lastPromptAt"] = t.LastPromptAt
	}
	if t.Draft {
		m["draft"] = true
	}
	return m
}

type sseClient struct {
	frames chan string
	drop   chan struct{}
}

// Desktop is a simulated Freebuff Desktop orchestrator.
type Desktop struct {
	opts Options

	mu          sync.Mutex
	launchID    string
	ln          net.Listener
	srv         *http.Server
	url         string
	projects    []string
	threads     map[string]*thread
	order       []string
	history     []string
	clients     map[*sseClient]struct{}
	seq         map[string]int
	turnMode    TurnMode
	held        []string
	requests    []Request
	cutNext     int
	hangNext    int
	hangRelease chan struct{}
	refuseNext  int
	beforeWrite func()
	nextID      int
	lastFinish  int64
	wg          sync.WaitGroup
}

// NewDesktop starts a simulated Desktop on 127.0.0.1.
func NewDesktop(opts Options) (*Desktop, error) {
	if opts.LaunchID == "" {
		opts.LaunchID = newUUID()
	}
	if len(opts.Models) == 0 {
		opts.Models = DefaultModels
	}
	if opts.PID == 0 {
		opts.PID = os.Getpid()
	}
	d := &Desktop{
		opts: opts, launchID: opts.LaunchID, threads: map[string]*thread{},
		clients: map[*sseClient]struct{}{}, seq: map[string]int{}, hangRelease: make(chan struct{}),
	}
	if err := d.listen(opts.Port); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Desktop) listen(port int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("freebuffsim: listen: %w", err)
	}
	srv := &http.Server{Handler: d.handler(), ReadHeaderTimeout: 5 * time.Second}
	d.mu.Lock()
	d.ln, d.srv = ln, srv
	d.url = "http://" + ln.Addr().String()
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		_ = srv.Serve(ln)
	}()
	return nil
}

// URL returns the base URL (http://127.0.0.1:<port>).
func (d *Desktop) URL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.url
}

// Port returns the listening port.
func (d *Desktop) Port() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ln.Addr().(*net.TCPAddr).Port
}

// LaunchID returns the current launch id.
func (d *Desktop) LaunchID() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.launchID
}

// SetLaunchID replaces the launch id (the stdin bootstrap of fakedesktop).
func (d *Desktop) SetLaunchID(id string) {
	d.mu.Lock()
	d.launchID = id
	d.mu.Unlock()
}

// RotateLaunchID gives the Desktop a new launch id and returns it.
func (d *Desktop) RotateLaunchID() string {
	id := newUUID()
	d.SetLaunchID(id)
	return id
}

// Restart stops the server and starts it again on a new ephemeral port with
// a new launch id, dropping every event client and the replay history, as a
// relaunched app does. Threads survive (they live in the project database).
func (d *Desktop) Restart() error {
	d.mu.Lock()
	srv := d.srv
	d.mu.Unlock()
	d.DropClients()
	_ = srv.Close()
	d.mu.Lock()
	d.launchID = newUUID()
	d.history, d.seq = nil, map[string]int{}
	d.mu.Unlock()
	return d.listen(0)
}

// Close stops the server and every event stream.
func (d *Desktop) Close() {
	d.mu.Lock()
	srv := d.srv
	d.mu.Unlock()
	d.DropClients()
	d.ReleaseTurns()
	_ = srv.Close()
	d.wg.Wait()
}

// DropClients disconnects every event-stream client.
func (d *Desktop) DropClients() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.clients {
		close(c.drop)
		delete(d.clients, c)
	}
}

// Clients returns the number of connected event-stream clients.
func (d *Desktop) Clients() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.clients)
}

// SetTurnMode sets what the next prompts do.
func (d *Desktop) SetTurnMode(m TurnMode) {
	d.mu.Lock()
	d.turnMode = m
	d.mu.Unlock()
}

// ReleaseTurns finishes every held turn.
func (d *Desktop) ReleaseTurns() {
	d.mu.Lock()
	held := d.held
	d.held = nil
	d.mu.Unlock()
	for _, id := range held {
		d.finishTurn(id, "closed", "")
	}
}

// CutNextWrites makes the next n writes take effect and then close the
// connection without an answer (an uncertain outcome for the client).
func (d *Desktop) CutNextWrites(n int) {
	d.mu.Lock()
	d.cutNext = n
	d.mu.Unlock()
}

// HangNextWrites makes the next n writes take effect and then wait until
// the client gives up (or ReleaseHangs).
func (d *Desktop) HangNextWrites(n int) {
	d.mu.Lock()
	d.hangNext = n
	d.mu.Unlock()
}

// ReleaseHangs ends every hanging write.
func (d *Desktop) ReleaseHangs() {
	d.mu.Lock()
	close(d.hangRelease)
	d.hangRelease = make(chan struct{})
	d.mu.Unlock()
}

// RefuseNextWrites answers the next n writes 401 whatever their header.
func (d *Desktop) RefuseNextWrites(n int) {
	d.mu.Lock()
	d.refuseNext = n
	d.mu.Unlock()
}

// BeforeWrite runs fn at the start of every write, before the
// authorization check (for example to rotate the launch id in flight).
func (d *Desktop) BeforeWrite(fn func()) {
	d.mu.Lock()
	d.beforeWrite = fn
	d.mu.Unlock()
}

// Requests returns the recorded writes.
func (d *Desktop) Requests() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Request(nil), d.requests...)
}

// AddProject adds a project.
func (d *Desktop) AddProject(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.projects {
		if p == path {
			return
		}
	}
	d.projects = append(d.projects, path)
}

// AddThread adds an idle thread to a project (added if missing) and returns
// its id.
func (d *Desktop) AddThread(projectPath, title string) string {
	d.AddProject(projectPath)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.newThreadLocked(projectPath, title, false).ID
}

func (d *Desktop) newThreadLocked(projectPath, title string, draft bool) *thread {
	d.nextID++
	now := time.Now().UnixMilli()
	t := &thread{
		ID: fmt.Sprintf("%08x-%04x-4000-8000-%012x", 0x91c70000+d.nextID, d.nextID, d.nextID), ProjectPath: projectPath, Title: title,
		Status: "open", HarnessID: "codebuff", Model: d.opts.Models[0], AgentMode: "build", TurnState: "idle",
		CreatedAt: now, UpdatedAt: now, Draft: draft,
	}
	d.threads[t.ID] = t
	d.order = append(d.order, t.ID)
	return t
}

// Thread returns a copy of a thread's messages and state.
func (d *Desktop) Thread(id string) (messages []Message, state map[string]any, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.threads[id]
	if t == nil {
		return nil, nil, false
	}
	return append([]Message(nil), t.Messages...), t.json(), true
}

// Emit broadcasts a raw frame payload to every event client (and the
// replay history).
func (d *Desktop) Emit(payload string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.broadcastLocked(payload)
}

// EmitAgent broadcasts an agent event for a thread with the next seq.
func (d *Desktop) EmitAgent(threadID string, event map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.agentLocked(threadID, event)
}

func (d *Desktop) agentLocked(threadID string, event map[string]any) {
	d.seq[threadID]++
	b, _ := json.Marshal(map[string]any{"type": "agent", "threadId": threadID, "seq": d.seq[threadID], "event": event})
	d.broadcastLocked(string(b))
}

func (d *Desktop) threadFrameLocked(t *thread) {
	b, _ := json.Marshal(map[string]any{"type": "thread", "thread": t.json()})
	d.broadcastLocked(string(b))
}

const maxHistory = 200

func (d *Desktop) broadcastLocked(payload string) {
	d.history = append(d.history, payload)
	if len(d.history) > maxHistory {
		d.history = d.history[len(d.history)-maxHistory:]
	}
	for c := range d.clients {
		select {
		case c.frames <- payload:
		default: // a client that cannot keep up is dropped
			close(c.drop)
			delete(d.clients, c)
		}
	}
}

// --- HTTP ---------------------------------------------------------------------

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// authorized applies the auth profile; it writes the refusal itself.
func (d *Desktop) authorized(w http.ResponseWriter, r *http.Request, write bool) bool {
	d.mu.Lock()
	want := d.launchID
	profile := d.opts.Auth
	d.mu.Unlock()
	got := r.Header.Get(HeaderLaunchID)
	ok := got == want
	if r.URL.Path == "/healthz" {
		if ok || (got == "" && profile == AuthV0124) {
			return true
		}
		if profile == AuthV0124 {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid launch id"})
		} else {
			d.refuse(w, profile)
		}
		return false
	}
	if ok {
		return true
	}
	switch profile {
	case AuthV0124:
		if !write {
			return true
		}
		writeJSON(w, http.StatusForbidden, map[string]any{"error": "forbidden"})
	default:
		d.refuse(w, profile)
	}
	return false
}

func (d *Desktop) refuse(w http.ResponseWriter, profile AuthProfile) {
	if profile == AuthV0156 {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized"})
		return
	}
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"kind": "bad_request", "message": "missing or invalid token"}})
}

func (d *Desktop) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if !d.authorized(w, r, false) {
			return
		}
		d.mu.Lock()
		body := map[string]any{"ok": true, "pid": d.opts.PID, "port": d.ln.Addr().(*net.TCPAddr).Port}
		if r.Header.Get(HeaderLaunchID) != "" {
			body["launchId"] = d.launchID
		}
		d.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /api/auth/status", d.read(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"authed": true, "user": map[string]any{"name": "Sim User", "email": "sim@example.invalid"}})
	}))
	mux.HandleFunc("GET /api/projects", d.read(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		writeJSON(w, http.StatusOK, map[string]any{"projects": d.projectsLocked()})
		d.mu.Unlock()
	}))
	mux.HandleFunc("GET /api/events", d.read(d.events))
	mux.HandleFunc("GET /api/thread/{id}", d.read(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		defer d.mu.Unlock()
		t := d.threads[r.PathValue("id")]
		if t == nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "thread not found"})
			return
		}
		msgs := []any{}
		for _, m := range t.Messages {
			msgs = append(msgs, map[string]any{"role": m.Role, "parts": []any{map[string]any{"type": "text", "text": m.Text}}})
		}
		items := []any{}
		for _, it := range t.Items {
			items = append(items, it)
		}
		writeJSON(w, http.StatusOK, map[string]any{"thread": t.json(), "messages": msgs, "items": items})
	}))
	mux.HandleFunc("GET /api/thread/{id}/changes", d.read(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"scope": r.URL.Query().Get("scope"), "branch": "main", "files": []any{}, "totals": map[string]any{"adds": 0, "dels": 0}})
	}))
	mux.HandleFunc("GET /api/thread/{id}/changes/diff", d.read(func(w http.ResponseWriter, r *http.Request) {
		f := r.URL.Query().Get("file")
		if f == "" || strings.Contains(f, "..") || strings.HasPrefix(f, "/") {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid path"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"patch": ""})
	}))
	mux.HandleFunc("POST /api/threads", d.write(d.createThread))
	mux.HandleFunc("POST /api/thread/{id}/{action}", d.write(d.threadAction))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not found"})
	})
	return mux
}

func (d *Desktop) read(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.authorized(w, r, false) {
			h(w, r)
		}
	}
}

// write wraps a mutation: the BeforeWrite hook, the refusal switch, the
// auth check, recording, and the cut/hang switches (applied after the
// mutation took effect).
func (d *Desktop) write(h func(body map[string]any, r *http.Request) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		hook := d.beforeWrite
		d.mu.Unlock()
		if hook != nil {
			hook()
		}
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		rec := Request{Method: r.Method, Path: r.URL.Path, Body: string(raw), LaunchID: r.Header.Get(HeaderLaunchID)}
		d.mu.Lock()
		refuse := d.refuseNext > 0
		if refuse {
			d.refuseNext--
		}
		d.mu.Unlock()
		if refuse {
			rec.Status = http.StatusUnauthorized
			d.record(rec)
			d.refuse(w, d.opts.Auth)
			return
		}
		rw := &statusWriter{ResponseWriter: w}
		if !d.authorized(rw, r, true) {
			rec.Status = rw.status
			d.record(rec)
			return
		}
		var body map[string]any
		if len(strings.TrimSpace(string(raw))) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				rec.Status = http.StatusBadRequest
				d.record(rec)
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid json"})
				return
			}
		}
		status, resp := h(body, r)
		rec.Status = status
		d.record(rec)
		d.mu.Lock()
		cut, hang, release := d.cutNext > 0, d.hangNext > 0, d.hangRelease
		if cut {
			d.cutNext--
		} else if hang {
			d.hangNext--
		}
		d.mu.Unlock()
		switch {
		case cut:
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
		case hang:
			select {
			case <-r.Context().Done():
				return
			case <-release:
			}
		}
		writeJSON(w, status, resp)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (d *Desktop) record(r Request) {
	d.mu.Lock()
	d.requests = append(d.requests, r)
	d.mu.Unlock()
}

func (d *Desktop) projectsLocked() []any {
	out := []any{}
	for _, p := range d.projects {
		threads := []any{}
		for _, id := range d.order {
			if t := d.threads[id]; t.ProjectPath == p {
				threads = append(threads, t.json())
			}
		}
		out = append(out, map[string]any{"path": p, "threads": threads})
	}
	return out
}

func (d *Desktop) createThread(body map[string]any, _ *http.Request) (int, any) {
	p, _ := body["projectPath"].(string)
	if p == "" {
		return http.StatusBadRequest, map[string]any{"error": "projectPath required"}
	}
	model, _ := body["model"].(string)
	harness, _ := body["harnessId"].(string)
	if model != "" && harness == "" {
		return http.StatusBadRequest, map[string]any{"error": "invalid model"}
	}
	d.AddProject(p)
	d.mu.Lock()
	defer d.mu.Unlock()
	title, _ := body["title"].(string)
	if title == "" {
		title = "New thread"
	}
	t := d.newThreadLocked(p, title, true)
	if model != "" {
		t.Model = model
	}
	d.threadFrameLocked(t)
	return http.StatusOK, t.json()
}

func (d *Desktop) threadAction(body map[string]any, r *http.Request) (int, any) {
	id, action := r.PathValue("id"), r.PathValue("action")
	d.mu.Lock()
	t := d.threads[id]
	if t == nil {
		d.mu.Unlock()
		return http.StatusNotFound, map[string]any{"error": "thread not found"}
	}
	defer d.mu.Unlock()
	t.UpdatedAt = time.Now().UnixMilli()
	switch action {
	case "message":
		text, _ := body["text"].(string)
		if strings.TrimSpace(text) == "" {
			return http.StatusBadRequest, map[string]any{"error": "text required"}
		}
		t.Messages = append(t.Messages, Message{Role: "user", Text: text})
		t.Draft = false
		d.startTurnLocked(t, text)
		return http.StatusOK, map[string]any{"ok": true, "queued": d.turnMode == TurnNever}
	case "stop":
		if t.TurnState == "running" {
			d.removeHeldLocked(id)
			d.endTurnLocked(t, "closed", "")
		}
		return http.StatusOK, map[string]any{"ok": true}
	case "resume":
		t.QueuePaused = false
		d.threadFrameLocked(t)
		return http.StatusOK, map[string]any{"ok": true}
	case "agent":
		model, _ := body["model"].(string)
		harness, _ := body["harnessId"].(string)
		if harness != "codebuff" || !contains(d.opts.Models, model) {
			return http.StatusBadRequest, map[string]any{"error": "invalid model"}
		}
		t.Model, t.HarnessID = model, harness
		d.threadFrameLocked(t)
		return http.StatusOK, map[string]any{"ok": true, "model": model}
	case "effort":
		switch e := body["effort"].(type) {
		case nil:
			t.ReasoningEffort = nil
		case string:
			if !contains([]string{"none", "minimal", "low", "medium", "high", "xhigh"}, e) {
				return http.StatusBadRequest, map[string]any{"error": "invalid effort"}
			}
			t.ReasoningEffort = &e
		default:
			return http.StatusBadRequest, map[string]any{"error": "invalid effort"}
		}
		d.threadFrameLocked(t)
		return http.StatusOK, map[string]any{"ok": true, "reasoningEffort": body["effort"]}
	case "close":
		t.Status = "closed"
		d.threadFrameLocked(t)
		return http.StatusOK, map[string]any{"ok": true}
	case "rename":
		title, _ := body["title"].(string)
		t.Title = title
		d.threadFrameLocked(t)
		return http.StatusOK, map[string]any{"ok": true}
	case "compact":
		return http.StatusOK, map[string]any{"ok": true}
	}
	return http.StatusBadRequest, map[string]any{"error": "unknown action"}
}

// startTurnLocked runs the turn as the turn mode says.
func (d *Desktop) startTurnLocked(t *thread, text string) {
	switch d.turnMode {
	case TurnNever:
		d.nextID++
		t.Items = append(t.Items, map[string]any{"id": "item-" + strconv.Itoa(d.nextID), "kind": "queued"})
		d.threadFrameLocked(t)
		return
	}
	t.TurnState = "running"
	t.LastPromptAt = time.Now().UnixMilli()
	d.threadFrameLocked(t)
	d.agentLocked(t.ID, map[string]any{"type": "start"})
	if d.turnMode == TurnEmpty {
		d.agentLocked(t.ID, map[string]any{"type": "finish"})
		d.endTurnLocked(t, "closed", "")
		return
	}
	d.agentLocked(t.ID, map[string]any{"type": "reasoning_delta", "text": "private chain of thought"})
	d.agentLocked(t.ID, map[string]any{"type": "tool_call", "toolName": "read_files", "input": map[string]any{"paths": []any{"README.md"}}})
	d.agentLocked(t.ID, map[string]any{"type": "tool_result", "toolName": "read_files", "output": "read 1 file"})
	switch d.turnMode {
	case TurnFail:
		d.agentLocked(t.ID, map[string]any{"type": "error", "message": "model overloaded"})
		d.endTurnLocked(t, "error", "model overloaded")
	case TurnHold:
		d.held = append(d.held, t.ID)
	default:
		reply := "Echo: " + text
		d.agentLocked(t.ID, map[string]any{"type": "text", "text": reply})
		t.Messages = append(t.Messages, Message{Role: "assistant", Text: reply})
		d.agentLocked(t.ID, map[string]any{"type": "finish", "metrics": map[string]any{"context": map[string]any{"usedTokens": 1200, "compactionThresholdTokens": 100000}, "costUsd": 0}})
		d.endTurnLocked(t, "closed", "")
	}
}

func (d *Desktop) finishTurn(id, outcome, errText string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t := d.threads[id]; t != nil && t.TurnState == "running" {
		reply := "Echo: done"
		t.Messages = append(t.Messages, Message{Role: "assistant", Text: reply})
		d.agentLocked(id, map[string]any{"type": "text", "text": reply})
		d.agentLocked(id, map[string]any{"type": "finish"})
		d.endTurnLocked(t, outcome, errText)
	}
}

func (d *Desktop) removeHeldLocked(id string) {
	out := d.held[:0]
	for _, h := range d.held {
		if h != id {
			out = append(out, h)
		}
	}
	d.held = out
}

func (d *Desktop) endTurnLocked(t *thread, outcome, errText string) {
	now := time.Now().UnixMilli()
	if now <= d.lastFinish {
		now = d.lastFinish + 1
	}
	d.lastFinish = now
	t.TurnState, t.LastTurnOutcome, t.LastTurnFinishedAt, t.LastError = "idle", outcome, now, errText
	d.threadFrameLocked(t)
}

// events serves GET /api/events: a state snapshot and the replay history,
// then live frames and optional keep-alive comments.
func (d *Desktop) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "no streaming"})
		return
	}
	c := &sseClient{frames: make(chan string, 1024), drop: make(chan struct{})}
	d.mu.Lock()
	threads := []any{}
	ids := append([]string(nil), d.order...)
	sort.Strings(ids)
	for _, id := range ids {
		threads = append(threads, d.threads[id].json())
	}
	state, _ := json.Marshal(map[string]any{"type": "state", "snapshot": map[string]any{"projects": d.projectsLocked(), "threads": threads}})
	replay := append([]string{string(state)}, d.history...)
	d.clients[c] = struct{}{}
	pings := d.opts.Pings
	d.mu.Unlock()
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, f := range replay {
		fmt.Fprintf(w, "data: %s\n\n", f)
	}
	flusher.Flush()
	var tick <-chan time.Time
	if pings > 0 {
		t := time.NewTicker(pings)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case f := <-c.frames:
			fmt.Fprintf(w, "data: %s\n\n", f)
			flusher.Flush()
		case <-tick:
			fmt.Fprint(w, ": ping\n\n")
			flusher.Flush()
		case <-c.drop:
			return
		case <-r.Context().Done():
			d.mu.Lock()
			delete(d.clients, c)
			d.mu.Unlock()
			return
		}
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
