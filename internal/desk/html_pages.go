package desk

import (
	"fmt"
	"strconv"

	"github.com/agent-interop/runtime/internal/desk/markup"
)

// layoutHTML writes the frame every page shares around its content.
func layoutHTML(w *markup.Writer, pd pageData, content func(w *markup.Writer)) {
	w.Raw(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="/desk/favicon.ico" type="image/svg+xml">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,"historyCacheSize":0}'>
<title>`)
	w.Text(pd.Title)
	w.Raw(` · traffic desk</title>
<link rel="stylesheet" href="/desk/assets/desk.css">
<script src="/desk/assets/vendor/htmx.min.js" defer></script>
<script src="/desk/assets/vendor/sse.min.js" defer></script>
<script src="/desk/assets/desk.js" defer></script>
</head>
<body`)
	if pd.CSRF != "" {
		w.Raw(` class="can-act"`)
	}
	w.Raw(`>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <p class="brand"><a href="/desk/">traffic desk</a></p>
  <nav aria-label="Views">
    <ul>
      <li><a href="/desk/sessions"`)
	current(w, pd.Nav == "sessions")
	w.Raw(`>Sessions</a></li>
      <li><a href="/desk/receipts"`)
	current(w, pd.Nav == "receipts")
	w.Raw(`>Receipts</a></li>
      <li><a href="/desk/work"`)
	current(w, pd.Nav == "work")
	w.Raw(`>Work</a></li>
      <li><a href="/desk/claims"`)
	current(w, pd.Nav == "claims")
	w.Raw(`>Claims</a></li>
      <li><a href="/desk/conversations"`)
	current(w, pd.Nav == "conversations")
	w.Raw(`>Conversations</a></li>
    </ul>
  </nav>
  <form class="search" method="get" action="/desk/search" role="search" aria-label="Search the desk"><label for="desk-search" class="sr-only">Search by id or text</label><input id="desk-search" type="search" name="q"`)
	w.Attr("value", pd.Query)
	w.Raw(` placeholder="id, session or text" maxlength="200" size="22"> <button type="submit">Search</button></form>
  <p class="live">`)
	if pd.Live != "" {
		w.Raw(`<span id="live-state" role="status" data-state="connecting">connecting…</span> `)
		liveStatusHTML(w, pd.Now)
	} else {
		w.Raw(`<span class="muted">not live (an older page)</span>`)
	}
	w.Raw("</p>\n</header>\n<main id=\"main\" tabindex=\"-1\">\n")
	content(w)
	w.Raw("\n</main>\n")
	if pd.Live != "" {
		w.Raw(`<div id="live" hx-ext="sse"`)
		w.URL("sse-connect", "", pd.Live)
		w.Raw(`><div sse-swap="update" hx-swap="none"></div></div>`)
	}
	w.Raw("\n</body>\n</html>\n")
}

func current(w *markup.Writer, on bool) {
	if on {
		w.Raw(` aria-current="page"`)
	}
}

// optionsHTML writes one <option> per value, the one equal to selected
// selected; labelled shows each as words (label).
func optionsHTML(w *markup.Writer, values []string, selected string, labelled bool) {
	for _, v := range values {
		w.Raw(`<option`)
		w.Attr("value", v)
		if v == selected {
			w.Raw(` selected`)
		}
		w.Raw(`>`)
		if labelled {
			w.Text(label(v))
		} else {
			w.Text(v)
		}
		w.Raw(`</option>`)
	}
}

// listFootHTML writes a list's position, empty-list line and pager.
func listFootHTML(w *markup.Writer, p Position, t listTail) {
	listPositionHTML(w, p)
	w.Raw("\n")
	listEmptyHTML(w, t)
	w.Raw("\n")
	pagerHTML(w, t)
	w.Raw("\n")
}

func sessionsHTML(w *markup.Writer, v sessionsView) {
	w.Raw(`
<h1>Sessions</h1>
<p class="lede">Every provider session the runtime has seen, newest first, with what the store says it is doing.</p>
`)
	sessionCountsHTML(w, v.Counts)
	w.Raw(`
<form class="filters" method="get" action="/desk/sessions" role="search" aria-label="Filter sessions">
<div><label for="f-provider">Provider</label>
<select id="f-provider" name="provider"><option value="">any</option>`)
	optionsHTML(w, v.Providers, v.Filter.Provider, false)
	w.Raw(`</select></div>
<div><label for="f-workspace">Workspace</label>
<input id="f-workspace" name="workspace"`)
	w.Attr("value", v.Filter.Workspace)
	w.Raw(` placeholder="/path/to/project" size="28"></div>
<div><button type="submit">Filter</button> <a href="/desk/sessions">Clear</a></div>
</form>
<div class="scroll"><table id="sessions">
<caption class="sr-only">Provider sessions, newest first</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Session</th><th scope="col">Workspace</th><th scope="col">Liveness</th><th scope="col">Pending approvals</th><th scope="col">Last event</th></tr></thead>
<tbody id="session-rows">`)
	for _, r := range v.Page.Rows {
		sessionRowHTML(w, r, "")
	}
	w.Raw("</tbody>\n</table></div>\n")
	listFootHTML(w, v.Position, v.Tail)
}

func sessionHTML(w *markup.Writer, v sessionView, csrf string) {
	w.Raw("\n<h1>Session <code>")
	w.Text(v.Session.Provider)
	w.Raw(`:`)
	w.Text(shorten(v.Session.NativeID, 48))
	w.Raw("</code></h1>\n")
	if v.Undiscovered {
		w.Raw(`<p class="notice" id="undiscovered">No runtime has discovered this session: the store only mentions it (below). Its liveness is unknown.</p>`)
	}
	w.Raw("\n")
	sessionSummaryHTML(w, v.Session, "")
	w.Raw("\n")
	if v.CanAct {
		sessionActionsHTML(w, v, csrf, "")
	}
	w.Raw("\n")
	if v.ActNote {
		w.Raw(`<p class="notice" id="act-elsewhere">This desk was started on its own and holds no provider connection: answer this session's permission requests and cancel its turns from the desk of <code>interop-runtime serve --http</code>. Claims can be released here, on the <a href="/desk/claims">Claims</a> page.</p>`)
	}
	w.Raw("\n")
	sessionMentionsHTML(w, v)
	w.Raw("\n")
	usageLineHTML(w, "session-usage", v.Usage, "")
	w.Raw("\n<section aria-labelledby=\"rc-h\">\n<h2 id=\"rc-h\">Receipts</h2>\n")
	receiptTableHTML(w, "session-receipts", v.Receipts.Rows, "")
	w.Raw("\n<p><a")
	w.URL("href", "/desk/receipts", queryString("provider", v.Session.Provider, "nativeId", v.Session.NativeID))
	w.Raw(`>All receipts of this session</a></p>
</section>
<section aria-labelledby="ev-h">
<h2 id="ev-h">Event stream</h2>
<p class="muted">The newest `)
	w.Int(len(v.Events.Rows))
	w.Raw(` events; new ones are added below as the provider sends them.</p>
<div class="scroll"><table id="events">
<caption class="sr-only">Events of this session, oldest first</caption>
<thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Data</th></tr></thead>
<tbody id="event-rows">`)
	eventRowsHTML(w, v.Events.Rows, v.Events.Gap)
	w.Raw("</tbody>\n</table></div>\n<p id=\"event-rows-empty\" class=\"empty\"")
	if len(v.Events.Rows) > 0 {
		w.Raw(` hidden`)
	}
	w.Raw(">No event recorded yet.</p>\n</section>\n")
}

func receiptsHTML(w *markup.Writer, v receiptsView) {
	w.Raw(`
<h1>Receipts</h1>
<p class="lede">Every send, cancel and permission answer, newest first: recorded before it is dispatched, then moved to its outcome.</p>
`)
	receiptCountsHTML(w, v.Counts)
	w.Raw(`
<form class="filters" method="get" action="/desk/receipts" role="search" aria-label="Filter receipts">
<div><label for="f-provider">Provider</label>
<select id="f-provider" name="provider"><option value="">any</option>`)
	optionsHTML(w, v.Providers, v.Filter.Provider, false)
	w.Raw(`</select></div>
<div><label for="f-status">State</label>
<select id="f-status" name="status"><option value="">any</option>`)
	optionsHTML(w, v.States, v.Filter.Status, true)
	w.Raw(`</select></div>
<div><label for="f-operation">Operation</label>
<select id="f-operation" name="operation"><option value="">any</option>`)
	optionsHTML(w, v.Operations, v.Filter.Operation, false)
	w.Raw(`</select></div>
<div><label for="f-native">Native session id</label>
<input id="f-native" name="nativeId"`)
	w.Attr("value", v.Filter.NativeID)
	w.Raw(` size="24"></div>
<div><button type="submit">Filter</button> <a href="/desk/receipts">Clear</a></div>
</form>
<div class="scroll"><table id="receipts">
<caption class="sr-only">Receipts, newest first</caption>
`)
	receiptHeadHTML(w)
	w.Raw("\n<tbody id=\"receipt-rows\">")
	for _, r := range v.Page.Rows {
		receiptRowHTML(w, r, "")
	}
	w.Raw("</tbody>\n</table></div>\n")
	if v.Page.Searched != 0 {
		w.Raw(`<p class="muted">This page looked through `)
		w.Int(v.Page.Searched)
		w.Raw(` receipts for the filter; the next page looks further back.</p>`)
	}
	w.Raw("\n")
	listFootHTML(w, v.Position, v.Tail)
}

func receiptHTML(w *markup.Writer, d ReceiptDetail) {
	w.Raw("\n<h1>Receipt <code>")
	w.Text(d.ID)
	w.Raw("</code></h1>\n")
	receiptDetailHTML(w, d, "")
	w.Raw("\n")
}

// workOrder says how the work list is sorted.
func workOrder(w *markup.Writer, sort string) {
	switch sort {
	case "created":
		w.Raw(`most recently created first`)
	case "status":
		w.Raw(`by status, then most recently updated`)
	default:
		w.Raw(`most recently updated first`)
	}
}

func workHTML(w *markup.Writer, v workView) {
	f := v.Filter
	board := v.View == "board"
	w.Raw("\n<h1>Work</h1>\n<p class=\"lede\">Work items, ")
	workOrder(w, f.Sort)
	w.Raw(". Open one for its dependency graph, evidence, handoffs, reviews and claims. An open item waiting on an unfinished dependency shows as blocked.</p>\n")
	workCountsHTML(w, v.Counts)
	w.Raw("\n<p class=\"views\" id=\"work-views\">View: ")
	if board {
		w.Raw(`<a`)
		w.URL("href", "/desk/work", queryString("status", f.Status, "session", f.Session, "q", f.Query, "sort", f.Sort))
		w.Raw(`>list</a> · <strong aria-current="page">board</strong>`)
	} else {
		w.Raw(`<strong aria-current="page">list</strong> · <a`)
		w.URL("href", "/desk/work", queryString("session", f.Session, "q", f.Query, "view", "board"))
		w.Raw(`>board by status</a>`)
	}
	w.Raw(` · <a`)
	w.URL("href", "/desk/graph", queryString("session", f.Session))
	w.Raw(">dependency overview</a></p>\n<form class=\"filters\" method=\"get\" action=\"/desk/work\" role=\"search\" aria-label=\"Filter work items\">\n")
	if board {
		w.Raw(`<input type="hidden" name="view" value="board">`)
	}
	w.Raw(`
<div><label for="f-status">Status</label>
<select id="f-status" name="status"><option value="">any</option>`)
	optionsHTML(w, v.Statuses, f.Status, true)
	w.Raw(`</select></div>
<div><label for="f-session">Session</label>
<input id="f-session" name="session"`)
	w.Attr("value", f.Session)
	w.Raw(` size="24" placeholder="codex:…"></div>
<div><label for="f-q">Objective or id</label>
<input id="f-q" name="q"`)
	w.Attr("value", f.Query)
	w.Raw(" size=\"28\"></div>\n")
	if !board {
		w.Raw("<div><label for=\"f-sort\">Sort</label>\n<select id=\"f-sort\" name=\"sort\">")
		for _, s := range v.Sorts {
			w.Raw(`<option value="`)
			if s != "updated" {
				w.Text(s)
			}
			w.Raw(`"`)
			if s == f.Sort || (s == "updated" && f.Sort == "") {
				w.Raw(` selected`)
			}
			w.Raw(`>`)
			workOrder(w, s)
			w.Raw(`</option>`)
		}
		w.Raw(`</select></div>`)
	}
	w.Raw("\n<div><button type=\"submit\">Filter</button> <a href=\"/desk/work\">Clear</a></div>\n</form>\n")
	if board {
		workBoardHTML(w, v)
	} else {
		w.Raw("\n<div class=\"scroll\"><table id=\"work\">\n<caption class=\"sr-only\">Work items, ")
		workOrder(w, f.Sort)
		w.Raw(`</caption>
<thead><tr><th scope="col">Objective</th><th scope="col">Id</th><th scope="col">Status</th><th scope="col">Sessions</th><th scope="col">Updated</th></tr></thead>
<tbody id="work-rows">`)
		for _, r := range v.Page.Rows {
			workRowHTML(w, r, "")
		}
		w.Raw("</tbody>\n</table></div>\n")
		listFootHTML(w, v.Position, v.Tail)
	}
	w.Raw("\n")
}

// plainList writes <dt>title</dt><dd><ul class="plain"><li>…</li></ul></dd>
// for a non-empty list, each item in <code> when code is set.
func plainList(w *markup.Writer, items []string, code bool) {
	w.Raw(`<dd><ul class="plain">`)
	for _, s := range items {
		w.Raw(`<li>`)
		if code {
			w.Raw(`<code>`)
			w.Text(s)
			w.Raw(`</code>`)
		} else {
			w.Text(s)
		}
		w.Raw(`</li>`)
	}
	w.Raw(`</ul></dd>`)
}

func workItemHTML(w *markup.Writer, d WorkDetail) {
	w.Raw("\n<h1>Work <code>")
	w.Text(d.ID)
	w.Raw("</code></h1>\n<section aria-labelledby=\"wi-h\"><h2 id=\"wi-h\" class=\"sr-only\">Summary</h2>\n<p class=\"objective\">")
	w.Text(d.Objective)
	w.Raw("</p>\n<dl class=\"facts\">\n<dt>Status</dt><dd>")
	workStatusHTML(w, d.WorkRow)
	w.Raw("</dd>\n<dt>Sessions</dt><dd>")
	sessionsCell(w, d.Source, d.Destination)
	w.Raw("</dd>\n<dt>Usage</dt>")
	workUsageHTML(w, d.Usage, "")
	w.Raw("\n<dt>Created</dt><dd>")
	timeEl(w, d.Created)
	w.Raw(`; updated `)
	timeEl(w, d.Updated)
	w.Raw("</dd>\n")
	if len(d.Acceptance) > 0 {
		w.Raw(`<dt>Acceptance</dt>`)
		plainList(w, d.Acceptance, false)
	}
	w.Raw("\n")
	if len(d.Risks) > 0 {
		w.Raw(`<dt>Risks</dt>`)
		plainList(w, d.Risks, false)
	}
	w.Raw("\n")
	if len(d.Questions) > 0 {
		w.Raw(`<dt>Open questions</dt>`)
		plainList(w, d.Questions, false)
	}
	w.Raw("\n")
	if len(d.ChangedFiles) > 0 {
		w.Raw(`<dt>Changed files</dt>`)
		plainList(w, d.ChangedFiles, true)
	}
	w.Raw("\n</dl>\n<form class=\"filters\" method=\"get\"")
	w.URL("action", "/desk/work/", d.ID)
	w.Raw(" aria-label=\"Graph depth\">\n<div><label for=\"f-depth\">Graph depth</label>\n<select id=\"f-depth\" name=\"depth\">")
	for depth := 1; depth <= MaxGraphDepth; depth++ {
		w.Raw(`<option value="`)
		w.Int(depth)
		w.Raw(`"`)
		if depth == d.Graph.Depth {
			w.Raw(` selected`)
		}
		w.Raw(`>`)
		w.Int(depth)
		w.Raw(`</option>`)
	}
	w.Raw("</select></div>\n<div><button type=\"submit\">Redraw</button></div>\n</form>\n</section>\n")
	workGraphHTML(w, d.Graph, "")
	w.Raw("\n")
	workRecordsHTML(w, d, "")
	w.Raw("\n")
}

func claimsHTML(w *markup.Writer, v claimsView, csrf string) {
	w.Raw(`
<h1>Claims</h1>
<p class="lede">Resources leased to sessions, by resource, with the requests that were refused because of them.</p>
<form class="filters" method="get" action="/desk/claims" role="search" aria-label="Filter claims">
<div><label for="f-resource">Resource contains</label>
<input id="f-resource" name="resource"`)
	w.Attr("value", v.Filter.Resource)
	w.Raw(` size="28"></div>
<div><label for="f-session">Holder session</label>
<input id="f-session" name="session"`)
	w.Attr("value", v.Filter.Session)
	w.Raw(` size="24" placeholder="codex:…"></div>
<div><button type="submit">Filter</button> <a href="/desk/claims">Clear</a></div>
</form>
`)
	if csrf != "" {
		w.Raw(`<form id="release-form" method="post" action="/desk/act/release">`)
		csrfHTML(w, csrf)
		w.Raw(`</form>`)
	}
	w.Raw("\n")
	claimsLiveHTML(w, v.Page, "")
	w.Raw("\n")
	pagerHTML(w, v.Tail)
	w.Raw("\n")
}

func conversationsHTML(w *markup.Writer, v conversationsView) {
	w.Raw(`
<h1>Conversations</h1>
<p class="lede">Directed messages between sessions, newest conversation first.</p>
<div class="scroll"><table id="conversations">
<caption class="sr-only">Conversations, newest first</caption>
<thead><tr><th scope="col">Title</th><th scope="col">Participants</th><th scope="col">Messages</th><th scope="col">Updated</th></tr></thead>
<tbody id="conversation-rows">`)
	for _, r := range v.Page.Rows {
		conversationRowHTML(w, r, "")
	}
	w.Raw("</tbody>\n</table></div>\n")
	listFootHTML(w, v.Position, v.Tail)
}

func conversationHTML(w *markup.Writer, d ConversationDetail) {
	w.Raw("\n<h1>")
	w.Text(d.Title)
	w.Raw("</h1>\n<p class=\"muted\"><code>")
	w.Text(d.ID)
	w.Raw(`</code> · `)
	w.Int(d.ConversationRow.Messages)
	w.Raw(` messages · created `)
	timeEl(w, d.Created)
	w.Raw("</p>\n")
	if d.Budget != nil {
		w.Raw("<section aria-labelledby=\"bd-h\"><h2 id=\"bd-h\">Budget</h2>\n")
		conversationBudgetHTML(w, d.Budget, "")
		w.Raw("\n</section>")
	}
	w.Raw("\n")
	usageLineHTML(w, "conversation-usage", d.Usage, "")
	w.Raw("\n<section aria-labelledby=\"pp-h\"><h2 id=\"pp-h\">Participants</h2>\n")
	if len(d.Participants) > 0 {
		w.Raw(`<ul class="plain">`)
		for _, p := range d.Participants {
			w.Raw(`<li><code>`)
			w.Text(p.ID)
			w.Raw(`</code>`)
			if p.Role != "" {
				w.Raw(` <span class="badge">`)
				w.Text(p.Role)
				w.Raw(`</span>`)
			}
			w.Raw(` — `)
			sessionLink(w, p.Provider, p.NativeID)
			w.Text(p.Provider)
			w.Raw(` <code>`)
			w.Text(shorten(p.NativeID, 32))
			w.Raw(`</code></a>`)
			if p.Workspace != "" {
				w.Raw(` <span class="muted">in <code>`)
				w.Text(p.Workspace)
				w.Raw(`</code></span>`)
			}
			w.Raw(`</li>`)
		}
		w.Raw(`</ul>`)
	} else {
		w.Raw(`<p class="empty">Nobody has joined.</p>`)
	}
	w.Raw("\n</section>\n<section aria-labelledby=\"ms-h\"><h2 id=\"ms-h\">Messages</h2>\n")
	if d.Gap != nil {
		w.Raw(`<p class="muted">Messages `)
		w.Int64(d.Gap.From)
		w.Raw(`–`)
		w.Int64(d.Gap.To)
		w.Raw(` were trimmed (a conversation keeps its newest messages).</p>`)
	}
	w.Raw("\n")
	if d.Earlier != 0 {
		w.Raw(`<p><a`)
		w.URLQuery("href", "/desk/conversations/", d.ID, "?before=", strconv.FormatInt(d.Earlier, 10))
		w.Raw(`>Earlier messages</a></p>`)
	}
	w.Raw("\n<ol id=\"messages\" class=\"messages\">")
	for _, m := range d.Messages {
		messageHTML(w, m, "")
	}
	w.Raw("</ol>\n<p id=\"messages-empty\" class=\"empty\"")
	if len(d.Messages) > 0 {
		w.Raw(` hidden`)
	}
	w.Raw(">No message yet.</p>\n</section>\n")
}

func graphHTML(w *markup.Writer, o Overview) {
	w.Raw(`
<h1>Dependency overview</h1>
<p class="lede">What is still to be done and tied to other unfinished work, grouped by status. An arrow reads “depends on”. Finished items and unfinished items with no unfinished tie are counted on the <a href="/desk/work">Work</a> page, not drawn here.</p>
<form class="filters" method="get" action="/desk/graph" role="search" aria-label="Filter the overview">
<div><label for="g-session">Session</label> <input id="g-session" name="session"`)
	w.Attr("value", o.Session)
	w.Raw(` size="24" placeholder="codex:…"></div>
<div><button type="submit">Filter</button> <a href="/desk/graph">Clear</a></div>
</form>
`)
	overviewGraphHTML(w, o)
	w.Raw("\n")
}

func notFoundHTML(w *markup.Writer, title, what string) {
	w.Raw("\n<h1>")
	w.Text(title)
	w.Raw("</h1>\n<p>")
	w.Text(what)
	w.Raw("</p>\n<p><a href=\"/desk/\">Back to the sessions</a></p>\n")
}

func searchHTML(w *markup.Writer, v searchView) {
	w.Raw("\n<h1>Search</h1>\n")
	if v.Query == "" {
		w.Raw("<p class=\"lede\">Type an id (work item, receipt, conversation, claim), a session (<code>codex:…</code>) or text from an objective, a title or a workspace.</p>\n")
	} else {
		w.Raw(`<p class="lede">Results for <q>`)
		w.Text(v.Query)
		w.Raw("</q>, the newest first.</p>\n<section aria-labelledby=\"sw-h\" id=\"search-work\"><h2 id=\"sw-h\">Work <span class=\"muted\">")
		w.Int(len(v.Work))
		w.Raw("</span></h2>\n")
		if len(v.Work) > 0 {
			w.Raw(`<ul class="plain">`)
			for _, r := range v.Work {
				w.Raw(`<li`)
				w.Attr("data-work-id", r.ID)
				w.Raw(`><a`)
				w.URL("href", "/desk/work/", r.ID)
				w.Raw(`>`)
				w.Text(shorten(r.Objective, 140))
				w.Raw(`</a> <code class="muted">`)
				w.Text(r.ID)
				w.Raw(`</code> `)
				workStatusHTML(w, r)
				w.Raw(`</li>`)
			}
			w.Raw(`</ul>`)
		} else {
			w.Raw(`<p class="empty">No work item.</p>`)
		}
		w.Raw("</section>\n<section aria-labelledby=\"sc-h\" id=\"search-conversations\"><h2 id=\"sc-h\">Conversations <span class=\"muted\">")
		w.Int(len(v.Conversations))
		w.Raw("</span></h2>\n")
		if len(v.Conversations) > 0 {
			w.Raw(`<ul class="plain">`)
			for _, c := range v.Conversations {
				w.Raw(`<li><a`)
				w.URL("href", "/desk/conversations/", c.ID)
				w.Raw(`>`)
				w.Text(shorten(c.Title, 140))
				w.Raw(`</a> <code class="muted">`)
				w.Text(c.ID)
				w.Raw(`</code></li>`)
			}
			w.Raw(`</ul>`)
		} else {
			w.Raw(`<p class="empty">No conversation.</p>`)
		}
		w.Raw("</section>\n<section aria-labelledby=\"ss-h\" id=\"search-sessions\"><h2 id=\"ss-h\">Sessions <span class=\"muted\">")
		w.Int(len(v.Sessions))
		w.Raw("</span></h2>\n")
		if len(v.Sessions) > 0 {
			w.Raw(`<ul class="plain">`)
			for _, s := range v.Sessions {
				w.Raw(`<li>`)
				sessionLink(w, s.Provider, s.NativeID)
				w.Raw(`<code>`)
				w.Text(s.Provider)
				w.Raw(`:`)
				w.Text(shorten(s.NativeID, 40))
				w.Raw(`</code></a>`)
				if s.Title != "" {
					w.Raw(` `)
					w.Text(shorten(s.Title, 80))
				}
				w.Raw(`</li>`)
			}
			w.Raw(`</ul>`)
		} else {
			w.Raw(`<p class="empty">No session.</p>`)
		}
		w.Raw("</section>\n")
	}
	w.Raw("\n")
}

// signinHTML is the refusal page with the token form.
func signinHTML(w *markup.Writer, message, action string) {
	w.Raw(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="/desk/favicon.ico" type="image/svg+xml">
<title>Sign in · traffic desk</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
@media (prefers-color-scheme: dark){body{color:#e6e8eb;background:#15181c}input{background:#20252b;color:#e6e8eb}}
label{display:block;font-weight:600;margin-top:1rem}input{width:100%;padding:.5rem;font:inherit;border:1px solid #888;border-radius:4px;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit;border-radius:4px;border:1px solid #1a56db;background:#1a56db;color:#fff}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}.error{color:#b42318;font-weight:600}code{font-size:.9em}
</style>
</head>
<body>
<main>
<h1>The traffic desk needs you to sign in</h1>
`)
	if message != "" {
		w.Raw(`<p class="error" role="alert">`)
		w.Text(message)
		w.Raw(`</p>`)
	}
	w.Raw("\n<p>Open the one-time login link that <code>interop-runtime desk</code> (or <code>serve --http</code>) printed on its terminal, or paste the token: the value of <code>AGENT_INTEROP_HTTP_TOKEN</code>, or the contents of the token file it named.</p>\n<form method=\"post\"")
	w.URL("action", "", action)
	w.Raw(`>
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="off" required>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
`)
}

// renderPage renders the page name with its data.
func renderPage(name string, pd pageData) ([]byte, error) {
	var content func(w *markup.Writer)
	switch d := pd.Data.(type) {
	case sessionsView:
		content = func(w *markup.Writer) { sessionsHTML(w, d) }
	case sessionView:
		content = func(w *markup.Writer) { sessionHTML(w, d, pd.CSRF) }
	case receiptsView:
		content = func(w *markup.Writer) { receiptsHTML(w, d) }
	case ReceiptDetail:
		content = func(w *markup.Writer) { receiptHTML(w, d) }
	case workView:
		content = func(w *markup.Writer) { workHTML(w, d) }
	case WorkDetail:
		content = func(w *markup.Writer) { workItemHTML(w, d) }
	case claimsView:
		content = func(w *markup.Writer) { claimsHTML(w, d, pd.CSRF) }
	case conversationsView:
		content = func(w *markup.Writer) { conversationsHTML(w, d) }
	case ConversationDetail:
		content = func(w *markup.Writer) { conversationHTML(w, d) }
	case Overview:
		content = func(w *markup.Writer) { graphHTML(w, d) }
	case searchView:
		content = func(w *markup.Writer) { searchHTML(w, d) }
	case string:
		content = func(w *markup.Writer) { notFoundHTML(w, pd.Title, d) }
	default:
		return nil, fmt.Errorf("render the %s page: no page for %T", name, pd.Data)
	}
	var w markup.Writer
	layoutHTML(&w, pd, content)
	return w.Bytes(), nil
}
