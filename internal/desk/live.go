package desk

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A live stream (GET /desk/live/{view}) pushes one SSE event, named
// "update", whenever the rows its page shows change. Its data is HTML:
// out-of-band swaps that replace a changed row in place (by its element
// id) or insert a new one, and the page's live status line. Its id is the
// stream's cursor (the view's high-water mark, or the last event or message
// sequence); a reconnecting browser sends it back as Last-Event-ID and the
// stream resumes from there. Every (re)connection starts by sending the
// rows of the page once, so nothing that changed while it was away is
// missed.

// maxStreamRows bounds the rows one update carries.
const maxStreamRows = DefaultPageSize

// stream is one open live stream: its view's step and what it has sent.
type stream struct {
	h      *Handler
	r      *http.Request
	cursor int64             // high-water mark or sequence
	sent   map[string]string // element id -> fingerprint of what the page shows
	step   func(ctx context.Context, s *stream) ([]string, error)
}

func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s := &stream{h: h, r: r, sent: map[string]string{}}
	cursorParam := "since"
	switch r.PathValue("view") {
	case "sessions":
		s.step = stepSessions
	case "receipts":
		s.step = stepReceipts
	case "work":
		s.step = stepWork
	case "conversations":
		s.step = stepConversations
	case "claims":
		s.step = stepClaims
	case "session":
		s.step, cursorParam = stepSession, "after"
	case "receipt":
		s.step = stepReceipt
	case "workitem":
		s.step = stepWorkItem
	case "conversation":
		s.step, cursorParam = stepConversation, "after"
	default:
		http.NotFound(w, r)
		return
	}
	s.cursor, _ = strconv.ParseInt(q.Get(cursorParam), 10, 64)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if n, err := strconv.ParseInt(last, 10, 64); err == nil && n >= 0 {
			s.cursor = n // resume from what the browser last received
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
	beat := time.NewTicker(h.heartbeat)
	defer beat.Stop()
	end := time.NewTimer(h.lifetime)
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
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	parts, err := s.step(rctx, s)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		s.h.log.Warn("desk: live update failed", "view", s.r.PathValue("view"), "err", err)
		return false, nil // try again at the next change
	}
	if len(parts) == 0 {
		return false, nil
	}
	status, err := s.h.tpl.fragment("live-status", s.h.clock.Now())
	if err != nil {
		return false, err
	}
	parts = append(parts, status)
	var b strings.Builder
	fmt.Fprintf(&b, "id: %d\nevent: update\n", s.cursor)
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

// diffRows turns a freshly read first page into fragments: rows above the
// cursor are new and inserted at the top of tbody (oldest first, so the
// newest ends on top), rows whose fingerprint differs from what was sent
// replace theirs. keyOf gives a row's position for the cursor.
func diffRows[R rowLike](s *stream, rows []R, keyOf func(R) int64, rowTpl, tbody string) ([]string, error) {
	var parts []string
	var fresh []R
	top := s.cursor
	for _, row := range rows {
		k := keyOf(row)
		if k > s.cursor {
			fresh = append(fresh, row)
			top = max(top, k)
			continue
		}
		if s.sent[row.DOMID()] == row.Fingerprint() {
			continue
		}
		frag, err := s.h.tpl.fragment(rowTpl, map[string]any{"Row": row, "OOB": "true"})
		if err != nil {
			return nil, err
		}
		parts = append(parts, frag)
		s.sent[row.DOMID()] = row.Fingerprint()
	}
	for i := len(fresh) - 1; i >= 0; i-- {
		row := fresh[i]
		frag, err := s.h.tpl.fragment(rowTpl, map[string]any{"Row": row, "OOB": ""})
		if err != nil {
			return nil, err
		}
		parts = append(parts, `<tbody hx-swap-oob="afterbegin:#`+tbody+`">`+frag+`</tbody>`)
		s.sent[row.DOMID()] = row.Fingerprint()
	}
	s.cursor = top
	if len(parts) > 0 {
		parts = append(parts, `<p id="`+tbody+`-empty" hx-swap-oob="true" hidden></p>`)
	}
	return parts, nil
}

func stepSessions(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	page, err := s.h.read.sessions(ctx, SessionFilter{Provider: oneOf(q.Get("provider"), providerNames()), Workspace: q.Get("workspace"), Limit: maxStreamRows})
	if err != nil {
		return nil, err
	}
	return diffRows(s, page.Rows, func(r SessionRow) int64 { return r.RowID }, "session-row", "session-rows")
}

func stepReceipts(ctx context.Context, s *stream) ([]string, error) {
	f := receiptFilter(s.r)
	f.Cursor, f.Limit = "", maxStreamRows
	page, err := s.h.read.receipts(ctx, f)
	if err != nil {
		return nil, err
	}
	return diffRows(s, page.Rows, func(r ReceiptRow) int64 { return r.RowID }, "receipt-row", "receipt-rows")
}

func stepWork(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	page, err := s.h.read.work(ctx, WorkFilter{Status: oneOf(q.Get("status"), workStatuses), Query: q.Get("q"), Limit: maxStreamRows})
	if err != nil {
		return nil, err
	}
	return diffRows(s, page.Rows, func(r WorkRow) int64 { return r.RowID }, "work-row", "work-rows")
}

func stepConversations(ctx context.Context, s *stream) ([]string, error) {
	page, err := s.h.read.conversations(ctx, "", maxStreamRows)
	if err != nil {
		return nil, err
	}
	return diffRows(s, page.Rows, func(r ConversationRow) int64 { return r.RowID }, "conversation-row", "conversation-rows")
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
	page, err := s.h.read.claims(ctx, ClaimFilter{Resource: q.Get("resource"), Session: q.Get("session"), Limit: maxStreamRows})
	if err != nil {
		return nil, err
	}
	// Expiry is relative to now: compare what the blocks show, not when.
	return replaceIfChanged(s, "claims", "claims-live", map[string]any{"Page": page, "OOB": "true"})
}

func stepSession(ctx context.Context, s *stream) ([]string, error) {
	q := s.r.URL.Query()
	provider, native := q.Get("provider"), q.Get("nativeId")
	row, err := s.h.read.session(ctx, provider, native)
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
	return append(parts, more...), err
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
	d, err := s.h.read.workItem(ctx, q.Get("id"), depth)
	if err != nil {
		return nil, err
	}
	parts, err := replaceIfChanged(s, "graph", "work-graph", map[string]any{"G": d.Graph, "OOB": "true"})
	if err != nil {
		return nil, err
	}
	more, err := replaceIfChanged(s, "records", "work-records", map[string]any{"D": d, "OOB": "true"})
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
	return parts, nil
}
