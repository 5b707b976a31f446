package httpserve

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/httpguard"
)

// Header names of Streamable HTTP.
const (
	HeaderSessionID = "Mcp-Session-Id"
)

// Error codes of the answers this package writes itself (0.3.x's).
const (
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeSessionRequired  = "mcp_session_required"
	CodeUnknownSession   = "unknown_session"
)

// DefaultIdleAfter is how long a session may go unseen before it is
// closed.
const DefaultIdleAfter = 30 * time.Minute

// Options configure a Handler.
type Options struct {
	// MCP is the SDK's Streamable HTTP handler over the one server every
	// session shares (server.Server.StreamableHTTPHandler).
	MCP http.Handler
	// Guard screens every request; Token is the bearer token /mcp needs.
	// A zero Token refuses every /mcp request (0.3.x: no token, always 401).
	Guard *httpguard.Guard
	Token httpguard.Secret
	// HealthNeedsToken makes /healthz require the token too (0.3.x: when
	// the host is not loopback).
	HealthNeedsToken bool
	// ReadOnly is reported by /healthz.
	ReadOnly bool
	// IdleAfter closes sessions unseen this long (DefaultIdleAfter).
	IdleAfter time.Duration
	// Clock is the time source of the session table (the wall clock when nil).
	Clock  quartz.Clock
	Logger *slog.Logger
	// Desk, when set, serves /desk and every path below it (the traffic
	// desk, internal/desk). It is handed the request before this
	// handler's guard: the desk screens its own requests with its own
	// guard, whose allowed origins are the server's own address, and
	// admits them with its own credentials (the same token, or its
	// cookie).
	Desk http.Handler
}

// Handler is the HTTP face of the MCP server: routes, guard and sessions.
type Handler struct {
	mcp      http.Handler
	guard    *httpguard.Guard
	bearer   httpguard.Credential
	health   bool
	readOnly bool
	idle     time.Duration
	clock    quartz.Clock
	log      *slog.Logger
	sessions *sessionTable
	desk     http.Handler
}

// NewHandler builds the Handler.
func NewHandler(o Options) *Handler {
	if o.IdleAfter <= 0 {
		o.IdleAfter = DefaultIdleAfter
	}
	if o.Clock == nil {
		o.Clock = quartz.NewReal()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Guard == nil {
		o.Guard = httpguard.New(httpguard.Options{})
	}
	return &Handler{
		mcp: o.MCP, guard: o.Guard, bearer: httpguard.Bearer(o.Token), health: o.HealthNeedsToken,
		readOnly: o.ReadOnly, idle: o.IdleAfter, clock: o.Clock, log: o.Logger, sessions: newSessionTable(), desk: o.Desk,
	}
}

// ServeHTTP applies 0.3.x's pipeline: the guard (Host, Origin, rate), GET
// /healthz, /mcp with POST and DELETE only, the bearer token, then the
// session rules.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.desk != nil && (r.URL.Path == "/desk" || strings.HasPrefix(r.URL.Path, "/desk/")) {
		h.desk.ServeHTTP(w, r)
		return
	}
	if !h.guard.Screen(w, r) {
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
		if h.health && !h.guard.Authorize(w, r, h.bearer) {
			return
		}
		httpguard.WriteJSON(w, http.StatusOK, map[string]bool{"ok": true, "readOnly": h.readOnly})
		return
	}
	if r.URL.Path != "/mcp" {
		httpguard.WriteError(w, http.StatusNotFound, CodeNotFound)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodDelete {
		w.Header().Set("Allow", "POST, DELETE")
		httpguard.WriteError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
		return
	}
	if !h.guard.Authorize(w, r, h.bearer) {
		return
	}
	if r.Method == http.MethodDelete {
		h.delete(w, r)
		return
	}
	h.post(w, r)
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	body, ok := h.guard.ReadBody(w, r)
	if !ok {
		return
	}
	msg, err := inspect(body)
	if err != nil {
		httpguard.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))

	if id := r.Header.Get(HeaderSessionID); id != "" {
		if !h.sessions.acquire(id, h.clock.Now()) {
			h.refuseSession(w, id, http.StatusBadRequest, CodeSessionRequired)
			return
		}
		defer h.sessions.release(id, h.clock.Now())
		h.mcp.ServeHTTP(&interceptor{ResponseWriter: w, onHeader: h.goneIfNotFound(w, id)}, r)
		return
	}
	switch {
	case msg.isInitialize():
		h.mcp.ServeHTTP(&interceptor{ResponseWriter: w, onHeader: h.registerSession}, r)
	case msg.Method == "server/discover":
		// A go-sdk v1.8 client probes with the sessionless 2026-07-28
		// handshake first; the SDK answers it with the JSON-RPC error that
		// makes the client fall back to initialize.
		h.mcp.ServeHTTP(w, r)
	default:
		httpguard.WriteError(w, http.StatusBadRequest, CodeSessionRequired)
	}
}

// refuseSession answers a request naming a session that is not live: 404
// unknown_session when the session existed and was closed (the client
// should start a new one), else status/code.
func (h *Handler) refuseSession(w http.ResponseWriter, id string, status int, code string) {
	if h.sessions.wasClosed(id) {
		httpguard.WriteError(w, http.StatusNotFound, CodeUnknownSession)
		return
	}
	httpguard.WriteError(w, status, code)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(HeaderSessionID)
	if id == "" || !h.sessions.acquire(id, h.clock.Now()) {
		httpguard.WriteError(w, http.StatusNotFound, CodeUnknownSession)
		return
	}
	h.sessions.release(id, h.clock.Now())
	h.mcp.ServeHTTP(&interceptor{ResponseWriter: w, onHeader: h.goneIfNotFound(w, id)}, r)
	if h.sessions.remove(id) {
		h.log.Info("HTTP session closed", "session", id, "by", "client")
	}
}

// registerSession records the session an initialize answer opens, before
// the answer reaches the client (which may send its next request at once).
func (h *Handler) registerSession(status int, header http.Header) bool {
	if id := header.Get(HeaderSessionID); status == http.StatusOK && id != "" {
		h.sessions.open(id, h.clock.Now())
		h.log.Info("HTTP session opened", "session", id)
	}
	return false
}

// goneIfNotFound replaces the SDK's 404 for a session this table still
// counted live (the SDK closed it) with 0.3.x's unknown_session answer,
// and forgets the session.
func (h *Handler) goneIfNotFound(w http.ResponseWriter, id string) func(int, http.Header) bool {
	return func(status int, _ http.Header) bool {
		if status != http.StatusNotFound {
			return false
		}
		h.sessions.remove(id)
		httpguard.WriteError(w, http.StatusNotFound, CodeUnknownSession)
		return true
	}
}

// Sweep closes the sessions with no request in flight that have not been
// seen for IdleAfter, and returns their ids. Serve calls it every minute.
func (h *Handler) Sweep() []string {
	ids := h.sessions.removeIdle(h.clock.Now(), h.idle)
	for _, id := range ids {
		h.closeSDKSession(id)
		h.log.Info("HTTP session closed", "session", id, "by", "idle timeout")
	}
	return ids
}

// CloseAll closes every session (at shutdown).
func (h *Handler) CloseAll() {
	for _, id := range h.sessions.removeAll() {
		h.closeSDKSession(id)
	}
}

// Sessions is the number of open sessions.
func (h *Handler) Sessions() int { return h.sessions.count() }

// closeSDKSession ends the SDK's session id the way a client's DELETE
// does, so the SDK releases it through its own path.
func (h *Handler) closeSDKSession(id string) {
	req, err := http.NewRequest(http.MethodDelete, "/mcp", nil)
	if err != nil {
		return
	}
	req.Header.Set(HeaderSessionID, id)
	h.mcp.ServeHTTP(&discard{header: http.Header{}}, req)
}

// message is what post needs to know of a request body.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	batch   bool
}

// isInitialize reports a single initialize request (0.3.x's
// isInitializeRequest: a batch never opens a session).
func (m message) isInitialize() bool {
	return !m.batch && m.JSONRPC == "2.0" && m.Method == "initialize" && len(m.ID) > 0
}

// inspect parses body as JSON (a parse error is returned for 0.3.x's 400
// {"error": <message>}) and reads the fields of a single message.
func inspect(body []byte) (message, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return message{}, err
	}
	var m message
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		m.batch = true
		return m, nil
	}
	if len(trimmed) > 0 && trimmed[0] == '{' {
		_ = json.Unmarshal(raw, &m) // a field of the wrong type leaves it empty: not initialize
	}
	return m, nil
}

// interceptor lets the handler see the status and headers the SDK writes
// before they go out; onHeader returning true means it answered instead,
// and the SDK's body is dropped.
type interceptor struct {
	http.ResponseWriter
	onHeader func(status int, header http.Header) bool
	wrote    bool
	swallow  bool
}

func (i *interceptor) WriteHeader(status int) {
	if i.wrote {
		return
	}
	i.wrote = true
	if i.onHeader != nil && i.onHeader(status, i.Header()) {
		i.swallow = true
		return
	}
	i.ResponseWriter.WriteHeader(status)
}

func (i *interceptor) Write(b []byte) (int, error) {
	if !i.wrote {
		i.WriteHeader(http.StatusOK)
	}
	if i.swallow {
		return len(b), nil
	}
	return i.ResponseWriter.Write(b)
}

// Flush passes SSE frames on as the SDK flushes them.
func (i *interceptor) Flush() {
	if !i.swallow {
		_ = http.NewResponseController(i.ResponseWriter).Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (i *interceptor) Unwrap() http.ResponseWriter { return i.ResponseWriter }

// discard is a ResponseWriter for requests the handler makes itself.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
