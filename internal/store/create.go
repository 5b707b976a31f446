package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// creation is a new SQLite store whose schema the first query creates
// (Open [WithLazyConnect] of a missing or empty file). Creating it is a
// write transaction with several fsyncs; a serve that is started and never
// called, as hosts do, then never pays it before answering initialize, and
// never pages in the SQLite code that runs DDL.
type creation struct {
	opts options
	mu   sync.Mutex  // serialises the creation of this process's connections
	done atomic.Bool // the file holds the current schema
}

// StartedEmpty reports whether Open found no store yet (a missing or empty
// SQLite file) and left creating its schema to the first query. Nothing
// was recorded in such a store before this process opened it.
func (s *Store) StartedEmpty() bool { return s.create != nil }

// creatingConnector creates the store's schema on the pool's first
// connection before it hands it out. A creation that fails fails that query
// with the reason, and the next connection tries again.
type creatingConnector struct {
	driver.Connector
	s *Store
}

func (c creatingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if cn, err := c.s.createSchema(ctx); cn != nil || err != nil {
		return cn, err
	}
	return c.Connector.Connect(ctx)
}

// poolConn is what database/sql uses of a connection of the store's pool
// (package stmtcache's).
type poolConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// lentConn is a connection lent to the pool of one that creates the
// schema: closing it hands it back to the lender, open, for the store's
// own pool.
type lentConn struct {
	poolConn
	l *lender
}

func (c lentConn) Close() error {
	c.l.back.Do(func() { close(c.l.returned) })
	return nil
}

// lender hands its one connection to a pool of one, and knows when that
// pool has let go of it: database/sql may still be using a connection
// after the call that used it returned (a transaction whose context ended
// is rolled back on a goroutine of its own).
type lender struct {
	driver.Connector
	cn       poolConn
	lent     atomic.Bool
	back     sync.Once
	returned chan struct{}
}

func newLender(c driver.Connector, cn poolConn) *lender {
	return &lender{Connector: c, cn: cn, returned: make(chan struct{})}
}

func (l *lender) Connect(context.Context) (driver.Conn, error) {
	if l.lent.Swap(true) {
		return nil, errors.New("the store's schema creation asked for a second connection")
	}
	return lentConn{poolConn: l.cn, l: l}, nil
}

// close closes the pool of one and waits until it has handed the
// connection back.
func (l *lender) close(db *sql.DB) {
	_ = db.Close()
	if l.lent.Load() {
		<-l.returned
	}
}

// creationCacheKiB is the page cache of the connection that creates the
// schema. Creating it writes every page of the new file (about 70); in
// SQLite's default cache of 2,000 KiB they would all be held, and memory
// SQLite's allocator has touched stays resident for the life of the
// process. A small cache spills them to the WAL instead.
const creationCacheKiB = 64

// createSchema looks at the file again, since another process may have
// used it since Open, and prepares it as Open would have: a file that now
// holds the current schema is used as it is, an older one is upgraded,
// another application's database is refused untouched. A file that is no
// longer a database is not moved aside from under a running process: the
// error says to restart, and the next Open moves it aside.
//
// It returns the connection that created the schema, for the pool; none
// once the schema is there.
func (s *Store) createSchema(ctx context.Context) (driver.Conn, error) {
	c := s.create
	if c.done.Load() {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done.Load() {
		return nil, nil
	}
	h, err := inspectHeader(s.path)
	if err != nil {
		return nil, err
	}
	switch h.kind {
	case fileOurs:
		if h.userVersion == versionStamp(SchemaVersion()) {
			c.done.Store(true)
			return nil, nil
		}
	case fileForeign:
		return nil, foreignError(s.path, foreignIDReason)
	case fileNotSQLite:
		return nil, fmt.Errorf("the store file %s is no longer a SQLite database (bad or truncated header) since the runtime started; "+
			"restart it so the file is moved aside", s.path)
	case fileUnmarked:
		if err := refuseForeignTables(ctx, s.path); err != nil {
			return nil, err
		}
	case fileMissing:
		if err := createFile(s.path, dirMode, fileMode); err != nil {
			return nil, err
		}
	}
	cn, err := s.connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.createOn(ctx, cn, h.kind, c.opts); err != nil {
		_ = cn.Close()
		return nil, err
	}
	c.done.Store(true)
	return cn, nil
}

// createOn prepares the file on cn, the connection the store's pool is
// about to get, through a pool of one: a new store costs no second
// connection. The store's own pool is not used: its connector is the
// caller.
func (s *Store) createOn(ctx context.Context, cn driver.Conn, kind fileKind, o options) error {
	pc, ok := cn.(poolConn)
	if !ok {
		return fmt.Errorf("create the store %s: its connection (%T) lacks a method database/sql uses", s.path, cn)
	}
	l := newLender(s.connector, pc)
	db := sql.OpenDB(l)
	db.SetMaxOpenConns(1)
	// The connection goes to the store's pool, or is closed, only once
	// this pool no longer uses it.
	defer l.close(db)
	var cacheSize int64
	if err := db.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cacheSize); err != nil {
		return fmt.Errorf("create the store %s: read its page cache size: %w", s.path, err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", creationCacheKiB)); err != nil {
		return fmt.Errorf("create the store %s: set its page cache size: %w", s.path, err)
	}
	if err := s.prepare(ctx, db, kind, nil, o); err != nil {
		return s.corruptionHint(err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = %d", cacheSize)); err != nil {
		return fmt.Errorf("create the store %s: restore its page cache size: %w", s.path, err)
	}
	return nil
}
