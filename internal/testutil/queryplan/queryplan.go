// Package queryplan lets a test see which index each of a service's store
// queries uses: Wrap serves the service an ent client whose driver records
// every statement, and Plans asks SQLite for the plan of each recorded
// SELECT (EXPLAIN QUERY PLAN with the same arguments). PostgreSQL runs the
// same statements against the same ent-declared indexes; its planner is
// not asked.
package queryplan

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/store"
)

// Store is a store whose client records its statements. It has the
// methods the services' Store interfaces ask for.
type Store struct {
	st     *store.Store
	client *ent.Client
	rec    *recorder
}

// Wrap returns st with a recording client. It skips tb unless st is a
// SQLite store.
func Wrap(tb testing.TB, st *store.Store) *Store {
	tb.Helper()
	if st.Dialect() != dialect.SQLite {
		tb.Skip("asks SQLite for query plans; on PostgreSQL the same statements run against the same indexes")
	}
	rec := &recorder{Driver: entsql.OpenDB(dialect.SQLite, st.DB())}
	return &Store{st: st, client: ent.NewClient(ent.Driver(rec)), rec: rec}
}

// Client returns the recording client.
func (s *Store) Client() *ent.Client { return s.client }

// Tx runs fn in one transaction of the recording client.
func (s *Store) Tx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Read runs fn in a transaction it rolls back.
func (s *Store) Read(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// Recovery delegates to the wrapped store.
func (s *Store) Recovery(ctx context.Context) (*store.Recovery, error) { return s.st.Recovery(ctx) }

// Plan is one recorded SELECT and SQLite's plan for it, one detail line
// per step.
type Plan struct {
	Query string
	Steps []string
}

// String is the query and its plan, for failure messages.
func (p Plan) String() string { return p.Query + "\n  plan: " + strings.Join(p.Steps, "; ") }

// Uses reports whether a step of the plan reads table through index.
func (p Plan) Uses(table, index string) bool {
	for _, s := range p.Steps {
		if (strings.HasPrefix(s, "SEARCH "+table+" ") || strings.HasPrefix(s, "SCAN "+table+" ")) && strings.Contains(s, "INDEX "+index) {
			return true
		}
	}
	return false
}

// Searches reports whether a step of the plan looks table up through
// index with a constraint (SEARCH ... USING INDEX index (...=?...)), not by
// walking the whole index.
func (p Plan) Searches(table, index string) bool {
	for _, s := range p.Steps {
		if strings.HasPrefix(s, "SEARCH "+table+" ") && strings.Contains(s, "INDEX "+index+" (") {
			return true
		}
	}
	return false
}

// ScansTable reports whether a step reads table row by row without an
// index.
func (p Plan) ScansTable(table string) bool {
	for _, s := range p.Steps {
		if s == "SCAN "+table {
			return true
		}
	}
	return false
}

// Plans returns the plans of the SELECTs on table recorded since the last
// call, and forgets every recorded statement.
func (s *Store) Plans(tb testing.TB, table string) []Plan {
	tb.Helper()
	var out []Plan
	for _, q := range s.rec.take() {
		if !strings.HasPrefix(q.query, "SELECT") || !strings.Contains(q.query, "FROM `"+table+"`") {
			continue
		}
		rows, err := s.st.DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q.query, q.args...)
		if err != nil {
			tb.Fatalf("explain %s: %v", q.query, err)
		}
		p := Plan{Query: q.query}
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				tb.Fatal(err)
			}
			p.Steps = append(p.Steps, detail)
		}
		if err := rows.Close(); err != nil {
			tb.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// recorder is an ent driver that records every query it runs.
type recorder struct {
	dialect.Driver
	mu      sync.Mutex
	queries []recorded
}

type recorded struct {
	query string
	args  []any
}

func (d *recorder) Query(ctx context.Context, query string, args, v any) error {
	d.record(query, args)
	return d.Driver.Query(ctx, query, args, v)
}

func (d *recorder) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingTx{Tx: tx, d: d}, nil
}

type recordingTx struct {
	dialect.Tx
	d *recorder
}

func (t *recordingTx) Query(ctx context.Context, query string, args, v any) error {
	t.d.record(query, args)
	return t.Tx.Query(ctx, query, args, v)
}

func (d *recorder) record(query string, args any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a, _ := args.([]any)
	d.queries = append(d.queries, recorded{query, a})
}

func (d *recorder) take() []recorded {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.queries
	d.queries = nil
	return q
}
