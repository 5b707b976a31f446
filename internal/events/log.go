package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
)

// DefaultRetention is how many events per session the log keeps.
const DefaultRetention = 10000

// MaxPage is the largest page a read returns (read_session_events' limit).
const MaxPage = limits.ReadSessionEventsLimitMax

// Event is one stored event (0.3.x AgentEvent plus the epoch).
type Event struct {
	Provider  providers.ID    `json:"provider"`
	NativeID  string          `json:"nativeId"`
	Sequence  int64           `json:"sequence"`
	Epoch     int64           `json:"epoch"`
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	// TurnID is the native turn the event belongs to (the nativeTurnId of
	// the receipt that started it), when the adapter knows it.
	TurnID string `json:"turnId,omitempty"`
}

// Gap reports events that were deleted by retention before the reader saw
// them: sequences From..To (inclusive) are gone.
type Gap struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Page is one answer of read_session_events. Next is the sequence to pass
// back as afterSequence (the last delivered, or afterSequence when the page
// is empty); Epoch is the session's current stream epoch.
type Page struct {
	Events []Event `json:"events"`
	Next   int64   `json:"next"`
	Epoch  int64   `json:"epoch"`
	Gap    *Gap    `json:"gap,omitempty"`
	// Warning says why live events may be missing (the provider stream
	// could not be opened); stored events are still served.
	Warning string `json:"warning,omitempty"`
	// NextCursor is set while stored events follow this page (read them
	// now); when it is absent, poll with afterSequence = next.
	NextCursor string `json:"nextCursor,omitempty"`

	session key
	// Liveness is what the runtime knows of the session now.
	Liveness *providers.Liveness `json:"liveness,omitempty"`
	// WaitEnded says why a read that waited for events returned without
	// any: "timeout" (timeoutMs passed), "waiting_on_approval" (the
	// session is parked on a permission request, so no event comes until
	// it is answered) or "dead" (its provider process is gone).
	WaitEnded string `json:"waitEnded,omitempty"`
}

// WaitTimeout is Page.WaitEnded when the wait's bound passed.
const WaitTimeout = "timeout"

// Log is the durable per-session event log in the store. Sequences are
// allocated in the transaction that inserts the events, so two runtime
// processes sharing the file never hand out the same number.
//
// Retention is exact for readers (the session head's oldest_retained moves
// with every append and pages never return anything older); the rows
// themselves are deleted in steps of about 1 % of the retention, which
// keeps a steady-state append at two statements.
type Log struct {
	db        *sql.DB
	retention int64
	slack     int64
	clock     quartz.Clock
	notify    *notifier
	stmts     *statements

	mu      sync.Mutex
	trimmed map[key]int64 // rows below this sequence are known deleted
}

// LogOptions configure a Log.
type LogOptions struct {
	// Retention is how many newest events per session are kept (default
	// [DefaultRetention]); older ones are deleted as new ones arrive.
	Retention int
	// Clock is the time source (default the wall clock).
	Clock quartz.Clock
}

// NewLog returns the event log over st. Appends run in their own write
// transactions on the store's database (BEGIN IMMEDIATE, from the store's
// connection settings) with prepared statements.
func NewLog(st *store.Store, opts LogOptions) *Log {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	r := int64(opts.Retention)
	return &Log{
		db:        st.DB(),
		retention: r,
		slack:     max(16, r/100),
		clock:     opts.Clock,
		notify:    newNotifier(),
		stmts:     newStatements(st.DB(), st.Rebind),
		trimmed:   map[key]int64{},
	}
}

// CurrentEpoch asks Append to stamp events with the session's current epoch.
const CurrentEpoch int64 = -1

// NewEpoch records that the provider stream of a session was (re)opened
// and returns the new epoch (1 for the first stream ever).
func (l *Log) NewEpoch(ctx context.Context, provider providers.ID, nativeID string) (int64, error) {
	var epoch int64
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		st, err := l.stmts.get(ctx, stEpoch)
		if err != nil {
			return err
		}
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, string(provider), nativeID, l.clock.Now().UTC()).Scan(&epoch)
	})
	if err != nil {
		return 0, fmt.Errorf("open event epoch for %s:%s: %w", provider, nativeID, err)
	}
	return epoch, nil
}

func (l *Log) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Append stores evs for one session in one transaction and returns the last
// sequence. epoch is the stream epoch they arrived in, or [CurrentEpoch].
func (l *Log) Append(ctx context.Context, provider providers.ID, nativeID string, epoch int64, evs []providers.NativeEvent) (int64, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	var last int64
	var trims []trim
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		var t *trim
		last, t, err = l.appendTx(ctx, tx, provider, nativeID, epoch, evs)
		if t != nil {
			trims = append(trims, *t)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("append %d events to %s:%s: %w", len(evs), provider, nativeID, err)
	}
	l.trimDone(trims)
	l.notify.notify(key{provider, nativeID})
	return last, nil
}

// Batch is the events of one session for AppendBatch.
type Batch struct {
	Provider providers.ID
	NativeID string
	Epoch    int64
	Events   []providers.NativeEvent
}

// AppendBatch stores several sessions' events in one transaction.
func (l *Log) AppendBatch(ctx context.Context, batches []Batch) error {
	var trims []trim
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		trims = trims[:0]
		for _, b := range batches {
			_, t, err := l.appendTx(ctx, tx, b.Provider, b.NativeID, b.Epoch, b.Events)
			if err != nil {
				return err
			}
			if t != nil {
				trims = append(trims, *t)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append event batch: %w", err)
	}
	l.trimDone(trims)
	for _, b := range batches {
		l.notify.notify(key{b.Provider, b.NativeID})
	}
	return nil
}

type trim struct {
	k     key
	below int64
}

func (l *Log) trimDone(ts []trim) {
	if len(ts) == 0 {
		return
	}
	l.mu.Lock()
	for _, t := range ts {
		if t.below > l.trimmed[t.k] {
			l.trimmed[t.k] = t.below
		}
	}
	l.mu.Unlock()
}

func (l *Log) appendTx(ctx context.Context, tx *sql.Tx, provider providers.ID, nativeID string, epoch int64, evs []providers.NativeEvent) (int64, *trim, error) {
	if len(evs) == 0 {
		return 0, nil, nil
	}
	now := l.clock.Now().UTC()
	bump, err := l.stmts.get(ctx, stBump)
	if err != nil {
		return 0, nil, err
	}
	var last, cur, oldest int64
	if err := tx.StmtContext(ctx, bump).QueryRowContext(ctx, string(provider), nativeID, int64(len(evs)), l.retention, now).Scan(&last, &cur, &oldest); err != nil {
		return 0, nil, err
	}
	if epoch == CurrentEpoch {
		epoch = cur
	}
	first := last - int64(len(evs)) + 1
	// Rows that retention already excludes are not written at all.
	if skip := oldest - first; skip > 0 {
		evs = evs[min(int(skip), len(evs)):]
		first = oldest
	}
	for start := 0; start < len(evs); start += maxInsertRows {
		part := evs[start:min(start+maxInsertRows, len(evs))]
		ins, err := l.stmts.insert(ctx, len(part))
		if err != nil {
			return 0, nil, err
		}
		if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, insertArgs(provider, nativeID, epoch, first+int64(start), part, now)...); err != nil {
			return 0, nil, err
		}
	}
	k := key{provider, nativeID}
	l.mu.Lock()
	done, known := l.trimmed[k]
	l.mu.Unlock()
	if oldest <= 1 || (known && oldest-done < l.slack) || (!known && last-oldest+1 < l.retention) {
		return last, nil, nil
	}
	del, err := l.stmts.get(ctx, stTrim)
	if err != nil {
		return 0, nil, err
	}
	if _, err := tx.StmtContext(ctx, del).ExecContext(ctx, string(provider), nativeID, oldest); err != nil {
		return 0, nil, err
	}
	return last, &trim{k: k, below: oldest}, nil
}

func insertArgs(provider providers.ID, nativeID string, epoch, first int64, evs []providers.NativeEvent, now time.Time) []any {
	args := make([]any, 0, 3+len(evs)*5)
	args = append(args, string(provider), nativeID, epoch)
	var buf []byte
	for i, ev := range evs {
		ts := ev.Timestamp
		if ts.IsZero() {
			ts = now
		}
		var data any
		if len(ev.Data) > 0 {
			data = string(ev.Data)
		}
		buf = store.AppendTime(buf[:0], ts)
		args = append(args, first+int64(i), ev.Type, data, string(buf), ev.TurnID)
	}
	return args
}

// Page returns up to limit events after afterSequence (1..MaxPage). A gap
// is reported when events after the cursor were deleted by retention.
func (l *Log) Page(ctx context.Context, provider providers.ID, nativeID string, afterSequence int64, limit int) (Page, error) {
	if limit <= 0 || limit > MaxPage {
		limit = MaxPage
	}
	if afterSequence < 0 {
		afterSequence = 0
	}
	p := Page{Next: afterSequence, Events: []Event{}, session: key{provider, nativeID}}
	head, err := l.stmts.get(ctx, stHead)
	if err != nil {
		return p, err
	}
	var last, oldest int64
	switch err := head.QueryRowContext(ctx, string(provider), nativeID).Scan(&last, &p.Epoch, &oldest); {
	case errors.Is(err, sql.ErrNoRows):
		return p, nil // nothing recorded for this session yet
	case err != nil:
		return p, fmt.Errorf("read event head of %s:%s: %w", provider, nativeID, err)
	}
	if afterSequence >= last {
		return p, nil
	}
	from := max(afterSequence, oldest-1)
	q, err := l.stmts.get(ctx, stPage)
	if err != nil {
		return p, err
	}
	rows, err := q.QueryContext(ctx, string(provider), nativeID, from, limit)
	if err != nil {
		return p, fmt.Errorf("read events of %s:%s: %w", provider, nativeID, err)
	}
	defer rows.Close()
	p.Events = make([]Event, 0, min(limit, int(last-from)))
	for rows.Next() {
		ev := Event{Provider: provider, NativeID: nativeID}
		var ts string
		var data []byte
		if err := rows.Scan(&ev.Sequence, &ev.Epoch, &ev.Type, &data, &ts, &ev.TurnID); err != nil {
			return p, fmt.Errorf("read events of %s:%s: %w", provider, nativeID, err)
		}
		ev.Timestamp, _ = store.ParseTime(ts) // text no layout reads is the zero time, as before
		if len(data) == 0 {
			data = []byte("null")
		}
		ev.Data = data
		p.Events = append(p.Events, ev)
	}
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("read events of %s:%s: %w", provider, nativeID, err)
	}
	// Sequences are contiguous, so a first event past the cursor's
	// successor (or an empty answer below the oldest) means retention
	// deleted what lay between.
	if n := len(p.Events); n > 0 {
		p.Next = p.Events[n-1].Sequence
		if p.Next < last {
			p.NextCursor = eventCursor(p.session, p.Next)
		}
		if first := p.Events[0].Sequence; first > afterSequence+1 {
			p.Gap = &Gap{From: afterSequence + 1, To: first - 1}
		}
	} else if oldest > afterSequence+1 {
		p.Gap = &Gap{From: afterSequence + 1, To: oldest - 1}
	}
	return p, nil
}
