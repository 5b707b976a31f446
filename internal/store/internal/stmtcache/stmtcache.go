// Package stmtcache keeps prepared statements per database connection so
// that a query run again on the same connection skips SQL compilation.
//
// database/sql with modernc.org/sqlite prepares and finalizes a statement
// for every QueryContext and ExecContext (the driver's connection prepares
// internally each time), and compiling SQL was the largest single cost of a
// store call. [Connector] wraps a [driver.Connector]; each connection it
// opens keeps a bounded LRU of prepared [driver.Stmt], keyed by the SQL
// text, and serves QueryContext and ExecContext from it.
//
// Rules that keep it correct:
//
//   - A cached statement whose rows are still open (a query nested inside
//     the iteration of another one's rows, or the same query twice in one
//     transaction) is never reset under its reader: the second use runs on a
//     fresh statement that the driver finalizes as before.
//   - Only plain queries and DML are cached (SELECT, INSERT, UPDATE, DELETE,
//     REPLACE, WITH) and only up to [MaxQueryLen] bytes of SQL: PRAGMA, DDL
//     and transaction control compile once per use as before, and the
//     occasional huge generated statement does not pin its memory.
//   - A statement is finalized when it is evicted and when its connection
//     closes. The cache holds at most the size given to [New] per connection.
//   - SQLite compiles with sqlite3_prepare_v2, so a cached statement whose
//     schema changed (SQLITE_SCHEMA after a migration) is compiled again by
//     SQLite itself on its next step.
//
// Transactions, Ping, session reset and validation pass straight to the
// wrapped connection; Unwrap returns it (modernc's sqlite.Limit and other
// helpers that use sql.Conn.Raw see through it).
package stmtcache

import (
	"container/list"
	"context"
	"database/sql/driver"
	"reflect"
	"strings"
	"sync/atomic"
)

// MaxQueryLen is the longest SQL text that is cached; longer statements
// are prepared for each use.
const MaxQueryLen = 8 << 10

// Stats counts what the connections of one [Connector] did, for tests and
// diagnostics. Every field only grows.
type Stats struct {
	Prepared  int64 // statements prepared for the cache
	Hits      int64 // queries and execs served by a cached statement
	Busy      int64 // uses that found their cached statement in use and ran uncached
	Uncached  int64 // uses of SQL that is never cached (see the package comment)
	Finalized int64 // cached statements closed (evicted or with their connection)
}

type counters struct {
	prepared, hits, busy, uncached, finalized atomic.Int64
}

// Connector opens connections through a base connector and gives each a
// statement cache.
type Connector struct {
	base  driver.Connector
	size  int
	stats counters
}

// New wraps base; each connection keeps at most size prepared statements
// (size < 1 means 1).
func New(base driver.Connector, size int) *Connector {
	if size < 1 {
		size = 1
	}
	return &Connector{base: base, size: size}
}

// Connect opens a connection of the base connector. A connection that does
// not offer what the cache needs (ConnPrepareContext, QueryerContext,
// ExecerContext, ConnBeginTx) is returned unwrapped.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	inner, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok1 := inner.(driver.ConnPrepareContext)
	qc, ok2 := inner.(driver.QueryerContext)
	ec, ok3 := inner.(driver.ExecerContext)
	bc, ok4 := inner.(driver.ConnBeginTx)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return inner, nil
	}
	return &conn{
		inner:   inner,
		prepare: pc,
		queryer: qc,
		execer:  ec,
		begin:   bc,
		c:       c,
		byQuery: make(map[string]*list.Element, c.size),
	}, nil
}

// Driver returns the base connector's driver.
func (c *Connector) Driver() driver.Driver { return c.base.Driver() }

// Stats returns the counters of every connection opened so far.
func (c *Connector) Stats() Stats {
	return Stats{
		Prepared:  c.stats.prepared.Load(),
		Hits:      c.stats.hits.Load(),
		Busy:      c.stats.busy.Load(),
		Uncached:  c.stats.uncached.Load(),
		Finalized: c.stats.finalized.Load(),
	}
}

// entry is one cached statement.
type entry struct {
	query string
	stmt  driver.Stmt
	inUse bool // rows of stmt are open
}

// conn is a connection with its cache. database/sql never uses a
// connection from two goroutines at once (it holds the connection's lock
// around every driver call, Rows.Close included), so the cache needs no
// lock of its own.
type conn struct {
	inner   driver.Conn
	prepare driver.ConnPrepareContext
	queryer driver.QueryerContext
	execer  driver.ExecerContext
	begin   driver.ConnBeginTx
	c       *Connector
	lru     list.List // of *entry, most recently used at the front
	byQuery map[string]*list.Element
}

var (
	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
)

// Unwrap returns the driver's own connection.
func (cn *conn) Unwrap() driver.Conn { return cn.inner }

// QueryContext runs query on a cached statement when it can.
func (cn *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	e, err := cn.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return cn.queryer.QueryContext(ctx, query, args)
	}
	sq, ok := e.stmt.(driver.StmtQueryContext)
	if !ok {
		return cn.queryer.QueryContext(ctx, query, args)
	}
	e.inUse = true
	r, err := sq.QueryContext(ctx, args)
	if err != nil {
		e.inUse = false
		return nil, err
	}
	return &rows{Rows: r, e: e}, nil
}

// ExecContext runs query on a cached statement when it can.
func (cn *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, err := cn.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return cn.execer.ExecContext(ctx, query, args)
	}
	se, ok := e.stmt.(driver.StmtExecContext)
	if !ok {
		return cn.execer.ExecContext(ctx, query, args)
	}
	e.inUse = true
	defer func() { e.inUse = false }()
	return se.ExecContext(ctx, args)
}

// statement returns the cached statement for query, preparing and caching
// it on a miss, or nil when query is to run uncached: not cacheable, its
// statement in use, or every cached statement in use.
func (cn *conn) statement(ctx context.Context, query string) (*entry, error) {
	if !Cacheable(query) {
		cn.c.stats.uncached.Add(1)
		return nil, nil
	}
	if el, ok := cn.byQuery[query]; ok {
		e := el.Value.(*entry)
		if e.inUse {
			cn.c.stats.busy.Add(1)
			return nil, nil
		}
		cn.lru.MoveToFront(el)
		cn.c.stats.hits.Add(1)
		return e, nil
	}
	if !cn.makeRoom() {
		cn.c.stats.busy.Add(1)
		return nil, nil
	}
	st, err := cn.prepare.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cn.c.stats.prepared.Add(1)
	e := &entry{query: query, stmt: st}
	cn.byQuery[query] = cn.lru.PushFront(e)
	return e, nil
}

// makeRoom evicts the least recently used idle statements until there is
// room for one more; false when every cached statement is in use.
func (cn *conn) makeRoom() bool {
	for el := cn.lru.Back(); cn.lru.Len() >= cn.c.size; {
		if el == nil {
			return false
		}
		prev := el.Prev()
		if e := el.Value.(*entry); !e.inUse {
			cn.lru.Remove(el)
			delete(cn.byQuery, e.query)
			cn.finalize(e)
		}
		el = prev
	}
	return true
}

// finalize closes a statement that has left the cache. Its error is
// dropped: the statement has run to completion or been reset already, and
// an error of its last run was reported to that run's caller.
func (cn *conn) finalize(e *entry) {
	_ = e.stmt.Close()
	cn.c.stats.finalized.Add(1)
}

// Close finalizes every cached statement, then closes the connection
// (sqlite3_close_v2 would otherwise leave it open as long as one statement
// is left). database/sql closes a connection only when no rows of it are
// open.
func (cn *conn) Close() error {
	for el := cn.lru.Front(); el != nil; el = el.Next() {
		cn.finalize(el.Value.(*entry))
	}
	cn.lru.Init()
	clear(cn.byQuery)
	return cn.inner.Close()
}

// Prepare passes an explicit prepare (sql.DB.Prepare) to the driver
// uncached: the caller owns and closes that statement.
func (cn *conn) Prepare(query string) (driver.Stmt, error) {
	return cn.prepare.PrepareContext(context.Background(), query)
}

// PrepareContext is Prepare with a context.
func (cn *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return cn.prepare.PrepareContext(ctx, query)
}

// Begin starts a transaction on the wrapped connection.
//
// Deprecated: database/sql calls BeginTx.
func (cn *conn) Begin() (driver.Tx, error) {
	return cn.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction on the wrapped connection; the statements
// run in it go through QueryContext and ExecContext, so they use the cache.
func (cn *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return cn.begin.BeginTx(ctx, opts)
}

// Ping passes to the wrapped connection.
func (cn *conn) Ping(ctx context.Context) error {
	if p, ok := cn.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// ResetSession passes to the wrapped connection.
func (cn *conn) ResetSession(ctx context.Context) error {
	if r, ok := cn.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid passes to the wrapped connection.
func (cn *conn) IsValid() bool {
	if v, ok := cn.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// Cacheable reports whether query is SQL the cache keeps: at most
// [MaxQueryLen] bytes, starting (after white space and opening parentheses)
// with SELECT, INSERT, UPDATE, DELETE, REPLACE or WITH.
func Cacheable(query string) bool {
	if len(query) > MaxQueryLen {
		return false
	}
	q := strings.TrimLeft(query, " \t\r\n(")
	end := 0
	for end < len(q) && end < 8 && isLetter(q[end]) {
		end++
	}
	switch strings.ToUpper(q[:end]) {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH":
		return true
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// rows marks its statement idle again when closed.
type rows struct {
	driver.Rows
	e *entry
}

// Close closes the driver's rows (which resets the cached statement) and
// frees the statement for its next use.
func (r *rows) Close() error {
	err := r.Rows.Close()
	r.e.inUse = false
	return err
}

// The optional column-type interfaces of the driver's rows pass through.

func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if x, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return x.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return x.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return x.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *rows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return x.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	if x, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return x.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
