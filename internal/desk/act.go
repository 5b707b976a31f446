package desk

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/argv"
	"github.com/agent-interop/runtime/internal/httpguard"
	"github.com/agent-interop/runtime/internal/workflow"
)

// The writes a person can make from the desk. Each is the MCP tool of the
// same name, run through its catalog entry (the same validation) and the
// runtime's handlers (the same services: the delivery ledger for a
// permission answer and a cancel, the claims service for a release), so a
// desk action is recorded exactly as a tool call is. Delivery operations
// carry an idempotency key starting with deskKeyPrefix, which is how a
// receipt says it was made through the desk; a release is recorded as
// approval evidence on the claim's work item.
const (
	toolRespond = "respond_to_permission"
	toolCancel  = "cancel_session"
	toolRelease = "release_claim"
	toolPending = "list_permission_requests"

	// deskKeyPrefix starts the idempotency key of every operation the
	// desk records.
	deskKeyPrefix = "desk-"
	// csrfField is the form field that carries the session's token.
	csrfField = "csrf"
)

// actionTool is the tool of one of the desk's POST routes. A switch, not
// a package-level map: a map literal is built by the package's init in
// every process the binary runs (serve included), which never uses it.
func actionTool(path string) (tool string, ok bool) {
	switch path {
	case Base + "/act/permission":
		return toolRespond, true
	case Base + "/act/cancel":
		return toolCancel, true
	case Base + "/act/release":
		return toolRelease, true
	}
	return "", false
}

// actor runs the desk's actions over the runtime's handlers.
type actor struct {
	tools   catalogs.Handlers
	entries map[string]*catalogs.Entry
	// delivers is set when the tools reach the providers (a permission
	// answer and a cancel can be delivered); else only a release works.
	delivers bool
}

func newActor(tools catalogs.Handlers, delivers bool) *actor {
	if tools == nil {
		return nil
	}
	a := &actor{tools: tools, entries: map[string]*catalogs.Entry{}, delivers: delivers}
	for _, e := range catalogs.All() {
		switch e.Name {
		case toolRespond, toolCancel, toolRelease, toolPending:
			a.entries[e.Name] = e
		}
	}
	return a
}

// call decodes args with the tool's catalog entry and runs its handler.
func (a *actor) call(ctx context.Context, tool string, args map[string]any) (any, error) {
	e := a.entries[tool]
	if e == nil {
		return nil, fmt.Errorf("desk: no tool %s in the catalog", tool)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	in, err := e.Decode(raw)
	if err != nil {
		return nil, err
	}
	return e.Call(ctx, a.tools, in)
}

// PermissionAsk is a permission request a provider holds open now, with
// the options it offered (the runtime's memory: only the process that
// drives the session has them).
type PermissionAsk struct {
	RequestID string
	Method    string
	Title     string
	Paths     []string
	Options   []PermissionChoice
	Conflicts []string
}

// PermissionChoice is one option a provider offered.
type PermissionChoice struct {
	ID, Name, Kind string
}

// Label is what the option's button says.
func (c PermissionChoice) Label() string {
	if c.Name != "" {
		return c.Name
	}
	return strings.ReplaceAll(c.ID, "_", " ")
}

// Allows reports an option that lets the provider go on.
func (c PermissionChoice) Allows() bool {
	k := c.Kind
	if k == "" {
		k = c.ID
	}
	return strings.HasPrefix(k, "allow") || k == "accept" || k == "approved" || k == "acceptForSession"
}

// pending lists the open permission requests of one session.
func (a *actor) pending(ctx context.Context, provider, nativeID string) ([]PermissionAsk, error) {
	out, err := a.call(ctx, toolPending, map[string]any{"session": provider + ":" + nativeID, "limit": 20})
	if err != nil {
		return nil, err
	}
	page, ok := out.(*catalogs.ListPermissionRequestsOutput)
	if !ok {
		return nil, fmt.Errorf("desk: %s answered %T", toolPending, out)
	}
	asks := make([]PermissionAsk, 0, len(page.Pending))
	for _, p := range page.Pending {
		ask := PermissionAsk{RequestID: p.RequestID, Method: p.Method}
		if p.Title != nil {
			ask.Title = *p.Title
		}
		if p.Paths != nil {
			ask.Paths = *p.Paths
		}
		for _, o := range p.Options {
			c := PermissionChoice{ID: o.ID}
			if o.Name != nil {
				c.Name = *o.Name
			}
			if o.Kind != nil {
				c.Kind = *o.Kind
			}
			ask.Options = append(ask.Options, c)
		}
		if p.Conflicts != nil {
			for _, c := range *p.Conflicts {
				ask.Conflicts = append(ask.Conflicts, fmt.Sprintf("%s holds %s", c.Holder, c.Resource))
			}
		}
		asks = append(asks, ask)
	}
	return asks, nil
}

// csrfToken is the form token of the browser session whose cookie value
// is cookie: an HMAC under a key only this desk knows, so it is fixed for
// the session, differs between sessions, and cannot be derived from
// anything a page of another origin can read.
func (h *Handler) csrfToken(cookie string) string {
	m := hmac.New(sha256.New, h.csrfKey[:])
	m.Write([]byte(cookie))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// formToken is the CSRF token to put in the forms of a page answered to
// r, or "" when r may not act (no actions, read-only, or no browser
// session: a bearer-token caller has the MCP tools).
func (h *Handler) formToken(r *http.Request) string {
	if h.act == nil {
		return ""
	}
	c, err := r.Cookie(h.auth.cookie)
	if err != nil || c.Value == "" || !h.auth.Verify(r) {
		return ""
	}
	return h.csrfToken(c.Value)
}

// refusalMessage says what a person can do about one of the refusals that
// are no attack: a desk that is read-only (read_only names the command the
// person started: the desk of serve --http, or the stand-alone desk,
// read_only_standalone), or that was started on its own. A switch, not a
// package-level map, for the reason given at actionTool.
func refusalMessage(why string) (msg string, ok bool) {
	switch why {
	case "read_only":
		return "this desk was started with --read-only (interop-runtime serve --http --read-only): it shows pending " +
			"requests, turns and claims but does not act on them; start interop-runtime serve --http without --read-only " +
			"to act from the desk", true
	case "read_only_standalone":
		return "this desk was started with --read-only (interop-runtime desk --read-only): it shows pending " +
			"requests, turns and claims but does not act on them; start interop-runtime desk without --read-only to release " +
			"a claim from it, or act from the desk of interop-runtime serve --http (its /desk/ page), which can also answer " +
			"a permission request and cancel a turn", true
	case "actions_unavailable":
		return "this desk was started on its own (interop-runtime desk): it reads the store but holds " +
			"no provider connection, so it cannot answer a permission request, cancel a turn or release a claim; " +
			"act from the desk of interop-runtime serve --http (its /desk/ page)", true
	case "needs_provider":
		return "this desk was started on its own (interop-runtime desk): it can release a claim, but it holds " +
			"no provider connection, so it cannot answer a permission request or cancel a turn (only the runtime process " +
			"driving the session can deliver them); do it from the desk of interop-runtime serve --http (its /desk/ page) " +
			"or with the respond_to_permission and cancel_session tools", true
	}
	return "", false
}

// delivers reports a desk that can answer permission requests and cancel
// turns (not only release claims).
func (h *Handler) delivers() bool { return h.act != nil && h.act.delivers }

// actionRefusal says why a POST to an action route may not act, or ""
// when it may. Every check runs before the body is read; nothing changes
// for a refused request.
func (h *Handler) actionRefusal(r *http.Request, tool string) string {
	if h.readOnly {
		return "read_only"
	}
	if h.act == nil {
		return "actions_unavailable"
	}
	if tool != toolRelease && !h.act.delivers {
		return "needs_provider"
	}
	// Fetch Metadata: a browser marks the request of a page of another
	// origin (a page on another local port is same-site, not same-origin).
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "":
	default:
		return "cross_site_request"
	}
	// Origin: a browser sends it on every POST; it must be this desk's.
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" || !h.ownOrigin(origin, r) {
		return "origin_not_allowed"
	}
	if !h.auth.Verify(r) {
		return "no_browser_session"
	}
	return ""
}

// ownOrigin reports an Origin that names the desk itself: one of its own
// origins when it knows its port, else the Host the request was sent to.
func (h *Handler) ownOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return false
	}
	if len(h.origins) > 0 {
		for _, o := range h.origins {
			if o == origin {
				return true
			}
		}
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// action serves a POST to an action route: the checks of actionRefusal,
// then the form's CSRF token against the session's, then the tool.
func (h *Handler) action(w http.ResponseWriter, r *http.Request, tool string) {
	w.Header().Set("Cache-Control", "no-store")
	if why := h.actionRefusal(r, tool); why != "" {
		h.log.Warn("desk: action refused", "path", r.URL.Path, "reason", why)
		msg, ok := refusalMessage(why)
		if why == "read_only" && h.standalone {
			msg, _ = refusalMessage("read_only_standalone")
		}
		if ok {
			httpguard.WriteJSON(w, http.StatusForbidden, map[string]string{"error": why, "message": msg})
			return
		}
		httpguard.WriteError(w, http.StatusForbidden, why)
		return
	}
	body, ok := h.guard.ReadBody(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	c, cerr := r.Cookie(h.auth.cookie)
	if err != nil || cerr != nil || !hmac.Equal([]byte(form.Get(csrfField)), []byte(h.csrfToken(c.Value))) {
		h.log.Warn("desk: action refused", "path", r.URL.Path, "reason", "csrf_token")
		httpguard.WriteError(w, http.StatusForbidden, "csrf_token")
		return
	}
	ctx, cancel := h.withCtx(r)
	defer cancel()
	switch tool {
	case toolRespond, toolCancel:
		h.deliveryAction(ctx, w, r, tool, form)
	case toolRelease:
		h.releaseAction(ctx, w, r, form)
	}
}

// deliveryAction answers a permission request or cancels a turn through
// the delivery ledger, then shows the operation's receipt.
func (h *Handler) deliveryAction(ctx context.Context, w http.ResponseWriter, r *http.Request, tool string, form url.Values) {
	key, err := deskKey()
	if err != nil {
		h.fail(w, err)
		return
	}
	args := map[string]any{"provider": form.Get("provider"), "nativeId": form.Get("nativeId"), "idempotencyKey": key}
	if tool == toolRespond {
		args["requestId"], args["decision"] = form.Get("requestId"), form.Get("decision")
	}
	out, err := h.act.call(ctx, tool, args)
	if err != nil {
		h.actionFailed(w, tool, err)
		return
	}
	d, ok := out.(*catalogs.Delivery)
	if !ok || d.OperationID == "" {
		h.fail(w, fmt.Errorf("desk: %s answered %T", tool, out))
		return
	}
	http.Redirect(w, r, joinPath("receipts", d.OperationID), http.StatusSeeOther)
}

// releaseAction releases a claim through the claims service and records
// that a person did so from the desk as evidence on the claim's work.
func (h *Handler) releaseAction(ctx context.Context, w http.ResponseWriter, r *http.Request, form url.Values) {
	out, err := h.act.call(ctx, toolRelease, map[string]any{"claimId": form.Get("claimId")})
	if err != nil {
		h.actionFailed(w, toolRelease, err)
		return
	}
	c, ok := out.(*catalogs.Claim)
	if !ok {
		h.fail(w, fmt.Errorf("desk: %s answered %T", toolRelease, out))
		return
	}
	if c.WorkID != "" {
		work, session := c.WorkID, c.SessionID
		_, err := h.read.works.AddEvidence(ctx, workflow.AddEvidenceInput{
			WorkID: &work, SessionID: &session, Kind: "approval", Trust: "human_accepted",
			Source:  workflow.EvidenceSource{Adapter: "desk", Protocol: toolRelease, NativeEventID: c.ID},
			Summary: fmt.Sprintf("Claim %s on %s (held by %s) released through the desk", c.ID, c.Resource, c.SessionID),
			Data:    map[string]any{"claimId": c.ID, "resource": c.Resource, "holder": c.SessionID, "via": "desk"},
		})
		if err != nil {
			h.fail(w, fmt.Errorf("record the desk's release of claim %s: %w", c.ID, err))
			return
		}
	}
	http.Redirect(w, r, Base+"/claims", http.StatusSeeOther)
}

// actionFailed answers a tool's refusal: the input's fault (a field the
// catalog refuses, a request no longer pending, a claim conflict) is a
// 409 page with the tool's own sentence; nothing was changed.
func (h *Handler) actionFailed(w http.ResponseWriter, tool string, err error) {
	h.log.Warn("desk: action failed", "tool", tool, "err", err)
	status := http.StatusConflict
	var bad *argv.Errors
	if errors.As(err, &bad) {
		status = http.StatusBadRequest
	}
	h.render(w, status, "notfound", pageData{Title: "Not done", Data: tool + " was not done: " + err.Error()})
}

// deskKey is a fresh idempotency key of a desk action.
func deskKey() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("desk: make an idempotency key: %w", err)
	}
	return deskKeyPrefix + hex.EncodeToString(b[:]), nil
}

// viaDesk reports an operation the desk recorded (by its key).
func viaDesk(key string) bool { return strings.HasPrefix(key, deskKeyPrefix) }
