package desk

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/argv"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/desk/markup"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/httpguard"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// DefaultRateLimit is the desk's default rate limit: requests per minute
// per desk session or bearer token, the same figure as /mcp's per MCP
// session (docs/http.md). A browser's tabs share their session: a dozen
// tabs with live streams and the graph's redraws stay far below it.
const DefaultRateLimit = 3000

// Options configure a Handler.
type Options struct {
	// Store is the runtime's store; the desk only reads it.
	Store *store.Store
	// Token is the bearer token that admits a request (and that the
	// sign-in form accepts). A zero Token admits nothing but the cookie
	// of a login link.
	Token httpguard.Secret
	// Port is the port the desk is reached on: it names the cookie and
	// makes the desk's own origins (http://127.0.0.1:Port,
	// http://localhost:Port, http://[::1]:Port) the only ones allowed.
	Port int
	// URL is the address login links start with, e.g.
	// "http://127.0.0.1:8789".
	URL string
	// LoginLink is called with the first one-time login link, and with a
	// fresh one each time a link is used (so another browser can sign in).
	// The command prints it to stderr.
	LoginLink func(link string)
	// RateLimit is requests per minute per desk session (a browser's
	// sign-in, shared by its tabs) or per bearer token, in a token bucket
	// that holds as many; requests without a credential and failed logins
	// spend a bucket of their client address. 0: DefaultRateLimit;
	// negative: none.
	RateLimit int
	// Liveness, when set, answers a session's liveness from the memory of
	// the runtime that serves it (the desk inside serve --http: the
	// registry's RuntimeLiveness).
	Liveness LivenessFunc
	// Owner is the delivery owner id of the process the desk runs in
	// (delivery.Service.Owner), when that process dispatches operations:
	// its own open operations are never taken for a gone owner's.
	Owner string
	// PollEvery is how often the change feed looks at the store.
	PollEvery time.Duration
	// Heartbeat is how often an idle live stream sends a comment line.
	Heartbeat time.Duration
	// StreamLifetime ends a live stream after this long (DefaultStreamLifetime);
	// the browser reconnects at once, resuming from its last event id, and
	// its credential is checked again (an expired cookie ends the page's
	// updates).
	StreamLifetime time.Duration
	// Tools, when set, lets a signed-in person act from the desk: answer a
	// pending permission request, cancel a running turn, release a claim,
	// each through the tool of the same name (see act.go). The desk inside
	// serve --http passes the runtime's handlers; the stand-alone desk
	// passes handlers over the store's claims and work services, with
	// NoProviders.
	Tools catalogs.Handlers
	// NoProviders says that Tools hold no provider connection (the
	// stand-alone desk: the store's claims and work services only): a
	// claim may be released, but a permission answer or a cancel, which
	// only the process driving the session can deliver, is refused with
	// a sentence that says so, and no page offers them.
	NoProviders bool
	// ReadOnly refuses every action (serve --http --read-only).
	ReadOnly bool
	// Providers are the provider ids the filters offer: every known agent,
	// the built-in catalog and the user's agents file
	// (adapters.KnownIDs). nil: the built-in catalog.
	Providers []string
	Clock     quartz.Clock
	Logger    *slog.Logger
}

// Handler serves the desk.
type Handler struct {
	guard     *httpguard.Guard
	calls     *httpguard.Buckets // per desk session or bearer token
	failures  *httpguard.Buckets // per client address
	bearer    httpguard.Credential
	token     httpguard.Secret
	auth      *auth
	read      *reader
	feed      *feed
	assets    *assets
	mux       *http.ServeMux
	url       string
	loginLink func(string)
	heartbeat time.Duration
	lifetime  time.Duration
	clock     quartz.Clock
	log       *slog.Logger
	closing   chan struct{}
	closeOnce sync.Once
	liveReads chan struct{} // a slot per live stream reading the store (maxLiveReads)
	act       *actor        // nil: no actions
	readOnly  bool
	// standalone: the desk command's own desk (Options.NoProviders), not
	// the desk of serve --http; its refusals name that command.
	standalone bool
	csrfKey    [32]byte // keys the per-session form tokens (csrfToken)
	origins    []string // the desk's own origins (empty: the request's Host)
	providers  []string // the filters' provider ids (Options.Providers)
}

// DefaultStreamLifetime is how long one live stream lasts.
const DefaultStreamLifetime = 5 * time.Minute

// Security headers of every answer. The page loads nothing but its own
// origin; Mermaid draws its SVG with inline style elements, which is why
// style-src allows 'unsafe-inline' (scripts never do).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// New builds the desk and announces its first login link.
func New(o Options) (*Handler, error) {
	if o.Store == nil {
		return nil, errors.New("desk: no store")
	}
	if o.Clock == nil {
		o.Clock = quartz.NewReal()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.StreamLifetime <= 0 {
		o.StreamLifetime = DefaultStreamLifetime
	}
	origins := []string{}
	if o.Port > 0 {
		p := strconv.Itoa(o.Port)
		origins = append(origins, "http://127.0.0.1:"+p, "http://localhost:"+p, "http://[::1]:"+p)
	}
	if o.RateLimit == 0 {
		o.RateLimit = DefaultRateLimit
	}
	h := &Handler{
		guard: httpguard.New(httpguard.Options{
			AllowedOrigins: origins, LoopbackHostOnly: true, RateLimit: -1,
			MaxBodyBytes: 16 << 10, Clock: o.Clock,
		}),
		bearer: httpguard.Bearer(o.Token),
		token:  o.Token,
		auth:   newAuth(CookieName(o.Port), o.Clock),
		read: &reader{
			st:     o.Store,
			client: o.Store.Client(),
			events: events.NewLog(o.Store, events.LogOptions{}),
			works:  workflow.New(o.Store, workflow.Options{Clock: o.Clock}),
			convs:  conversations.New(o.Store, nil, conversations.WithClock(o.Clock)),
			clock:  o.Clock,
			live:   o.Liveness,
			owners: ownerJudge{observer: delivery.CurrentProcess(), self: o.Owner, timeout: delivery.DefaultOwnerTimeout,
				alive: delivery.ProcessRunning, clock: o.Clock},
		},
		feed:       newFeed(o.Store.DB(), o.Store.Dialect(), o.Clock, o.PollEvery),
		assets:     newAssets(),
		url:        strings.TrimRight(o.URL, "/"),
		loginLink:  o.LoginLink,
		heartbeat:  o.Heartbeat,
		lifetime:   o.StreamLifetime,
		clock:      o.Clock,
		log:        o.Logger,
		closing:    make(chan struct{}),
		liveReads:  make(chan struct{}, maxLiveReads),
		readOnly:   o.ReadOnly,
		standalone: o.NoProviders,
		origins:    origins,
		providers:  slices.Clone(o.Providers),
	}
	if !o.ReadOnly {
		h.act = newActor(o.Tools, !o.NoProviders)
	}
	if _, err := rand.Read(h.csrfKey[:]); err != nil {
		return nil, fmt.Errorf("desk: make the form token key: %w", err)
	}
	h.calls = httpguard.NewBuckets(o.RateLimit, 0, o.Clock)
	h.failures = httpguard.NewBuckets(o.RateLimit, 0, o.Clock)
	h.routes()
	if err := h.announceLogin(); err != nil {
		return nil, err
	}
	return h, nil
}

// Close ends every live stream and stops the change feed. Pages are still
// served afterwards (a server shutting down lets them finish).
func (h *Handler) Close() {
	h.closeOnce.Do(func() { close(h.closing) })
	h.feed.close()
}

// announceLogin makes a fresh one-time code and hands its link out.
func (h *Handler) announceLogin() error {
	code, err := h.auth.newCode()
	if err != nil {
		return fmt.Errorf("desk: make a login link: %w", err)
	}
	if h.loginLink != nil {
		h.loginLink(h.url + Base + "/login?code=" + url.QueryEscape(code))
	}
	return nil
}

func (h *Handler) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, Base+"/", http.StatusSeeOther) })
	m.HandleFunc("GET /desk", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, Base+"/", http.StatusSeeOther) })
	m.HandleFunc("GET /desk/{$}", h.sessionsPage)
	m.HandleFunc("GET /desk/sessions", h.sessionsPage)
	m.HandleFunc("GET /desk/sessions/{provider}/{native...}", h.sessionPage)
	m.HandleFunc("GET /desk/receipts", h.receiptsPage)
	m.HandleFunc("GET /desk/receipts/{id}", h.receiptPage)
	m.HandleFunc("GET /desk/work", h.workPage)
	m.HandleFunc("GET /desk/work/{id}", h.workItemPage)
	m.HandleFunc("GET /desk/claims", h.claimsPage)
	m.HandleFunc("GET /desk/conversations", h.conversationsPage)
	m.HandleFunc("GET /desk/conversations/{id}", h.conversationPage)
	m.HandleFunc("GET /desk/search", h.searchPage)
	m.HandleFunc("GET /desk/graph", h.overviewPage)
	m.HandleFunc("GET /desk/live/{view}", h.live)
	m.HandleFunc("GET /desk/assets/{name...}", func(w http.ResponseWriter, r *http.Request) { h.assets.serve(w, r, r.PathValue("name")) })
	m.HandleFunc("GET /desk/login", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, Base+"/", http.StatusSeeOther) })
	h.mux = m
}

// ServeHTTP screens the request (Host, Origin, rate, Fetch Metadata),
// admits it with the bearer token, the login code or the session cookie,
// and serves the route. Nothing is served to a request without a
// credential (but the icon): the static assets and the live streams are
// refused too.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with a form's POST, and the actions need the real one.
	// Nothing is sent to another origin either way.
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !h.guard.Screen(w, r) {
		return
	}
	if crossSiteRequest(r) {
		httpguard.WriteError(w, http.StatusForbidden, "cross_site_request")
		return
	}
	if (r.URL.Path == "/favicon.ico" || r.URL.Path == Base+"/favicon.ico") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// The pages link /desk/favicon.ico: under serve --http only /desk
		// and below reach the desk.
		// Browsers ask for it on their own, before signing in too; the
		// icon says nothing about the store, so it needs no credential.
		h.assets.serve(w, r, "favicon.svg")
		return
	}
	if r.URL.Path == Base+"/login" && (r.Method == http.MethodPost || r.URL.Query().Get("code") != "") {
		// A login attempt spends its address's bucket of failures first:
		// guessing is limited per address, a signed-in tab never is.
		if ok, retry := h.failures.Allow("address " + httpguard.RemoteIP(r)); !ok {
			httpguard.Refuse(w, retry)
			return
		}
		if h.login(w, r) {
			return
		}
	}
	key := "bearer"
	if !h.bearer.Verify(r) {
		id, ok := h.auth.session(r)
		if !ok {
			if ok, retry := h.failures.Allow("address " + httpguard.RemoteIP(r)); !ok {
				httpguard.Refuse(w, retry)
				return
			}
			h.refuse(w, r, "")
			return
		}
		key = "session " + id
	}
	if ok, retry := h.calls.Allow(key); !ok {
		httpguard.Refuse(w, retry)
		return
	}
	if tool, ok := actionTool(r.URL.Path); ok && r.Method == http.MethodPost {
		h.action(w, r, tool)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpguard.WriteError(w, http.StatusMethodNotAllowed, "method_not_allowed")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// login handles /desk/login: a GET with the one-time code, or a POST of
// the sign-in form with the token. It returns false to let the request
// go on to the ordinary credential check (a GET without a code).
func (h *Handler) login(w http.ResponseWriter, r *http.Request) bool {
	switch r.Method {
	case http.MethodGet:
		code := r.URL.Query().Get("code")
		if code == "" {
			return false
		}
		if !h.auth.useCode(code) {
			h.refuse(w, r, "That login link was already used or has expired. Use the newest link the desk printed, or paste the token.")
			return true
		}
		h.signIn(w, r)
		if err := h.announceLogin(); err != nil {
			h.log.Warn("desk: no new login link", "err", err)
		}
		return true
	case http.MethodPost:
		body, ok := h.guard.ReadBody(w, r)
		if !ok {
			return true
		}
		form, err := url.ParseQuery(string(body))
		token := strings.TrimSpace(form.Get("token"))
		if err != nil || token == "" || !h.token.Matches(token) {
			h.refuse(w, r, "That is not the desk's token.")
			return true
		}
		h.signIn(w, r)
		return true
	}
	return false
}

// signIn sets a new session cookie and sends the browser to the desk
// (303, so the code or the form never stays in the address bar).
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	c, err := h.auth.startSession()
	if err != nil {
		httpguard.WriteError(w, http.StatusInternalServerError, "internal_error")
		return
	}
	http.SetCookie(w, c)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, Base+"/", http.StatusSeeOther)
}

// refuse answers 401: the sign-in page for a browser, the guard's JSON
// otherwise. Neither says anything about the store.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, message string) {
	w.Header().Set("WWW-Authenticate", "Bearer")
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		httpguard.WriteError(w, http.StatusUnauthorized, httpguard.CodeUnauthorized)
		return
	}
	var body markup.Writer
	signinHTML(&body, message, Base+"/login")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(body.Bytes())
}

// render answers a page.
func (h *Handler) render(w http.ResponseWriter, status int, name string, data pageData) {
	body, err := renderPage(name, data)
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// fail answers a store or rendering error without its details (they are
// logged).
func (h *Handler) fail(w http.ResponseWriter, err error) {
	h.log.Error("desk: request failed", "err", err)
	http.Error(w, "The desk could not read the store; see the runtime's log.", http.StatusInternalServerError)
}

func (h *Handler) notFound(w http.ResponseWriter, what string) {
	h.render(w, http.StatusNotFound, "notfound", pageData{Title: "Not found", Data: what})
}

// pageData is what every page gets: the layout's fields and the page's Data.
type pageData struct {
	Title string
	Nav   string // the section highlighted in the navigation
	Live  string // the live stream's URL ("" for none)
	Now   time.Time
	Data  any
	// Query is the text of the search box.
	Query string
	// CSRF is the form token of the signed-in browser when it may act
	// from this page ("" hides every action).
	CSRF string
}

func (h *Handler) page(title, nav, live string, data any) pageData {
	return pageData{Title: title, Nav: nav, Live: live, Now: h.clock.Now(), Data: data}
}

func intParam(r *http.Request, name string) int {
	n, _ := strconv.Atoi(r.URL.Query().Get(name))
	return n
}

// oneOf returns v when it is one of allowed, else "".
func oneOf(v string, allowed []string) string {
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	return ""
}

// failRead answers a read error: a cursor or filter the paging layer
// refuses is the request's fault (400, with the rule it broke), anything
// else the store's.
func (h *Handler) failRead(w http.ResponseWriter, err error) {
	var bad *argv.Errors
	if errors.As(err, &bad) {
		h.render(w, http.StatusBadRequest, "notfound", pageData{Title: "Bad request", Data: bad.Error()})
		return
	}
	h.fail(w, err)
}

// readTimeout bounds the reads of one page or one live update.
const readTimeout = 10 * time.Second

// withCtx bounds a page's reads.
func (h *Handler) withCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return clockctx.WithTimeout(r.Context(), h.clock, readTimeout, "desk", "read")
}
