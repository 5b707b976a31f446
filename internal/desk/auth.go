package desk

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/httpguard"
)

// Lifetimes of the desk's credentials.
const (
	// LoginCodeLifetime bounds how long a printed login link works.
	LoginCodeLifetime = 24 * time.Hour
	// SessionLifetime is how long a browser stays signed in.
	SessionLifetime = 12 * time.Hour
	// maxSessions bounds the signed-in browsers remembered; the oldest is
	// forgotten first.
	maxSessions = 64
)

// CookieName is the session cookie of a desk listening on port. Cookies
// are not separated by port, so each desk names its own.
func CookieName(port int) string { return "interop_desk_" + strconv.Itoa(port) }

// auth holds the desk's one-time login code and its signed-in browsers.
// Only digests are kept, compared in constant time (httpguard.Secret).
type auth struct {
	clock  quartz.Clock
	cookie string // cookie name

	mu        sync.Mutex
	code      httpguard.Secret
	codeUntil time.Time
	sessions  map[[sha256.Size]byte]time.Time // digest of the cookie value -> expiry
}

func newAuth(cookie string, clock quartz.Clock) *auth {
	return &auth{clock: clock, cookie: cookie, sessions: map[[sha256.Size]byte]time.Time{}}
}

// newCode replaces the login code with a fresh one and returns it: the
// previous link stops working.
func (a *auth) newCode() (string, error) {
	code, err := httpguard.GenerateToken()
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	a.code, a.codeUntil = httpguard.NewSecret(code), a.clock.Now().Add(LoginCodeLifetime)
	a.mu.Unlock()
	return code, nil
}

// useCode consumes the login code when candidate is it: a link works once.
func (a *auth) useCode(candidate string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if candidate == "" || !a.code.Matches(candidate) || !a.clock.Now().Before(a.codeUntil) {
		return false
	}
	a.code = httpguard.Secret{}
	return true
}

// startSession remembers a new signed-in browser and returns its cookie.
func (a *auth) startSession() (*http.Cookie, error) {
	value, err := httpguard.GenerateToken()
	if err != nil {
		return nil, err
	}
	now := a.clock.Now()
	a.mu.Lock()
	for k, until := range a.sessions {
		if !now.Before(until) {
			delete(a.sessions, k)
		}
	}
	if len(a.sessions) >= maxSessions {
		var oldest [sha256.Size]byte
		var first time.Time
		for k, until := range a.sessions {
			if first.IsZero() || until.Before(first) {
				oldest, first = k, until
			}
		}
		delete(a.sessions, oldest)
	}
	a.sessions[sha256.Sum256([]byte(value))] = now.Add(SessionLifetime)
	a.mu.Unlock()
	return &http.Cookie{
		Name: a.cookie, Value: value, Path: "/",
		MaxAge: int(SessionLifetime / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	}, nil
}

// Verify accepts a request carrying the cookie of a live session (the
// httpguard.Credential of the desk).
func (a *auth) Verify(r *http.Request) bool {
	_, ok := a.session(r)
	return ok
}

// session returns the id of the live desk session r's cookie names (the
// hex of the cookie's digest, never the cookie itself).
func (a *auth) session(r *http.Request) (string, bool) {
	c, err := r.Cookie(a.cookie)
	if err != nil || c.Value == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte(c.Value))
	a.mu.Lock()
	defer a.mu.Unlock()
	until, ok := a.sessions[sum] // a map lookup by digest: the value is never compared byte by byte
	if !ok || !a.clock.Now().Before(until) {
		return "", false
	}
	return hex.EncodeToString(sum[:8]), true
}

// crossSiteRequest reports a request a browser made on behalf of a page
// of another origin (Fetch Metadata: Sec-Fetch-Site same-site or
// cross-site), other than a top-level navigation. Pages on other local
// ports are "same-site" with the desk and would carry its SameSite=Strict
// cookie, so this is what keeps them from embedding or fetching it.
// Requests without the header (older browsers, command-line clients) pass:
// the Origin and Host checks and the credential still apply.
func crossSiteRequest(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return false
	}
	return !(r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Method == http.MethodGet &&
		(r.Header.Get("Sec-Fetch-Dest") == "document" || r.Header.Get("Sec-Fetch-Dest") == ""))
}
