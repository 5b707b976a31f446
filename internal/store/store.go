package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/agent-interop/runtime/ent"
)

// File modes for the store directory and file.
const (
	dirMode  os.FileMode = 0o700
	fileMode os.FileMode = 0o600
)

// ErrForeignStore is wrapped by the error Open returns for a database that
// belongs to another application.
var ErrForeignStore = errors.New("store file belongs to another application")

// ErrSchemaMismatch marks a store written with another schema version; it is
// refused and left byte-identical.
var ErrSchemaMismatch = errors.New("store schema version differs from this build's")

// ErrNoStore marks an Open with [WithoutCreate] of a SQLite store file that
// does not exist: nothing was created.
var ErrNoStore = errors.New("no store")

// Option configures Open.
type Option func(*options)

type options struct {
	clock     quartz.Clock
	verify    bool
	lazy      bool
	noCreate  bool
	noUpgrade bool
	history   map[string]snapshots // by ent dialect; nil: the embedded history (tests replace it)
}

// WithClock sets the clock used to name preserved files and stamp recovery
// records (default the wall clock).
func WithClock(c quartz.Clock) Option { return func(o *options) { o.clock = c } }

// WithIntegrityCheck makes Open take the slow path even for a current file:
// it runs PRAGMA quick_check and moves a damaged file aside (doctor uses it).
func WithIntegrityCheck() Option { return func(o *options) { o.verify = true } }

// WithLazyConnect makes Open of a team store (PostgreSQL) return without
// contacting the server: the first query connects and checks the schema,
// and an unreachable server fails that query, not Open. serve uses it so it
// answers initialize (and get_runtime_status says why the store is down)
// while the database is unreachable. On SQLite, whose Open never connects
// on the fast path, it affects only a new store (a missing or empty file):
// Open creates the empty file, which shows the directory can be written,
// and the first query creates the schema (see [Store.StartedEmpty]).
func WithLazyConnect() Option { return func(o *options) { o.lazy = true } }

// WithoutCreate makes Open of a SQLite store refuse a missing file with an
// error wrapping [ErrNoStore] that names the path, instead of creating the
// file and its directory: the commands that only read (work, desk,
// sessions, doctor) use it, so that inspecting never leaves an empty store
// behind; serve creates its store on first use. No effect on PostgreSQL.
func WithoutCreate() Option { return func(o *options) { o.noCreate = true } }

// WithoutUpgrade makes Open refuse a store at a released older schema,
// with an error wrapping [ErrUpgradeNeeded] that says what the upgrade
// would add, instead of upgrading it: the commands that only read (doctor,
// desk) use it, so that looking at a store never changes it. serve, work
// and every other command that writes upgrade it in the open's transaction.
func WithoutUpgrade() Option { return func(o *options) { o.noUpgrade = true } }

// snapshotsFor returns the released schemas of one ent dialect.
func (o *options) snapshotsFor(entDialect string) (snapshots, error) {
	if o.history != nil {
		return o.history[entDialect], nil
	}
	return releasedSnapshots(entDialect)
}

// Store is an open coordination store.
type Store struct {
	dialect  string      // ent's dialect name: dialect.SQLite or dialect.Postgres
	path     string      // the SQLite file ("" on PostgreSQL)
	location string      // what to print: the path, or the URL without its password
	db       *sql.DB     // use handle(): on SQLite it is opened on first use
	client   *ent.Client // use Client()
	// connector makes the SQLite pool on first use (handle): serve never
	// needs it before a tool call, and the pool starts a goroutine.
	connector driver.Connector
	poolOnce  sync.Once
	clock     quartz.Clock
	pg        *pgState // PostgreSQL only

	// writeSlot serialises this process's writers so they queue in Go
	// instead of sleeping in SQLite's busy handler. Correctness between
	// processes comes from BEGIN IMMEDIATE, not from this.
	writeSlot chan struct{}

	dirty          chan struct{} // a write committed; see checkpoint.go
	closing        chan struct{}
	checkpointDone chan struct{}
	checkpointer   sync.Once // starts the checkpointer, or settles it at Close
	closeOnce      sync.Once
	checkpoints    atomic.Int64 // background checkpoints run (for tests)
	retries        atomic.Int64 // write transactions run again (PostgreSQL)

	// create is set when Open left a new SQLite store's schema to the
	// first query ([WithLazyConnect]); the pool's connector runs it.
	create *creation

	mu             sync.Mutex // guards the recovery and migration fields
	recovery       *Recovery
	recoveryLoaded bool
	migrated       bool
	upgradedFrom   string // the older schema version this Open upgraded (SQLite)
}

// Open opens (creating if needed) the store at location: a PostgreSQL URL
// (see [IsPostgres]) opens a team store, anything else is a SQLite file.
//
// On PostgreSQL the first connection checks the schema version recorded in
// the meta table, creates the schema in an empty database, and refuses a
// database at another version (left untouched) or one holding another
// application's tables; Open connects at once unless [WithLazyConnect].
//
// SQLite fast path: when the file header carries our application id and the
// current schema stamp, Open reads nothing else and opens no connection
// (database/sql connects on first use). Otherwise the slow path checks the
// file (foreign tables, quick_check), migrates in one write transaction and
// stamps the header. A file that is not a database, or that SQLite reports
// as damaged, is moved aside (see [Store.Recovery]); another application's
// database is refused with an error wrapping [ErrForeignStore].
func Open(ctx context.Context, location string, opts ...Option) (*Store, error) {
	o := options{clock: quartz.NewReal()}
	for _, f := range opts {
		f(&o)
	}
	if IsPostgres(location) {
		return openPostgres(ctx, location, o)
	}
	path := location
	h, err := inspectHeader(path)
	if err != nil {
		return nil, err
	}
	if h.kind == fileMissing && o.noCreate {
		return nil, fmt.Errorf("%w at %s: this command only reads and does not create one (`interop-runtime serve` creates it on first use; or set %s to an existing store)", ErrNoStore, path, EnvDB)
	}
	var rec *Recovery
	switch h.kind {
	case fileForeign:
		return nil, foreignError(path, foreignIDReason)
	case fileNotSQLite:
		if rec, err = moveAside(path, "the file is not a SQLite database (bad or truncated header)", o.clock.Now()); err != nil {
			return nil, err
		}
		h.kind = fileMissing
	case fileUnmarked:
		// Look before touching: our DSN would switch the file to WAL.
		if err := refuseForeignTables(ctx, path); err != nil {
			return nil, err
		}
	}
	if h.kind == fileMissing {
		if err := createFile(path, dirMode, fileMode); err != nil {
			return nil, err
		}
	} else if h.info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, fileMode); err != nil {
			return nil, fmt.Errorf("restrict store file mode: %w", err)
		}
	}
	s, err := openDB(path, o.clock)
	if err != nil {
		return nil, err
	}
	if h.kind == fileOurs && h.userVersion == versionStamp(SchemaVersion()) && !o.verify {
		return s, nil // fast path: current schema, nothing to inspect
	}
	if o.lazy && rec == nil && !o.verify && (h.kind == fileMissing || h.kind == fileEmpty) {
		s.create = &creation{opts: o}
		return s, nil // the first query creates the schema
	}
	if err := s.prepare(ctx, s.handle(), h.kind, rec, o); err != nil {
		s.Close()
		var c *corruptError
		if errors.As(err, &c) {
			return reopenAfterCorruption(ctx, path, c.reason, o)
		}
		return nil, err
	}
	return s, nil
}

func openDB(path string, clock quartz.Clock) (*Store, error) {
	c, err := sqliteConnector(sqliteDSN(path))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{
		dialect:        dialect.SQLite,
		path:           path,
		location:       path,
		connector:      c,
		clock:          clock,
		writeSlot:      make(chan struct{}, 1),
		dirty:          make(chan struct{}, 1),
		closing:        make(chan struct{}),
		checkpointDone: make(chan struct{}),
	}
	return s, nil
}

// reopenAfterCorruption moves a damaged file aside and opens a fresh store
// that carries the recovery record.
func reopenAfterCorruption(ctx context.Context, path, reason string, o options) (*Store, error) {
	rec, err := moveAside(path, reason, o.clock.Now())
	if err != nil {
		return nil, err
	}
	if err := createFile(path, dirMode, fileMode); err != nil {
		return nil, err
	}
	s, err := openDB(path, o.clock)
	if err != nil {
		return nil, err
	}
	if err := s.prepare(ctx, s.handle(), fileEmpty, rec, o); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

type corruptError struct{ reason string }

func (e *corruptError) Error() string { return "store file is corrupt: " + e.reason }

// foreignIDReason is why a file whose header carries another
// application's id is refused (Open, and createSchema on first use).
const foreignIDReason = "its SQLite header carries another application's id"

func foreignError(path, why string) error {
	return fmt.Errorf("%w: %s is not an agent-interop-runtime store (%s); refusing to use or replace it. "+
		"Move it away or set INTEROP_DB to another file", ErrForeignStore, path, why)
}

// prepare is the slow path: in one write transaction on db it checks the
// file, creates the meta table, creates the schema in a new file or
// upgrades a released older one ([planUpgrade]), and records the version
// (and a pending recovery).
func (s *Store) prepare(ctx context.Context, db *sql.DB, kind fileKind, rec *Recovery, o options) error {
	drv := entsql.OpenDB(sqliteDialect, db)
	dtx, err := drv.Tx(ctx)
	if err != nil {
		if isCorruption(err) {
			return &corruptError{reason: err.Error()}
		}
		return fmt.Errorf("begin store migration: %w", err)
	}
	tx := dtx.(*entsql.Tx)
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	if kind == fileUnmarked || kind == fileOurs {
		tables, err := userTables(ctx, tx)
		if err != nil {
			if isCorruption(err) {
				return &corruptError{reason: err.Error()}
			}
			return fmt.Errorf("list store tables: %w", err)
		}
		if kind == fileUnmarked {
			if err := checkTables(s.path, tables); err != nil {
				return err
			}
		}
		if len(tables) > 0 {
			problem, err := integrityProblem(ctx, tx)
			if err != nil {
				return fmt.Errorf("check store integrity: %w", err)
			}
			if problem != "" {
				return &corruptError{reason: problem}
			}
		}
	}
	if _, err := tx.ExecContext(ctx, createMetaSQL); err != nil {
		return fmt.Errorf("create store meta table: %w", err)
	}
	meta, err := readMeta(ctx, tx)
	if err != nil {
		return fmt.Errorf("read store meta: %w", err)
	}
	want := SchemaVersion()
	migrated, upgradedFrom := false, ""
	if have := meta[metaSchemaVersion]; have != want {
		stmts := schemaStatements(schemaSQL)
		if have != "" {
			hist, err := o.snapshotsFor(dialect.SQLite)
			if err != nil {
				return err
			}
			if stmts, err = upgradeSteps(hist, have, want, schemaSQL, dialect.SQLite, s.path, "file", o.noUpgrade); err != nil {
				return err
			}
		}
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				if have != "" {
					return fmt.Errorf("upgrade the store schema of %s from %.12s (%.60s): %w; nothing was changed", s.path, have, stmt, err)
				}
				return fmt.Errorf("create store schema (%.60s): %w", stmt, err)
			}
		}
		if err := writeMeta(ctx, tx, metaSchemaVersion, want); err != nil {
			return err
		}
		migrated, upgradedFrom = true, have
	}
	if err := stampVersion(ctx, tx, want); err != nil {
		return fmt.Errorf("stamp store header: %w", err)
	}
	pending, err := parseRecovery(meta[metaRecovery])
	if err != nil {
		return err
	}
	if rec != nil {
		raw, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode recovery record: %w", err)
		}
		if err := writeMeta(ctx, tx, metaRecovery, string(raw)); err != nil {
			return err
		}
		pending = rec
	}
	// The marker before the commit (see recoveryMarkerSuffix); a record
	// an earlier build left without one gets it here too.
	if pending != nil && (rec != nil || !recoveryMarked(s.path)) {
		if err := writeRecoveryMarker(s.path, pending); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit store migration: %w", err)
	}
	done = true
	s.setRecovery(pending)
	if migrated {
		s.mu.Lock()
		s.migrated, s.upgradedFrom = true, upgradedFrom
		s.mu.Unlock()
		// Put the new header in the main file so the next Open takes the
		// fast path. Best effort: a busy checkpoint only costs a slow Open.
		_ = checkpoint(ctx, db)
	}
	return nil
}

// corruptionHint wraps a query error that SQLite classifies as corruption
// with what to do about it.
func (s *Store) corruptionHint(err error) error {
	if err != nil && isCorruption(err) {
		return fmt.Errorf("%w: the store file %s is damaged; stop the runtime and restart it with an integrity check "+
			"(interop-runtime doctor) so it is moved aside", err, s.path)
	}
	return err
}

// Client returns the ent client. Prefer [Store.Tx] for anything that writes.
func (s *Store) Client() *ent.Client {
	s.handle()
	return s.client
}

// DB returns the underlying database handle. Raw SQL on it must be
// dialect-neutral with placeholders passed through [Store.Rebind].
func (s *Store) DB() *sql.DB { return s.handle() }

// handle returns the pool, opening it (and the ent client over it) on the
// first call on SQLite; a team store's is open from the start.
func (s *Store) handle() *sql.DB {
	s.poolOnce.Do(func() {
		if s.db == nil {
			var c driver.Connector = s.connector
			if s.create != nil {
				c = creatingConnector{Connector: c, s: s}
			}
			s.db = sql.OpenDB(c)
			s.client = ent.NewClient(ent.Driver(entsql.OpenDB(sqliteDialect, s.db)))
		}
	})
	return s.db
}

// Path returns the SQLite store file path ("" for a team store on
// PostgreSQL; see [Store.Location]).
func (s *Store) Path() string { return s.path }

// Location names the store for people: the SQLite file path, or the
// PostgreSQL URL with its password replaced. Safe to print and log.
func (s *Store) Location() string { return s.location }

// Dialect returns ent's name of the store's SQL dialect ("sqlite3" or
// "postgres").
func (s *Store) Dialect() string { return s.dialect }

// Shared reports whether the store is a team store that several machines
// may use at once (PostgreSQL): provider sessions then carry their host.
func (s *Store) Shared() bool { return s.dialect == dialect.Postgres }

// SchemaVersion returns the schema version this build expects of the
// store's dialect.
func (s *Store) SchemaVersion() string {
	if s.dialect == dialect.Postgres {
		return postgresVersion.Get()
	}
	return sqliteVersion.Get()
}

// Migrated reports whether this Open ran the schema migration (false on the
// fast path). On a lazily opened team store, and a new SQLite store opened
// [WithLazyConnect], it turns true once the first connection created the
// schema.
func (s *Store) Migrated() bool {
	if s.pg != nil {
		s.pg.mu.Lock()
		defer s.pg.mu.Unlock()
		return s.pg.migrated
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.migrated
}

// UpgradedFrom returns the older schema version this Open upgraded the
// store from, or "" when it did not upgrade (a current or new store).
func (s *Store) UpgradedFrom() string {
	if s.pg != nil {
		s.pg.mu.Lock()
		defer s.pg.mu.Unlock()
		return s.pg.upgradedFrom
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.upgradedFrom
}

// Retries reports how many times this Store ran a write transaction again
// after PostgreSQL aborted it for a serialization failure or a deadlock.
func (s *Store) Retries() int64 { return s.retries.Load() }

// Check reports whether the store can be used now: on PostgreSQL it
// connects (checking the schema on a first connection) within ctx and
// returns why not; on SQLite it returns nil (Open already checked the
// file).
func (s *Store) Check(ctx context.Context) error {
	if s.dialect != dialect.Postgres {
		return nil
	}
	if err := s.handle().PingContext(ctx); err != nil {
		if errors.Is(err, ErrSchemaMismatch) || errors.Is(err, ErrUpgradeNeeded) || errors.Is(err, ErrForeignStore) {
			return err
		}
		if ctx.Err() != nil && !pgConnLost(err) {
			return &ConnLostError{Location: s.location, Err: fmt.Errorf("no answer in time: %w", err)}
		}
		return s.explain(err)
	}
	return nil
}

// explain turns a lost PostgreSQL connection into a *ConnLostError naming
// the store; every other error (and every SQLite error) is returned as is.
func (s *Store) explain(err error) error {
	if err == nil || s.dialect != dialect.Postgres {
		return err
	}
	var lost *ConnLostError
	var unknown *CommitUnknownError
	if errors.As(err, &lost) || errors.As(err, &unknown) || !pgConnLost(err) {
		return err
	}
	return &ConnLostError{Location: s.location, Err: err}
}

// Close stops the background checkpointer (SQLite) and closes the
// database (SQLite checkpoints the WAL when its last connection closes).
func (s *Store) Close() error {
	if s.closing != nil {
		s.closeOnce.Do(func() {
			close(s.closing)
			// No write ever started the checkpointer: there is none to wait for.
			s.checkpointer.Do(func() { close(s.checkpointDone) })
			<-s.checkpointDone
		})
	}
	return s.handle().Close() // a pool never used has no connection to close
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func truncateList(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(append([]string(nil), list[:n]...), "...")
}

// refuseForeignTables opens an unmarked SQLite file read-only and refuses it
// when it holds tables but not ours.
func refuseForeignTables(ctx context.Context, path string) error {
	db, err := openSQLite(sqliteReadOnlyDSN(path))
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	defer db.Close()
	tables, err := userTables(ctx, db)
	if err != nil {
		if isCorruption(err) {
			return nil // the write path's checks move it aside
		}
		return fmt.Errorf("list store tables: %w", err)
	}
	return checkTables(path, tables)
}

func checkTables(path string, tables []string) error {
	if len(tables) > 0 && !contains(tables, metaTable) {
		return foreignError(path, fmt.Sprintf("it has tables %v and no %s table", truncateList(tables, 5), metaTable))
	}
	return nil
}

// Clock returns the clock the coordination services should stamp records
// with: the store's clock, cut to the precision the dialect stores
// (PostgreSQL keeps microseconds), so a record answered right after a write
// carries the same times as when it is read back later.
func (s *Store) Clock() quartz.Clock {
	if s.pg != nil {
		return microClock{s.clock}
	}
	return s.clock
}

// microClock is a clock whose readings are cut to microseconds; timers are
// the underlying clock's.
type microClock struct{ quartz.Clock }

func (m microClock) Now(tags ...string) time.Time {
	return m.Clock.Now(tags...).Truncate(time.Microsecond)
}

func (m microClock) Since(t time.Time, tags ...string) time.Duration { return m.Now(tags...).Sub(t) }

func (m microClock) Until(t time.Time, tags ...string) time.Duration { return t.Sub(m.Now(tags...)) }
