package desk

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/handlers"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
	"github.com/agent-interop/runtime/internal/workflow"
)

// fakeTools are the runtime's handlers with a real claims service and a
// hand-written permission and cancel side that records what it was asked.
type fakeTools struct {
	*handlers.Handlers
	mu       sync.Mutex
	answered []catalogs.RespondToPermissionInput
	canceled []catalogs.CancelSessionInput
	noAsk    bool // no permission request is open
}

func (t *fakeTools) setNoAsk(v bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.noAsk = v
}

func (t *fakeTools) ListPermissionRequests(context.Context, *catalogs.ListPermissionRequestsInput) (*catalogs.ListPermissionRequestsOutput, error) {
	t.mu.Lock()
	none := t.noAsk
	t.mu.Unlock()
	if none {
		return &catalogs.ListPermissionRequestsOutput{Pending: []catalogs.PendingPermission{}}, nil
	}
	allow, deny := "Allow once", "Deny"
	ak, dk := "allow_once", "reject_once"
	title := "Write hello.txt"
	paths := []string{"/w/hello.txt"}
	return &catalogs.ListPermissionRequestsOutput{Pending: []catalogs.PendingPermission{{
		Provider: "codex", RequestID: "req-1", NativeID: "t1", Method: "item/fileChange/requestApproval", Title: &title, Paths: &paths,
		Options: []catalogs.PermissionOption{{ID: "accept", Name: &allow, Kind: &ak}, {ID: "decline", Name: &deny, Kind: &dk}},
	}}}, nil
}

func (t *fakeTools) RespondToPermission(_ context.Context, in *catalogs.RespondToPermissionInput) (*catalogs.Delivery, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answered = append(t.answered, *in)
	return &catalogs.Delivery{Provider: in.Provider, NativeID: in.NativeID, Operation: "permission", Accepted: true, OperationID: "op-perm", IdempotencyKey: *in.IdempotencyKey}, nil
}

func (t *fakeTools) CancelSession(_ context.Context, in *catalogs.CancelSessionInput) (*catalogs.Delivery, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.canceled = append(t.canceled, *in)
	return &catalogs.Delivery{Provider: in.Provider, NativeID: in.NativeID, Operation: "cancel", Accepted: true, OperationID: "op-cancel", IdempotencyKey: *in.IdempotencyKey}, nil
}

func (t *fakeTools) calls() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.answered) + len(t.canceled)
}

// actFixture is a desk that may act, a signed-in browser's cookie, and
// an active claim.
type actFixture struct {
	*fixture
	tools  *fakeTools
	cookie string // "name=value"
	csrf   string
	claim  string
	origin string
}

func newActFixture(t *testing.T, opts ...func(*Options)) *actFixture {
	t.Helper()
	tools := &fakeTools{}
	f := newFixture(t, append([]func(*Options){func(o *Options) {
		wf := workflow.New(o.Store, workflow.Options{Clock: o.Clock})
		tools.Handlers = handlers.New(handlers.Deps{Store: o.Store, Workflow: wf, Claims: claims.New(o.Store, claims.WithClock(o.Clock))})
		o.Tools = tools
	}}, opts...)...)
	a := &actFixture{fixture: f, tools: tools, origin: f.srv.URL}
	a.cookie = a.signIn()
	f.addWork("w-1", "Write the greeting")
	f.addSession("t1")
	c, err := claims.New(f.st, claims.WithClock(f.clock)).Acquire(context.Background(), claims.AcquireInput{
		WorkID: "w-1", SessionID: "codex:t1", Resource: "/w/hello.txt", Kind: claims.KindFile, Mode: claims.ModeExclusive, TTLSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	a.claim = c.ID
	res, body := f.get("/desk/claims", "Cookie", a.cookie)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("claims page: %d", res.StatusCode)
	}
	a.csrf = formCSRF(t, body)
	return a
}

// signIn uses the newest login link and returns the session cookie.
func (a *actFixture) signIn() string {
	a.t.Helper()
	link := wait.Recv(a.t, "a login link", wait.InProcess, a.links)
	u, _ := url.Parse(link)
	res, _ := a.get(u.RequestURI())
	for _, c := range res.Cookies() {
		if c.Name == a.h.auth.cookie {
			return c.Name + "=" + c.Value
		}
	}
	a.t.Fatalf("no cookie: %v", res.Cookies())
	return ""
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func formCSRF(t *testing.T, body string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the page has no form token: %.800s", body)
	}
	return m[1]
}

// post sends a form the way a browser on the desk's own page does, with
// the changes a case makes.
func (a *actFixture) post(path string, form url.Values, header ...string) (*http.Response, string) {
	a.t.Helper()
	h := []string{"Cookie", a.cookie, "Origin", a.origin, "Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "navigate",
		"Sec-Fetch-Dest", "document", "Content-Type", "application/x-www-form-urlencoded"}
	h = append(h, header...)
	return a.do(http.MethodPost, path, form.Encode(), h...)
}

// claimStatus is the stored status of the fixture's claim.
func (a *actFixture) claimStatus() claim.Status {
	a.t.Helper()
	c, err := a.ent().Claim.Get(context.Background(), a.claim)
	if err != nil {
		a.t.Fatal(err)
	}
	return c.Status
}

func TestActionsAreDoneThroughTheTools(t *testing.T) {
	a := newActFixture(t)
	_, page := a.get("/desk/sessions/codex/t1", "Cookie", a.cookie)
	for _, want := range []string{`data-request-id="req-1"`, `value="accept"`, `>Allow once</button>`, `value="decline"`, `>Deny</button>`, `action="/desk/act/cancel"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the session page lacks %s: %.2000s", want, page)
		}
	}
	if formCSRF(t, page) != a.csrf {
		t.Fatal("the form token differs between pages of one browser session")
	}

	res, _ := a.post("/desk/act/permission", url.Values{"csrf": {a.csrf}, "provider": {"codex"}, "nativeId": {"t1"}, "requestId": {"req-1"}, "decision": {"accept"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/desk/receipts/op-perm" {
		t.Fatalf("allow: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if len(a.tools.answered) != 1 || a.tools.answered[0].Decision != "accept" || a.tools.answered[0].RequestID != "req-1" ||
		!viaDesk(*a.tools.answered[0].IdempotencyKey) {
		t.Fatalf("answered %+v", a.tools.answered)
	}
	res, _ = a.post("/desk/act/cancel", url.Values{"csrf": {a.csrf}, "provider": {"codex"}, "nativeId": {"t1"}})
	if res.StatusCode != http.StatusSeeOther || len(a.tools.canceled) != 1 || a.tools.canceled[0].NativeID != "t1" {
		t.Fatalf("cancel: %d %+v", res.StatusCode, a.tools.canceled)
	}

	res, _ = a.post("/desk/act/release", url.Values{"csrf": {a.csrf}, "claimId": {a.claim}})
	if res.StatusCode != http.StatusSeeOther || a.claimStatus() != claim.StatusReleased {
		t.Fatalf("release: %d, claim %s", res.StatusCode, a.claimStatus())
	}
	ev, err := a.ent().Evidence.Query().Where(evidence.WorkID("w-1")).Only(context.Background())
	if err != nil || !strings.Contains(ev.Summary, "released through the desk") || ev.Trust != "human_accepted" {
		t.Fatalf("evidence of the release: %+v %v", ev, err)
	}
}

func TestActionsRefused(t *testing.T) {
	other := func(a *actFixture) string { return a.signIn() } // another browser's cookie
	cases := []struct {
		name   string
		form   func(a *actFixture) url.Values
		header func(a *actFixture) []string
		status int
		code   string
	}{
		{name: "no token", form: func(*actFixture) url.Values { return url.Values{} }, status: 403, code: "csrf_token"},
		{name: "wrong token", form: func(*actFixture) url.Values { return url.Values{"csrf": {"forged"}} }, status: 403, code: "csrf_token"},
		{name: "another session's token", form: func(a *actFixture) url.Values {
			_, body := a.get("/desk/claims", "Cookie", other(a))
			return url.Values{"csrf": {formCSRF(a.t.(*testing.T), body)}}
		}, status: 403, code: "csrf_token"},
		{name: "token of this session with another's cookie", header: func(a *actFixture) []string { return []string{"Cookie", other(a)} }, status: 403, code: "csrf_token"},
		{name: "no origin", header: func(*actFixture) []string { return []string{"Origin", ""} }, status: 403, code: "origin_not_allowed"},
		{name: "null origin", header: func(*actFixture) []string { return []string{"Origin", "null"} }, status: 403},
		{name: "foreign origin", header: func(*actFixture) []string { return []string{"Origin", "http://127.0.0.1:1"} }, status: 403},
		{name: "cross-site", header: func(*actFixture) []string { return []string{"Sec-Fetch-Site", "cross-site"} }, status: 403, code: "cross_site_request"},
		{name: "same-site page on another port", header: func(*actFixture) []string { return []string{"Sec-Fetch-Site", "same-site"} }, status: 403, code: "cross_site_request"},
		{name: "bearer token, no browser session", header: func(*actFixture) []string {
			return []string{"Cookie", "", "Authorization", "Bearer " + testToken}
		}, status: 403, code: "no_browser_session"},
		{name: "no credential", header: func(*actFixture) []string { return []string{"Cookie", ""} }, status: 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newActFixture(t)
			for _, route := range []struct {
				path string
				form url.Values
			}{
				{"/desk/act/release", url.Values{"claimId": {a.claim}}},
				{"/desk/act/permission", url.Values{"provider": {"codex"}, "nativeId": {"t1"}, "requestId": {"req-1"}, "decision": {"accept"}}},
				{"/desk/act/cancel", url.Values{"provider": {"codex"}, "nativeId": {"t1"}}},
			} {
				form := route.form
				form.Set("csrf", a.csrf)
				if c.form != nil {
					for k, v := range c.form(a) {
						form[k] = v
					}
					if _, ok := c.form(a)["csrf"]; !ok {
						form.Del("csrf")
					}
				}
				var header []string
				if c.header != nil {
					header = c.header(a)
				}
				res, body := a.post(route.path, form, header...)
				if res.StatusCode != c.status || (c.code != "" && !strings.Contains(body, c.code)) {
					t.Fatalf("%s: %d %s, want %d %s", route.path, res.StatusCode, body, c.status, c.code)
				}
			}
			if a.claimStatus() != claim.StatusActive || a.tools.calls() != 0 {
				t.Fatalf("a refused request changed something: claim %s, %d tool calls", a.claimStatus(), a.tools.calls())
			}
		})
	}
}

func TestActionsRefusedWithoutTools(t *testing.T) {
	for name, opt := range map[string]func(*Options){
		"read-only": func(o *Options) { o.ReadOnly = true },
		// The stand-alone desk command, started with --read-only.
		"desk read-only": func(o *Options) { o.ReadOnly, o.NoProviders = true, true },
		"no tools":       func(o *Options) { o.Tools = nil },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) {
				o.Tools = handlers.New(handlers.Deps{Store: o.Store, Claims: claims.New(o.Store)})
			}, opt)
			a := &actFixture{fixture: f, origin: f.srv.URL}
			a.cookie = a.signIn()
			f.addWork("w-1", "Write the greeting")
			c, err := claims.New(f.st).Acquire(context.Background(), claims.AcquireInput{
				WorkID: "w-1", SessionID: "codex:t1", Resource: "/w/a", Kind: claims.KindFile, Mode: claims.ModeExclusive, TTLSeconds: 600})
			if err != nil {
				t.Fatal(err)
			}
			a.claim = c.ID
			_, body := f.get("/desk/claims", "Cookie", a.cookie)
			if strings.Contains(body, `name="csrf"`) || strings.Contains(body, "can-act") {
				t.Fatal("a desk that may not act offers a form")
			}
			// Each refusal names the command the person started.
			want := map[string]string{
				"read-only":      "started with --read-only (interop-runtime serve --http --read-only)",
				"desk read-only": "started with --read-only (interop-runtime desk --read-only)",
				"no tools":       "started on its own",
			}[name]
			wrong := map[string]string{
				"read-only":      "interop-runtime desk without --read-only",
				"desk read-only": "serve --http without --read-only",
			}[name]
			form := url.Values{"claimId": {c.ID}, "csrf": {f.h.csrfToken(strings.SplitN(a.cookie, "=", 2)[1])}}
			res, body := a.post("/desk/act/release", form)
			if res.StatusCode != http.StatusForbidden || a.claimStatus() != claim.StatusActive || !strings.Contains(body, want) ||
				(wrong != "" && strings.Contains(body, wrong)) {
				t.Fatalf("release: %d %s, claim %s", res.StatusCode, body, a.claimStatus())
			}
			for _, path := range []string{"/desk/act/permission", "/desk/act/cancel"} {
				res, body := a.post(path, url.Values{"provider": {"codex"}, "sessionId": {"t1"}, "requestId": {"r1"}, "optionId": {"allow"},
					"csrf": form["csrf"]})
				if res.StatusCode != http.StatusForbidden || !strings.Contains(body, want) {
					t.Fatalf("%s: %d %s", path, res.StatusCode, body)
				}
			}
		})
	}
}

func TestSessionPageForAnUndiscoveredSession(t *testing.T) {
	f := newFixture(t)
	f.addWork("w-1", "Write the greeting")
	if _, err := claims.New(f.st).Acquire(context.Background(), claims.AcquireInput{
		WorkID: "w-1", SessionID: "qwen:ghost-1", Resource: "/w/a", Kind: claims.KindFile, Mode: claims.ModeExclusive, TTLSeconds: 600}); err != nil {
		t.Fatal(err)
	}
	_, claimsPage := f.get("/desk/claims", bearer...)
	if !strings.Contains(claimsPage, `href="/desk/sessions/qwen/ghost-1"`) {
		t.Fatalf("the claims page does not link the holder: %.1500s", claimsPage)
	}
	res, body := f.get("/desk/sessions/qwen/ghost-1", bearer...)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `id="undiscovered"`) || !strings.Contains(body, "<code>/w/a</code>") ||
		!strings.Contains(body, `data-liveness="unknown"`) {
		t.Fatalf("undiscovered session: %d %.2000s", res.StatusCode, body)
	}
	if res, _ := f.get("/desk/sessions/qwen/never-mentioned", bearer...); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a session the store never mentions: %d", res.StatusCode)
	}
}

func TestWorkCountsAndBlocked(t *testing.T) {
	f := newFixture(t)
	f.addWork("w-a", "Parse the config")
	f.addWork("w-b", "Serve the config", "w-a")
	done := f.addWork("w-c", "Write the notes")
	if err := done.Update().SetStatus("accepted").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.addWork("w-d", "Publish the notes", "w-c") // its dependency is finished: open
	_, body := f.get("/desk/work", bearer...)
	for _, want := range []string{`data-count="all">4<`, `data-count="open">2<`, `data-count="blocked">1<`, `data-count="accepted">1<`,
		`data-work-id="w-b" data-status="blocked"`, `data-work-id="w-d" data-status="open"`, `data-blocked-by="dependency"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("the work page lacks %s: %.3000s", want, body)
		}
	}
	if i, j := strings.Index(body, ">Serve the config</a>"), strings.Index(body, `<code class="muted">w-b</code>`); i < 0 || j < i {
		t.Fatal("the objective does not lead the id")
	}
	for status, want := range map[string][]string{"blocked": {"w-b"}, "open": {"w-a", "w-d"}} {
		_, body := f.get("/desk/work?status="+status, bearer...)
		got := regexp.MustCompile(`data-work-id="(w-.)"`).FindAllStringSubmatch(body, -1)
		var ids []string
		for _, m := range got {
			ids = append(ids, m[1])
		}
		if strings.Join(ids, ",") != strings.Join(want, ",") && strings.Join(ids, ",") != strings.Join([]string{want[len(want)-1], want[0]}, ",") {
			t.Fatalf("status=%s lists %v, want %v", status, ids, want)
		}
	}
	_, board := f.get("/desk/work?view=board", bearer...)
	if !strings.Contains(board, `<section class="column" data-status="blocked"`) || !strings.Contains(board, `data-work-id="w-b"`) {
		t.Fatalf("board: %.3000s", board)
	}
	// The item's own page and every graph show it blocked too, as the
	// lists do: its status line, its node (label and colour class), the
	// overview's blocked cluster; the finished dependency's dependent stays open.
	_, page := f.get("/desk/work/w-b", bearer...)
	for _, want := range []string{`<dt>Status</dt><dd><span class="badge st-blocked" data-status="blocked" data-blocked-by="dependency"`,
		"Serve the config · blocked", "class n0 st_blocked", "Parse the config · open"} {
		if !strings.Contains(html.UnescapeString(page), want) {
			t.Errorf("the page of w-b lacks %q: %.4000s", want, page)
		}
	}
	_, page = f.get("/desk/work/w-d", bearer...)
	if !strings.Contains(page, `<dt>Status</dt><dd><span class="badge st-open"`) || !strings.Contains(page, "class n0 st_open") {
		t.Errorf("the page of w-d (its dependency is finished) does not show it open: %.4000s", page)
	}
	_, overview := f.get("/desk/graph", bearer...)
	if !strings.Contains(overview, "subgraph c_blocked") {
		t.Errorf("the overview has no blocked cluster: %.4000s", overview)
	}
}

func TestSearchJumpsToAnIdAndFindsText(t *testing.T) {
	f := newFixture(t)
	f.addWork("w-a", "Parse the <b>config</b>")
	f.addSession("t-search-1")
	f.addOperation("op-1", "t-search-1", "send", "completed", f.now)
	for q, to := range map[string]string{"w-a": "/desk/work/w-a", "op-1": "/desk/receipts/op-1", "codex:t-search-1": "/desk/sessions/codex/t-search-1"} {
		res, _ := f.get("/desk/search?q="+url.QueryEscape(q), bearer...)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != to {
			t.Fatalf("search %s: %d to %q, want %s", q, res.StatusCode, res.Header.Get("Location"), to)
		}
	}
	res, body := f.get("/desk/search?q=config", bearer...)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-work-id="w-a"`) || !strings.Contains(body, "&lt;b&gt;config&lt;/b&gt;") {
		t.Fatalf("text search: %d %.2000s", res.StatusCode, body)
	}
	if _, body := f.get("/desk/search?q=search-1", bearer...); !strings.Contains(body, `href="/desk/sessions/codex/t-search-1"`) {
		t.Fatalf("session search: %.2000s", body)
	}
	// Every page carries the box.
	for _, p := range []string{"/desk/", "/desk/work", "/desk/claims", "/desk/receipts", "/desk/conversations"} {
		if _, body := f.get(p, bearer...); !strings.Contains(body, `action="/desk/search"`) {
			t.Fatalf("%s has no search box", p)
		}
	}
}

func TestDependencyOverviewDrawsOnlyUnfinishedChains(t *testing.T) {
	f := newFixture(t)
	f.addWork("w-a", "Parse the config")
	f.addWork("w-b", "Serve the config", "w-a")
	f.addWork("w-alone", "Nothing to do with the rest")
	done := f.addWork("w-done", "Done already")
	if err := done.Update().SetStatus("accepted").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.addWork("w-after", "After the done one", "w-done")
	res, body := f.get("/desk/graph", bearer...)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-chained="2"`) || !strings.Contains(body, "subgraph c_open") ||
		!strings.Contains(body, `<a href="/desk/work/w-b"><code>w-b</code></a> depends on <a href="/desk/work/w-a">`) {
		t.Fatalf("overview: %d %.3000s", res.StatusCode, body)
	}
	for _, absent := range []string{"w-alone", "w-done", "w-after"} {
		if strings.Contains(body, absent) {
			t.Fatalf("the overview draws %s", absent)
		}
	}
}

func TestReceiptLinksToItsMessageAndSaysTheDeskMadeIt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.addOperation("op-msg", "t1", "send", "completed", f.now)
	if _, err := f.ent().Operation.Create().SetID("op-desk").SetIdempotencyKey(deskKeyPrefix + "abc").SetProvider("codex").SetNativeID("t1").
		SetOperation("permission").SetStatus("completed").SetCreatedAt(f.now).SetUpdatedAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.ent().Conversation.Create().SetID("conversation_1").SetTitle("Talk").SetCreatedAt(f.now).SetUpdatedAt(f.now).SetLastSequence(1).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.ent().Message.Create().SetID("message_1").SetConversationID("conversation_1").SetSequence(1).SetSender("codex:t0").SetRecipient("codex:t1").
		SetText("hi").SetCreatedAt(f.now).SetIdempotencyKey("k-1").SetOperationID("op-msg").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, body := f.get("/desk/receipts/op-msg", bearer...)
	if !strings.Contains(body, `href="/desk/conversations/conversation_1#m-message_1" data-message-id="message_1"`) ||
		!strings.Contains(body, `<a href="/desk/conversations/conversation_1"><code>conversation_1</code></a>`) || strings.Contains(body, `data-via="desk"`) {
		t.Fatalf("the receipt of a message: %.3000s", body)
	}
	if _, body := f.get("/desk/receipts/op-desk", bearer...); !strings.Contains(body, `data-via="desk"`) || strings.Contains(body, "data-message-id") {
		t.Fatalf("the receipt of a desk action: %.3000s", body)
	}
}

// TestPermissionRequestsShowLive: a request that arrives while the session
// page is open appears with its buttons and form token, without a reload,
// and goes when it is answered.
func TestPermissionRequestsShowLive(t *testing.T) {
	a := newActFixture(t)
	a.tools.setNoAsk(true)
	_, page := a.get("/desk/sessions/codex/t1", "Cookie", a.cookie)
	if !strings.Contains(page, `id="no-asks"`) {
		t.Fatalf("the session page shows a request: %.2000s", page)
	}
	s := a.stream(liveURL(t, page), "Cookie", a.cookie)
	s.next(t, streamWait) // connected
	a.tools.setNoAsk(false)
	a.addOperation("op-ask", "t1", "send", "queued", a.now.Add(time.Second)) // the store moves, as a provider's request event does
	ev := s.next(t, streamWait)
	if !strings.Contains(ev.data, `<section id="session-actions" aria-labelledby="act-h" hx-swap-oob="true">`) ||
		!strings.Contains(ev.data, `data-request-id="req-1"`) || !strings.Contains(ev.data, `name="csrf" value="`+a.csrf+`"`) {
		t.Fatalf("the new request was not sent: %+v", ev)
	}
	a.tools.setNoAsk(true)
	a.addOperation("op-ask-2", "t1", "send", "queued", a.now.Add(2*time.Second))
	if ev := s.next(t, streamWait); !strings.Contains(ev.data, `id="no-asks"`) {
		t.Fatalf("the answered request stays: %+v", ev)
	}
}

// TestStandaloneDeskReleasesButDoesNotAnswer: the stand-alone desk
// (NoProviders) releases a claim through the claims service, but refuses
// a permission answer and a cancel with 403 and a sentence saying where
// to act (nothing reaches the tools), and its session page offers
// neither, saying so.
func TestStandaloneDeskReleasesButDoesNotAnswer(t *testing.T) {
	a := newActFixture(t, func(o *Options) { o.NoProviders = true })
	_, page := a.get("/desk/sessions/codex/t1", "Cookie", a.cookie)
	for _, absent := range []string{`data-request-id=`, `action="/desk/act/cancel"`, `action="/desk/act/permission"`} {
		if strings.Contains(page, absent) {
			t.Fatalf("the session page offers %s: %.3000s", absent, page)
		}
	}
	if !strings.Contains(page, `id="act-elsewhere"`) {
		t.Fatalf("the session page does not say where to answer: %.3000s", page)
	}
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/desk/act/permission", url.Values{"provider": {"codex"}, "nativeId": {"t1"}, "requestId": {"req-1"}, "decision": {"accept"}}},
		{"/desk/act/cancel", url.Values{"provider": {"codex"}, "nativeId": {"t1"}}},
	} {
		c.form.Set("csrf", a.csrf)
		res, body := a.post(c.path, c.form)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, `"needs_provider"`) || !strings.Contains(body, "serve --http") {
			t.Fatalf("%s: %d %s", c.path, res.StatusCode, body)
		}
	}
	if n := a.tools.calls(); n != 0 {
		t.Fatalf("a refused answer or cancel reached the tools (%d calls)", n)
	}
	_, claims := a.get("/desk/claims", "Cookie", a.cookie)
	if !strings.Contains(claims, `id="release-form"`) {
		t.Fatalf("the claims page offers no release: %.2000s", claims)
	}
	res, _ := a.post("/desk/act/release", url.Values{"csrf": {a.csrf}, "claimId": {a.claim}})
	if res.StatusCode != http.StatusSeeOther || a.claimStatus() != claim.StatusReleased {
		t.Fatalf("release: %d, claim %s", res.StatusCode, a.claimStatus())
	}
	ev, err := a.ent().Evidence.Query().Where(evidence.WorkID("w-1")).Only(context.Background())
	if err != nil || !strings.Contains(ev.Summary, "released through the desk") {
		t.Fatalf("evidence of the release: %+v %v", ev, err)
	}
}

// TestPermissionReceiptShowsTheRequestsEvents: the receipt of a
// permission answer without a turn (OpenCode's) shows the provider's
// events of the request it answered, asked and replied, and no other.
func TestPermissionReceiptShowsTheRequestsEvents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.addSession("t1")
	if _, err := f.ent().Operation.Create().SetID("op-answer").SetIdempotencyKey(deskKeyPrefix + "x").SetProvider("codex").SetNativeID("t1").
		SetOperation("permission").SetStatus("completed").SetCreatedAt(f.now).SetUpdatedAt(f.now).
		SetDetail(json.RawMessage(`{"request":{"requestId":"per_1","decision":"once"}}`)).Save(ctx); err != nil {
		t.Fatal(err)
	}
	var evs []providers.NativeEvent
	for _, e := range []struct{ typ, data string }{
		{"permission.asked", `{"type":"permission.asked","properties":{"id":"per_1"}}`},
		{"permission.asked", `{"type":"permission.asked","properties":{"id":"per_2"}}`},
		{"permission.replied", `{"type":"permission.replied","properties":{"requestID":"per_1","reply":"once"}}`},
	} {
		evs = append(evs, providers.NativeEvent{NativeID: "t1", Timestamp: f.now, Type: e.typ, Data: json.RawMessage(e.data)})
	}
	if _, err := f.h.read.events.Append(ctx, "codex", "t1", 1, evs); err != nil {
		t.Fatal(err)
	}
	_, body := f.get("/desk/receipts/op-answer", bearer...)
	for want, on := range map[string]bool{"event #1": true, "event #2": false, "event #3": true} {
		if strings.Contains(body, want) != on {
			t.Errorf("%s shown: %v, want %v: %.3000s", want, !on, on, body)
		}
	}
}
