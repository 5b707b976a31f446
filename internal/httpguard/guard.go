// Package httpguard screens the HTTP requests of the runtime's local
// servers before any handler sees them: a Host check against DNS
// rebinding, an Origin allow-list, a per-address rate limit (or, with
// [Buckets], token buckets per key the handler picks: an MCP session, a
// credential), a bearer token
// compared in constant time, a request body read with a size limit and its
// own deadline, and the 0600 file that hands a per-boot token to same-user
// clients.
//
// MCP over HTTP (internal/httpserve) uses it; a read-only web page served
// beside it can reuse the same Guard and add its own [Credential] (for
// [Cookie] over a [SessionCookie] obtained through a one-time login link),
// so every route is screened by the same rules:
//
//	if !g.Screen(w, r) { return }                       // Host, Origin, rate
//	if !g.Authorize(w, r, httpguard.Bearer(token), httpguard.Cookie("desk", session)) { return }
//	body, ok := g.ReadBody(w, r)                        // size and time bound
//
// Every refusal is a small JSON object {"error": "<code>"} with the status
// 0.3.x's serve-http used (upstream-0.3 §4.13).
package httpguard

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/quartz"
)

// Defaults of Options.
const (
	DefaultRateLimit    = 300 // requests per address per window
	DefaultRateWindow   = time.Minute
	DefaultMaxBodyBytes = 2_000_000
	DefaultBodyTimeout  = 30 * time.Second
)

// DefaultAllowedOrigins are the browser origins 0.3.x accepted.
func DefaultAllowedOrigins() []string {
	return []string{"http://127.0.0.1", "http://localhost"}
}

// Error codes of the refusals (the "error" field of the JSON body).
const (
	CodeInvalidOrigin = "invalid_origin"
	CodeInvalidHost   = "invalid_host"
	CodeRateLimited   = "rate_limited"
	CodeUnauthorized  = "unauthorized"
	CodeTooLarge      = "Request too large" // 0.3.x's message, kept verbatim
	CodeTimeout       = "request_timeout"
)

// Options configure a Guard. The zero value of a field means its default.
type Options struct {
	// AllowedOrigins are the Origin values a browser may send, each
	// scheme://host[:port]; they are compared after normalisation (lower
	// case, default port dropped). A request without Origin passes. Nil
	// means DefaultAllowedOrigins; an empty non-nil slice allows none.
	AllowedOrigins []string
	// LoopbackHostOnly refuses a request whose Host header does not name a
	// loopback address (127.0.0.1, ::1, localhost, any port): a page served
	// from another name that resolves to 127.0.0.1 (DNS rebinding) never
	// reaches a handler. Set it when the server listens on loopback and no
	// reverse proxy stands in front.
	LoopbackHostOnly bool
	// RateLimit is the number of requests one remote address may make per
	// RateWindow (fixed windows); a negative value disables the limit.
	RateLimit  int
	RateWindow time.Duration
	// MaxBodyBytes bounds a request body; BodyTimeout bounds the time to
	// read it (a client that trickles its body is cut off).
	MaxBodyBytes int64
	BodyTimeout  time.Duration
	// Clock is the time source of the rate limiter (the wall clock when nil).
	Clock quartz.Clock
}

// Guard applies Options to requests. It is safe for concurrent use.
type Guard struct {
	origins     map[string]bool
	loopback    bool
	maxBody     int64
	bodyTimeout time.Duration
	limiter     *limiter // nil when unlimited
}

// New builds a Guard.
func New(o Options) *Guard {
	if o.AllowedOrigins == nil {
		o.AllowedOrigins = DefaultAllowedOrigins()
	}
	if o.RateLimit == 0 {
		o.RateLimit = DefaultRateLimit
	}
	if o.RateWindow <= 0 {
		o.RateWindow = DefaultRateWindow
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.Clock == nil {
		o.Clock = quartz.NewReal()
	}
	g := &Guard{origins: map[string]bool{}, loopback: o.LoopbackHostOnly, maxBody: o.MaxBodyBytes, bodyTimeout: o.BodyTimeout}
	for _, origin := range o.AllowedOrigins {
		if n, ok := NormalizeOrigin(origin); ok {
			g.origins[n] = true
		}
	}
	if o.RateLimit > 0 {
		g.limiter = newLimiter(o.RateLimit, o.RateWindow, o.Clock)
	}
	return g
}

// Screen applies the checks every route shares, in 0.3.x's order after
// the Host check: Host (when LoopbackHostOnly), Origin, then the rate
// limit. It writes the refusal and returns false when one fails.
//
// It also bounds the time the server may spend reading this request's
// body, even for a handler that never reads it (net/http drains an unread
// body after the handler returns): the connection gets a read deadline
// BodyTimeout from now, which ReadBody lifts once the body is in.
func (g *Guard) Screen(w http.ResponseWriter, r *http.Request) bool {
	if g.loopback && !IsLoopbackHost(hostOnly(r.Host)) {
		WriteError(w, http.StatusForbidden, CodeInvalidHost)
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if n, ok := NormalizeOrigin(origin); !ok || !g.origins[n] {
			WriteError(w, http.StatusForbidden, CodeInvalidOrigin)
			return false
		}
	}
	if g.limiter != nil {
		if ok, retry := g.limiter.allow(RemoteIP(r)); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(retry)))
			WriteError(w, http.StatusTooManyRequests, CodeRateLimited)
			return false
		}
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(g.bodyTimeout))
	return true
}

// Authorize passes a request that one of creds accepts. Otherwise it
// answers 401 with WWW-Authenticate: Bearer and returns false; with no
// credential configured every request is refused.
func (g *Guard) Authorize(w http.ResponseWriter, r *http.Request, creds ...Credential) bool {
	for _, c := range creds {
		if c != nil && c.Verify(r) {
			return true
		}
	}
	w.Header().Set("WWW-Authenticate", "Bearer")
	WriteError(w, http.StatusUnauthorized, CodeUnauthorized)
	return false
}

// WriteError answers status with the JSON body {"error": code}.
func WriteError(w http.ResponseWriter, status int, code string) {
	WriteJSON(w, status, map[string]string{"error": code})
}

// WriteJSON answers status with v as compact JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"internal_error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// NormalizeOrigin returns origin as a browser's URL.origin spells it
// (scheme://host[:port], lower case, default port dropped), or false when
// it is not an http(s) origin ("null", a path, garbage).
func NormalizeOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, true
	}
	return scheme + "://" + host, true
}

// IsLoopbackHost reports a host name 0.3.x treated as loopback:
// 127.0.0.1, localhost or ::1 (brackets allowed); any 127/8 address too.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RemoteIP is the address a request came from, without its port: the key
// of the rate limit.
func RemoteIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return hostport
}

func retryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
