package desk

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqljson"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/participant"
	"github.com/agent-interop/runtime/ent/providersession"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/sessionevent"
	"github.com/agent-interop/runtime/ent/sessionstream"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
)

// Page sizes of every list view.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// reader answers the desk's views from the store. Every list is one keyset
// page on an indexed column (SQLite's rowid, the insertion order, for
// tables keyed by random ids), so no view ever reads the whole store.
type reader struct {
	client *ent.Client
	db     *sql.DB
	events *events.Log
	clock  quartz.Clock
	live   LivenessFunc
}

// errNotFound marks a record the URL names that does not exist.
var errNotFound = errors.New("not found")

// cursor is an opaque keyset position: base64url of its parts.
func encodeCursor(parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Join(parts, "\x00")))
}

func decodeCursor(c string, n int) ([]string, bool) {
	if c == "" {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, false
	}
	parts := strings.Split(string(b), "\x00")
	return parts, len(parts) == n
}

// rowidCursor reads a cursor holding one rowid (0 when absent or bad).
func rowidCursor(c string) int64 {
	parts, ok := decodeCursor(c, 1)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func clampLimit(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	return min(n, MaxPageSize)
}

// where collects SQL conditions with their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// keyed is one row of a keyset listing: its rowid and its id.
type keyed struct {
	rowid int64
	id    string
}

// keys runs a keyset listing "SELECT rowid, <idcol> FROM table ... ORDER BY
// rowid DESC|ASC LIMIT n".
func (r *reader) keys(ctx context.Context, table, idCol string, w where, desc bool, limit int) ([]keyed, error) {
	order := "DESC"
	if !desc {
		order = "ASC"
	}
	q := "SELECT rowid, " + idCol + " FROM " + table + w.sql() + " ORDER BY rowid " + order + " LIMIT " + strconv.Itoa(limit)
	rows, err := r.db.QueryContext(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", table, err)
	}
	defer rows.Close()
	var out []keyed
	for rows.Next() {
		var k keyed
		if err := rows.Scan(&k.rowid, &k.id); err != nil {
			return nil, fmt.Errorf("list %s: %w", table, err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// highWater is the largest rowid of table (0 when empty): one index seek.
func (r *reader) highWater(ctx context.Context, table string) (int64, error) {
	var n sql.NullInt64
	if err := r.db.QueryRowContext(ctx, "SELECT max(rowid) FROM "+table).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the high-water mark of %s: %w", table, err)
	}
	return n.Int64, nil
}

// indexed returns column, or "+column" (the same value, which SQLite will
// not look up through an index) when no index should serve the term.
func indexed(column string, use bool) string {
	if use {
		return column
	}
	return "+" + column
}

// likeEscape escapes s for a LIKE pattern with ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ---- sessions

// SessionFilter selects sessions.
type SessionFilter struct {
	Provider  string
	Workspace string // a cwd, or a directory containing it
	Cursor    string
	Limit     int
}

// SessionRow is one provider session as the desk shows it.
type SessionRow struct {
	RowID     int64
	Provider  string
	NativeID  string
	Title     string
	CWD       string
	Endpoint  string
	State     string // what the provider last reported, verbatim
	FirstSeen time.Time
	LastSeen  time.Time
	LastEvent *time.Time
	LastSeq   int64
	Liveness  Liveness
	Pending   []PendingRequest
	OpenOps   int
}

// DOMID is the row's element id.
func (s SessionRow) DOMID() string { return "s-" + strconv.FormatInt(s.RowID, 10) }

// Fingerprint changes when anything shown for the row changes.
func (s SessionRow) Fingerprint() string {
	observed := int64(0)
	if s.Liveness.ObservedAt != nil {
		observed = s.Liveness.ObservedAt.UnixNano()
	}
	return fmt.Sprint(s.Title, s.CWD, s.State, s.LastSeen.UnixNano(), s.LastSeq, s.Liveness.State, s.Liveness.Reason, observed, len(s.Pending), s.OpenOps)
}

// SessionPage is a page of sessions.
type SessionPage struct {
	Rows []SessionRow
	Next string
	HWM  int64
}

func (r *reader) sessions(ctx context.Context, f SessionFilter) (SessionPage, error) {
	limit := clampLimit(f.Limit)
	var w where
	if f.Provider != "" {
		w.add("+provider = ?", f.Provider) // read by id, newest first; a provider has many sessions
	}
	if ws := strings.TrimRight(f.Workspace, "/"); ws != "" {
		w.add(`(cwd = ? OR cwd LIKE ? ESCAPE '\')`, ws, likeEscape(ws)+"/%")
	}
	if c := rowidCursor(f.Cursor); c > 0 {
		w.add("id < ?", c)
	}
	hwm, err := r.highWater(ctx, "provider_sessions")
	if err != nil {
		return SessionPage{}, err
	}
	ks, err := r.keys(ctx, "provider_sessions", "CAST(id AS TEXT)", w, true, limit+1)
	if err != nil {
		return SessionPage{}, err
	}
	page := SessionPage{HWM: hwm}
	if len(ks) > limit {
		ks = ks[:limit]
		page.Next = encodeCursor(strconv.FormatInt(ks[len(ks)-1].rowid, 10))
	}
	ids := make([]int, len(ks))
	for i, k := range ks {
		ids[i] = int(k.rowid)
	}
	list, err := r.client.ProviderSession.Query().Where(providersession.IDIn(ids...)).All(ctx)
	if err != nil {
		return page, fmt.Errorf("read sessions: %w", err)
	}
	byID := make(map[int]*ent.ProviderSession, len(list))
	for _, s := range list {
		byID[s.ID] = s
	}
	for _, id := range ids {
		s := byID[id]
		if s == nil {
			continue
		}
		row, err := r.sessionRow(ctx, s)
		if err != nil {
			return page, err
		}
		page.Rows = append(page.Rows, row)
	}
	return page, nil
}

func (r *reader) sessionRow(ctx context.Context, s *ent.ProviderSession) (SessionRow, error) {
	row := SessionRow{
		RowID: int64(s.ID), Provider: s.Provider, NativeID: s.NativeID, Title: s.Title, CWD: s.Cwd,
		Endpoint: s.Endpoint, State: s.State, FirstSeen: s.FirstSeenAt, LastSeen: s.LastSeenAt,
	}
	head, err := r.client.SessionStream.Query().
		Where(sessionstream.Provider(s.Provider), sessionstream.NativeID(s.NativeID)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return row, fmt.Errorf("read the event head of %s:%s: %w", s.Provider, s.NativeID, err)
	default:
		row.LastSeq = head.LastSequence
		if head.LastSequence > 0 {
			t := head.UpdatedAt
			row.LastEvent = &t
		}
	}
	recent, err := r.client.SessionEvent.Query().
		Where(sessionevent.Provider(s.Provider), sessionevent.NativeID(s.NativeID)).
		Order(ent.Desc(sessionevent.FieldSequence)).Limit(livenessEvents).
		Select(sessionevent.FieldSequence, sessionevent.FieldType, sessionevent.FieldTimestamp, sessionevent.FieldData).All(ctx)
	if err != nil {
		return row, fmt.Errorf("read recent events of %s:%s: %w", s.Provider, s.NativeID, err)
	}
	facts := sessionFacts{}
	for _, e := range recent {
		facts.events = append(facts.events, eventFact{seq: e.Sequence, typ: e.Type, at: e.Timestamp, data: e.Data})
	}
	// Open operations are few in the whole store: the status index finds
	// them without reading the session's history ("+": not through the
	// session's index, which would read every operation it ever had).
	ks, err := r.keys(ctx, "operations", "id", where{
		conds: []string{"status = 'queued'", "+provider = ?", "+native_id = ?"}, args: []any{s.Provider, s.NativeID},
	}, true, livenessOperations)
	if err != nil {
		return row, err
	}
	if len(ks) > 0 {
		ids := make([]string, len(ks))
		for i, k := range ks {
			ids[i] = k.id
		}
		open, err := r.client.Operation.Query().Where(operation.IDIn(ids...)).
			Select(operation.FieldOperation, operation.FieldStatus, operation.FieldCreatedAt, operation.FieldUpdatedAt).All(ctx)
		if err != nil {
			return row, fmt.Errorf("read the open operations of %s:%s: %w", s.Provider, s.NativeID, err)
		}
		for _, o := range open {
			facts.open = append(facts.open, opFact{kind: o.Operation, status: string(o.Status), created: o.CreatedAt, updated: o.UpdatedAt})
		}
	}
	row.OpenOps = len(facts.open)
	if row.OpenOps == 0 {
		// One seek on the (provider, native_id, ref) index.
		err := r.db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM operations WHERE provider = ? AND native_id = ?)",
			s.Provider, s.NativeID).Scan(&facts.anyOperation)
		if err != nil {
			return row, fmt.Errorf("look for operations of %s:%s: %w", s.Provider, s.NativeID, err)
		}
	}
	row.Liveness, row.Pending = deriveLiveness(facts)
	if r.live != nil {
		if l, ok := r.live(s.Provider, s.NativeID); ok && l.State != "" && l.State != LiveUnknown {
			row.Liveness = l
		}
	}
	return row, nil
}

func (r *reader) session(ctx context.Context, provider, nativeID string) (SessionRow, error) {
	s, err := r.client.ProviderSession.Query().
		Where(providersession.Provider(provider), providersession.NativeID(nativeID)).Only(ctx)
	if ent.IsNotFound(err) {
		return SessionRow{}, errNotFound
	}
	if err != nil {
		return SessionRow{}, fmt.Errorf("read session %s:%s: %w", provider, nativeID, err)
	}
	return r.sessionRow(ctx, s)
}

// ---- events

// EventRow is one stored event of a session.
type EventRow struct {
	Sequence  int64
	Epoch     int64
	Timestamp time.Time
	Type      string
	Data      string // compact JSON, cut to maxEventData characters
	Cut       bool
}

// DOMID is the row's element id.
func (e EventRow) DOMID() string { return "e-" + strconv.FormatInt(e.Sequence, 10) }

// maxEventData bounds the JSON shown for one event.
const maxEventData = 2000

// EventPage is a run of a session's events, oldest first.
type EventPage struct {
	Rows []EventRow
	Next int64 // the last sequence delivered (the live stream's cursor)
	Gap  *events.Gap
}

// eventsAfter returns up to limit events after a sequence.
func (r *reader) eventsAfter(ctx context.Context, provider, nativeID string, after int64, limit int) (EventPage, error) {
	p, err := r.events.Page(ctx, providers.ID(provider), nativeID, after, clampLimit(limit))
	if err != nil {
		return EventPage{}, err
	}
	out := EventPage{Next: p.Next, Gap: p.Gap}
	for _, e := range p.Events {
		out.Rows = append(out.Rows, eventRow(e))
	}
	return out, nil
}

// lastEvents returns the newest limit events (oldest first).
func (r *reader) lastEvents(ctx context.Context, provider, nativeID string, last int64, limit int) (EventPage, error) {
	limit = clampLimit(limit)
	return r.eventsAfter(ctx, provider, nativeID, max(0, last-int64(limit)), limit)
}

func eventRow(e events.Event) EventRow {
	data := string(e.Data)
	row := EventRow{Sequence: e.Sequence, Epoch: e.Epoch, Timestamp: e.Timestamp, Type: e.Type, Data: data}
	if r := []rune(data); len(r) > maxEventData {
		row.Data, row.Cut = string(r[:maxEventData]), true
	}
	return row
}

// ---- receipts

// ReceiptFilter selects operations.
type ReceiptFilter struct {
	Provider  string
	NativeID  string
	Status    string
	Operation string
	Cursor    string
	Limit     int
}

// ReceiptRow is one delivery operation.
type ReceiptRow struct {
	RowID          int64
	ID             string
	Key            string
	Provider       string
	NativeID       string
	Operation      string
	Status         string
	ProviderState  string
	Reason         string
	Classification string
	Turn           string
	TextSHA        string
	Created        time.Time
	Updated        time.Time
}

// DOMID is the row's element id.
func (o ReceiptRow) DOMID() string { return "r-" + strconv.FormatInt(o.RowID, 10) }

// Fingerprint changes when anything shown for the row changes.
func (o ReceiptRow) Fingerprint() string {
	return fmt.Sprint(o.Status, o.ProviderState, o.Reason, o.Turn, o.Updated.UnixNano())
}

// ReceiptPage is a page of receipts, newest first.
type ReceiptPage struct {
	Rows []ReceiptRow
	Next string
	HWM  int64
}

// Receipt states, for the filter.
var receiptStates = []string{"queued", "completed", "rejected", "delivery_unknown"}

// Operation kinds, for the filter.
var operationKinds = []string{"send", "cancel", "permission"}

func (r *reader) receipts(ctx context.Context, f ReceiptFilter) (ReceiptPage, error) {
	limit := clampLimit(f.Limit)
	// Which index serves the page: a session's operations through the
	// (provider, native_id, ref) index; the open and uncertain ones (few)
	// through the status index; otherwise the newest rows are read
	// backwards by rowid until the page is full ("+column" keeps SQLite
	// from choosing an index that would make it sort every match).
	byStatus := f.Status == "queued" || f.Status == "delivery_unknown"
	bySession := f.Provider != "" && f.NativeID != "" && !byStatus
	var w where
	if f.Provider != "" {
		w.add(indexed("provider", bySession)+" = ?", f.Provider)
	}
	if f.NativeID != "" {
		w.add(indexed("native_id", bySession)+" = ?", f.NativeID)
	}
	if f.Status != "" {
		w.add(indexed("status", byStatus)+" = ?", f.Status)
	}
	if f.Operation != "" {
		w.add("operation = ?", f.Operation)
	}
	if c := rowidCursor(f.Cursor); c > 0 {
		w.add("rowid < ?", c)
	}
	hwm, err := r.highWater(ctx, "operations")
	if err != nil {
		return ReceiptPage{}, err
	}
	ks, err := r.keys(ctx, "operations", "id", w, true, limit+1)
	if err != nil {
		return ReceiptPage{}, err
	}
	page := ReceiptPage{HWM: hwm}
	if len(ks) > limit {
		ks = ks[:limit]
		page.Next = encodeCursor(strconv.FormatInt(ks[len(ks)-1].rowid, 10))
	}
	page.Rows, err = r.receiptRows(ctx, ks)
	return page, err
}

func (r *reader) receiptRows(ctx context.Context, ks []keyed) ([]ReceiptRow, error) {
	if len(ks) == 0 {
		return nil, nil
	}
	ids := make([]string, len(ks))
	for i, k := range ks {
		ids[i] = k.id
	}
	list, err := r.client.Operation.Query().Where(operation.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read receipts: %w", err)
	}
	byID := make(map[string]*ent.Operation, len(list))
	for _, o := range list {
		byID[o.ID] = o
	}
	var out []ReceiptRow
	for _, k := range ks {
		if o := byID[k.id]; o != nil {
			out = append(out, receiptRow(k.rowid, o))
		}
	}
	return out, nil
}

func receiptRow(rowid int64, o *ent.Operation) ReceiptRow {
	row := ReceiptRow{
		RowID: rowid, ID: o.ID, Key: o.IdempotencyKey, Provider: o.Provider, NativeID: o.NativeID,
		Operation: o.Operation, Status: string(o.Status), ProviderState: o.ProviderState,
		Turn: nativeTurn(o.NativeTurn, o.Ref), TextSHA: o.TextSha256, Created: o.CreatedAt, Updated: o.UpdatedAt,
	}
	var d struct {
		Reason         string `json:"reason"`
		Classification string `json:"classification"`
		Outcome        *struct {
			Reason string `json:"reason"`
		} `json:"outcome"`
	}
	if len(o.Detail) > 0 && json.Unmarshal(o.Detail, &d) == nil {
		row.Reason, row.Classification = d.Reason, d.Classification
		if d.Outcome != nil && d.Outcome.Reason != "" {
			row.Reason = d.Outcome.Reason
		}
	}
	return row
}

// nativeTurn names the provider's record of the turn an operation started
// or answered, from the adapter's correlation handle. (The truth issue
// stores it as its own column; this is the one place to read it from.)
func nativeTurn(turn, ref string) string {
	if turn != "" {
		return turn
	}
	for _, prefix := range []string{"interrupt:", "permission:"} {
		if t, ok := strings.CutPrefix(ref, prefix); ok {
			return t
		}
	}
	return ref
}

// ReceiptDetail is one receipt and the events that moved it.
type ReceiptDetail struct {
	ReceiptRow
	Detail string // the stored detail JSON, indented
	Events []EventRow
}

// maxReceiptEvents bounds the events shown with one receipt.
const maxReceiptEvents = 50

func (r *reader) receipt(ctx context.Context, id string) (ReceiptDetail, error) {
	var rowid int64
	err := r.db.QueryRowContext(ctx, "SELECT rowid FROM operations WHERE id = ?", id).Scan(&rowid)
	if errors.Is(err, sql.ErrNoRows) {
		return ReceiptDetail{}, errNotFound
	}
	if err != nil {
		return ReceiptDetail{}, fmt.Errorf("read receipt %s: %w", id, err)
	}
	o, err := r.client.Operation.Get(ctx, id)
	if err != nil {
		return ReceiptDetail{}, fmt.Errorf("read receipt %s: %w", id, err)
	}
	d := ReceiptDetail{ReceiptRow: receiptRow(rowid, o), Detail: indentJSON(o.Detail)}
	// The events that moved it: the runtime's interop.operation events
	// naming it, and the provider's events of its native turn.
	evs, err := r.client.SessionEvent.Query().
		Where(sessionevent.Provider(o.Provider), sessionevent.NativeID(o.NativeID),
			func(s *entsql.Selector) {
				col := s.C(sessionevent.FieldData)
				ps := []*entsql.Predicate{sqljson.ValueEQ(col, id, sqljson.Path("operationId"))}
				if d.Turn != "" {
					ps = append(ps, sqljson.ValueEQ(col, d.Turn, sqljson.Path("turnId")),
						sqljson.ValueEQ(col, d.Turn, sqljson.Path("turn", "id")))
				}
				s.Where(entsql.Or(ps...))
			}).
		Order(ent.Asc(sessionevent.FieldSequence)).Limit(maxReceiptEvents).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the events of receipt %s: %w", id, err)
	}
	for _, e := range evs {
		d.Events = append(d.Events, eventRow(events.Event{Sequence: e.Sequence, Epoch: e.Epoch, Timestamp: e.Timestamp, Type: e.Type, Data: e.Data}))
	}
	return d, nil
}

func indentJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// ---- work

// WorkFilter selects work items.
type WorkFilter struct {
	Status string
	Query  string // a substring of the objective or the id
	Cursor string
	Limit  int
}

// WorkRow is one work item in a listing.
type WorkRow struct {
	RowID       int64
	ID          string
	Objective   string
	Status      string
	Source      string
	Destination string
	Created     time.Time
	Updated     time.Time
}

// DOMID is the row's element id.
func (w WorkRow) DOMID() string { return "w-" + strconv.FormatInt(w.RowID, 10) }

// Fingerprint changes when anything shown for the row changes.
func (w WorkRow) Fingerprint() string { return fmt.Sprint(w.Status, w.Objective, w.Updated.UnixNano()) }

// WorkPage is a page of work items, newest first.
type WorkPage struct {
	Rows []WorkRow
	Next string
	HWM  int64
}

// Work statuses, for the filter.
var workStatuses = []string{"open", "in_progress", "blocked", "accepted", "rejected"}

func (r *reader) work(ctx context.Context, f WorkFilter) (WorkPage, error) {
	limit := clampLimit(f.Limit)
	var w where
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	if q := strings.TrimSpace(f.Query); q != "" {
		w.add(`(objective LIKE ? ESCAPE '\' OR id = ?)`, "%"+likeEscape(q)+"%", q)
	}
	if c := rowidCursor(f.Cursor); c > 0 {
		w.add("rowid < ?", c)
	}
	hwm, err := r.highWater(ctx, "work_items")
	if err != nil {
		return WorkPage{}, err
	}
	ks, err := r.keys(ctx, "work_items", "id", w, true, limit+1)
	if err != nil {
		return WorkPage{}, err
	}
	page := WorkPage{HWM: hwm}
	if len(ks) > limit {
		ks = ks[:limit]
		page.Next = encodeCursor(strconv.FormatInt(ks[len(ks)-1].rowid, 10))
	}
	page.Rows, err = r.workRows(ctx, ks)
	return page, err
}

func (r *reader) workRows(ctx context.Context, ks []keyed) ([]WorkRow, error) {
	if len(ks) == 0 {
		return nil, nil
	}
	ids := make([]string, len(ks))
	for i, k := range ks {
		ids[i] = k.id
	}
	list, err := r.client.WorkItem.Query().Where(workitem.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read work items: %w", err)
	}
	byID := make(map[string]*ent.WorkItem, len(list))
	for _, w := range list {
		byID[w.ID] = w
	}
	var out []WorkRow
	for _, k := range ks {
		if w := byID[k.id]; w != nil {
			out = append(out, workRow(k.rowid, w))
		}
	}
	return out, nil
}

func workRow(rowid int64, w *ent.WorkItem) WorkRow {
	return WorkRow{
		RowID: rowid, ID: w.ID, Objective: w.Objective, Status: string(w.Status),
		Source: deref(w.SourceSession), Destination: deref(w.DestinationSession), Created: w.CreatedAt, Updated: w.UpdatedAt,
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// WorkDetail is one work item with its neighbourhood and records.
type WorkDetail struct {
	WorkRow
	Acceptance   []string
	Risks        []string
	Questions    []string
	ChangedFiles []string
	Graph        Graph
	Evidence     []EvidenceRow
	Handoffs     []HandoffRow
	Reviews      []ReviewRow
	Claims       []ClaimRow
	MoreEvidence bool
	MoreHandoffs bool
	MoreReviews  bool
	MoreClaims   bool
}

// EvidenceRow is one evidence record (its data is not loaded).
type EvidenceRow struct {
	ID, Kind, Trust, Session, Summary, Hash string
	Bytes                                   int
	Captured                                time.Time
}

// HandoffRow is one handoff and its lifecycle state.
type HandoffRow struct {
	ID, Source, Destination, Objective, Status, Continuation string
	Tokens, Budget                                           int
	Omitted                                                  []string
	Created, Updated                                         time.Time
}

// ReviewRow is one review.
type ReviewRow struct {
	ID, Reviewer, Verdict, Provenance string
	Findings                          int
	Blocking                          int
	Subjects                          []string
	Created                           time.Time
}

// perWorkLimit bounds each list of a work item's page.
const perWorkLimit = 50

func (r *reader) workItem(ctx context.Context, id string, depth int) (WorkDetail, error) {
	w, err := r.client.WorkItem.Get(ctx, id)
	if ent.IsNotFound(err) {
		return WorkDetail{}, errNotFound
	}
	if err != nil {
		return WorkDetail{}, fmt.Errorf("read work %s: %w", id, err)
	}
	var rowid int64
	_ = r.db.QueryRowContext(ctx, "SELECT rowid FROM work_items WHERE id = ?", id).Scan(&rowid)
	d := WorkDetail{WorkRow: workRow(rowid, w), Acceptance: w.AcceptanceCriteria, Risks: w.Risks,
		Questions: w.UnresolvedQuestions, ChangedFiles: w.ChangedFiles}
	if d.Graph, err = r.neighbourhood(ctx, w, depth); err != nil {
		return d, err
	}
	evs, err := r.client.Evidence.Query().Where(evidence.WorkID(id)).
		Order(ent.Desc(evidence.FieldCapturedAt), ent.Desc(evidence.FieldID)).Limit(perWorkLimit+1).
		Select(evidence.FieldKind, evidence.FieldTrust, evidence.FieldSessionID, evidence.FieldSummary,
			evidence.FieldContentHash, evidence.FieldDataBytes, evidence.FieldCapturedAt).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the evidence of %s: %w", id, err)
	}
	if len(evs) > perWorkLimit {
		evs, d.MoreEvidence = evs[:perWorkLimit], true
	}
	for _, e := range evs {
		d.Evidence = append(d.Evidence, EvidenceRow{ID: e.ID, Kind: string(e.Kind), Trust: string(e.Trust), Session: deref(e.SessionID),
			Summary: e.Summary, Hash: e.ContentHash, Bytes: e.DataBytes, Captured: e.CapturedAt})
	}
	hs, err := r.client.Handoff.Query().Where(handoff.WorkID(id)).
		Order(ent.Desc(handoff.FieldCreatedAt), ent.Desc(handoff.FieldID)).Limit(perWorkLimit + 1).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the handoffs of %s: %w", id, err)
	}
	if len(hs) > perWorkLimit {
		hs, d.MoreHandoffs = hs[:perWorkLimit], true
	}
	for _, h := range hs {
		row := HandoffRow{ID: h.ID, Source: h.SourceSession, Destination: deref(h.DestinationSession), Objective: h.Objective,
			Status: string(h.Status), Tokens: h.ContextTokens, Budget: h.TokenBudget, Omitted: h.OmittedFields,
			Created: h.CreatedAt, Updated: h.UpdatedAt}
		if h.ContinuationState != nil {
			row.Continuation = string(*h.ContinuationState)
		}
		d.Handoffs = append(d.Handoffs, row)
	}
	rs, err := r.client.Review.Query().Where(review.WorkID(id)).
		Order(ent.Desc(review.FieldCreatedAt), ent.Desc(review.FieldID)).Limit(perWorkLimit + 1).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the reviews of %s: %w", id, err)
	}
	if len(rs) > perWorkLimit {
		rs, d.MoreReviews = rs[:perWorkLimit], true
	}
	for _, rv := range rs {
		row := ReviewRow{ID: rv.ID, Reviewer: rv.ReviewerSessionID, Verdict: string(rv.Verdict), Provenance: string(rv.Provenance),
			Findings: len(rv.Findings), Subjects: rv.SubjectEvidenceIds, Created: rv.CreatedAt}
		for _, f := range rv.Findings {
			if f.Severity == "blocking" {
				row.Blocking++
			}
		}
		d.Reviews = append(d.Reviews, row)
	}
	cs, err := r.client.Claim.Query().Where(claim.WorkID(id)).
		Order(ent.Desc(claim.FieldAcquiredAt), ent.Desc(claim.FieldID)).Limit(perWorkLimit + 1).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the claims of %s: %w", id, err)
	}
	if len(cs) > perWorkLimit {
		cs, d.MoreClaims = cs[:perWorkLimit], true
	}
	now := r.clock.Now()
	for _, c := range cs {
		d.Claims = append(d.Claims, claimRow(c, now))
	}
	return d, nil
}

// ---- claims

// ClaimFilter selects active claims.
type ClaimFilter struct {
	Resource string // a substring of the resource
	Session  string
	Cursor   string
	Limit    int
}

// ClaimRow is one claim.
type ClaimRow struct {
	ID, WorkID, Session, Resource, Kind, Mode, Status string
	Acquired, Expires                                 time.Time
	Released                                          *time.Time
	Conflicts                                         []ConflictRow
}

// DOMID is the row's element id.
func (c ClaimRow) DOMID() string { return "c-" + c.ID }

func claimRow(c *ent.Claim, now time.Time) ClaimRow {
	row := ClaimRow{ID: c.ID, WorkID: c.WorkID, Session: c.SessionID, Resource: c.Resource, Kind: string(c.Kind),
		Mode: string(c.Mode), Status: string(c.Status), Acquired: c.AcquiredAt, Expires: c.ExpiresAt, Released: c.ReleasedAt}
	if row.Status == "active" && !now.Before(c.ExpiresAt) {
		row.Status = "expired"
	}
	return row
}

// ClaimPage is a page of active claims ordered by resource, with the
// requests that were refused because of them.
type ClaimPage struct {
	Rows      []ClaimRow
	Next      string
	Conflicts []ConflictRow // the most recent refusals, newest first
	At        time.Time
}

func (r *reader) claims(ctx context.Context, f ClaimFilter) (ClaimPage, error) {
	limit := clampLimit(f.Limit)
	now := r.clock.Now()
	q := r.client.Claim.Query().Where(claim.StatusEQ(claim.StatusActive), claim.ExpiresAtGT(now))
	if s := strings.TrimSpace(f.Resource); s != "" {
		q = q.Where(claim.ResourceContains(s))
	}
	if s := strings.TrimSpace(f.Session); s != "" {
		q = q.Where(claim.SessionID(s))
	}
	if parts, ok := decodeCursor(f.Cursor, 2); ok {
		res, id := parts[0], parts[1]
		q = q.Where(claim.Or(claim.ResourceGT(res), claim.And(claim.Resource(res), claim.IDGT(id))))
	}
	list, err := q.Order(ent.Asc(claim.FieldResource), ent.Asc(claim.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return ClaimPage{}, fmt.Errorf("read active claims: %w", err)
	}
	page := ClaimPage{At: now}
	if len(list) > limit {
		list = list[:limit]
		last := list[len(list)-1]
		page.Next = encodeCursor(last.Resource, last.ID)
	}
	ids := make([]string, len(list))
	for i, c := range list {
		page.Rows = append(page.Rows, claimRow(c, now))
		ids[i] = c.ID
	}
	byHeld, err := r.conflictsOf(ctx, ids)
	if err != nil {
		return page, err
	}
	for i := range page.Rows {
		page.Rows[i].Conflicts = byHeld[page.Rows[i].ID]
	}
	page.Conflicts, err = r.recentConflicts(ctx, maxRecentConflicts)
	return page, err
}

// ---- conversations

// ConversationRow is one conversation in a listing.
type ConversationRow struct {
	RowID        int64
	ID, Title    string
	Participants int
	Messages     int64
	Created      time.Time
	Updated      time.Time
}

// DOMID is the row's element id.
func (c ConversationRow) DOMID() string { return "v-" + strconv.FormatInt(c.RowID, 10) }

// Fingerprint changes when anything shown for the row changes.
func (c ConversationRow) Fingerprint() string {
	return fmt.Sprint(c.Title, c.Participants, c.Messages, c.Updated.UnixNano())
}

// ConversationPage is a page of conversations, newest first.
type ConversationPage struct {
	Rows []ConversationRow
	Next string
	HWM  int64
}

func (r *reader) conversations(ctx context.Context, cursor string, limit int) (ConversationPage, error) {
	limit = clampLimit(limit)
	var w where
	if c := rowidCursor(cursor); c > 0 {
		w.add("rowid < ?", c)
	}
	hwm, err := r.highWater(ctx, "conversations")
	if err != nil {
		return ConversationPage{}, err
	}
	ks, err := r.keys(ctx, "conversations", "id", w, true, limit+1)
	if err != nil {
		return ConversationPage{}, err
	}
	page := ConversationPage{HWM: hwm}
	if len(ks) > limit {
		ks = ks[:limit]
		page.Next = encodeCursor(strconv.FormatInt(ks[len(ks)-1].rowid, 10))
	}
	page.Rows, err = r.conversationRows(ctx, ks)
	return page, err
}

func (r *reader) conversationRows(ctx context.Context, ks []keyed) ([]ConversationRow, error) {
	var out []ConversationRow
	for _, k := range ks {
		c, err := r.client.Conversation.Get(ctx, k.id)
		if ent.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read conversation %s: %w", k.id, err)
		}
		n, err := r.client.Participant.Query().Where(participant.ConversationID(k.id)).Count(ctx)
		if err != nil {
			return nil, fmt.Errorf("count the participants of %s: %w", k.id, err)
		}
		out = append(out, ConversationRow{RowID: k.rowid, ID: c.ID, Title: c.Title, Participants: n,
			Messages: c.LastSequence, Created: c.CreatedAt, Updated: c.UpdatedAt})
	}
	return out, nil
}

// ParticipantRow is one participant of a conversation.
type ParticipantRow struct {
	ID, Provider, NativeID, Workspace, Role string
	Joined                                  time.Time
}

// MessageRow is one directed message and its delivery record.
type MessageRow struct {
	ID, Sender, Recipient, Text, ReplyTo, Delivery string
	Sequence                                       int64
	Created                                        time.Time
	Trimmed                                        bool
	ReceiptStatus, ReceiptState, ReceiptOperation  string
	ReplyOnPage                                    bool
}

// DOMID is the row's element id.
func (m MessageRow) DOMID() string { return "m-" + m.ID }

// Fingerprint changes when anything shown for the row changes.
func (m MessageRow) Fingerprint() string {
	return fmt.Sprint(m.Delivery, m.ReceiptStatus, m.ReceiptState, m.Trimmed)
}

// ConversationDetail is a conversation with a page of its messages.
type ConversationDetail struct {
	ConversationRow
	Participants []ParticipantRow
	Messages     []MessageRow
	Earlier      int64 // a "before" cursor for older messages; 0 when none
	Last         int64 // the newest sequence shown (the live cursor)
}

func (r *reader) conversation(ctx context.Context, id string, before int64, limit int) (ConversationDetail, error) {
	limit = clampLimit(limit)
	c, err := r.client.Conversation.Get(ctx, id)
	if ent.IsNotFound(err) {
		return ConversationDetail{}, errNotFound
	}
	if err != nil {
		return ConversationDetail{}, fmt.Errorf("read conversation %s: %w", id, err)
	}
	var rowid int64
	_ = r.db.QueryRowContext(ctx, "SELECT rowid FROM conversations WHERE id = ?", id).Scan(&rowid)
	d := ConversationDetail{ConversationRow: ConversationRow{RowID: rowid, ID: c.ID, Title: c.Title, Messages: c.LastSequence,
		Created: c.CreatedAt, Updated: c.UpdatedAt}}
	ps, err := r.client.Participant.Query().Where(participant.ConversationID(id)).
		Order(ent.Asc(participant.FieldJoinedAt)).Limit(MaxPageSize).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the participants of %s: %w", id, err)
	}
	for _, p := range ps {
		row := ParticipantRow{ID: p.ParticipantID, Provider: p.Provider, NativeID: p.NativeID, Workspace: deref(p.WorkspaceID), Joined: p.JoinedAt}
		if p.Role != nil {
			row.Role = string(*p.Role)
		}
		d.Participants = append(d.Participants, row)
	}
	d.ConversationRow.Participants = len(d.Participants)
	q := r.client.Message.Query().Where(message.ConversationID(id))
	if before > 0 {
		q = q.Where(message.SequenceLT(before))
	}
	ms, err := q.WithOperation().Order(ent.Desc(message.FieldSequence)).Limit(limit + 1).All(ctx)
	if err != nil {
		return d, fmt.Errorf("read the messages of %s: %w", id, err)
	}
	if len(ms) > limit {
		ms = ms[:limit]
		d.Earlier = ms[len(ms)-1].Sequence
	}
	for i := len(ms) - 1; i >= 0; i-- {
		d.Messages = append(d.Messages, messageRow(ms[i]))
	}
	markReplies(d.Messages)
	if n := len(d.Messages); n > 0 {
		d.Last = d.Messages[n-1].Sequence
	}
	if before > 0 && d.Last == 0 {
		d.Last = before - 1
	}
	return d, nil
}

// messageRow shows a message with the state of the delivery operation that
// carries it (the one ledger: the message has no state of its own).
func messageRow(m *ent.Message) MessageRow {
	row := MessageRow{ID: m.ID, Sender: m.Sender, Recipient: m.Recipient, Text: m.Text, ReplyTo: deref(m.ReplyTo),
		Sequence: m.Sequence, Created: m.CreatedAt, Trimmed: m.TrimmedAt != nil}
	if op := m.Edges.Operation; op != nil {
		row.Delivery = string(op.Status)
		row.ReceiptStatus, row.ReceiptState, row.ReceiptOperation = string(op.Status), op.ProviderState, op.Operation
	}
	return row
}

func markReplies(ms []MessageRow) {
	on := make(map[string]bool, len(ms))
	for _, m := range ms {
		on[m.ID] = true
	}
	for i := range ms {
		ms[i].ReplyOnPage = on[ms[i].ReplyTo]
	}
}
