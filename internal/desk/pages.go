package desk

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
)

// providerNames are the providers the filters offer: Options.Providers,
// else the built-in catalog.
func (h *Handler) providerNames() []string {
	if len(h.providers) > 0 {
		return h.providers
	}
	var out []string
	for _, id := range providers.Order() {
		out = append(out, string(id))
	}
	return out
}

// sessionsView is the data of the sessions page.
type sessionsView struct {
	Filter    SessionFilter
	Providers []string
	Page      SessionPage
	Tail      listTail
	Position  Position
	Counts    SessionCounts
}

func (h *Handler) sessionFilter(r *http.Request) SessionFilter {
	q := r.URL.Query()
	return SessionFilter{Provider: oneOf(q.Get("provider"), h.providerNames()), Workspace: strings.TrimSpace(q.Get("workspace")),
		Cursor: q.Get("cursor"), Limit: intParam(r, "limit")}
}

func sessionsList(f SessionFilter) listSpec {
	empty := "No session recorded."
	if f.Provider != "" || f.Workspace != "" {
		empty = "No session recorded for this filter."
	}
	return listSpec{tbody: "session-rows", base: Base + "/sessions",
		query: queryString("provider", f.Provider, "workspace", f.Workspace, "limit", limitParam(f.Limit)), empty: empty}
}

func (h *Handler) sessionsPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	f := h.sessionFilter(r)
	var page SessionPage
	var counts SessionCounts
	err := h.read.snapshot(ctx, func(r *reader) (err error) {
		if page, err = r.sessions(ctx, f); err != nil {
			return err
		}
		counts, err = r.sessionCounts(ctx, f)
		return err
	})
	if err != nil {
		h.failRead(w, err)
		return
	}
	live := ""
	if f.Cursor == "" {
		live = Base + "/live/sessions" + queryString("provider", f.Provider, "workspace", f.Workspace, "limit", limitParam(f.Limit),
			"since", pageMark(page.Rows))
	}
	h.render(w, http.StatusOK, "sessions", h.page("Sessions", "sessions", live, sessionsView{Filter: f, Providers: h.providerNames(), Page: page,
		Tail: sessionsList(f).tail(page.Next, len(page.Rows), false), Position: position("sessions", page.Start, len(page.Rows), page.Total), Counts: counts}))
}

// pageMark is the cursor of a list page as rendered: its live stream
// sends nothing until the list differs from it.
func pageMark[R rowLike](rows []R) string {
	ids := make([]string, len(rows))
	fps := make([]string, len(rows))
	for i, row := range rows {
		ids[i], fps[i] = row.DOMID(), row.Fingerprint()
	}
	return listDigest(ids, fps)
}

func limitParam(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(clampLimit(n))
}

// sessionView is the data of one session's page.
type sessionView struct {
	Session  SessionRow
	Events   EventPage
	Receipts ReceiptPage
	// Undiscovered is set for a session the store only mentions.
	Undiscovered bool
	// What the store holds about the session besides its events.
	Work          WorkPage
	Claims        ClaimPage
	Conversations []string
	// Usage totals the session's turns (usage.go).
	Usage string
	// Asks are its open permission requests with the provider's options
	// (only where the desk can act); AsksErr says why they could not be
	// listed.
	Asks    []PermissionAsk
	AsksErr string
	CanAct  bool
	// ActNote: the person may act from this desk, but it cannot answer
	// or cancel (the stand-alone desk): the page says where to.
	ActNote bool
}

func (h *Handler) sessionPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	provider, native := r.PathValue("provider"), r.PathValue("native")
	v := sessionView{}
	s, err := h.read.session(ctx, provider, native)
	switch {
	case errors.Is(err, errNotFound):
		s, v.Undiscovered = undiscoveredSession(provider, native), true
	case err != nil:
		h.fail(w, err)
		return
	}
	v.Session = s
	if v.Events, err = h.read.lastEvents(ctx, provider, native, s.LastSeq, DefaultPageSize); err != nil {
		h.fail(w, err)
		return
	}
	if v.Receipts, err = h.read.receipts(ctx, ReceiptFilter{Provider: provider, NativeID: native, Limit: 20}); err != nil {
		h.fail(w, err)
		return
	}
	ref := provider + ":" + native
	if v.Work, err = h.read.work(ctx, WorkFilter{Session: ref, Limit: 20}); err != nil {
		h.fail(w, err)
		return
	}
	if v.Claims, err = h.read.claims(ctx, ClaimFilter{Session: ref, Limit: 20}); err != nil {
		h.fail(w, err)
		return
	}
	if v.Conversations, err = h.read.sessionConversations(ctx, provider, native, 20); err != nil {
		h.fail(w, err)
		return
	}
	if v.Usage, err = h.read.sessionUsage(ctx, provider, native); err != nil {
		h.fail(w, err)
		return
	}
	if v.Undiscovered && len(v.Events.Rows) == 0 && len(v.Receipts.Rows) == 0 && len(v.Work.Rows) == 0 &&
		len(v.Claims.Rows) == 0 && len(v.Conversations) == 0 {
		h.notFound(w, "No session "+provider+":"+native+" is recorded or mentioned in the store.")
		return
	}
	pd := h.page("Session "+provider+":"+shorten(native, 24), "sessions", "", nil)
	pd.CSRF = h.formToken(r)
	v.ActNote = pd.CSRF != "" && !h.delivers()
	if pd.CSRF != "" && h.delivers() && !v.Undiscovered {
		v.CanAct = true
		if v.Asks, err = h.act.pending(ctx, provider, native); err != nil {
			v.AsksErr = err.Error()
		}
	}
	pd.Live = Base + "/live/session" + queryString("provider", provider, "nativeId", native, "after", strconv.FormatInt(v.Events.Next, 10))
	pd.Data = v
	h.render(w, http.StatusOK, "session", pd)
}

// receiptsView is the data of the receipts page.
type receiptsView struct {
	Filter     ReceiptFilter
	Providers  []string
	States     []string
	Operations []string
	Page       ReceiptPage
	Tail       listTail
	Counts     ReceiptCounts
	Position   Position
}

func (h *Handler) receiptFilter(r *http.Request) ReceiptFilter {
	q := r.URL.Query()
	return ReceiptFilter{
		Provider: oneOf(q.Get("provider"), h.providerNames()), NativeID: strings.TrimSpace(q.Get("nativeId")),
		Status: oneOf(q.Get("status"), receiptStates), Operation: oneOf(q.Get("operation"), operationKinds()),
		Cursor: q.Get("cursor"), Limit: intParam(r, "limit"),
	}
}

func receiptsList(f ReceiptFilter) listSpec {
	empty := "No receipt recorded."
	if f.Provider != "" || f.Status != "" || f.Operation != "" || f.NativeID != "" {
		empty = "No receipt recorded for this filter."
	}
	return listSpec{tbody: "receipt-rows", base: Base + "/receipts",
		query: queryString("provider", f.Provider, "status", f.Status, "operation", f.Operation, "nativeId", f.NativeID,
			"limit", limitParam(f.Limit)), empty: empty}
}

func (h *Handler) receiptsPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	f := h.receiptFilter(r)
	var page ReceiptPage
	var counts ReceiptCounts
	err := h.read.snapshot(ctx, func(r *reader) (err error) {
		if page, err = r.receipts(ctx, f); err != nil {
			return err
		}
		counts, err = r.receiptCounts(ctx, f)
		return err
	})
	if err != nil {
		h.failRead(w, err)
		return
	}
	live := ""
	if f.Cursor == "" {
		live = Base + "/live/receipts" + queryString("provider", f.Provider, "nativeId", f.NativeID, "status", f.Status,
			"operation", f.Operation, "limit", limitParam(f.Limit), "since", pageMark(page.Rows))
	}
	h.render(w, http.StatusOK, "receipts", h.page("Receipts", "receipts", live, receiptsView{Filter: f, Providers: h.providerNames(),
		States: receiptStates, Operations: operationKinds(), Page: page, Tail: receiptsList(f).tail(page.Next, len(page.Rows), false),
		Counts: counts, Position: position("receipts", page.Start, len(page.Rows), counts.of(f.Status))}))
}

func (h *Handler) receiptPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	d, err := h.read.receipt(ctx, r.PathValue("id"))
	if errors.Is(err, errNotFound) {
		h.notFound(w, "No receipt "+r.PathValue("id")+" is recorded in the store.")
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	live := Base + "/live/receipt" + queryString("id", d.ID)
	h.render(w, http.StatusOK, "receipt", h.page("Receipt "+d.ID, "receipts", live, d))
}

// workView is the data of the work list.
type workView struct {
	Filter   WorkFilter
	Statuses []string
	Sorts    []string
	Page     WorkPage
	Tail     listTail
	Position Position
	Counts   WorkCounts
	// View is "list" or "board"; Board has a column per status (the
	// newest items of each, one keyset read per column).
	View  string
	Board []BoardColumn
	// BoardOOB makes the board an out-of-band swap (its live stream).
	BoardOOB string
}

// BoardColumn is one status of the board view.
type BoardColumn struct {
	Status string
	N      int
	Rows   []WorkRow
	More   bool
}

// boardRows is how many items a board column shows.
const boardRows = 20

// board reads the board's columns: the newest boardRows items of each
// status the counts show, one keyset read per column.
func (r *reader) board(ctx context.Context, f WorkFilter, counts WorkCounts) ([]BoardColumn, error) {
	var out []BoardColumn
	for _, c := range counts.Counts {
		col := BoardColumn{Status: c.Status, N: c.N}
		if c.N > 0 {
			cf := f
			cf.Status, cf.Cursor, cf.Limit, cf.Sort = c.Status, "", boardRows, ""
			page, err := r.work(ctx, cf)
			if err != nil {
				return nil, err
			}
			col.Rows, col.More = page.Rows, page.Next != ""
		}
		out = append(out, col)
	}
	return out, nil
}

// boardMark is the board's cursor for its live stream: it changes when a
// column's count or any card shown changes.
func boardMark(counts WorkCounts, board []BoardColumn) string {
	var ids, fps []string
	for _, c := range counts.Counts {
		ids, fps = append(ids, "n-"+c.Status), append(fps, strconv.Itoa(c.N))
	}
	ids, fps = append(ids, "total"), append(fps, strconv.Itoa(counts.Total))
	for _, col := range board {
		for _, w := range col.Rows {
			ids, fps = append(ids, col.Status+"/"+w.DOMID()), append(fps, w.Fingerprint())
		}
	}
	return listDigest(ids, fps)
}

func workFilter(r *http.Request) WorkFilter {
	q := r.URL.Query()
	sort := oneOf(q.Get("sort"), workSorts)
	if sort == "updated" {
		sort = ""
	}
	return WorkFilter{Status: oneOf(q.Get("status"), workStatuses), Session: strings.TrimSpace(q.Get("session")),
		Query: strings.TrimSpace(q.Get("q")), Sort: sort, Cursor: q.Get("cursor"), Limit: intParam(r, "limit")}
}

func workList(f WorkFilter) listSpec {
	empty := "No work item recorded."
	if f.Status != "" || f.Session != "" || f.Query != "" {
		empty = "No work item recorded for this filter."
	}
	return listSpec{tbody: "work-rows", base: Base + "/work",
		query: queryString("status", f.Status, "session", f.Session, "q", f.Query, "sort", f.Sort, "limit", limitParam(f.Limit)), empty: empty}
}

func (h *Handler) workPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	f := workFilter(r)
	v := workView{Filter: f, Statuses: workStatuses, Sorts: workSorts, View: oneOf(r.URL.Query().Get("view"), []string{"list", "board"})}
	if v.View == "" {
		v.View = "list"
	}
	err := h.read.snapshot(ctx, func(r *reader) (err error) {
		if v.Counts, err = r.workCounts(ctx, f); err != nil {
			return err
		}
		if v.View == "board" {
			v.Board, err = r.board(ctx, f, v.Counts)
		} else {
			v.Page, err = r.work(ctx, f)
		}
		return err
	})
	if err != nil {
		h.failRead(w, err)
		return
	}
	live := ""
	if v.View == "board" {
		live = Base + "/live/board" + queryString("status", f.Status, "session", f.Session, "q", f.Query, "since", boardMark(v.Counts, v.Board))
	} else {
		v.Tail = workList(f).tail(v.Page.Next, len(v.Page.Rows), false)
		v.Position = position("work", v.Page.Start, len(v.Page.Rows), v.Counts.of(f.Status))
		if f.Cursor == "" {
			live = Base + "/live/work" + queryString("status", f.Status, "session", f.Session, "q", f.Query, "sort", f.Sort, "limit", limitParam(f.Limit),
				"since", pageMark(v.Page.Rows))
		}
	}
	h.render(w, http.StatusOK, "work", h.page("Work", "work", live, v))
}

func (h *Handler) workItemPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	d, err := snapshotOf(ctx, h.read, func(rd *reader) (WorkDetail, error) { return rd.workItem(ctx, r.PathValue("id"), intParam(r, "depth")) })
	if errors.Is(err, errNotFound) {
		h.notFound(w, "No work item "+r.PathValue("id")+" is recorded in the store.")
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	if d.Usage, err = h.read.workUsage(ctx, d.ID); err != nil {
		h.fail(w, err)
		return
	}
	live := Base + "/live/workitem" + queryString("id", d.ID, "depth", strconv.Itoa(d.Graph.Depth))
	h.render(w, http.StatusOK, "workitem", h.page("Work "+d.ID, "work", live, d))
}

// claimsView is the data of the claims page.
type claimsView struct {
	Filter ClaimFilter
	Page   ClaimPage
	Tail   listTail
}

func (h *Handler) claimsPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	q := r.URL.Query()
	f := ClaimFilter{Resource: strings.TrimSpace(q.Get("resource")), Session: strings.TrimSpace(q.Get("session")), Cursor: q.Get("cursor"), Limit: intParam(r, "limit")}
	page, err := snapshotOf(ctx, h.read, func(r *reader) (ClaimPage, error) { return r.claims(ctx, f) })
	if err != nil {
		h.failRead(w, err)
		return
	}
	live := ""
	if f.Cursor == "" {
		live = Base + "/live/claims" + queryString("resource", f.Resource, "session", f.Session)
	}
	pd := h.page("Claims", "claims", live, claimsView{Filter: f, Page: page,
		Tail: listTail{ID: "claims", Base: Base + "/claims", Query: queryString("resource", f.Resource, "session", f.Session, "limit", limitParam(f.Limit)), Next: page.Next}})
	pd.CSRF = h.formToken(r)
	h.render(w, http.StatusOK, "claims", pd)
}

// conversationsView is the data of the conversations page.
type conversationsView struct {
	Page     ConversationPage
	Tail     listTail
	Position Position
}

func conversationsList(limit int) listSpec {
	return listSpec{tbody: "conversation-rows", base: Base + "/conversations",
		query: queryString("limit", limitParam(limit)), empty: "No conversation recorded."}
}

func (h *Handler) conversationsPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	cursor, limit := r.URL.Query().Get("cursor"), intParam(r, "limit")
	page, err := h.read.conversations(ctx, cursor, limit)
	if err != nil {
		h.failRead(w, err)
		return
	}
	live := ""
	if cursor == "" {
		live = Base + "/live/conversations" + queryString("limit", limitParam(limit), "since", pageMark(page.Rows))
	}
	h.render(w, http.StatusOK, "conversations", h.page("Conversations", "conversations", live,
		conversationsView{Page: page, Tail: conversationsList(limit).tail(page.Next, len(page.Rows), false),
			Position: position("conversations", page.Start, len(page.Rows), page.Total)}))
}

func (h *Handler) conversationPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	d, err := h.read.conversation(ctx, r.PathValue("id"), before, intParam(r, "limit"))
	if errors.Is(err, errNotFound) {
		h.notFound(w, "No conversation "+r.PathValue("id")+" is recorded in the store.")
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	if d.Usage, err = h.read.conversationUsage(ctx, d.ID); err != nil {
		h.fail(w, err)
		return
	}
	live := ""
	if before == 0 {
		live = Base + "/live/conversation" + queryString("id", d.ID, "after", strconv.FormatInt(d.Last, 10))
	}
	h.render(w, http.StatusOK, "conversation", h.page("Conversation "+shorten(d.Title, 40), "conversations", live, d))
}
