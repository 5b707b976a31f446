package desk

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/desk/markup"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// routes are every kind of path the desk answers.
var routes = []string{
	"/", "/desk", "/desk/", "/desk/sessions", "/desk/sessions/codex/thread-1", "/desk/receipts", "/desk/receipts/op_1",
	"/desk/work", "/desk/work/work_1", "/desk/claims", "/desk/conversations", "/desk/conversations/conversation_1",
	"/desk/live/receipts", "/desk/live/session?provider=codex&nativeId=thread-1", "/desk/assets/desk.css",
	"/desk/assets/vendor/htmx.min.js", "/desk/assets/vendor/mermaid.min.js", "/desk/login", "/desk/no-such-page",
}

func TestEveryRouteNeedsACredential(t *testing.T) {
	f := newFixture(t)
	for _, path := range routes {
		for _, h := range [][]string{
			nil,
			{"Authorization", "Bearer wrong"},
			{"Authorization", "Basic " + testToken},
			{"Cookie", CookieName(0) + "=forged"},
			{"Accept", "text/html"},
		} {
			res, body := f.get(path, h...)
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s %v: %d, want 401", path, h, res.StatusCode)
			}
			if res.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("GET %s %v: no WWW-Authenticate", path, h)
			}
			if strings.Contains(body, "thread-1") {
				t.Errorf("GET %s: the refusal echoes the path: %s", path, body)
			}
		}
	}
	res, body := f.get("/desk/receipts", "Accept", "text/html")
	if !strings.Contains(body, `<form method="post" action="/desk/login">`) || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("a browser is not offered the sign-in form: %s", body)
	}
}

func TestBearerTokenAdmits(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/desk/", "/desk/sessions", "/desk/receipts", "/desk/work", "/desk/claims", "/desk/conversations", "/desk/assets/desk.js"} {
		if res, body := f.get(path, bearer...); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the token: %d %s", path, res.StatusCode, body)
		}
	}
	for _, path := range []string{"/desk/receipts/op_none", "/desk/work/work_none", "/desk/conversations/none", "/desk/sessions/codex/none", "/desk/assets/nothing.js"} {
		if res, _ := f.get(path, bearer...); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
	if res, _ := f.do(http.MethodPost, "/desk/receipts", "", bearer...); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405 (the desk is read-only)", res.StatusCode)
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t)
	for _, h := range [][]string{nil, bearer} {
		res, _ := f.get("/desk/", h...)
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
			t.Errorf("CSP allows scripts beyond the origin: %s", csp)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "Cross-Origin-Resource-Policy": "same-origin"} {
			if got := res.Header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	}
}

func TestLoginLinkWorksOnceAndSetsAStrictCookie(t *testing.T) {
	f := newFixture(t)
	link := <-f.links
	u, err := url.Parse(link)
	if err != nil || u.Path != "/desk/login" || u.Query().Get("code") == "" || u.Query().Get("code") == testToken {
		t.Fatalf("login link %q", link)
	}
	res, _ := f.get(u.RequestURI())
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/desk/" {
		t.Fatalf("login: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, k := range res.Cookies() {
		if k.Name == f.h.auth.cookie {
			c = k
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Value == "" {
		t.Fatalf("cookie %+v", res.Cookies())
	}
	if res, _ := f.get("/desk/receipts", "Cookie", c.Name+"="+c.Value); res.StatusCode != http.StatusOK {
		t.Fatalf("the cookie does not admit: %d", res.StatusCode)
	}
	if res, _ := f.get(u.RequestURI()); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a used login link admitted again: %d", res.StatusCode)
	}
	select {
	case next := <-f.links:
		if next == link {
			t.Fatal("the fresh link repeats the used one")
		}
		if res, _ := f.get(strings.TrimPrefix(next, f.srv.URL)); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("the fresh link: %d", res.StatusCode)
		}
	case <-time.After(wait.InProcess):
		t.Fatal("no fresh link after the first was used")
	}
	// A session expires.
	f.advance(SessionLifetime + time.Second)
	if res, _ := f.get("/desk/receipts", "Cookie", c.Name+"="+c.Value); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an expired session admitted: %d", res.StatusCode)
	}
}

func TestSignInFormTakesTheToken(t *testing.T) {
	f := newFixture(t)
	form := "application/x-www-form-urlencoded"
	if res, _ := f.do(http.MethodPost, "/desk/login", "token=nope", "Content-Type", form); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", res.StatusCode)
	}
	res, _ := f.do(http.MethodPost, "/desk/login", "token="+url.QueryEscape(testToken), "Content-Type", form, "Origin", f.srv.URL)
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("sign-in with the token: %d %v", res.StatusCode, res.Cookies())
	}
	if res, _ := f.do(http.MethodPost, "/desk/login", "token="+url.QueryEscape(testToken), "Content-Type", form, "Origin", "http://localhost:3000"); res.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in posted from another origin: %d, want 403", res.StatusCode)
	}
	if res, _ := f.do(http.MethodPost, "/desk/login", "token="+strings.Repeat("x", 20<<10), "Content-Type", form); res.StatusCode != http.StatusBadRequest {
		t.Errorf("an oversized form: %d, want 400", res.StatusCode)
	}
}

func TestScreening(t *testing.T) {
	f := newFixture(t)
	self := f.srv.URL
	tests := []struct {
		name   string
		header []string
		want   int
	}{
		{"own origin", []string{"Origin", self}, http.StatusOK},
		{"localhost spelling of the own origin", []string{"Origin", strings.Replace(self, "127.0.0.1", "localhost", 1)}, http.StatusOK},
		{"another local port", []string{"Origin", "http://127.0.0.1:1"}, http.StatusForbidden},
		{"HTTP mode's default origin", []string{"Origin", "http://127.0.0.1"}, http.StatusForbidden},
		{"a rebinding host name", []string{"Host", "evil.example:80"}, http.StatusForbidden},
		{"same-origin fetch", []string{"Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "cors"}, http.StatusOK},
		{"typed address", []string{"Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate"}, http.StatusOK},
		{"same-site fetch (another local port)", []string{"Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty"}, http.StatusForbidden},
		{"same-site script tag", []string{"Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "script"}, http.StatusForbidden},
		{"cross-site iframe", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "iframe"}, http.StatusForbidden},
		{"cross-site link followed", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res, body := f.get("/desk/receipts", append(append([]string{}, bearer...), tt.header...)...); res.StatusCode != tt.want {
				t.Fatalf("%d, want %d: %s", res.StatusCode, tt.want, body)
			}
		})
	}
}

func TestHTMLShapedTextIsShownAsText(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	payload := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	w := f.addWork("work_1", "Fix "+payload)
	f.addWork("work_2", "Then "+payload, w.ID)
	if _, err := f.ent().Claim.Create().SetID("claim_1").SetWorkID(w.ID).SetSessionID("codex:" + payload).SetResource("src/" + payload + ".go").
		SetKind(claim.KindFile).SetMode(claim.ModeExclusive).SetAcquiredAt(f.now).SetExpiresAt(f.now.Add(time.Hour)).Save(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID("thread-1").SetTitle(payload).SetCwd("/tmp/" + payload).
		SetFirstSeenAt(f.now).SetLastSeenAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/desk/sessions", "/desk/sessions/codex/thread-1", "/desk/work", "/desk/work/work_1", "/desk/work/work_2", "/desk/claims"} {
		res, body := f.get(path, bearer...)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("GET %s: the payload is in the page as markup", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s: the payload is not shown as text", path)
		}
	}
	// In the graph's Mermaid source, the label characters are entity codes.
	_, body := f.get("/desk/work/work_2", bearer...)
	if !strings.Contains(body, "#lt;script#gt;alert(1)#lt;/script#gt;") {
		t.Errorf("the Mermaid label is not escaped for Mermaid: %s", body)
	}
}

func TestPagesAreKeysetPaged(t *testing.T) {
	f := newFixture(t)
	for i := range 120 {
		f.addOperation(fmt.Sprintf("op_%03d", i), "thread-1", "send", operation.StatusCompleted, f.now.Add(time.Duration(i)*time.Second))
	}
	seen := map[string]bool{}
	path := "/desk/receipts?limit=50"
	var pages []int
	for path != "" {
		_, body := f.get(path, bearer...)
		n := strings.Count(body, `class="receipt"`)
		pages = append(pages, n)
		for _, part := range strings.Split(body, `data-operation-id="`)[1:] {
			id := part[:strings.IndexByte(part, '"')]
			if seen[id] {
				t.Fatalf("%s listed twice", id)
			}
			seen[id] = true
		}
		path = ""
		if i := strings.Index(body, `rel="next" href="`); i >= 0 {
			rest := body[i+len(`rel="next" href="`):]
			path = strings.ReplaceAll(rest[:strings.IndexByte(rest, '"')], "&amp;", "&")
		}
	}
	if len(seen) != 120 || fmt.Sprint(pages) != "[50 50 20]" {
		t.Fatalf("pages %v covering %d receipts, want [50 50 20] covering 120", pages, len(seen))
	}
	// Newest first: the first page starts with the last inserted.
	_, body := f.get("/desk/receipts?limit=1", bearer...)
	if !strings.Contains(body, `data-operation-id="op_119"`) {
		t.Fatal("the first page does not start with the newest receipt")
	}
	// Filters narrow the page.
	f.addOperation("op_cancel", "thread-2", "cancel", operation.StatusRejected, f.now)
	_, body = f.get("/desk/receipts?status=rejected&operation=cancel", bearer...)
	if strings.Count(body, `class="receipt"`) != 1 || !strings.Contains(body, "op_cancel") {
		t.Fatalf("filtered page: %s", body)
	}
	// The Freebuff thread writes' kinds are receipts like the others, and
	// the operation filter offers and applies them.
	for _, kind := range []string{"resume", "set_model", "set_reasoning"} {
		f.addOperation("op_"+kind, "thread-3", kind, operation.StatusQueued, f.now)
		_, body = f.get("/desk/receipts?operation="+kind, bearer...)
		if strings.Count(body, `class="receipt"`) != 1 || !strings.Contains(body, `data-operation-id="op_`+kind+`"`) ||
			!strings.Contains(body, `value="`+kind+`"`) {
			t.Fatalf("receipts of %s: %s", kind, body)
		}
	}
}

// TestFilteredReceiptsLookBackInBoundedSteps: a filter no index serves is
// checked on rows read newest first, at most maxScanned of them per page;
// a page that found nothing that far says so and its Next link looks
// further back, where the match is.
func TestFilteredReceiptsLookBackInBoundedSteps(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.addOperation("op_cancel", "thread-1", "cancel", operation.StatusRejected, f.now)
	var bs []*ent.OperationCreate
	for i := range maxScanned + 100 {
		at := f.now.Add(time.Duration(i+1) * time.Millisecond)
		bs = append(bs, f.ent().Operation.Create().SetID(fmt.Sprintf("op_%05d", i)).SetIdempotencyKey(fmt.Sprintf("k%05d", i)).
			SetProvider("codex").SetNativeID("thread-1").SetOperation("send").SetStatus(operation.StatusCompleted).
			SetCreatedAt(at).SetUpdatedAt(at))
		if len(bs) == 500 {
			if err := f.ent().Operation.CreateBulk(bs...).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			bs = nil
		}
	}
	if err := f.ent().Operation.CreateBulk(bs...).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, body := f.get("/desk/receipts?operation=cancel", bearer...)
	if strings.Contains(body, `class="receipt"`) || !strings.Contains(body, fmt.Sprintf("looked through %d receipts", maxScanned)) {
		t.Fatalf("first page: %s", body)
	}
	i := strings.Index(body, `rel="next" href="`)
	if i < 0 {
		t.Fatal("no Next link after the scan bound")
	}
	rest := body[i+len(`rel="next" href="`):]
	_, body = f.get(strings.ReplaceAll(rest[:strings.IndexByte(rest, '"')], "&amp;", "&"), bearer...)
	if strings.Count(body, `class="receipt"`) != 1 || !strings.Contains(body, `data-operation-id="op_cancel"`) || strings.Contains(body, `rel="next"`) {
		t.Fatalf("second page: %s", body)
	}
}

// TestACursorOfAnotherListIsRefused: a cursor given to another view or
// with other filters is a bad request that names the cursor, never
// another query's page.
func TestACursorOfAnotherListIsRefused(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.addOperation(fmt.Sprintf("op_%d", i), "thread-1", "send", operation.StatusCompleted, f.now.Add(time.Duration(i)*time.Second))
	}
	_, body := f.get("/desk/receipts?limit=1", bearer...)
	i := strings.Index(body, `rel="next" href="/desk/receipts?limit=1&amp;cursor=`)
	if i < 0 {
		t.Fatalf("no Next link: %s", body)
	}
	rest := body[i+len(`rel="next" href="/desk/receipts?limit=1&amp;cursor=`):]
	cursor := rest[:strings.IndexByte(rest, '"')]
	for _, path := range []string{"/desk/receipts?status=completed&cursor=" + cursor, "/desk/sessions?cursor=" + cursor, "/desk/receipts?cursor=nonsense"} {
		res, body := f.get(path, bearer...)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "cursor") {
			t.Errorf("GET %s: %d %.300s, want 400 naming the cursor", path, res.StatusCode, body)
		}
	}
}

// The icon is served to anyone (browsers ask before signing in), as SVG,
// and the pages link it.
func TestFaviconIsServed(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/favicon.ico", "/desk/favicon.ico"} {
		if res, _ := f.get(p); res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d, want 200", p, res.StatusCode)
		}
	}
	res, body := f.get("/desk/favicon.ico")
	if ct := res.Header.Get("Content-Type"); ct != "image/svg+xml" {
		t.Errorf("Content-Type %q, want image/svg+xml", ct)
	}
	if !strings.HasPrefix(body, "<svg") {
		t.Errorf("the icon is not an SVG: %.80s", body)
	}
	page, err := renderPage("notfound", pageData{Title: "x", Data: "y"})
	if err != nil {
		t.Fatal(err)
	}
	var signin markup.Writer
	signinHTML(&signin, "", Base+"/login")
	for name, html := range map[string]string{"a page": string(page), "the sign-in page": signin.String()} {
		if !strings.Contains(html, `<link rel="icon" href="/desk/favicon.ico"`) {
			t.Errorf("%s does not link the icon", name)
		}
	}
}
