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

// NotCreated reports whether the store Open found empty still has no
// schema: this process has not created it and the file's header says no
// other process has. Nothing can be recorded in such a store. It reads no
// more than the file's first 100 bytes, and is false for every other
// store (and when the header cannot be read).
func (s *Store) NotCreated() bool {
	if s.create == nil || s.create.done.Load() {
		return false
	}
	h, err := inspectHeader(s.path)
	return err == nil && (h.kind == fileMissing || h.kind == fileEmpty)
}

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

// creationCachePragma sets the page cache of the connection that creates
// the schema to 64 KiB. Creating it writes every page of the new file
// (about 70); SQLite's default cache of 2,000 KiB would hold them all, and
// memory SQLite's allocator has once touched stays resident for the life
// of the process, though the connection is closed after. A small cache
// spills them to the WAL instead.
const creationCachePragma = "PRAGMA cache_size = -64"

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
	// The pool is not used: its connector is the caller. A pool of one
	// connection of its own, with a small page cache (creationCachePragma).
	db := sql.OpenDB(s.connector)
	db.SetMaxOpenConns(1)
	defer db.Close()
	if _, err := db.ExecContext(ctx, creationCachePragma); err != nil {
		return fmt.Errorf("create the store %s: set its page cache size: %w", s.path, err)
	}
	if err := s.prepare(ctx, db, h.kind, nil, c.opts); err != nil {
		return s.corruptionHint(err)
	}
	c.done.Store(true)
	return nil
}
