package events

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// This file is the SQL seam of the event log: the only place that spells
// SQL. The statements are plain SQL over ent's tables and columns, written
// once for both dialects: the upsert (ON CONFLICT ... DO UPDATE ...
// RETURNING) is understood by SQLite 3.35+ and PostgreSQL, parameters whose
// type PostgreSQL cannot infer are CAST, and the "?" placeholders are
// rewritten for the store's dialect (store.Rebind) when prepared.

type stmtID int

const (
	stBump stmtID = iota
	stEpoch
	stTrim
	stHead
	stPage
	nStmts
)

var stmtSQL = [nStmts]string{
	// Allocates len(evs) sequences and moves the retained window, in one
	// statement: ?1 provider, ?2 native id, ?3 count, ?4 retention, ?5 now.
	stBump: `INSERT INTO session_streams (provider, native_id, last_sequence, epoch, oldest_retained, updated_at)
VALUES (?1, ?2, ?3, 0, CASE WHEN CAST(?3 AS BIGINT) - CAST(?4 AS BIGINT) + 1 > 1 THEN ?3 - ?4 + 1 ELSE 1 END, ?5)
ON CONFLICT (provider, native_id) DO UPDATE SET
  last_sequence = session_streams.last_sequence + excluded.last_sequence,
  oldest_retained = CASE WHEN session_streams.last_sequence + excluded.last_sequence - ?4 + 1 > session_streams.oldest_retained
    THEN session_streams.last_sequence + excluded.last_sequence - ?4 + 1 ELSE session_streams.oldest_retained END,
  updated_at = excluded.updated_at
RETURNING last_sequence, epoch, oldest_retained`,
	stEpoch: `INSERT INTO session_streams (provider, native_id, last_sequence, epoch, oldest_retained, updated_at)
VALUES (?1, ?2, 0, 1, 1, ?3)
ON CONFLICT (provider, native_id) DO UPDATE SET epoch = session_streams.epoch + 1, updated_at = excluded.updated_at
RETURNING epoch`,
	stTrim: `DELETE FROM session_events WHERE provider = ? AND native_id = ? AND sequence < ?`,
	stHead: `SELECT last_sequence, epoch, oldest_retained FROM session_streams WHERE provider = ? AND native_id = ?`,
	// CAST keeps the driver from parsing every timestamp with time.Parse;
	// store.ParseTime reads the store's fixed format.
	stPage: `SELECT sequence, epoch, type, data, CAST(timestamp AS TEXT), turn_id FROM session_events
WHERE provider = ? AND native_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`,
}

// maxInsertRows is the most rows one prepared INSERT carries.
const maxInsertRows = 64

// statements prepares each statement once per database handle (database/sql
// re-prepares it per pooled connection as needed).
type statements struct {
	db     *sql.DB
	rebind func(string) string
	mu     sync.Mutex
	st     [nStmts]*sql.Stmt
	ins    [maxInsertRows + 1]*sql.Stmt
}

func newStatements(db *sql.DB, rebind func(string) string) *statements {
	return &statements{db: db, rebind: rebind}
}

func (s *statements) get(ctx context.Context, id stmtID) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.st[id]; st != nil {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, s.rebind(stmtSQL[id]))
	if err != nil {
		return nil, fmt.Errorf("prepare event statement: %w", err)
	}
	s.st[id] = st
	return st, nil
}

func (s *statements) insert(ctx context.Context, rows int) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.ins[rows]; st != nil {
		return st, nil
	}
	// ?1 provider, ?2 native id, ?3 epoch, then (sequence, type, data,
	// timestamp, turn id) per row: the repeated values are bound once. A
	// plain multi-row VALUES lets PostgreSQL take each parameter's type from
	// its column.
	var b strings.Builder
	b.WriteString("INSERT INTO session_events (provider, native_id, sequence, epoch, type, data, timestamp, turn_id) VALUES ")
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		n := 4 + 5*i
		fmt.Fprintf(&b, "(?1, ?2, ?%d, ?3, ?%d, ?%d, ?%d, ?%d)", n, n+1, n+2, n+3, n+4)
	}
	st, err := s.db.PrepareContext(ctx, s.rebind(b.String()))
	if err != nil {
		return nil, fmt.Errorf("prepare event insert: %w", err)
	}
	s.ins[rows] = st
	return st, nil
}
