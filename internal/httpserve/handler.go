package httpserve

import (
	"bytes"
	"encoding/json"
	"errors"
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
	CodeBadSessionID     = "invalid_session_id"
)

// DefaultIdleAfter is how long a session may go unseen before it is
// closed.
const DefaultIdleAfter = 30 * time.Minute

// DefaultRateLimit is the default rate limit of /mcp: requests per minute
// per MCP session, with a burst of as many (docs/http.md says why this
// figure). Requests that name no live session share one bucket per
// credential; requests that fail authentication one per client address.
const DefaultRateLimit = 3000

// MaxSessionIDBytes bounds a well-formed Mcp-Session-Id (the SDK's ids are
// 36-byte UUIDs).
const MaxSessionIDBytes = 256

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
	// RateLimit is the number of /mcp requests one MCP session may make
	// per minute, in a token bucket that holds RateBurst requests (RateLimit
	// when 0): 0 means DefaultRateLimit, a negative value no limit. Requests
	// that name no live session (initialize) count against one bucket of
	// the credential; requests that fail authentication against one bucket
	// of their client address, so a client with a wrong token can neither
	// guess forever nor slow down a client with the right one. /healthz is
	// never limited. (Guard's own per-address limit, if set, applies
	// before all this.)
	RateLimit int
	RateBurst int
	// Clock is the time source of the session table and the rate limit
	// (the wall clock when nil).
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
	// calls limits authenticated /mcp requests per session (or per
	// credential without one); failures limits refused authentications per
	// client address. Both nil when unlimited.
	calls, failures *httpguard.Buckets
	// conns are the keep-alive connections Serve closes when idle.
	conns *idleConns
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
		o.Guard = httpguard.New(httpguard.Options{RateLimit: -1})
	}
	if o.RateLimit == 0 {
		o.RateLimit = DefaultRateLimit
	}
	return &Handler{
		mcp: o.MCP, guard: o.Guard, bearer: httpguard.Bearer(o.Token), health: o.HealthNeedsToken,
		readOnly: o.ReadOnly, idle: o.IdleAfter, clock: o.Clock, log: o.Logger, sessions: newSessionTable(), desk: o.Desk,
		calls:    httpguard.NewBuckets(o.RateLimit, o.RateBurst, o.Clock),
		failures: httpguard.NewBuckets(o.RateLimit, o.RateBurst, o.Clock),
		conns:    newIdleConns(o.Clock),
	}
}

// ServeHTTP applies 0.3.x's pipeline: the guard (Host, Origin), GET
// /healthz, /mcp with POST and DELETE only, the bearer token, the rate
// limit of the session (or credential), then the session rules.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.desk != nil && (r.URL.Path == "/desk" || strings.HasPrefix(r.URL.Path, "/desk/")) {
		h.desk.ServeHTTP(w, r)
		return
	}
	if !h.guard.Screen(w, r) {
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
		if h.health && !h.authorize(w, r) {
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
	if !h.authorize(w, r) || !h.admit(w, r) {
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
		if !validSessionID(id) {
			httpguard.WriteError(w, http.StatusBadRequest, CodeBadSessionID)
			return
		}
		if !h.sessions.acquire(id, h.clock.Now()) {
			// Not live: closed here, closed by an earlier process of this
			// server (a restart), or never issued. The specification's
			// answer for all of them is 404, on which a client opens a new
			// session.
			httpguard.WriteError(w, http.StatusNotFound, CodeUnknownSession)
			return
		}
		defer h.sessions.release(id, h.clock.Now())
		h.serveMCP(&interceptor{ResponseWriter: w, onHeader: h.goneIfNotFound(w, id), collapse: msg.isCall() && acceptsJSON(r)}, r)
		return
	}
	switch {
	case msg.isInitialize():
		h.serveMCP(&interceptor{ResponseWriter: w, onHeader: h.registerSession, collapse: acceptsJSON(r)}, r)
	case msg.Method == "server/discover":
		// A go-sdk v1.8 client probes with the sessionless 2026-07-28
		// handshake first; the SDK answers it with the JSON-RPC error that
		// makes the client fall back to initialize.
		h.mcp.ServeHTTP(w, r)
	default:
		httpguard.WriteError(w, http.StatusBadRequest, CodeSessionRequired)
	}
}

// authorize passes a request with the bearer token. A request without it
// is answered 401, or 429 once its client address has used up its bucket
// of failures; a request with the token never touches that bucket, so
// another client's failures cannot refuse it.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) bool {
	if h.bearer.Verify(r) {
		return true
	}
	if ok, retry := h.failures.Allow("address " + httpguard.RemoteIP(r)); !ok {
		httpguard.Refuse(w, retry)
		return false
	}
	return h.guard.Authorize(w, r) // no credential: answers 401
}

// admit applies the rate limit to an authenticated /mcp request: the
// bucket of the live session it names, else the credential's bucket (an
// initialize, or a session that is not live).
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) bool {
	key := "credential bearer"
	if id := r.Header.Get(HeaderSessionID); id != "" && h.sessions.isLive(id) {
		key = "session " + id
	}
	if ok, retry := h.calls.Allow(key); !ok {
		httpguard.Refuse(w, retry)
		return false
	}
	return true
}

// validSessionID reports a session id the specification allows: visible
// ASCII (0x21 to 0x7E) only, here also at most MaxSessionIDBytes long.
func validSessionID(id string) bool {
	if id == "" || len(id) > MaxSessionIDBytes {
		return false
	}
	for i := range len(id) {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(HeaderSessionID)
	switch {
	case id == "":
		httpguard.WriteError(w, http.StatusBadRequest, CodeSessionRequired)
		return
	case !validSessionID(id):
		httpguard.WriteError(w, http.StatusBadRequest, CodeBadSessionID)
		return
	case !h.sessions.acquire(id, h.clock.Now()):
		httpguard.WriteError(w, http.StatusNotFound, CodeUnknownSession)
		return
	}
	h.sessions.release(id, h.clock.Now())
	h.mcp.ServeHTTP(&interceptor{ResponseWriter: w, onHeader: h.goneIfNotFound(w, id)}, r)
	if h.sessions.remove(id) {
		h.calls.Forget("session " + id)
		h.log.Info("HTTP session closed", "session", id, "by", "client")
	}
}

// serveMCP hands r to the SDK through i, then sends what i still holds
// (an answer it turns into application/json).
func (h *Handler) serveMCP(i *interceptor, r *http.Request) {
	h.mcp.ServeHTTP(i, r)
	i.finish()
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
		h.calls.Forget("session " + id)
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

// isCall reports a single request with an id (a call, not a notification
// or a batch): its stream ends with its one answer.
func (m message) isCall() bool {
	return !m.batch && m.Method != "" && len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
}

// inspect parses body as JSON (a parse error is returned for 0.3.x's 400
// {"error": <message>}) and reads the fields of a single message, in one
// pass over the body: json.Unmarshal checks the whole body's syntax before
// it decodes anything, so a body that is not JSON fails with the same
// error whatever the target, and a body of another shape (a batch, a
// scalar, a field of the wrong type) fails only with an
// *json.UnmarshalTypeError after the fields it could read are set.
func inspect(body []byte) (message, error) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		var wrongType *json.UnmarshalTypeError
		if !errors.As(err, &wrongType) {
			return message{}, err
		}
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		// Not an object: nothing of a single message (a batch is never
		// an initialize nor a call of one stream).
		return message{batch: len(trimmed) > 0 && trimmed[0] == '['}, nil
	}
	return m, nil
}

// discard is a ResponseWriter for requests the handler makes itself.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
