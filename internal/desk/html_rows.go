package desk

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/desk/markup"
	"github.com/agent-interop/runtime/internal/events"
)

// The parts of pages that the live streams also push on their own, each an
// element with a fixed id (or a row with its DOMID) that htmx swaps. oob is
// the element's hx-swap-oob value: "" in a page, "true" in a live update.

// ---- small pieces

func oobAttr(w *markup.Writer, oob string) {
	if oob != "" {
		w.Attr("hx-swap-oob", oob)
	}
}

// timeEl writes <time datetime="…">…</time>.
func timeEl(w *markup.Writer, t time.Time) {
	w.Raw(`<time`)
	w.Attr("datetime", t.UTC().Format(time.RFC3339Nano))
	w.Raw(`>`)
	w.Text(formatTime(t))
	w.Raw(`</time>`)
}

func timePtrEl(w *markup.Writer, t *time.Time) {
	w.Raw(`<time`)
	w.Attr("datetime", formatISOPtr(t))
	w.Raw(`>`)
	w.Text(formatTimePtr(t))
	w.Raw(`</time>`)
}

// label is a status as words: "waiting_on_approval" → "waiting on approval".
func label(s string) string { return strings.ReplaceAll(s, "_", " ") }

func liveStatusHTML(w *markup.Writer, now time.Time) {
	w.Raw(`<span id="live-status" hx-swap-oob="true">updated `)
	timeEl(w, now)
	w.Raw(`</span>`)
}

func livenessHTML(w *markup.Writer, l Liveness) {
	w.Raw(`<span class="badge live-`)
	w.Text(l.State)
	w.Raw(`"`)
	w.Attr("data-liveness", l.State)
	w.Attr("data-liveness-source", l.Source)
	if l.OwnerGone {
		w.Raw(` data-owner-gone="true"`)
	}
	w.Attr("title", l.Reason)
	w.Raw(`>`)
	w.Text(label(l.State))
	w.Raw(`</span>`)
}

func livenessSourceHTML(w *markup.Writer, l Liveness) {
	w.Raw(`<span class="source source-`)
	w.Text(l.Source)
	w.Raw(`">`)
	if l.Source == SourceRuntime {
		w.Raw(`from this runtime`)
	} else {
		w.Raw(`from the store`)
	}
	if l.OwnerGone {
		w.Raw(`, owner gone`)
	}
	w.Raw(`</span>`)
}

func statusHTML(w *markup.Writer, s string) {
	w.Raw(`<span class="badge st-`)
	w.Text(s)
	w.Raw(`"`)
	w.Attr("data-status", s)
	w.Raw(`>`)
	w.Text(s)
	w.Raw(`</span>`)
}

// refHTML writes a "<provider>:<nativeId>" reference, linked to the
// session's page when it is one.
func refHTML(w *markup.Writer, ref string) {
	if p := splitSessionRef(ref); p != "" {
		w.Raw(`<a`)
		w.URL("href", "", p)
		w.Raw(`><code>`)
		w.Text(shorten(ref, 60))
		w.Raw(`</code></a>`)
		return
	}
	w.Raw(`<code>`)
	w.Text(shorten(ref, 60))
	w.Raw(`</code>`)
}

// codeOrDash writes <code>s</code>, or a muted dash for "".
func codeOrDash(w *markup.Writer, s string) {
	if s != "" {
		w.Raw(`<code>`)
		w.Text(s)
		w.Raw(`</code>`)
		return
	}
	w.Raw(`<span class="muted">—</span>`)
}

func textOrDash(w *markup.Writer, s string) {
	if s != "" {
		w.Text(s)
		return
	}
	w.Raw(`<span class="muted">—</span>`)
}

// workLink writes <a href="/desk/work/ID"><code>ID</code></a>.
func workLink(w *markup.Writer, id string) {
	w.Raw(`<a`)
	w.URL("href", "/desk/work/", id)
	w.Raw(`><code>`)
	w.Text(id)
	w.Raw(`</code></a>`)
}

func sessionLink(w *markup.Writer, provider, nativeID string) {
	w.Raw(`<a`)
	w.URL("href", "", sessionPath(provider, nativeID))
	w.Raw(`>`)
}

// ---- sessions

func sessionRowHTML(w *markup.Writer, r SessionRow, oob string) {
	w.Raw(`<tr`)
	w.Attr("id", r.DOMID())
	oobAttr(w, oob)
	w.Attr("data-provider", r.Provider)
	w.Attr("data-native-id", r.NativeID)
	w.Raw(">\n<td>")
	w.Text(r.Provider)
	w.Raw("</td>\n<td>")
	sessionLink(w, r.Provider, r.NativeID)
	w.Raw(`<code>`)
	w.Text(shorten(r.NativeID, 40))
	w.Raw(`</code></a>`)
	if r.Title != "" {
		w.Raw(`<br><span class="muted">`)
		w.Text(shorten(r.Title, 80))
		w.Raw(`</span>`)
	}
	w.Raw("</td>\n<td>")
	codeOrDash(w, shorten(r.CWD, 60))
	w.Raw("</td>\n<td>")
	livenessHTML(w, r.Liveness)
	w.Raw(` `)
	livenessSourceHTML(w, r.Liveness)
	if r.State != "" {
		w.Raw(`<br><span class="muted">provider: `)
		w.Text(shorten(r.State, 40))
		w.Raw(`</span>`)
	}
	w.Raw("</td>\n<td>")
	switch {
	case len(r.Pending) == 0:
		w.Raw(`<span class="muted" data-pending="0">none</span>`)
	case r.Liveness.OwnerGone:
		w.Raw(`<span class="muted" data-pending="`)
		w.Int(len(r.Pending))
		w.Raw(`">`)
		w.Int(len(r.Pending))
		w.Raw(` unanswered, its runtime gone</span>`)
	default:
		w.Raw(`<span class="badge attention" data-pending="`)
		w.Int(len(r.Pending))
		w.Raw(`">`)
		w.Int(len(r.Pending))
		w.Raw(` pending</span>`)
	}
	w.Raw("</td>\n<td>")
	if r.LastEvent != nil {
		timePtrEl(w, r.LastEvent)
		w.Raw(` <span class="muted">#`)
		w.Int64(r.LastSeq)
		w.Raw(`</span>`)
	} else {
		w.Raw(`<span class="muted">no events</span>`)
	}
	w.Raw("</td>\n</tr>")
}

func sessionSummaryHTML(w *markup.Writer, r SessionRow, oob string) {
	w.Raw(`<section id="session-summary"`)
	oobAttr(w, oob)
	w.Raw(` aria-labelledby="summary-h"`)
	w.Attr("data-liveness", r.Liveness.State)
	w.Raw(">\n<h2 id=\"summary-h\">Now</h2>\n<dl class=\"facts\">\n<dt>Liveness</dt><dd>")
	livenessHTML(w, r.Liveness)
	w.Raw(` <span class="muted">`)
	w.Text(r.Liveness.Reason)
	if r.Liveness.ObservedAt != nil {
		w.Raw(`; last observed `)
		timePtrEl(w, r.Liveness.ObservedAt)
	}
	w.Raw("</span></dd>\n<dt>Source</dt><dd")
	w.Attr("data-liveness-source", r.Liveness.Source)
	w.Raw(`>`)
	w.Text(r.Liveness.SourceText())
	w.Raw("</dd>\n<dt>Provider</dt><dd>")
	w.Text(r.Provider)
	w.Raw("</dd>\n<dt>Native id</dt><dd><code>")
	w.Text(r.NativeID)
	w.Raw("</code></dd>\n<dt>Title</dt><dd>")
	textOrDash(w, r.Title)
	w.Raw("</dd>\n<dt>Workspace</dt><dd>")
	codeOrDash(w, r.CWD)
	w.Raw("</dd>\n<dt>Endpoint</dt><dd>")
	codeOrDash(w, r.Endpoint)
	if r.Host != "" {
		w.Raw(` <span class="muted">on `)
		w.Text(r.Host)
		w.Raw(`</span>`)
	}
	w.Raw("</dd>\n<dt>Provider state</dt><dd>")
	textOrDash(w, r.State)
	w.Raw("</dd>\n<dt>Seen</dt><dd>first ")
	timeEl(w, r.FirstSeen)
	w.Raw(`, last `)
	timeEl(w, r.LastSeen)
	w.Raw("</dd>\n<dt>Last event</dt><dd>")
	if r.LastEvent != nil {
		w.Raw(`#`)
		w.Int64(r.LastSeq)
		w.Raw(` at `)
		timePtrEl(w, r.LastEvent)
	} else {
		w.Raw(`<span class="muted">none recorded</span>`)
	}
	w.Raw("</dd>\n<dt>Pending approvals</dt><dd>")
	if len(r.Pending) > 0 {
		w.Raw(`<ul class="plain">`)
		for _, p := range r.Pending {
			w.Raw(`<li><span class="badge attention">`)
			w.Text(p.Type)
			w.Raw(`</span> `)
			if p.Title != "" {
				w.Raw(`<code>`)
				w.Text(p.Title)
				w.Raw(`</code>`)
			}
			w.Raw(` <span class="muted">event #`)
			w.Int64(p.Sequence)
			w.Raw(`, `)
			timeEl(w, p.At)
			w.Raw(`</span></li>`)
		}
		w.Raw(`</ul>`)
	} else {
		w.Raw(`<span class="muted">none</span>`)
	}
	w.Raw("</dd>\n</dl>\n</section>")
}

// ---- receipts

func receiptRowHTML(w *markup.Writer, r ReceiptRow, oob string) {
	w.Raw(`<tr`)
	w.Attr("id", r.DOMID())
	oobAttr(w, oob)
	w.Raw(` class="receipt"`)
	w.Attr("data-operation-id", r.ID)
	w.Attr("data-status", r.Status)
	w.Raw(">\n<td>")
	timeEl(w, r.Created)
	w.Raw("</td>\n<td><a")
	w.URL("href", "/desk/receipts/", r.ID)
	w.Raw(`>`)
	w.Text(r.Operation)
	w.Raw("</a></td>\n<td>")
	statusHTML(w, r.Status)
	if r.Verdict != "" {
		w.Raw(` <span class="verdict verdict-`)
		w.Text(r.Verdict)
		w.Raw(`">`)
		w.Text(r.Verdict)
		w.Raw(`</span>`)
	}
	if r.Reason != "" {
		w.Raw(`<br><span class="reason reason-`)
		w.Text(r.Status)
		w.Raw(`">`)
		w.Text(shorten(r.Reason, 160))
		w.Raw(`</span>`)
	}
	if r.Usage != "" {
		w.Raw(`<br><span class="muted usage">`)
		w.Text(r.Usage)
		w.Raw(`</span>`)
	}
	w.Raw("</td>\n<td>")
	w.Text(r.Provider)
	w.Raw(` `)
	sessionLink(w, r.Provider, r.NativeID)
	w.Raw(`<code>`)
	w.Text(shorten(r.NativeID, 24))
	w.Raw("</code></a></td>\n<td>")
	codeOrDash(w, shorten(r.Turn, 28))
	w.Raw("</td>\n<td>")
	timeEl(w, r.Updated)
	if r.ProviderState != "" {
		w.Raw(`<br><span class="muted">`)
		w.Text(shorten(r.ProviderState, 40))
		w.Raw(`</span>`)
	}
	w.Raw("</td>\n</tr>")
}

func receiptHeadHTML(w *markup.Writer) {
	w.Raw(`<thead><tr><th scope="col">Created</th><th scope="col">Operation</th><th scope="col">State</th><th scope="col">Session</th><th scope="col">Native turn</th><th scope="col">Last change</th></tr></thead>`)
}

func receiptTableHTML(w *markup.Writer, id string, rows []ReceiptRow, oob string) {
	w.Raw(`<div`)
	w.Attr("id", id)
	oobAttr(w, oob)
	w.Raw(` class="scroll">`)
	if len(rows) > 0 {
		w.Raw("<table>\n<caption class=\"sr-only\">Receipts of this session, newest first</caption>\n")
		receiptHeadHTML(w)
		w.Raw("\n<tbody>")
		for _, r := range rows {
			receiptRowHTML(w, r, "")
		}
		w.Raw(`</tbody></table>`)
	} else {
		w.Raw(`<p class="empty">No send, cancel or permission answer is recorded for this session.</p>`)
	}
	w.Raw(`</div>`)
}

func receiptDetailHTML(w *markup.Writer, d ReceiptDetail, oob string) {
	w.Raw(`<div id="receipt-detail"`)
	oobAttr(w, oob)
	w.Attr("data-status", d.Status)
	w.Raw(">\n<dl class=\"facts\">\n<dt>State</dt><dd>")
	statusHTML(w, d.Status)
	if d.Classification != "" {
		w.Raw(` <span class="muted">(`)
		w.Text(d.Classification)
		w.Raw(`)</span>`)
	}
	w.Raw("</dd>\n")
	if d.Reason != "" {
		w.Raw(`<dt>Reason</dt><dd class="reason reason-`)
		w.Text(d.Status)
		w.Raw(`">`)
		w.Text(d.Reason)
		w.Raw(`</dd>`)
	}
	w.Raw("\n")
	if d.Verdict != "" {
		w.Raw(`<dt>Verdict</dt><dd class="verdict verdict-`)
		w.Text(d.Verdict)
		w.Raw(`">`)
		w.Text(d.Verdict)
		if d.TurnError != "" {
			w.Raw(`: `)
			w.Text(d.TurnError)
		}
		w.Raw(`</dd>`)
	}
	w.Raw("\n")
	if d.Operation == "send" {
		w.Raw(`<dt>Usage</dt><dd>`)
		if d.Usage != "" {
			w.Text(d.Usage)
		} else {
			w.Raw(`<span class="muted">unknown (not reported)</span>`)
		}
		w.Raw(`</dd>`)
	}
	w.Raw("\n")
	if len(d.ChangedFiles) > 0 {
		w.Raw(`<dt>Changed files</dt><dd>`)
		for i, f := range d.ChangedFiles {
			if i > 0 {
				w.Raw(`, `)
			}
			w.Raw(`<code>`)
			w.Text(f)
			w.Raw(`</code>`)
		}
		w.Raw(`</dd>`)
	}
	w.Raw("\n<dt>Operation</dt><dd>")
	w.Text(d.Operation)
	w.Raw("</dd>\n<dt>Session</dt><dd>")
	w.Text(d.Provider)
	w.Raw(` `)
	sessionLink(w, d.Provider, d.NativeID)
	w.Raw(`<code>`)
	w.Text(d.NativeID)
	w.Raw("</code></a></dd>\n<dt>Native turn</dt><dd>")
	if d.Turn != "" {
		w.Raw(`<code>`)
		w.Text(d.Turn)
		w.Raw(`</code>`)
	} else {
		w.Raw(`<span class="muted">not known</span>`)
	}
	w.Raw("</dd>\n<dt>Idempotency key</dt><dd><code>")
	w.Text(d.Key)
	w.Raw(`</code>`)
	if d.ViaDesk {
		w.Raw(` <span class="badge" data-via="desk">done through the desk</span>`)
	}
	w.Raw("</dd>\n")
	if d.MessageID != "" {
		w.Raw(`<dt>Message</dt><dd><a`)
		w.URLQuery("href", "/desk/conversations/", d.ConversationID, "#", d.MessageDOMID)
		w.Attr("data-message-id", d.MessageID)
		w.Raw(`>message #`)
		w.Int64(d.MessageSequence)
		w.Raw(`</a> of conversation <a`)
		w.URL("href", "/desk/conversations/", d.ConversationID)
		w.Raw(`><code>`)
		w.Text(d.ConversationID)
		w.Raw(`</code></a></dd>`)
	}
	w.Raw("\n")
	if d.Owner != "" {
		w.Raw(`<dt>Owner</dt><dd><code>`)
		w.Text(d.Owner)
		w.Raw(`</code> <span class="muted">(the runtime process that follows it)</span></dd>`)
	}
	w.Raw("\n")
	if d.TextSHA != "" {
		w.Raw(`<dt>Text SHA-256</dt><dd><code>`)
		w.Text(d.TextSHA)
		w.Raw(`</code></dd>`)
	}
	w.Raw("\n<dt>Provider state</dt><dd>")
	textOrDash(w, d.ProviderState)
	w.Raw("</dd>\n<dt>Created</dt><dd>")
	timeEl(w, d.Created)
	w.Raw("</dd>\n<dt>Last change</dt><dd>")
	timeEl(w, d.Updated)
	w.Raw("</dd>\n</dl>\n<h2 id=\"timeline-h\">Timeline</h2>\n<ol class=\"timeline\" aria-labelledby=\"timeline-h\">\n<li>")
	timeEl(w, d.Created)
	w.Raw(` recorded before dispatch `)
	statusHTML(w, "queued")
	w.Raw("</li>\n")
	for _, e := range d.Events {
		w.Raw(`<li>`)
		timeEl(w, e.Timestamp)
		w.Raw(` event #`)
		w.Int64(e.Sequence)
		w.Raw(` <code>`)
		w.Text(e.Type)
		w.Raw(`</code><details><summary>data</summary><pre>`)
		w.Text(e.Data)
		w.Raw(`</pre></details></li>`)
	}
	w.Raw("\n")
	if d.Status != "queued" {
		w.Raw(`<li>`)
		timeEl(w, d.Updated)
		w.Raw(` now `)
		statusHTML(w, d.Status)
		w.Raw(`</li>`)
	}
	w.Raw("\n</ol>\n")
	if d.Detail != "" {
		w.Raw(`<details><summary>Stored detail</summary><pre>`)
		w.Text(d.Detail)
		w.Raw(`</pre></details>`)
	}
	w.Raw("\n</div>")
}

// ---- events

func eventRowHTML(w *markup.Writer, e EventRow) {
	w.Raw(`<tr`)
	w.Attr("id", e.DOMID())
	w.Attr("data-type", e.Type)
	w.Raw(`><td>`)
	w.Int64(e.Sequence)
	w.Raw(`</td><td>`)
	timeEl(w, e.Timestamp)
	w.Raw(`</td><td><code>`)
	w.Text(e.Type)
	w.Raw(`</code>`)
	if e.Epoch > 1 {
		w.Raw(` <span class="muted">epoch `)
		w.Int64(e.Epoch)
		w.Raw(`</span>`)
	}
	w.Raw(`</td><td><details><summary>`)
	w.Text(shorten(e.Data, 90))
	w.Raw(`</summary><pre>`)
	w.Text(e.Data)
	if e.Cut {
		w.Raw(` …`)
	}
	w.Raw(`</pre></details></td></tr>`)
}

func eventRowsHTML(w *markup.Writer, rows []EventRow, gap *events.Gap) {
	if gap != nil {
		w.Raw(`<tr class="gap"><td colspan="4">Events `)
		w.Int64(gap.From)
		w.Raw(`–`)
		w.Int64(gap.To)
		w.Raw(` were deleted by retention before this page saw them.</td></tr>`)
	}
	for _, e := range rows {
		eventRowHTML(w, e)
	}
}

// ---- work

func workStatusHTML(w *markup.Writer, r WorkRow) {
	if r.Blocked {
		w.Raw(`<span class="badge st-blocked" data-status="blocked" data-blocked-by="dependency" title="open, waiting on an unfinished dependency">blocked</span>`)
		return
	}
	statusHTML(w, r.Status)
}

// sessionsCell writes a work item's source → destination.
func sessionsCell(w *markup.Writer, source, destination string) {
	if source != "" {
		refHTML(w, source)
	} else {
		w.Raw(`<span class="muted">—</span>`)
	}
	if destination != "" {
		w.Raw(` → `)
		refHTML(w, destination)
	}
}

func workRowHTML(w *markup.Writer, r WorkRow, oob string) {
	w.Raw(`<tr`)
	w.Attr("id", r.DOMID())
	oobAttr(w, oob)
	w.Attr("data-work-id", r.ID)
	w.Attr("data-status", r.Shown())
	w.Raw(">\n<td><a")
	w.URL("href", "/desk/work/", r.ID)
	w.Raw(`>`)
	w.Text(shorten(r.Objective, 140))
	w.Raw("</a></td>\n<td><code class=\"muted\">")
	w.Text(r.ID)
	w.Raw("</code></td>\n<td>")
	workStatusHTML(w, r)
	w.Raw("</td>\n<td>")
	sessionsCell(w, r.Source, r.Destination)
	w.Raw("</td>\n<td>")
	timeEl(w, r.Updated)
	w.Raw("</td>\n</tr>")
}

func edgesHTML(w *markup.Writer, edges []GraphEdge, withIDs bool) {
	for _, e := range edges {
		w.Raw(`<li`)
		if withIDs {
			w.Attr("id", e.DOMID())
		}
		w.Raw(`>`)
		workLink(w, e.From)
		w.Raw(` depends on `)
		workLink(w, e.To)
		w.Raw(`</li>`)
	}
}

func workGraphHTML(w *markup.Writer, g Graph, oob string) {
	w.Raw(`<section id="work-graph"`)
	oobAttr(w, oob)
	w.Raw(" aria-labelledby=\"graph-h\">\n<h2 id=\"graph-h\">Dependencies</h2>\n<p class=\"muted\">Work items this one depends on and those waiting on it, up to ")
	w.Int(g.Depth)
	w.Raw(` steps`)
	if g.Truncated {
		w.Raw(` (cut at `)
		w.Int(len(g.Nodes))
		w.Raw(` items)`)
	}
	w.Raw(". An arrow reads “depends on”.</p>\n")
	if len(g.Nodes) > 1 {
		w.Raw(`<figure class="graph"><pre class="mermaid" aria-hidden="true">`)
		w.Text(g.Mermaid)
		w.Raw(`</pre><figcaption class="sr-only">Dependency graph; the same items are listed below.</figcaption></figure>`)
	} else {
		w.Raw(`<p class="empty">No dependencies recorded either way.</p>`)
	}
	w.Raw("\n")
	if len(g.Edges) > 0 {
		w.Raw(`<ul class="edges">`)
		edgesHTML(w, g.Edges, false)
		w.Raw(`</ul>`)
	}
	w.Raw("\n</section>")
}

func claimRowHTML(w *markup.Writer, c ClaimRow) {
	w.Raw(`<tr`)
	w.Attr("id", c.DOMID())
	w.Attr("data-claim-id", c.ID)
	w.Attr("data-status", c.Status)
	if len(c.Conflicts) > 0 {
		w.Raw(` class="conflict" data-conflicts="`)
		w.Int(len(c.Conflicts))
		w.Raw(`"`)
	}
	w.Raw(">\n<td><code>")
	w.Text(c.Resource)
	w.Raw(`</code><br><span class="muted">`)
	w.Text(c.Kind)
	w.Raw("</span></td>\n<td>")
	refHTML(w, c.Session)
	w.Raw("</td>\n<td>")
	w.Text(c.Mode)
	w.Raw("</td>\n<td>")
	statusHTML(w, c.Status)
	w.Raw("</td>\n<td>")
	timeEl(w, c.Expires)
	w.Raw("</td>\n<td>")
	workLink(w, c.WorkID)
	w.Raw("</td>\n<td>")
	if len(c.Conflicts) > 0 {
		w.Raw(`<ul class="plain conflicts">`)
		for _, x := range c.Conflicts {
			w.Raw(`<li><span class="badge conflict-badge">conflict</span> `)
			refHTML(w, x.Session)
			w.Raw(` asked for `)
			w.Text(x.Mode)
			w.Raw(` <code>`)
			w.Text(x.Resource)
			w.Raw(`</code> at `)
			timeEl(w, x.At)
			w.Raw(`: refused</li>`)
		}
		w.Raw(`</ul>`)
	} else {
		w.Raw(`<span class="muted">none</span>`)
	}
	w.Raw("</td>\n<td class=\"act\">")
	if c.Status == "active" {
		w.Raw(`<button type="submit" form="release-form" name="claimId"`)
		w.Attr("value", c.ID)
		w.Raw(`>Release</button>`)
	}
	w.Raw("</td>\n</tr>")
}

func workRecordsHTML(w *markup.Writer, d WorkDetail, oob string) {
	w.Raw(`<div id="work-records"`)
	oobAttr(w, oob)
	w.Raw(">\n<section aria-labelledby=\"ev-h\"><h2 id=\"ev-h\">Evidence</h2>\n")
	if len(d.Evidence) > 0 {
		w.Raw("<div class=\"scroll\"><table><caption class=\"sr-only\">Evidence, newest first</caption>\n" +
			`<thead><tr><th scope="col">Captured</th><th scope="col">Kind</th><th scope="col">Trust</th><th scope="col">Summary</th><th scope="col">SHA-256</th><th scope="col">Size</th><th scope="col">Session</th></tr></thead>` + "\n<tbody>")
		for _, e := range d.Evidence {
			w.Raw(`<tr id="ev-`)
			w.Text(e.ID)
			w.Raw(`"><td>`)
			timeEl(w, e.Captured)
			w.Raw(`</td><td>`)
			w.Text(e.Kind)
			w.Raw(`</td><td><span class="badge trust-`)
			w.Text(e.Trust)
			w.Raw(`">`)
			w.Text(label(e.Trust))
			w.Raw(`</span></td><td>`)
			w.Text(shorten(e.Summary, 160))
			w.Raw(`<br><code class="muted">`)
			w.Text(e.ID)
			w.Raw(`</code></td><td><code`)
			w.Attr("title", e.Hash)
			w.Raw(`>`)
			w.Text(shorten(e.Hash, 12))
			w.Raw(`</code></td><td>`)
			w.Int(e.Bytes)
			w.Raw(` B</td><td>`)
			if e.Session != "" {
				refHTML(w, e.Session)
			} else {
				w.Raw(`<span class="muted">—</span>`)
			}
			w.Raw(`</td></tr>`)
		}
		w.Raw(`</tbody></table></div>`)
		if d.MoreEvidence {
			w.Raw(`<p class="muted">Only the newest evidence is shown.</p>`)
		}
		w.Raw("\n")
	} else {
		w.Raw("<p class=\"empty\">No evidence recorded.</p>")
	}
	w.Raw("</section>\n<section aria-labelledby=\"ho-h\"><h2 id=\"ho-h\">Handoffs</h2>\n")
	if len(d.Handoffs) > 0 {
		w.Raw("<div class=\"scroll\"><table><caption class=\"sr-only\">Handoffs, newest first</caption>\n" +
			`<thead><tr><th scope="col">Created</th><th scope="col">From → to</th><th scope="col">Lifecycle</th><th scope="col">Packet</th><th scope="col">Objective</th></tr></thead>` + "\n<tbody>")
		for _, h := range d.Handoffs {
			w.Raw(`<tr id="ho-`)
			w.Text(h.ID)
			w.Raw(`"`)
			w.Attr("data-status", h.Status)
			w.Raw(`><td>`)
			timeEl(w, h.Created)
			w.Raw(`</td><td>`)
			refHTML(w, h.Source)
			w.Raw(` → `)
			if h.Destination != "" {
				refHTML(w, h.Destination)
			} else {
				w.Raw(`<span class="muted">anyone</span>`)
			}
			w.Raw(`</td><td>`)
			statusHTML(w, h.Status)
			if h.Continuation != "" {
				w.Raw(`<br><span class="muted">`)
				w.Text(label(h.Continuation))
				w.Raw(`</span>`)
			}
			w.Raw(`<br><span class="muted">updated `)
			timeEl(w, h.Updated)
			w.Raw(`</span></td><td>`)
			w.Int(h.Tokens)
			w.Raw(` of `)
			w.Int(h.Budget)
			w.Raw(` tokens<meter min="0" max="`)
			w.Int(h.Budget)
			w.Raw(`" value="`)
			w.Int(h.Tokens)
			w.Raw(`" aria-label="packet size">`)
			w.Int(percent(h.Tokens, h.Budget))
			w.Raw(`%</meter>`)
			if len(h.Omitted) > 0 {
				w.Raw(`<br><span class="muted">omitted: `)
				w.Text(strings.Join(h.Omitted, ", "))
				w.Raw(`</span>`)
			}
			w.Raw(`</td><td>`)
			w.Text(shorten(h.Objective, 140))
			w.Raw(`</td></tr>`)
		}
		w.Raw(`</tbody></table></div>`)
		if d.MoreHandoffs {
			w.Raw(`<p class="muted">Only the newest handoffs are shown.</p>`)
		}
		w.Raw("\n")
	} else {
		w.Raw("<p class=\"empty\">No handoffs recorded.</p>")
	}
	w.Raw("</section>\n<section aria-labelledby=\"rv-h\"><h2 id=\"rv-h\">Reviews</h2>\n")
	if len(d.Reviews) > 0 {
		w.Raw("<div class=\"scroll\"><table><caption class=\"sr-only\">Reviews, newest first</caption>\n" +
			`<thead><tr><th scope="col">Created</th><th scope="col">Reviewer</th><th scope="col">Verdict</th><th scope="col">Findings</th><th scope="col">Subjects</th></tr></thead>` + "\n<tbody>")
		for _, r := range d.Reviews {
			w.Raw(`<tr id="rv-`)
			w.Text(r.ID)
			w.Raw(`"><td>`)
			timeEl(w, r.Created)
			w.Raw(`</td><td>`)
			refHTML(w, r.Reviewer)
			w.Raw(`</td><td>`)
			statusHTML(w, r.Verdict)
			w.Raw(` <span class="muted">`)
			w.Text(label(r.Provenance))
			w.Raw(`</span></td><td>`)
			w.Int(r.Findings)
			if r.Blocking != 0 {
				w.Raw(` <span class="badge attention">`)
				w.Int(r.Blocking)
				w.Raw(` blocking</span>`)
			}
			w.Raw(`</td><td>`)
			for _, s := range r.Subjects {
				w.Raw(`<code>`)
				w.Text(s)
				w.Raw(`</code> `)
			}
			w.Raw(`</td></tr>`)
		}
		w.Raw(`</tbody></table></div>`)
		if d.MoreReviews {
			w.Raw(`<p class="muted">Only the newest reviews are shown.</p>`)
		}
		w.Raw("\n")
	} else {
		w.Raw("<p class=\"empty\">No reviews recorded.</p>")
	}
	w.Raw("</section>\n<section aria-labelledby=\"cl-h\"><h2 id=\"cl-h\">Claims</h2>\n")
	if len(d.Claims) > 0 {
		w.Raw("<div class=\"scroll\"><table><caption class=\"sr-only\">Claims of this work item</caption>\n" +
			`<thead><tr><th scope="col">Resource</th><th scope="col">Holder</th><th scope="col">Mode</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Work</th><th scope="col">Conflicts</th></tr></thead>` + "\n<tbody>")
		for _, c := range d.Claims {
			claimRowHTML(w, c)
		}
		w.Raw("</tbody></table></div>\n")
	} else {
		w.Raw("<p class=\"empty\">No claims recorded.</p>")
	}
	w.Raw("</section>\n</div>")
}

// ---- claims

func claimsLiveHTML(w *markup.Writer, p ClaimPage, oob string) {
	w.Raw(`<div id="claims-live"`)
	oobAttr(w, oob)
	w.Raw(">\n<section aria-labelledby=\"conf-h\" class=\"")
	if len(p.Conflicts) > 0 {
		w.Raw(`has-conflicts`)
	}
	w.Raw("\"><h2 id=\"conf-h\">Conflicts</h2>\n")
	if len(p.Conflicts) > 0 {
		w.Raw("<p>Requests refused because another session held an overlapping claim, newest first.</p>\n<ul class=\"plain conflicts\" id=\"conflict-list\">")
		for _, c := range p.Conflicts {
			w.Raw(`<li class="conflict"`)
			w.Attr("data-held-claim", c.HeldClaim)
			w.Raw(`><span class="badge conflict-badge">conflict</span> `)
			timeEl(w, c.At)
			w.Raw(` `)
			refHTML(w, c.Session)
			w.Raw(` asked for `)
			w.Text(c.Mode)
			w.Raw(` `)
			w.Text(c.Kind)
			w.Raw(` <code>`)
			w.Text(c.Resource)
			w.Raw(`</code> (work `)
			workLink(w, c.WorkID)
			w.Raw(`): refused, held by `)
			refHTML(w, c.HeldSession)
			w.Raw(` (<code>`)
			w.Text(c.HeldClaim)
			w.Raw(`</code>)</li>`)
		}
		w.Raw("</ul>\n")
	} else {
		w.Raw(`<p class="empty">No claim request has been refused.</p>`)
	}
	w.Raw("</section>\n<section aria-labelledby=\"active-h\"><h2 id=\"active-h\">Active claims by resource</h2>\n")
	if len(p.Rows) > 0 {
		w.Raw("<div class=\"scroll\"><table><caption class=\"sr-only\">Active claims, by resource</caption>\n" +
			`<thead><tr><th scope="col">Resource</th><th scope="col">Holder</th><th scope="col">Mode</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Work</th><th scope="col">Conflicts</th><th scope="col" class="act"><span class="sr-only">Act</span></th></tr></thead>` +
			"\n<tbody id=\"claim-rows\">")
		for _, c := range p.Rows {
			claimRowHTML(w, c)
		}
		w.Raw("</tbody></table></div>\n")
	} else {
		w.Raw(`<p class="empty">No active claim.</p>`)
	}
	w.Raw("\n")
	listPositionHTML(w, p.Position())
	w.Raw("</section>\n</div>")
}

// ---- conversations

func conversationRowHTML(w *markup.Writer, c ConversationRow, oob string) {
	w.Raw(`<tr`)
	w.Attr("id", c.DOMID())
	oobAttr(w, oob)
	w.Raw(">\n<td><a")
	w.URL("href", "/desk/conversations/", c.ID)
	w.Raw(`>`)
	w.Text(shorten(c.Title, 100))
	w.Raw(`</a><br><code class="muted">`)
	w.Text(c.ID)
	w.Raw("</code></td>\n<td>")
	w.Int(c.Participants)
	w.Raw(`</td><td data-messages="`)
	w.Int(c.Messages)
	w.Raw(`">`)
	w.Int(c.Messages)
	w.Raw("</td>\n<td>")
	timeEl(w, c.Updated)
	w.Raw("</td>\n</tr>")
}

func messageHTML(w *markup.Writer, m MessageRow, oob string) {
	w.Raw(`<li`)
	w.Attr("id", m.DOMID())
	oobAttr(w, oob)
	w.Raw(` class="message"`)
	w.Attr("data-message-id", m.ID)
	w.Attr("data-delivery", m.Delivery)
	w.Raw(">\n<p class=\"meta\"><span class=\"muted\">#")
	w.Int64(m.Sequence)
	w.Raw(`</span> <span class="sender">`)
	refHTML(w, m.Sender)
	w.Raw(`</span> → <span class="recipient">`)
	refHTML(w, m.Recipient)
	w.Raw(`</span> `)
	timeEl(w, m.Created)
	w.Raw("\n")
	if m.ReplyTo != "" {
		w.Raw(`<span class="reply">reply to `)
		if m.ReplyOnPage {
			w.Raw(`<a`)
			w.URL("href", "#", m.ReplyDOMID())
			w.Attr("data-reply-to", m.ReplyTo)
			w.Raw(`>`)
			w.Text(m.ReplyTo)
			w.Raw(`</a>`)
		} else {
			w.Raw(`<code`)
			w.Attr("data-reply-to", m.ReplyTo)
			w.Raw(`>`)
			w.Text(m.ReplyTo)
			w.Raw(`</code>`)
		}
		w.Raw(`</span>`)
	}
	w.Raw("</p>\n<div class=\"text\">")
	w.Text(m.Text)
	w.Raw("</div>\n<p class=\"meta\">delivery ")
	statusHTML(w, m.Delivery)
	if m.Operation != "" {
		w.Raw(` <a`)
		w.URL("href", "/desk/receipts/", m.Operation)
		w.Raw(`>receipt</a>`)
	}
	if m.Turn != "" {
		w.Raw(` <span class="muted">turn <code>`)
		w.Text(shorten(m.Turn, 28))
		w.Raw(`</code></span>`)
	}
	if m.ProviderState != "" {
		w.Raw(` <span class="muted">provider `)
		w.Text(m.ProviderState)
		w.Raw(`</span>`)
	}
	w.Raw("</p>\n</li>")
}

func conversationBudgetHTML(w *markup.Writer, b *conversations.BudgetLeft, oob string) {
	if b == nil {
		return
	}
	w.Raw(`<p id="budget"`)
	oobAttr(w, oob)
	w.Raw(`>`)
	w.Int64(b.MessagesLeft)
	w.Raw(` of `)
	w.Int64(b.Messages)
	w.Raw(` messages left · `)
	w.Int64(b.TurnsPerParticipant)
	w.Raw(` turns per participant`)
	for _, t := range b.TurnsLeft {
		w.Raw(` · <code>`)
		w.Text(t.ParticipantID)
		w.Raw(`</code> `)
		w.Int64(t.Left)
		w.Raw(` left`)
	}
	w.Raw(` · tokens `)
	w.Text(fmt.Sprint(b.TokensUsed.Answer()))
	w.Raw(` used of `)
	w.Int64(b.Tokens)
	w.Raw(`</p>`)
}

// ---- lists

func pagerHTML(w *markup.Writer, t listTail) {
	w.Raw(`<nav id="`)
	w.Text(t.ID)
	w.Raw(`-pager" class="pager" aria-label="Pages"`)
	oobAttr(w, t.OOB)
	if t.Next == "" {
		w.Raw(` hidden>`)
	} else {
		w.Raw(`><a`)
		w.URL("href", "", t.Base+t.Query)
		w.Raw(`>First page</a> <a rel="next"`)
		w.URL("href", "", nextURL(t.Base, t.Query, t.Next))
		w.Raw(`>Next page</a>`)
	}
	w.Raw(`</nav>`)
}

// nextURL is the link to the page after cursor.
func nextURL(base, query, cursor string) string {
	if query == "" {
		return base + "?cursor=" + url.QueryEscape(cursor)
	}
	return base + query + "&cursor=" + url.QueryEscape(cursor)
}

func listEmptyHTML(w *markup.Writer, t listTail) {
	w.Raw(`<p id="`)
	w.Text(t.ID)
	w.Raw(`-empty" class="empty"`)
	oobAttr(w, t.OOB)
	if t.Hidden {
		w.Raw(` hidden`)
	}
	w.Raw(`>`)
	w.Text(t.Text)
	w.Raw(`</p>`)
}

func listPositionHTML(w *markup.Writer, p Position) {
	w.Raw(`<p id="`)
	w.Text(p.ID)
	w.Raw(`-position" class="position muted"`)
	oobAttr(w, p.OOB)
	w.Raw(`>`)
	if p.To != 0 {
		w.Text(groupDigits(p.From))
		w.Raw(`–`)
		w.Text(groupDigits(p.To))
		w.Raw(` of `)
		w.Text(groupDigits(p.Total))
	}
	w.Raw(`</p>`)
}

// ---- the session page's actions and mentions

// csrfHTML is the hidden form-token field every action form carries.
func csrfHTML(w *markup.Writer, token string) {
	w.Raw(`<input type="hidden" name="csrf"`)
	w.Attr("value", token)
	w.Raw(`>`)
}

// sessionFields are the hidden provider and nativeId fields of an action.
func sessionFields(w *markup.Writer, s SessionRow) {
	w.Raw(`<input type="hidden" name="provider"`)
	w.Attr("value", s.Provider)
	w.Raw(`><input type="hidden" name="nativeId"`)
	w.Attr("value", s.NativeID)
	w.Raw(`>`)
}

func sessionActionsHTML(w *markup.Writer, v sessionView, csrf, oob string) {
	w.Raw(`<section id="session-actions" aria-labelledby="act-h"`)
	oobAttr(w, oob)
	w.Raw(">\n<h2 id=\"act-h\">Act</h2>\n")
	if v.AsksErr != "" {
		w.Raw(`<p class="reason">The open permission requests could not be listed: `)
		w.Text(v.AsksErr)
		w.Raw(`</p>`)
	}
	w.Raw("\n")
	for _, a := range v.Asks {
		w.Raw(`<form class="ask" method="post" action="/desk/act/permission"`)
		w.Attr("data-request-id", a.RequestID)
		w.Raw(">\n")
		csrfHTML(w, csrf)
		sessionFields(w, v.Session)
		w.Raw(`<input type="hidden" name="requestId"`)
		w.Attr("value", a.RequestID)
		w.Raw(">\n<p><span class=\"badge attention\">")
		w.Text(a.Method)
		w.Raw(`</span> `)
		w.Text(a.Title)
		for _, p := range a.Paths {
			w.Raw(` <code>`)
			w.Text(p)
			w.Raw(`</code>`)
		}
		w.Raw("</p>\n")
		for _, c := range a.Conflicts {
			w.Raw(`<p class="reason">Conflicts with a claim: `)
			w.Text(c)
			w.Raw(`</p>`)
		}
		w.Raw("\n<p class=\"choices\">")
		for _, o := range a.Options {
			w.Raw(`<button type="submit" name="decision"`)
			w.Attr("value", o.ID)
			if o.Allows() {
				w.Raw(` class="allow"`)
			} else {
				w.Raw(` class="deny"`)
			}
			w.Attr("data-kind", o.Kind)
			w.Raw(`>`)
			w.Text(o.Label())
			w.Raw(`</button> `)
		}
		w.Raw("</p>\n</form>")
	}
	if len(v.Asks) == 0 {
		w.Raw(`<p class="muted" id="no-asks">No permission request is waiting for an answer.</p>`)
	}
	w.Raw("\n<form method=\"post\" action=\"/desk/act/cancel\" class=\"cancel\">")
	csrfHTML(w, csrf)
	sessionFields(w, v.Session)
	w.Raw("\n<button type=\"submit\" class=\"deny\">Cancel the running turn</button></form>\n</section>")
}

func sessionMentionsHTML(w *markup.Writer, v sessionView) {
	w.Raw("<section id=\"session-mentions\" aria-labelledby=\"mention-h\">\n<h2 id=\"mention-h\">In the store</h2>\n<dl class=\"facts\">\n<dt>Work</dt><dd>")
	for _, r := range v.Work.Rows {
		w.Raw(`<a`)
		w.URL("href", "/desk/work/", r.ID)
		w.Raw(`>`)
		w.Text(shorten(r.Objective, 60))
		w.Raw(`</a> <code class="muted">`)
		w.Text(r.ID)
		w.Raw(`</code>`)
		workStatusHTML(w, r)
		w.Raw(`<br>`)
	}
	if len(v.Work.Rows) == 0 {
		w.Raw(`<span class="muted">none</span>`)
	}
	w.Raw("</dd>\n<dt>Claims</dt><dd>")
	for _, c := range v.Claims.Rows {
		w.Raw(`<code>`)
		w.Text(c.Resource)
		w.Raw(`</code> `)
		statusHTML(w, c.Status)
		w.Raw(`<br>`)
	}
	if len(v.Claims.Rows) == 0 {
		w.Raw(`<span class="muted">no active claim</span>`)
	}
	w.Raw("</dd>\n<dt>Conversations</dt><dd>")
	for _, id := range v.Conversations {
		w.Raw(`<a`)
		w.URL("href", "/desk/conversations/", id)
		w.Raw(`><code>`)
		w.Text(id)
		w.Raw(`</code></a><br>`)
	}
	if len(v.Conversations) == 0 {
		w.Raw(`<span class="muted">none</span>`)
	}
	w.Raw("</dd>\n</dl>\n</section>")
}

// ---- counts

func receiptCountsHTML(w *markup.Writer, c ReceiptCounts) {
	f := c.Filter
	w.Raw(`<nav id="receipt-counts"`)
	oobAttr(w, c.OOB)
	w.Raw(` class="counts" aria-label="Receipts by state" data-total="`)
	w.Int(c.Total)
	w.Raw("\">\n<a")
	w.URL("href", "/desk/receipts", queryString("provider", f.Provider, "nativeId", f.NativeID, "operation", f.Operation))
	if f.Status == "" {
		w.Raw(` aria-current="true"`)
	}
	w.Raw(`>all <strong data-count="all">`)
	w.Text(groupDigits(c.Total))
	w.Raw("</strong></a>\n")
	for _, n := range c.Counts {
		w.Raw(`<a`)
		w.URL("href", "/desk/receipts", queryString("provider", f.Provider, "nativeId", f.NativeID, "operation", f.Operation, "status", n.Status))
		if n.Status == f.Status {
			w.Raw(` aria-current="true"`)
		}
		countLink(w, n, groupDigits(n.N))
		w.Raw("</a>\n")
	}
	w.Raw(`</nav>`)
}

// countLink writes ` class="st-S">S as words <strong data-count="S">n</strong>`.
func countLink(w *markup.Writer, n StatusCount, count string) {
	w.Raw(` class="st-`)
	w.Text(n.Status)
	w.Raw(`">`)
	w.Text(label(n.Status))
	w.Raw(` <strong data-count="`)
	w.Text(n.Status)
	w.Raw(`">`)
	w.Text(count)
	w.Raw(`</strong>`)
}

func sessionCountsHTML(w *markup.Writer, c SessionCounts) {
	w.Raw(`<p id="session-counts"`)
	oobAttr(w, c.OOB)
	w.Raw(` class="counts" aria-label="Sessions by liveness" data-total="`)
	w.Int(c.Total)
	w.Raw("\">\n<span>all <strong data-count=\"all\">")
	w.Text(groupDigits(c.Total))
	w.Raw("</strong></span>\n")
	for _, n := range c.Counts {
		w.Raw(`<span`)
		countLink(w, n, groupDigits(n.N))
		w.Raw("</span>\n")
	}
	w.Raw(`</p>`)
}

func workCountsHTML(w *markup.Writer, c WorkCounts) {
	f := c.Filter
	w.Raw(`<nav id="work-counts"`)
	oobAttr(w, c.OOB)
	w.Raw(` class="counts" aria-label="Work items by status" data-total="`)
	w.Int(c.Total)
	w.Raw("\">\n<a")
	w.URL("href", "/desk/work", queryString("session", f.Session, "q", f.Query, "sort", f.Sort))
	if f.Status == "" {
		w.Raw(` aria-current="true"`)
	}
	w.Raw(`>all <strong data-count="all">`)
	w.Int(c.Total)
	w.Raw("</strong></a>\n")
	for _, n := range c.Counts {
		w.Raw(`<a`)
		w.URL("href", "/desk/work", queryString("status", n.Status, "session", f.Session, "q", f.Query, "sort", f.Sort))
		if n.Status == f.Status {
			w.Raw(` aria-current="true"`)
		}
		countLink(w, n, strconv.Itoa(n.N))
		w.Raw("</a>\n")
	}
	w.Raw(`</nav>`)
}

func workBoardHTML(w *markup.Writer, v workView) {
	w.Raw(`<div class="board" id="work-board"`)
	oobAttr(w, v.BoardOOB)
	w.Raw(`>`)
	for _, col := range v.Board {
		w.Raw(`<section class="column"`)
		w.Attr("data-status", col.Status)
		w.Raw(` aria-labelledby="col-`)
		w.Text(col.Status)
		w.Raw("\">\n<h2 id=\"col-")
		w.Text(col.Status)
		w.Raw(`">`)
		w.Text(label(col.Status))
		w.Raw(` <span class="muted">`)
		w.Int(col.N)
		w.Raw("</span></h2>\n<ul class=\"plain cards\">")
		for _, r := range col.Rows {
			w.Raw(`<li`)
			w.Attr("id", r.DOMID())
			w.Attr("data-work-id", r.ID)
			w.Raw(`><a`)
			w.URL("href", "/desk/work/", r.ID)
			w.Raw(`>`)
			w.Text(shorten(r.Objective, 90))
			w.Raw(`</a><br><code class="muted">`)
			w.Text(r.ID)
			w.Raw(`</code> `)
			timeEl(w, r.Updated)
			w.Raw(`</li>`)
		}
		if len(col.Rows) == 0 {
			w.Raw(`<li class="muted">none</li>`)
		}
		w.Raw("</ul>\n")
		if col.More {
			w.Raw(`<p><a`)
			w.URL("href", "/desk/work", queryString("status", col.Status, "session", v.Filter.Session, "q", v.Filter.Query))
			w.Raw(`>all `)
			w.Int(col.N)
			w.Raw(` `)
			w.Text(label(col.Status))
			w.Raw(`</a></p>`)
		}
		w.Raw("\n</section>")
	}
	w.Raw(`</div>`)
}

func overviewGraphHTML(w *markup.Writer, o Overview) {
	w.Raw(`<div id="overview-graph"`)
	oobAttr(w, o.OOB)
	w.Raw(">\n<p id=\"overview-summary\" data-chained=\"")
	w.Int(o.Chained)
	w.Raw(`" data-drawn="`)
	w.Int(len(o.Graph.Nodes))
	w.Raw(`">`)
	w.Int(o.Chained)
	w.Raw(` unfinished items are in dependency chains`)
	if o.Graph.Truncated {
		w.Raw(`; the `)
		w.Int(len(o.Graph.Nodes))
		w.Raw(` most recently updated are drawn (filter by session to see others)`)
	}
	w.Raw(".</p>\n")
	if len(o.Graph.Nodes) > 0 {
		w.Raw(`<figure class="graph"><pre class="mermaid" aria-hidden="true">`)
		w.Text(o.Graph.Mermaid)
		w.Raw("</pre><figcaption class=\"sr-only\">Dependency overview; the same ties are listed below.</figcaption></figure>\n<ul class=\"edges\">")
		edgesHTML(w, o.Graph.Edges, true)
		w.Raw("</ul>\n")
	} else {
		w.Raw(`<p class="empty">No unfinished work item waits on another.</p>`)
	}
	w.Raw("\n</div>")
}

// ---- usage

func usageLineHTML(w *markup.Writer, id, usage, oob string) {
	w.Raw(`<p`)
	w.Attr("id", id)
	oobAttr(w, oob)
	w.Raw(`>Usage: `)
	w.Text(usage)
	w.Raw(`</p>`)
}

func workUsageHTML(w *markup.Writer, usage, oob string) {
	w.Raw(`<dd id="work-usage"`)
	oobAttr(w, oob)
	w.Raw(`>`)
	w.Text(usage)
	w.Raw(`</dd>`)
}

// percent is a of b in whole percent (0 when b is not positive).
func percent(a, b int) int {
	if b <= 0 {
		return 0
	}
	return a * 100 / b
}
