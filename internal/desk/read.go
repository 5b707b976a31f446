package desk

import (
	"context"
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
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/participant"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/providersession"
	"github.com/agent-interop/runtime/ent/sessionevent"
	"github.com/agent-interop/runtime/ent/sessionstream"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// Page sizes of every list view.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// reader answers the desk's views from the store. Every list is one keyset
// page on an indexed column pair, through ent (so it reads the same on
// SQLite and on a PostgreSQL team store): the services' own paged reads
// where they answer what a view shows (workflow.ListWorks,
// conversations.List and Read, events.Log.Page), and keyset queries of
// the same form for the rest (sessions by id, receipts by (created_at,
// id), claims by (resource, id)). No view ever reads the whole store.
type reader struct {
	st     *store.Store
	client *ent.Client
	events *events.Log
	works  *workflow.Service
	convs  *conversations.Service
	clock  quartz.Clock
	live   LivenessFunc
	owners ownerJudge
}

// snapshot runs fn with a reader whose every query sees one snapshot of
// the store (store.Read: a WAL snapshot on SQLite, REPEATABLE READ on
// PostgreSQL), and whose runtime liveness answers each session once: the
// counts and the rows of a list read inside it always agree, whatever is
// written meanwhile.
func (r *reader) snapshot(ctx context.Context, fn func(r *reader) error) error {
	return r.st.Read(ctx, func(tx *ent.Tx) error {
		rr := *r
		rr.client = tx.Client()
		if r.live != nil {
			type answer struct {
				l  Liveness
				ok bool
			}
			seen := map[[2]string]answer{}
			rr.live = func(provider, nativeID string) (Liveness, bool) {
				k := [2]string{provider, nativeID}
				a, asked := seen[k]
				if !asked {
					a.l, a.ok = r.live(provider, nativeID)
					seen[k] = a
				}
				return a.l, a.ok
			}
		}
		return fn(&rr)
	})
}

// snapshotOf is fn's answer read in one snapshot (reader.snapshot).
func snapshotOf[T any](ctx context.Context, r *reader, fn func(r *reader) (T, error)) (T, error) {
	var out T
	err := r.snapshot(ctx, func(r *reader) (err error) {
		out, err = fn(r)
		return err
	})
	return out, err
}

// errNotFound marks a record the URL names that does not exist.
var errNotFound = errors.New("not found")

// Cursor names of the desk's own keyset pages (paging.Encode's tool): a
// cursor of one view, or of other filters, is refused.
const (
	cursorSessions = "desk_sessions"
	cursorReceipts = "desk_receipts"
	cursorWork     = "desk_work_search"
	cursorClaims   = "desk_claims"
)

func clampLimit(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	return min(n, MaxPageSize)
}

func keyTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// timeKeys decodes a (time, id) cursor.
func timeKeys(tool string, f paging.Filter, cursor string) (time.Time, string, bool, error) {
	keys, err := paging.Decode(tool, f, cursor, 2)
	if err != nil || keys == nil {
		return time.Time{}, "", false, err
	}
	at, err := time.Parse(time.RFC3339Nano, keys[0])
	if err != nil || keys[1] == "" {
		return time.Time{}, "", false, paging.Invalid(tool, "cursor", "is malformed; use the page's Next link or start again from the first page")
	}
	return at, keys[1], true, nil
}

// olderThan is the newest-first keyset condition (timeCol, id) < (at, id),
// one row-value comparison over the (timeCol, id) index.
func olderThan[P ~func(*entsql.Selector)](timeCol, idCol string, at time.Time, id string) P {
	return P(func(s *entsql.Selector) {
		s.Where(entsql.CompositeLT([]string{s.C(timeCol), s.C(idCol)}, at, id))
	})
}

// domID is an element id for a record: prefix and the record's id when
// that is a safe CSS identifier, else a digest of it.
func domID(prefix, id string) string {
	safe := id != ""
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			safe = false
			break
		}
	}
	if safe && len(id) <= 80 {
		return prefix + id
	}
	return prefix + "h" + digest(id)
}

// ---- sessions

// SessionFilter selects sessions.
type SessionFilter struct {
	Provider  string
	Workspace string // a cwd, or a directory containing it
	Cursor    string
	Limit     int
}

func (f SessionFilter) paging() paging.Filter {
	return paging.F("provider", f.Provider, "workspace", strings.TrimRight(f.Workspace, "/"))
}

// SessionRow is one provider session as the desk shows it.
type SessionRow struct {
	ID        int
	Provider  string
	NativeID  string
	Title     string
	CWD       string
	Endpoint  string
	Host      string
	State     string // what the provider last reported, verbatim
	FirstSeen time.Time
	LastSeen  time.Time
	LastEvent *time.Time
	LastSeq   int64
	Liveness  Liveness
	Pending   []PendingRequest
	OpenOps   int
	stored    Liveness // the store's inference, before the runtime's own answer
}

// DOMID is the row's element id.
func (s SessionRow) DOMID() string { return "s-" + strconv.Itoa(s.ID) }

// Fingerprint changes when anything shown for the row changes.
func (s SessionRow) Fingerprint() string {
	observed := int64(0)
	if s.Liveness.ObservedAt != nil {
		observed = s.Liveness.ObservedAt.UnixNano()
	}
	return fmt.Sprint(s.Title, s.CWD, s.State, s.LastSeen.UnixNano(), s.LastSeq, s.Liveness.State, s.Liveness.Source,
		s.Liveness.Reason, observed, len(s.Pending), s.OpenOps)
}

// SessionPage is a page of sessions, newest first.
type SessionPage struct {
	Rows []SessionRow
	Next string
	// Start and Total: the position of the first row and how many
	// sessions the filter selects, both counted in the store.
	Start, Total int
}

func (r *reader) sessions(ctx context.Context, f SessionFilter) (SessionPage, error) {
	limit := clampLimit(f.Limit)
	pf := f.paging()
	keys, err := paging.Decode(cursorSessions, pf, f.Cursor, 1)
	if err != nil {
		return SessionPage{}, err
	}
	q := r.client.ProviderSession.Query()
	if f.Provider != "" {
		q = q.Where(providersession.Provider(f.Provider))
	}
	if ws := strings.TrimRight(f.Workspace, "/"); ws != "" {
		q = q.Where(providersession.Or(providersession.Cwd(ws), providersession.CwdHasPrefix(ws+"/")))
	}
	page := SessionPage{Start: 1}
	if page.Total, err = q.Clone().Count(ctx); err != nil {
		return SessionPage{}, fmt.Errorf("count sessions: %w", err)
	}
	if keys != nil {
		id, err := strconv.Atoi(keys[0])
		if err != nil {
			return SessionPage{}, paging.Invalid(cursorSessions, "cursor", "is malformed; use the page's Next link or start again from the first page")
		}
		before, err := q.Clone().Where(providersession.IDGTE(id)).Count(ctx)
		if err != nil {
			return SessionPage{}, fmt.Errorf("count the sessions before the page: %w", err)
		}
		page.Start = before + 1
		q = q.Where(providersession.IDLT(id))
	}
	list, err := q.Order(ent.Desc(providersession.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return SessionPage{}, fmt.Errorf("read sessions: %w", err)
	}
	if len(list) > limit {
		list = list[:limit]
		page.Next = paging.Encode(cursorSessions, pf, strconv.Itoa(list[len(list)-1].ID))
	}
	page.Rows, err = r.sessionRows(ctx, list)
	return page, err
}

// sessionRows adds to each session what the store says it is doing: its
// event head, its newest events, its open operations and their owners.
func (r *reader) sessionRows(ctx context.Context, list []*ent.ProviderSession) ([]SessionRow, error) {
	if len(list) == 0 {
		return nil, nil
	}
	open, err := r.openOperations(ctx)
	if err != nil {
		return nil, err
	}
	mine, err := r.runtimeSessions(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]SessionRow, 0, len(list))
	for _, s := range list {
		row, err := r.sessionRow(ctx, s, open, mine)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (r *reader) sessionRow(ctx context.Context, s *ent.ProviderSession, open openOps, mine map[[2]string]bool) (SessionRow, error) {
	row := SessionRow{
		ID: s.ID, Provider: s.Provider, NativeID: s.NativeID, Title: s.Title, CWD: s.Cwd, Host: s.Host,
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
	facts := sessionFacts{open: open.of(s.Provider, s.NativeID)}
	for _, e := range recent {
		facts.events = append(facts.events, eventFact{seq: e.Sequence, typ: e.Type, at: e.Timestamp, data: e.Data})
	}
	if len(facts.open) == 0 {
		// One seek on the (provider, native_id, …) index.
		facts.anyOperation, err = r.client.Operation.Query().
			Where(operation.Provider(s.Provider), operation.NativeID(s.NativeID)).Exist(ctx)
		if err != nil {
			return row, fmt.Errorf("look for operations of %s:%s: %w", s.Provider, s.NativeID, err)
		}
		// Its open operations are read after that (and not taken from the
		// page's, read before, or cut short): an operation recorded in
		// between would read as settled. An operation only ever goes from
		// open to settled, so "none open" is then true of what was found.
		if facts.anyOperation {
			if facts.open, err = r.openOf(ctx, s.Provider, s.NativeID); err != nil {
				return row, err
			}
		}
	}
	row.OpenOps = len(facts.open)
	row.Liveness, row.Pending = deriveLiveness(facts)
	row.stored = row.Liveness
	if r.live != nil && mine[[2]string{s.Provider, s.NativeID}] {
		if l, ok := r.live(s.Provider, s.NativeID); ok {
			row.Liveness = preferRuntime(l, row.Liveness, facts.drivenElsewhere())
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
	rows, err := r.sessionRows(ctx, []*ent.ProviderSession{s})
	if err != nil {
		return SessionRow{}, err
	}
	return rows[0], nil
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

func (f ReceiptFilter) paging() paging.Filter {
	return paging.F("provider", f.Provider, "nativeId", f.NativeID, "status", f.Status, "operation", f.Operation)
}

// ReceiptRow is one delivery operation.
type ReceiptRow struct {
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
	Owner          string
	Created        time.Time
	Updated        time.Time
	// Verdict says how a send's turn ended (empty until observed); Usage
	// is what the provider reported it cost ("" when it reported
	// nothing: unknown); TurnError is a failed turn's error.
	Verdict, Usage, TurnError string
	ChangedFiles              []string
}

// DOMID is the row's element id.
func (o ReceiptRow) DOMID() string { return domID("r-", o.ID) }

// Fingerprint changes when anything shown for the row changes.
func (o ReceiptRow) Fingerprint() string {
	return fmt.Sprint(o.Status, o.ProviderState, o.Reason, o.Turn, o.Verdict, o.Usage, o.Updated.UnixNano())
}

// ReceiptPage is a page of receipts, newest first. Searched is set when
// the page stopped at its scan bound before it was full: it looked
// through that many receipts, and Next looks further back.
type ReceiptPage struct {
	Rows     []ReceiptRow
	Next     string
	Searched int
	// Start is the position of the first row among the receipts the
	// filter selects (1 on the first page), counted in the store.
	Start int
}

// ReceiptCounts are the counts per state of the receipts a filter selects
// (whatever its state): one GROUP BY in the store.
type ReceiptCounts struct {
	Tally  // Counts in receiptStates order
	Filter ReceiptFilter
	OOB    string
}

// receiptWhere is the filter as SQL predicates, its state but when
// withStatus is false.
func receiptWhere(f ReceiptFilter, withStatus bool) []predicate.Operation {
	var ps []predicate.Operation
	if f.Provider != "" {
		ps = append(ps, operation.Provider(f.Provider))
	}
	if f.NativeID != "" {
		ps = append(ps, operation.NativeID(f.NativeID))
	}
	if f.Operation != "" {
		ps = append(ps, operation.OperationEQ(f.Operation))
	}
	if withStatus && f.Status != "" {
		ps = append(ps, operation.StatusEQ(operation.Status(f.Status)))
	}
	return ps
}

func (r *reader) receiptCounts(ctx context.Context, f ReceiptFilter) (ReceiptCounts, error) {
	var groups []struct {
		Status string `json:"status"`
		Count  int    `json:"count"`
	}
	if err := r.client.Operation.Query().Where(receiptWhere(f, false)...).GroupBy(operation.FieldStatus).
		Aggregate(ent.Count()).Scan(ctx, &groups); err != nil {
		return ReceiptCounts{}, fmt.Errorf("count receipts by state: %w", err)
	}
	by := map[string]int{}
	out := ReceiptCounts{Filter: f}
	for _, g := range groups {
		by[g.Status] += g.Count
		out.Total += g.Count
	}
	for _, st := range receiptStates {
		out.Counts = append(out.Counts, StatusCount{Status: st, N: by[st]})
	}
	return out, nil
}

// Receipt states, for the filter.
var receiptStates = []string{"queued", "completed", "rejected", "delivery_unknown"}

// operationKinds are the operation kinds, for the filter: every kind the
// ledger records (the Freebuff thread writes' resume, set_model and
// set_reasoning too).
func operationKinds() []string { return delivery.Kinds() }

// Bounds of a filtered receipts page: the filters no index serves are
// checked on rows read newest first in chunks, and one page looks through
// at most maxScanned rows (its Next link looks further back).
const (
	scanChunk  = 200
	maxScanned = 5000
)

// receipts pages the operations newest first on (created_at, id). An
// index serves a session's operations ((provider, native_id, created_at,
// id)) and the open or uncertain ones (few, through the status index);
// the other filters are checked on the rows read in that order, in
// chunks, so the cost of a page never depends on how a database's planner
// guesses the filter's selectivity.
func (r *reader) receipts(ctx context.Context, f ReceiptFilter) (ReceiptPage, error) {
	limit := clampLimit(f.Limit)
	pf := f.paging()
	at, id, set, err := timeKeys(cursorReceipts, pf, f.Cursor)
	if err != nil {
		return ReceiptPage{}, err
	}
	cursorAt, cursorID, cursorSet := at, id, set
	bySession := f.Provider != "" && f.NativeID != ""
	byStatus := f.Status == "queued" || f.Status == "delivery_unknown"
	q := r.client.Operation.Query()
	var checks []func(*ent.Operation) bool
	switch {
	case bySession:
		q = q.Where(operation.Provider(f.Provider), operation.NativeID(f.NativeID))
	case f.Provider != "":
		checks = append(checks, func(o *ent.Operation) bool { return o.Provider == f.Provider })
	case f.NativeID != "":
		checks = append(checks, func(o *ent.Operation) bool { return o.NativeID == f.NativeID })
	}
	switch {
	case f.Status == "":
	case byStatus && !bySession:
		q = q.Where(operation.StatusEQ(operation.Status(f.Status)))
	default:
		checks = append(checks, func(o *ent.Operation) bool { return string(o.Status) == f.Status })
	}
	if f.Operation != "" {
		checks = append(checks, func(o *ent.Operation) bool { return o.Operation == f.Operation })
	}
	chunk := limit + 1
	if len(checks) > 0 {
		chunk = max(chunk, scanChunk)
	}
	var rows []*ent.Operation
	scanned, exhausted := 0, false
	for len(rows) <= limit && scanned < maxScanned {
		cq := q.Clone()
		if set {
			cq = cq.Where(olderThan[predicate.Operation](operation.FieldCreatedAt, operation.FieldID, at, id))
		}
		batch, err := cq.Order(ent.Desc(operation.FieldCreatedAt), ent.Desc(operation.FieldID)).Limit(chunk).All(ctx)
		if err != nil {
			return ReceiptPage{}, fmt.Errorf("read receipts: %w", err)
		}
		for _, o := range batch {
			scanned++
			at, id, set = o.CreatedAt, o.ID, true
			if matchesAll(o, checks) {
				if rows = append(rows, o); len(rows) > limit {
					break
				}
			}
		}
		if len(batch) < chunk {
			exhausted = true
			break
		}
	}
	page := ReceiptPage{Start: 1}
	if cursorSet {
		// The receipts before the page: those matching the filter at or
		// after the cursor's (created_at, id).
		n, err := r.client.Operation.Query().Where(receiptWhere(f, true)...).
			Where(operation.Not(olderThan[predicate.Operation](operation.FieldCreatedAt, operation.FieldID, cursorAt, cursorID))).Count(ctx)
		if err != nil {
			return ReceiptPage{}, fmt.Errorf("count the receipts before the page: %w", err)
		}
		page.Start = n + 1
	}
	switch {
	case len(rows) > limit:
		rows = rows[:limit]
		last := rows[len(rows)-1]
		page.Next = paging.Encode(cursorReceipts, pf, keyTime(last.CreatedAt), last.ID)
	case !exhausted:
		// The scan bound: more may match further back.
		page.Next, page.Searched = paging.Encode(cursorReceipts, pf, keyTime(at), id), scanned
	}
	for _, o := range rows {
		page.Rows = append(page.Rows, receiptRow(o))
	}
	return page, nil
}

func matchesAll(o *ent.Operation, checks []func(*ent.Operation) bool) bool {
	for _, c := range checks {
		if !c(o) {
			return false
		}
	}
	return true
}

func receiptRow(o *ent.Operation) ReceiptRow {
	row := ReceiptRow{
		ID: o.ID, Key: o.IdempotencyKey, Provider: o.Provider, NativeID: o.NativeID,
		Operation: o.Operation, Status: string(o.Status), ProviderState: o.ProviderState, Owner: o.Owner,
		Turn: nativeTurn(o.NativeTurn, o.Ref), TextSHA: o.TextSha256, Created: o.CreatedAt, Updated: o.UpdatedAt,
		ChangedFiles: o.ChangedFiles,
	}
	if o.Verdict != nil {
		row.Verdict = *o.Verdict
	}
	if o.TurnError != nil {
		row.TurnError = *o.TurnError
	}
	row.Usage = usageText(o.Usage)
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

// usageText renders a turn's reported usage ("" when none was reported):
// only the figures the provider reported.
func usageText(raw json.RawMessage) string {
	var u providers.Usage
	if len(raw) == 0 || json.Unmarshal(raw, &u) != nil || !u.Known() {
		return ""
	}
	return u.Text()
}

// nativeTurn names the provider's record of the turn an operation started
// or answered: the ledger's native_turn column, else the adapter's
// correlation handle.
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
	// The conversation message the operation delivered, if it was one
	// (messages.operation_id is indexed).
	MessageID, ConversationID string
	MessageSequence           int64
	MessageDOMID              string // the message's element id on its conversation's page
	// ViaDesk is set for an operation a person made through the desk.
	ViaDesk bool
}

// maxReceiptEvents bounds the events shown with one receipt.
const maxReceiptEvents = 50

func (r *reader) receipt(ctx context.Context, id string) (ReceiptDetail, error) {
	o, err := r.client.Operation.Get(ctx, id)
	if ent.IsNotFound(err) {
		return ReceiptDetail{}, errNotFound
	}
	if err != nil {
		return ReceiptDetail{}, fmt.Errorf("read receipt %s: %w", id, err)
	}
	d := ReceiptDetail{ReceiptRow: receiptRow(o), Detail: indentJSON(o.Detail), ViaDesk: viaDesk(o.IdempotencyKey)}
	msg, err := r.client.Message.Query().Where(message.OperationID(id)).
		Select(message.FieldID, message.FieldConversationID, message.FieldSequence).First(ctx)
	switch {
	case err == nil:
		d.MessageID, d.ConversationID, d.MessageSequence = msg.ID, msg.ConversationID, msg.Sequence
		d.MessageDOMID = MessageRow{ID: msg.ID}.DOMID()
	case !ent.IsNotFound(err):
		return d, fmt.Errorf("read the message of receipt %s: %w", id, err)
	}
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
				// A permission answer without a turn (OpenCode's): the
				// provider's events of the request it answered, asked
				// (properties.id) and replied (properties.requestID).
				if req := permissionRequestOf(o.Detail); req != "" {
					ps = append(ps, sqljson.ValueEQ(col, req, sqljson.Path("properties", "requestID")),
						sqljson.ValueEQ(col, req, sqljson.Path("properties", "id")))
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

// permissionRequestOf is the request id a permission answer's stored
// detail names ("" for any other operation).
func permissionRequestOf(detail []byte) string {
	var d struct {
		Request struct {
			RequestID string `json:"requestId"`
		} `json:"request"`
	}
	if len(detail) == 0 || json.Unmarshal(detail, &d) != nil {
		return ""
	}
	return d.Request.RequestID
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

// sessionConversations are the conversations a session takes part in
// (at most limit, by conversation id), from the participants' table.
func (r *reader) sessionConversations(ctx context.Context, provider, nativeID string, limit int) ([]string, error) {
	rows, err := r.client.Participant.Query().
		Where(participant.Provider(provider), participant.NativeID(nativeID)).
		Order(ent.Asc(participant.FieldConversationID)).Limit(limit).
		Select(participant.FieldConversationID).Strings(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the conversations of session %s:%s: %w", provider, nativeID, err)
	}
	return rows, nil
}

// undiscoveredSession is the row of a session the store mentions (in
// work, claims, conversations or receipts) but the runtime never
// discovered: nothing is known of it but its name.
func undiscoveredSession(provider, nativeID string) SessionRow {
	return SessionRow{Provider: provider, NativeID: nativeID, Liveness: Liveness{
		State: LiveUnknown, Source: SourceStore,
		Reason: "no runtime has discovered this session; the store only mentions it",
	}}
}
