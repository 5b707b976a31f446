package desk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/desk/markup"
)

// A live stream (GET /desk/live/{view}) pushes one SSE event, named
// "update", whenever what its page shows changes. Its data is HTML:
// out-of-band swaps that replace a changed row in place (by its element
// id), insert new rows at the top of a list, or replace a whole list when
// its order changed, and the page's live status line.
//
// Its id is the stream's cursor, which a reconnecting browser sends back
// as Last-Event-ID: for a list, a digest of the rows the page shows (so a
// stream that comes back to an unchanged list sends nothing, and one that
// comes back to a changed list replaces it once); for a session's events
// and a conversation's messages, the last sequence delivered (the stream
// resumes after it).

// maxLiveReads bounds the live streams that read the store at once.
const maxLiveReads = 4

// maxStreamRows bounds the rows one update carries.
const maxStreamRows = DefaultPageSize

// stream is one open live stream: its view's step and what it has sent.
type stream struct {
	h       *Handler
	r       *http.Request
	cursor  int64             // sequence views: the last sequence sent
	mark    string            // list views: the digest of the rows the page shows
	known   bool              // list views: shown holds what the page shows
	shown   []string          // list views: element ids, top to bottom
	sent    map[string]string // element id -> fingerprint of what the page shows
	list    bool
	greeted bool // the connection's first event was sent
	step    func(ctx context.Context, s *stream) ([]string, error)
}

func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s := &stream{h: h, r: r, sent: map[string]string{}}
	seq := false
	switch r.PathValue("view") {
	case "sessions":
		s.step, s.list = stepSessions, true
	case "receipts":
		s.step, s.list = stepReceipts, true
	case "work":
		s.step, s.list = stepWork, true
	case "conversations":
		s.step, s.list = stepConversations, true
	case "board":
		s.step, s.list = stepBoard, true
	case "graph":
		s.step, s.list = stepGraph, true
	case "claims":
		s.step = stepClaims
	case "session":
		s.step, seq = stepSession, true
	case "receipt":
		s.step = stepReceipt
	case "workitem":
		s.step = stepWorkItem
	case "conversation":
		s.step, seq = stepConversation, true
	default:
		http.NotFound(w, r)
		return
	}
	last := r.Header.Get("Last-Event-ID")
	switch {
	case s.list:
		s.mark = q.Get("since")
		if last != "" {
			s.mark = last // resume from what the browser last received
		}
	case seq:
		s.cursor, _ = strconv.ParseInt(q.Get("after"), 10, 64)
		if n, err := strconv.ParseInt(last, 10, 64); err == nil && n >= 0 {
			s.cursor = n
		}
	}
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	_ = rc.Flush()

	next, leave := h.feed.watch()
	defer leave()
	ctx := r.Context()
	beat := h.clock.NewTicker(h.heartbeat, "desk", "heartbeat")
	defer beat.Stop()
	end := h.clock.NewTimer(h.lifetime, "desk", "lifetime")
	defer end.Stop()
	for {
		changed, _ := next() // take the channel before reading, so no change is lost
		if err := s.push(ctx, w, rc); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-s.h.closing:
			return
		case <-end.C:
			return // the browser reconnects with Last-Event-ID
		case <-changed:
		case <-beat.C:
			// Time alone changes some views (a claim's lease ends): look
			// again, and keep the connection alive when nothing changed.
			sent, err := s.pushed(ctx, w, rc)
			if err != nil {
				return
			}
			if !sent {
				if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
					return
				}
			}
			continue
		}
	}
}

// push runs the view's step and writes its fragments as one event.
func (s *stream) push(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController) error {
	_, err := s.pushed(ctx, w, rc)
	return err
}

// pushed is push, reporting whether an event was written.
func (s *stream) pushed(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController) (bool, error) {
	// At most maxLiveReads streams read the store at once, so the number
	// of store connections (and their descriptors) the desk holds is
	// bounded whatever the number of clients.
	select {
	case s.h.liveReads <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	rctx, cancel := clockctx.WithTimeout(ctx, s.h.clock, readTimeout, "desk", "read")
	parts, err := s.step(rctx, s)
	cancel()
	<-s.h.liveReads
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		s.h.log.Warn("desk: live update failed", "view", s.r.PathValue("view"), "err", err)
		return false, nil // try again at the next change
	}
	if len(parts) == 0 && s.greeted {
		return false, nil
	}
	s.greeted = true // a new connection says once that it is live, with its cursor
	now := s.h.clock.Now()
	parts = append(parts, fragment(func(w *markup.Writer) { liveStatusHTML(w, now) }))
	var b strings.Builder
	switch {
	case s.list:
		fmt.Fprintf(&b, "id: %s\n", s.mark)
	case s.cursor > 0:
		fmt.Fprintf(&b, "id: %d\n", s.cursor)
	}
	b.WriteString("event: update\n")
	for _, line := range strings.Split(strings.Join(parts, "\n"), "\n") {
		b.WriteString("data: ")
		b.WriteString(strings.TrimRight(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if _, err := fmt.Fprint(w, b.String()); err != nil {
		return false, err
	}
	return true, rc.Flush()
}

// rowLike is what the list views' rows share.
type rowLike interface {
	DOMID() string
	Fingerprint() string
}

// listSpec names the parts of a list page a stream updates.
type listSpec struct {
	tbody string // the element id of the list's tbody
	base  string // the page's path, for the pager
	query string // the page's filters, for the pager
	empty string // what the page says when the list is empty
}

// Position is where a page stands in its list: "51–100 of 1,234".
type Position struct {
	ID              string // the list's name: the element is <ID>-position
	From, To, Total int
	OOB             string
}

// position is the position of a page of n rows starting at start among
// total; an empty page has none to show.
func position(id string, start, n, total int) Position {
	p := Position{ID: id, Total: total}
	if n > 0 {
		p.From, p.To = start, start+n-1
	}
	return p
}

// listTail is the data of a list's empty-list line and pager.
type listTail struct {
	ID, Text, Base, Query, Next, OOB string
	Hidden                           bool
}

func (l listSpec) tail(next string, rows int, oob bool) listTail {
	t := listTail{ID: l.tbody, Text: l.empty, Base: l.base, Query: l.query, Next: next, Hidden: rows > 0}
	if oob {
		t.OOB = "true"
	}
	return t
}

// listDigest is a list's cursor: it changes when a row is added, removed,
// moved or changed.
func listDigest(ids, fps []string) string {
	h := sha256.New()
	for i := range ids {
		fmt.Fprintf(h, "%s\x00%s\x00", ids[i], fps[i])
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// digest is a short hex digest of s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// diffList turns a freshly read first page of a list into fragments, given
// what the page shows: nothing when nothing changed; the changed rows
// replaced in place, and the new ones inserted at the top, when the rows
// kept their order; else the whole list (and its pager) replaced. A stream
// that does not know what the page shows yet (a new or resumed connection)
// compares the page's digest with its cursor: equal, nothing is sent.
func diffList[R rowLike](s *stream, rows []R, row func(*markup.Writer, R, string), spec listSpec, next string) []string {
	ids := make([]string, len(rows))
	fps := make([]string, len(rows))
	for i, row := range rows {
		ids[i], fps[i] = row.DOMID(), row.Fingerprint()
	}
	mark := listDigest(ids, fps)
	remember := func(shown []string) {
		s.known, s.mark, s.shown = true, mark, shown
		for i := range ids {
			s.sent[ids[i]] = fps[i]
		}
	}
	if mark == s.mark {
		if !s.known {
			remember(ids)
		}
		return nil
	}
	fresh := 0
	if s.known {
		on := make(map[string]bool, len(s.shown))
		for _, id := range s.shown {
			on[id] = true
		}
		for fresh < len(ids) && !on[ids[fresh]] {
			fresh++
		}
	}
	kept := ids[fresh:]
	if !s.known || len(kept) > len(s.shown) || !slices.Equal(kept, s.shown[:len(kept)]) {
		remember(ids)
		return replaceList(rows, row, spec, next)
	}
	var parts []string
	for i := fresh; i < len(rows); i++ {
		if s.sent[ids[i]] == fps[i] {
			continue
		}
		parts = append(parts, fragment(func(w *markup.Writer) { row(w, rows[i], "true") }))
	}
	if fresh > 0 {
		var w markup.Writer
		w.Raw(`<tbody hx-swap-oob="afterbegin:#`)
		w.Text(spec.tbody)
		w.Raw(`">`)
		for _, r := range rows[:fresh] {
			row(&w, r, "")
		}
		w.Raw(`</tbody>`)
		parts = append(parts, w.String(), fragment(func(w *markup.Writer) { listEmptyHTML(w, spec.tail(next, 1, true)) }))
	}
	remember(append(slices.Clone(ids[:fresh]), s.shown...))
	return parts
}

// replaceList renders the whole list, its empty-list line and its pager as
// out-of-band swaps.
func replaceList[R rowLike](rows []R, row func(*markup.Writer, R, string), spec listSpec, next string) []string {
	var w markup.Writer
	w.Raw(`<tbody hx-swap-oob="innerHTML:#`)
	w.Text(spec.tbody)
	w.Raw(`">`)
	for _, r := range rows {
		row(&w, r, "")
	}
	w.Raw(`</tbody>`)
	tail := spec.tail(next, len(rows), true)
	return []string{w.String(), fragment(func(w *markup.Writer) { listEmptyHTML(w, tail) }), fragment(func(w *markup.Writer) { pagerHTML(w, tail) })}
}

func stepSessions(ctx context.Context, s *stream) ([]string, error) {
	f := s.h.sessionFilter(s.r)
	f.Cursor = ""
	var page SessionPage
	var counts SessionCounts
	err := s.h.read.snapshot(ctx, func(r *reader) (err error) {
		if page, err = r.sessions(ctx, f); err != nil {
			return err
		}
		counts, err = r.sessionCounts(ctx, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	parts := diffList(s, page.Rows, sessionRowHTML, sessionsList(f), page.Next)
	counts.OOB = "true"
	parts = append(parts, replaceIfChanged(s, "counts", func(w *markup.Writer) { sessionCountsHTML(w, counts) })...)
	pos := position("sessions", page.Start, len(page.Rows), page.Total)
	pos.OOB = "true"
	return append(parts, replaceIfChanged(s, "position", func(w *markup.Writer) { listPositionHTML(w, pos) })...), nil
}

func stepReceipts(ctx context.Context, s *stream) ([]string, error) {
	f := s.h.receiptFilter(s.r)
	f.Cursor = ""
	var page ReceiptPage
	var counts ReceiptCounts
	err := s.h.read.snapshot(ctx, func(r *reader) (err error) {
		if page, err = r.receipts(ctx, f); err != nil {
			return err
		}
		counts, err = r.receiptCounts(ctx, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	parts := diffList(s, page.Rows, receiptRowHTML, receiptsList(f), page.Next)
	counts.OOB = "true"
	parts = append(parts, replaceIfChanged(s, "counts", func(w *markup.Writer) { receiptCountsHTML(w, counts) })...)
	pos := position("receipts", page.Start, len(page.Rows), counts.of(f.Status))
	pos.OOB = "true"
	return append(parts, replaceIfChanged(s, "position", func(w *markup.Writer) { listPositionHTML(w, pos) })...), nil
}

func stepWork(ctx context.Context, s *stream) ([]string, error) {
	f := workFilter(s.r)
	f.Cursor = ""
	var page WorkPage
	var counts WorkCounts
	err := s.h.read.snapshot(ctx, func(r *reader) (err error) {
		if page, err = r.work(ctx, f); err != nil {
			return err
		}
		counts, err = r.workCounts(ctx, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	parts := diffList(s, page.Rows, workRowHTML, workList(f), page.Next)
	counts.OOB = "true"
	parts = append(parts, replaceIfChanged(s, "counts", func(w *markup.Writer) { workCountsHTML(w, counts) })...)
	pos := position("work", page.Start, len(page.Rows), counts.of(f.Status))
	pos.OOB = "true"
	return append(parts, replaceIfChanged(s, "position", func(w *markup.Writer) { listPositionHTML(w, pos) })...), nil
}

// stepBoard sends the board's counts and columns again when a count or a
// card changed (the columns are short: boardRows cards each); desk.js
// highlights the cards that are new or changed.
func stepBoard(ctx context.Context, s *stream) ([]string, error) {
	f := workFilter(s.r)
	f.Cursor, f.Sort, f.Limit = "", "", 0
	var counts WorkCounts
	var board []BoardColumn
	err := s.h.read.snapshot(ctx, func(r *reader) (err error) {
		if counts, err = r.workCounts(ctx, f); err != nil {
			return err
		}
		board, err = r.board(ctx, f, counts)
		return err
	})
	if err != nil {
		return nil, err
	}
	m := boardMark(counts, board)
	if m == s.mark {
		return nil, nil
	}
	s.mark = m
	counts.OOB = "true"
	cf := fragment(func(w *markup.Writer) { workCountsHTML(w, counts) })
	bf := fragment(func(w *markup.Writer) { workBoardHTML(w, workView{Filter: f, Board: board, BoardOOB: "true"}) })
	return []string{cf, bf}, nil
}

func stepConversations(ctx context.Context, s *stream) ([]string, error) {
	limit := intParam(s.r, "limit")
	page, err := s.h.read.conversations(ctx, "", limit)
	if err != nil {
		return nil, err
	}
	parts := diffList(s, page.Rows, conversationRowHTML, conversationsList(limit), page.Next)
	pos := position("conversations", page.Start, len(page.Rows), page.Total)
	pos.OOB = "true"
	return append(parts, replaceIfChanged(s, "position", func(w *markup.Writer) { listPositionHTML(w, pos) })...), nil
}

// replaceIfChanged renders a block and returns it when it differs from
// what was last sent under key.
func replaceIfChanged(s *stream, key string, write func(w *markup.Writer)) []string {
	frag := fragment(write)
	sum := sha256.Sum256([]byte(frag))
	fp := string(sum[:])
	if s.sent[key] == fp {
		return nil
	}
	s.sent[key] = fp
	return []string{frag}
}

func stepClaims(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	page, err := snapshotOf(ctx, s.h.read, func(r *reader) (ClaimPage, error) {
		return r.claims(ctx, ClaimFilter{Resource: q.Get("resource"), Session: q.Get("session"), Limit: maxStreamRows})
	})
	if err != nil {
		return nil, err
	}
	// Expiry is relative to now: compare what the blocks show, not when.
	return replaceIfChanged(s, "claims", func(w *markup.Writer) { claimsLiveHTML(w, page, "true") }), nil
}

func stepSession(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	provider, native := q.Get("provider"), q.Get("nativeId")
	row, err := snapshotOf(ctx, s.h.read, func(r *reader) (SessionRow, error) { return r.session(ctx, provider, native) })
	if err != nil {
		return nil, err
	}
	parts := replaceIfChanged(s, "summary", func(w *markup.Writer) { sessionSummaryHTML(w, row, "true") })
	evs, err := s.h.read.eventsAfter(ctx, provider, native, s.cursor, maxStreamRows)
	if err != nil {
		return nil, err
	}
	if len(evs.Rows) > 0 || evs.Gap != nil {
		frag := fragment(func(w *markup.Writer) { eventRowsHTML(w, evs.Rows, evs.Gap) })
		parts = append(parts, `<tbody hx-swap-oob="beforeend:#event-rows">`+frag+`</tbody>`,
			`<p id="event-rows-empty" hx-swap-oob="true" hidden></p>`)
		s.cursor = evs.Next
	}
	rc, err := s.h.read.receipts(ctx, ReceiptFilter{Provider: provider, NativeID: native, Limit: 20})
	if err != nil {
		return nil, err
	}
	parts = append(parts, replaceIfChanged(s, "receipts", func(w *markup.Writer) { receiptTableHTML(w, "session-receipts", rc.Rows, "true") })...)
	usage, err := s.h.read.sessionUsage(ctx, provider, native)
	if err != nil {
		return nil, err
	}
	parts = append(parts, replaceIfChanged(s, "usage", func(w *markup.Writer) { usageLineHTML(w, "session-usage", usage, "true") })...)
	// The open permission requests, for a browser session that may act:
	// a request that arrives (or is answered elsewhere) shows without a
	// reload. A provider's request is recorded as its event, so the
	// change feed wakes the stream.
	if csrf := s.h.formToken(s.r); csrf != "" && s.h.delivers() {
		v := sessionView{Session: row, CanAct: true}
		if v.Asks, err = s.h.act.pending(ctx, provider, native); err != nil {
			v.AsksErr = err.Error()
		}
		parts = append(parts, replaceIfChanged(s, "asks", func(w *markup.Writer) { sessionActionsHTML(w, v, csrf, "true") })...)
	}
	return parts, nil
}

func stepReceipt(ctx context.Context, s *stream) ([]string, error) {
	d, err := s.h.read.receipt(ctx, s.r.URL.Query().Get("id"))
	if err != nil {
		return nil, err
	}
	return replaceIfChanged(s, "receipt", func(w *markup.Writer) { receiptDetailHTML(w, d, "true") }), nil
}

func stepWorkItem(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	depth, _ := strconv.Atoi(q.Get("depth"))
	d, err := snapshotOf(ctx, s.h.read, func(r *reader) (WorkDetail, error) { return r.workItem(ctx, q.Get("id"), depth) })
	if err != nil {
		return nil, err
	}
	parts := replaceIfChanged(s, "graph", func(w *markup.Writer) { workGraphHTML(w, d.Graph, "true") })
	parts = append(parts, replaceIfChanged(s, "records", func(w *markup.Writer) { workRecordsHTML(w, d, "true") })...)
	// The usage line: a turn of one of its sessions that ends stores its
	// verdict and usage, which wakes the stream.
	usage, err := s.h.read.workUsage(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	return append(parts, replaceIfChanged(s, "usage", func(w *markup.Writer) { workUsageHTML(w, usage, "true") })...), nil
}

func stepConversation(ctx context.Context, s *stream) ([]string, error) {
	id := s.r.URL.Query().Get("id")
	d, err := s.h.read.conversation(ctx, id, 0, maxStreamRows)
	if err != nil {
		return nil, err
	}
	var parts []string
	var fresh []MessageRow
	for _, m := range d.Messages {
		if m.Sequence > s.cursor {
			fresh = append(fresh, m)
			continue
		}
		if s.sent[m.DOMID()] == m.Fingerprint() {
			continue
		}
		parts = append(parts, fragment(func(w *markup.Writer) { messageHTML(w, m, "true") }))
		s.sent[m.DOMID()] = m.Fingerprint()
	}
	if len(fresh) > 0 {
		var w markup.Writer
		w.Raw(`<ol hx-swap-oob="beforeend:#messages">`)
		for _, m := range fresh {
			messageHTML(&w, m, "")
			s.sent[m.DOMID()] = m.Fingerprint()
			s.cursor = max(s.cursor, m.Sequence)
		}
		w.Raw(`</ol>`)
		parts = append(parts, w.String(),
			`<p id="messages-empty" hx-swap-oob="true" hidden></p>`)
	}
	// The budget left and the usage line: a message spends the budget, and
	// its turn's end stores the verdict and usage they count.
	if d.Budget != nil {
		parts = append(parts, replaceIfChanged(s, "budget", func(w *markup.Writer) { conversationBudgetHTML(w, d.Budget, "true") })...)
	}
	usage, err := s.h.read.conversationUsage(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	return append(parts, replaceIfChanged(s, "usage", func(w *markup.Writer) { usageLineHTML(w, "conversation-usage", usage, "true") })...), nil
}
