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
	status, err := s.h.tpl.fragment("live-status", s.h.clock.Now())
	if err != nil {
		return false, err
	}
	parts = append(parts, status)
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
	tbody  string // the element id of the list's tbody
	rowTpl string // the template of one row
	base   string // the page's path, for the pager
	query  string // the page's filters, for the pager
	empty  string // what the page says when the list is empty
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
func diffList[R rowLike](s *stream, rows []R, spec listSpec, next string) ([]string, error) {
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
		return nil, nil
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
		parts, err := replaceList(s, rows, spec, next)
		if err == nil {
			remember(ids)
		}
		return parts, err
	}
	var parts []string
	for i := fresh; i < len(rows); i++ {
		if s.sent[ids[i]] == fps[i] {
			continue
		}
		frag, err := s.h.tpl.fragment(spec.rowTpl, map[string]any{"Row": rows[i], "OOB": "true"})
		if err != nil {
			return nil, err
		}
		parts = append(parts, frag)
	}
	if fresh > 0 {
		var b strings.Builder
		for _, row := range rows[:fresh] {
			frag, err := s.h.tpl.fragment(spec.rowTpl, map[string]any{"Row": row, "OOB": ""})
			if err != nil {
				return nil, err
			}
			b.WriteString(frag)
		}
		parts = append(parts, `<tbody hx-swap-oob="afterbegin:#`+spec.tbody+`">`+b.String()+`</tbody>`)
		empty, err := s.h.tpl.fragment("list-empty", spec.tail(next, 1, true))
		if err != nil {
			return nil, err
		}
		parts = append(parts, empty)
	}
	remember(append(slices.Clone(ids[:fresh]), s.shown...))
	return parts, nil
}

// replaceList renders the whole list, its empty-list line and its pager as
// out-of-band swaps.
func replaceList[R rowLike](s *stream, rows []R, spec listSpec, next string) ([]string, error) {
	var b strings.Builder
	for _, row := range rows {
		frag, err := s.h.tpl.fragment(spec.rowTpl, map[string]any{"Row": row, "OOB": ""})
		if err != nil {
			return nil, err
		}
		b.WriteString(frag)
	}
	tail := spec.tail(next, len(rows), true)
	empty, err := s.h.tpl.fragment("list-empty", tail)
	if err != nil {
		return nil, err
	}
	pager, err := s.h.tpl.fragment("pager", tail)
	if err != nil {
		return nil, err
	}
	return []string{`<tbody hx-swap-oob="innerHTML:#` + spec.tbody + `">` + b.String() + `</tbody>`, empty, pager}, nil
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
	parts, err := diffList(s, page.Rows, sessionsList(f), page.Next)
	if err != nil {
		return nil, err
	}
	counts.OOB = "true"
	more, err := replaceIfChanged(s, "counts", "session-counts", counts)
	if err != nil {
		return nil, err
	}
	parts = append(parts, more...)
	pos := position("sessions", page.Start, len(page.Rows), page.Total)
	pos.OOB = "true"
	more, err = replaceIfChanged(s, "position", "list-position", pos)
	return append(parts, more...), err
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
	parts, err := diffList(s, page.Rows, receiptsList(f), page.Next)
	if err != nil {
		return nil, err
	}
	counts.OOB = "true"
	more, err := replaceIfChanged(s, "counts", "receipt-counts", counts)
	if err != nil {
		return nil, err
	}
	parts = append(parts, more...)
	pos := position("receipts", page.Start, len(page.Rows), counts.of(f.Status))
	pos.OOB = "true"
	more, err = replaceIfChanged(s, "position", "list-position", pos)
	return append(parts, more...), err
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
	parts, err := diffList(s, page.Rows, workList(f), page.Next)
	if err != nil {
		return nil, err
	}
	counts.OOB = "true"
	more, err := replaceIfChanged(s, "counts", "work-counts", counts)
	if err != nil {
		return nil, err
	}
	parts = append(parts, more...)
	pos := position("work", page.Start, len(page.Rows), counts.of(f.Status))
	pos.OOB = "true"
	more, err = replaceIfChanged(s, "position", "list-position", pos)
	return append(parts, more...), err
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
	cf, err := s.h.tpl.fragment("work-counts", counts)
	if err != nil {
		return nil, err
	}
	bf, err := s.h.tpl.fragment("work-board", workView{Filter: f, Board: board, BoardOOB: "true"})
	if err != nil {
		return nil, err
	}
	return []string{cf, bf}, nil
}

func stepConversations(ctx context.Context, s *stream) ([]string, error) {
	limit := intParam(s.r, "limit")
	page, err := s.h.read.conversations(ctx, "", limit)
	if err != nil {
		return nil, err
	}
	parts, err := diffList(s, page.Rows, conversationsList(limit), page.Next)
	if err != nil {
		return nil, err
	}
	pos := position("conversations", page.Start, len(page.Rows), page.Total)
	pos.OOB = "true"
	more, err := replaceIfChanged(s, "position", "list-position", pos)
	return append(parts, more...), err
}

// replaceIfChanged renders a block and returns it when it differs from
// what was last sent under key.
func replaceIfChanged(s *stream, key, tpl string, data any) ([]string, error) {
	frag, err := s.h.tpl.fragment(tpl, data)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(frag))
	fp := string(sum[:])
	if s.sent[key] == fp {
		return nil, nil
	}
	s.sent[key] = fp
	return []string{frag}, nil
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
	return replaceIfChanged(s, "claims", "claims-live", map[string]any{"Page": page, "OOB": "true"})
}

func stepSession(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	provider, native := q.Get("provider"), q.Get("nativeId")
	row, err := snapshotOf(ctx, s.h.read, func(r *reader) (SessionRow, error) { return r.session(ctx, provider, native) })
	if err != nil {
		return nil, err
	}
	parts, err := replaceIfChanged(s, "summary", "session-summary", map[string]any{"Row": row, "OOB": "true"})
	if err != nil {
		return nil, err
	}
	evs, err := s.h.read.eventsAfter(ctx, provider, native, s.cursor, maxStreamRows)
	if err != nil {
		return nil, err
	}
	if len(evs.Rows) > 0 || evs.Gap != nil {
		frag, err := s.h.tpl.fragment("event-rows", map[string]any{"Rows": evs.Rows, "Gap": evs.Gap})
		if err != nil {
			return nil, err
		}
		parts = append(parts, `<tbody hx-swap-oob="beforeend:#event-rows">`+frag+`</tbody>`,
			`<p id="event-rows-empty" hx-swap-oob="true" hidden></p>`)
		s.cursor = evs.Next
	}
	rc, err := s.h.read.receipts(ctx, ReceiptFilter{Provider: provider, NativeID: native, Limit: 20})
	if err != nil {
		return nil, err
	}
	more, err := replaceIfChanged(s, "receipts", "receipt-table", map[string]any{"Rows": rc.Rows, "ID": "session-receipts", "OOB": "true"})
	if err != nil {
		return nil, err
	}
	parts = append(parts, more...)
	usage, err := s.h.read.sessionUsage(ctx, provider, native)
	if err != nil {
		return nil, err
	}
	more, err = replaceIfChanged(s, "usage", "usage-line", map[string]any{"ID": "session-usage", "Usage": usage, "OOB": "true"})
	if err != nil {
		return nil, err
	}
	parts = append(parts, more...)
	// The open permission requests, for a browser session that may act:
	// a request that arrives (or is answered elsewhere) shows without a
	// reload. A provider's request is recorded as its event, so the
	// change feed wakes the stream.
	if csrf := s.h.formToken(s.r); csrf != "" && s.h.delivers() {
		v := sessionView{Session: row, CanAct: true}
		if v.Asks, err = s.h.act.pending(ctx, provider, native); err != nil {
			v.AsksErr = err.Error()
		}
		more, err = replaceIfChanged(s, "asks", "session-actions", map[string]any{"V": v, "CSRF": csrf, "OOB": "true"})
		if err != nil {
			return nil, err
		}
		parts = append(parts, more...)
	}
	return parts, nil
}

func stepReceipt(ctx context.Context, s *stream) ([]string, error) {
	d, err := s.h.read.receipt(ctx, s.r.URL.Query().Get("id"))
	if err != nil {
		return nil, err
	}
	return replaceIfChanged(s, "receipt", "receipt-detail", map[string]any{"D": d, "OOB": "true"})
}

func stepWorkItem(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	depth, _ := strconv.Atoi(q.Get("depth"))
	d, err := snapshotOf(ctx, s.h.read, func(r *reader) (WorkDetail, error) { return r.workItem(ctx, q.Get("id"), depth) })
	if err != nil {
		return nil, err
	}
	parts, err := replaceIfChanged(s, "graph", "work-graph", map[string]any{"G": d.Graph, "OOB": "true"})
	if err != nil {
		return nil, err
	}
	more, err := replaceIfChanged(s, "records", "work-records", map[string]any{"D": d, "OOB": "true"})
	if err != nil {
		return nil, err
	}
	parts = append(parts, more...)
	// The usage line: a turn of one of its sessions that ends stores its
	// verdict and usage, which wakes the stream.
	usage, err := s.h.read.workUsage(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	more, err = replaceIfChanged(s, "usage", "work-usage", map[string]any{"Usage": usage, "OOB": "true"})
	return append(parts, more...), err
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
		frag, err := s.h.tpl.fragment("message", map[string]any{"Row": m, "OOB": "true"})
		if err != nil {
			return nil, err
		}
		parts = append(parts, frag)
		s.sent[m.DOMID()] = m.Fingerprint()
	}
	if len(fresh) > 0 {
		var b strings.Builder
		for _, m := range fresh {
			frag, err := s.h.tpl.fragment("message", map[string]any{"Row": m, "OOB": ""})
			if err != nil {
				return nil, err
			}
			b.WriteString(frag)
			s.sent[m.DOMID()] = m.Fingerprint()
			s.cursor = max(s.cursor, m.Sequence)
		}
		parts = append(parts, `<ol hx-swap-oob="beforeend:#messages">`+b.String()+`</ol>`,
			`<p id="messages-empty" hx-swap-oob="true" hidden></p>`)
	}
	// The budget left and the usage line: a message spends the budget, and
	// its turn's end stores the verdict and usage they count.
	if d.Budget != nil {
		more, err := replaceIfChanged(s, "budget", "conversation-budget", map[string]any{"Budget": d.Budget, "OOB": "true"})
		if err != nil {
			return nil, err
		}
		parts = append(parts, more...)
	}
	usage, err := s.h.read.conversationUsage(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	more, err := replaceIfChanged(s, "usage", "usage-line", map[string]any{"ID": "conversation-usage", "Usage": usage, "OOB": "true"})
	return append(parts, more...), err
}
