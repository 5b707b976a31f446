package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
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

// creatingConnector creates the store's schema before it hands out the
// pool's first connection. A creation that fails fails that query with the
// reason, and the next connection tries again.
type creatingConnector struct {
	driver.Connector
	s *Store
}

func (c creatingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := c.s.createSchema(ctx); err != nil {
		return nil, err
	}
	return c.Connector.Connect(ctx)
}

// createSchema looks at the file again, since another process may have
// used it since Open, and prepares it as Open would have: a file that now
// holds the current schema is used as it is, an older one is upgraded,
// another application's database is refused untouched. A file that is no
// longer a database is not moved aside from under a running process: the
// error says to restart, and the next Open moves it aside.
func (s *Store) createSchema(ctx context.Context) error {
	c := s.create
	if c.done.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done.Load() {
		return nil
	}
	h, err := inspectHeader(s.path)
	if err != nil {
		return err
	}
	switch h.kind {
	case fileOurs:
		if h.userVersion == versionStamp(SchemaVersion()) {
			c.done.Store(true)
			return nil
		}
	case fileForeign:
		return foreignError(s.path, foreignIDReason)
	case fileNotSQLite:
		return fmt.Errorf("the store file %s is no longer a SQLite database (bad or truncated header) since the runtime started; "+
			"restart it so the file is moved aside", s.path)
	case fileUnmarked:
		if err := refuseForeignTables(ctx, s.path); err != nil {
			return err
		}
	case fileMissing:
		if err := createFile(s.path, dirMode, fileMode); err != nil {
			return err
		}
	}
	// The pool is not used: its connector is the caller.
	db := sql.OpenDB(s.connector)
	defer db.Close()
	if err := s.prepare(ctx, db, h.kind, nil, c.opts); err != nil {
		return s.corruptionHint(err)
	}
	c.done.Store(true)
	return nil
}
