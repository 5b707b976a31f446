package httpguard

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Error string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q is not {\"error\":...}: %v", rec.Body.String(), err)
	}
	return body.Error
}

func TestScreen(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		host     string
		origin   string
		wantOK   bool
		wantCode string
	}{
		{name: "no origin passes", host: "127.0.0.1:8788", wantOK: true},
		{name: "default origin 127.0.0.1", host: "127.0.0.1:8788", origin: "http://127.0.0.1", wantOK: true},
		{name: "default origin localhost, default port spelled", host: "127.0.0.1:8788", origin: "http://LOCALHOST:80", wantOK: true},
		{name: "localhost with another port is another origin", host: "127.0.0.1:8788", origin: "http://localhost:3000", wantCode: CodeInvalidOrigin},
		{name: "foreign origin", host: "127.0.0.1:8788", origin: "https://evil.example", wantCode: CodeInvalidOrigin},
		{name: "null origin", host: "127.0.0.1:8788", origin: "null", wantCode: CodeInvalidOrigin},
		{name: "origin with a path", host: "127.0.0.1:8788", origin: "http://127.0.0.1/x", wantCode: CodeInvalidOrigin},
		{name: "configured origin", opts: Options{AllowedOrigins: []string{"https://app.example:8443"}}, host: "x", origin: "https://app.example:8443", wantOK: true},
		{name: "empty allow-list allows no origin", opts: Options{AllowedOrigins: []string{}}, host: "x", origin: "http://127.0.0.1", wantCode: CodeInvalidOrigin},
		{name: "loopback host check: 127.0.0.1", opts: Options{LoopbackHostOnly: true}, host: "127.0.0.1:8788", wantOK: true},
		{name: "loopback host check: localhost", opts: Options{LoopbackHostOnly: true}, host: "localhost:8788", wantOK: true},
		{name: "loopback host check: [::1]", opts: Options{LoopbackHostOnly: true}, host: "[::1]:8788", wantOK: true},
		{name: "loopback host check: rebinding name", opts: Options{LoopbackHostOnly: true}, host: "evil.example:8788", wantCode: CodeInvalidHost},
		{name: "no host check without the option", host: "evil.example:8788", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New(tt.opts)
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			ok := g.Screen(rec, r)
			if ok != tt.wantOK {
				t.Fatalf("Screen = %v, want %v (status %d %s)", ok, tt.wantOK, rec.Code, rec.Body)
			}
			if !ok {
				if rec.Code != http.StatusForbidden || errorCode(t, rec) != tt.wantCode {
					t.Fatalf("refusal %d %s, want 403 %s", rec.Code, rec.Body, tt.wantCode)
				}
			}
		})
	}
}

func TestRateLimitFixedWindowPerAddress(t *testing.T) {
	clock := testclock.At(t, time.Unix(1_700_000_000, 0))
	g := New(Options{Clock: clock})
	req := func(addr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		r.RemoteAddr = addr
		rec := httptest.NewRecorder()
		g.Screen(rec, r)
		return rec
	}
	for i := range DefaultRateLimit {
		// The port changes with every connection; the limit is per address.
		if rec := req("127.0.0.1:" + strconv.Itoa(40000+i)); rec.Code != http.StatusOK {
			t.Fatalf("request %d refused: %d", i+1, rec.Code)
		}
	}
	clock.Advance(20 * time.Second)
	rec := req("127.0.0.1:50000")
	if rec.Code != http.StatusTooManyRequests || errorCode(t, rec) != CodeRateLimited {
		t.Fatalf("request 301: %d %s, want 429 rate_limited", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Retry-After"); got != "40" {
		t.Fatalf("Retry-After = %q, want 40 (seconds left in the window)", got)
	}
	if rec := req("[::1]:1234"); rec.Code != http.StatusOK {
		t.Fatalf("another address is limited separately, got %d", rec.Code)
	}
	clock.Advance(40 * time.Second)
	if rec := req("127.0.0.1:50001"); rec.Code != http.StatusOK {
		t.Fatalf("a new window passes again, got %d", rec.Code)
	}
}

func TestRateLimitDisabled(t *testing.T) {
	g := New(Options{RateLimit: -1})
	for i := range 2 * DefaultRateLimit {
		rec := httptest.NewRecorder()
		if !g.Screen(rec, httptest.NewRequest(http.MethodGet, "/", nil)) {
			t.Fatalf("request %d refused with the limit disabled", i)
		}
	}
}

func TestAuthorize(t *testing.T) {
	const token = "s3cret-token"
	tests := []struct {
		name   string
		secret Secret
		header string
		want   bool
	}{
		{"right token", NewSecret(token), "Bearer " + token, true},
		{"scheme is case-insensitive", NewSecret(token), "bearer " + token, true},
		{"no header", NewSecret(token), "", false},
		{"wrong token", NewSecret(token), "Bearer s3cret-tokem", false},
		{"prefix of the token", NewSecret(token), "Bearer s3cret", false},
		{"token plus more", NewSecret(token), "Bearer " + token + "x", false},
		{"basic scheme", NewSecret(token), "Basic " + token, false},
		{"no token configured refuses everything", Secret{}, "Bearer ", false},
		{"no token configured refuses a guess", NewSecret(""), "Bearer " + token, false},
	}
	g := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			rec := httptest.NewRecorder()
			if got := g.Authorize(rec, r, Bearer(tt.secret)); got != tt.want {
				t.Fatalf("Authorize = %v, want %v", got, tt.want)
			}
			if !tt.want {
				if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != "Bearer" || errorCode(t, rec) != CodeUnauthorized {
					t.Fatalf("refusal %d %v %s", rec.Code, rec.Header(), rec.Body)
				}
			}
		})
	}
}

func TestGenerateToken(t *testing.T) {
	a, err := GenerateToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateToken()
	if len(a) != 43 || a == b || strings.ContainsAny(a, "+/=") {
		t.Fatalf("tokens %q %q: want 43 distinct base64url characters", a, b)
	}
}

func TestReadBody(t *testing.T) {
	g := New(Options{MaxBodyBytes: 10})
	tests := []struct {
		name     string
		body     string
		length   int64 // -1: unknown (chunked)
		wantCode int
	}{
		{"within the limit", "0123456789", 10, http.StatusOK},
		{"declared over the limit", "01234567890", 11, http.StatusBadRequest},
		{"chunked over the limit", "01234567890", -1, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tt.body))
			r.ContentLength = tt.length
			rec := httptest.NewRecorder()
			body, ok := g.ReadBody(rec, r)
			if tt.wantCode == http.StatusOK {
				if !ok || string(body) != tt.body {
					t.Fatalf("ReadBody = %q, %v", body, ok)
				}
				return
			}
			if ok || rec.Code != tt.wantCode || errorCode(t, rec) != CodeTooLarge {
				t.Fatalf("refusal %v %d %s, want %d %q", ok, rec.Code, rec.Body, tt.wantCode, CodeTooLarge)
			}
		})
	}
}

// TestReadBodyTimesOutASlowBody: a client that sends its headers and then
// trickles (or stops sending) its body is answered 408 once BodyTimeout
// has passed, and the connection is closed.
func TestReadBodyTimesOutASlowBody(t *testing.T) {
	g := New(Options{BodyTimeout: 200 * time.Millisecond})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := g.ReadBody(w, r); ok {
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n0123456789"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety bound, not the assertion
	reply, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server never answered or closed a stalled body: %v (read %q)", err, reply)
	}
	if !strings.HasPrefix(string(reply), "HTTP/1.1 408") || !strings.Contains(string(reply), CodeTimeout) {
		t.Fatalf("reply %q, want 408 request_timeout", reply)
	}
}

func TestTokenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "http-8788.token")
	if err := WriteTokenFile(path, "first"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("token file mode %v, want 0600", fi.Mode().Perm())
		}
		if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
			t.Fatalf("created directory mode %v, want 0700", di.Mode().Perm())
		}
	}
	if got, _ := ReadTokenFile(path); got != "first" {
		t.Fatalf("token %q", got)
	}

	// A symbolic link at the path is replaced, and its target untouched.
	target := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linked.token")
	if err := os.Symlink(target, link); err == nil {
		if err := WriteTokenFile(link, "second"); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep" {
			t.Fatalf("the link's target was written: %q", b)
		}
		if li, _ := os.Lstat(link); li.Mode()&os.ModeSymlink != 0 {
			t.Fatal("the link is still a link")
		}
	}

	// Another server's token is not removed; our own is.
	if err := RemoveTokenFile(path, "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal("RemoveTokenFile removed a file holding another token")
	}
	if err := RemoveTokenFile(path, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("token file still there: %v", err)
	}
	if err := WriteTokenFile(dir, "x"); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestCookieCredential(t *testing.T) {
	c := SessionCookie("desk", "v4lue", false)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Fatalf("cookie %+v", c)
	}
	if !strings.Contains(c.String(), "HttpOnly") || !strings.Contains(c.String(), "SameSite=Strict") {
		t.Fatalf("Set-Cookie %q", c.String())
	}
	cred := Cookie("desk", NewSecret("v4lue"))
	for _, tt := range []struct {
		cookie *http.Cookie
		want   bool
	}{
		{c, true},
		{&http.Cookie{Name: "desk", Value: "v4luf"}, false},
		{&http.Cookie{Name: "other", Value: "v4lue"}, false},
		{nil, false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/desk", nil)
		if tt.cookie != nil {
			r.AddCookie(tt.cookie)
		}
		if got := cred.Verify(r); got != tt.want {
			t.Errorf("cookie %v: %v, want %v", tt.cookie, got, tt.want)
		}
	}
}

func TestAuthorizeAcceptsAnyGivenCredential(t *testing.T) {
	g := New(Options{})
	r := httptest.NewRequest(http.MethodGet, "/desk", nil)
	r.AddCookie(SessionCookie("desk", "cookie-value", false))
	if !g.Authorize(httptest.NewRecorder(), r, Bearer(NewSecret("t")), Cookie("desk", NewSecret("cookie-value"))) {
		t.Fatal("a request the cookie credential accepts was refused")
	}
	if g.Authorize(httptest.NewRecorder(), r, Bearer(NewSecret("t"))) {
		t.Fatal("the bearer credential alone accepted a cookie")
	}
}
