package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/agent-interop/runtime/ent"
)

// This file is the PostgreSQL seam: a team store shared by several
// machines. It opens the database through pgx's database/sql driver, checks
// and creates the schema on the first connection, and classifies the
// errors only a network database has (a lost connection, a commit whose
// outcome is unknown, a serialization failure to retry).

// postgresSchemes are the URL schemes that select PostgreSQL.
var postgresSchemes = []string{"postgres://", "postgresql://"}

// IsPostgres reports whether a store location is a PostgreSQL URL
// (postgres://… or postgresql://…); anything else is a SQLite file path.
func IsPostgres(location string) bool {
	l := strings.ToLower(strings.TrimSpace(location))
	for _, p := range postgresSchemes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// redactedPassword replaces a password wherever a location is printed.
const redactedPassword = "xxxxx"

// secretQueryKeys are the URL query keys pgx reads that carry a secret.
var secretQueryKeys = []string{"password", "sslpassword"}

// RedactDSN returns a PostgreSQL URL with its password (in the user
// information and in the password and sslpassword query keys) replaced, so
// it can be printed in a status, a log line or an error. Anything that does
// not parse as a URL is reduced to its scheme.
func RedactDSN(dsn string) string {
	u, err := url.Parse(strings.TrimSpace(dsn))
	if err != nil {
		if i := strings.Index(dsn, "://"); i > 0 && i < 16 {
			return dsn[:i+3] + "(unparsable URL, not shown)"
		}
		return "(unparsable URL, not shown)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactedPassword)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for _, k := range secretQueryKeys {
			if q.Has(k) {
				q.Set(k, redactedPassword)
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// HasPassword reports whether a PostgreSQL URL carries a password itself
// (the --db flag refuses one: it would show in the process list).
func HasPassword(dsn string) bool {
	u, err := url.Parse(strings.TrimSpace(dsn))
	if err != nil {
		return strings.Contains(dsn, "@") // cannot tell; be safe
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return true
		}
	}
	q := u.Query()
	for _, k := range secretQueryKeys {
		if q.Has(k) {
			return true
		}
	}
	return false
}

// Connection pool bounds of one runtime process on a team store.
const (
	pgMaxOpenConns    = 8
	pgMaxIdleConns    = 2
	pgConnMaxIdleTime = 5 * time.Minute
	// pgSchemaLock is the advisory lock key that serialises schema checks
	// and creation of runtimes starting at once ("AIRT").
	pgSchemaLock = 0x41495254
)

// pgState is a PostgreSQL store's connection-time state.
type pgState struct {
	location     string // redacted, for messages
	mu           sync.Mutex
	ready        atomic.Bool // the schema was checked on some connection
	migrated     bool
	upgradedFrom string
	opts         options // noUpgrade and the history
}

// openPostgres opens a team store. Nothing is contacted until the first
// query unless eager: database/sql connects on demand, and the first
// connection of the process checks the schema version (creating the schema
// in an empty database) before any query runs on it.
func openPostgres(ctx context.Context, dsn string, o options) (*Store, error) {
	location := RedactDSN(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx redacts the password in its parse errors.
		return nil, fmt.Errorf("%s is not a usable PostgreSQL URL (%s): %w", EnvDB, location, err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["timezone"] = "UTC"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "interop-runtime"
	}
	pg := &pgState{location: location, opts: o}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(pg.afterConnect))
	db.SetMaxOpenConns(pgMaxOpenConns)
	db.SetMaxIdleConns(pgMaxIdleConns)
	db.SetConnMaxIdleTime(pgConnMaxIdleTime)
	s := &Store{
		dialect:  dialect.Postgres,
		location: location,
		db:       db,
		clock:    o.clock,
		pg:       pg,
	}
	drv := explainingDriver{Driver: entsql.OpenDB(dialect.Postgres, db), explain: s.explain}
	s.client = ent.NewClient(ent.Driver(drv))
	if o.lazy {
		return s, nil
	}
	if err := s.Check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// afterConnect runs on every new connection: times scan as UTC, and the
// first connection of the process checks (or creates) the schema.
func (p *pgState) afterConnect(ctx context.Context, conn *pgx.Conn) error {
	conn.TypeMap().RegisterType(&pgtype.Type{
		Name: "timestamptz", OID: pgtype.TimestamptzOID,
		Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
	})
	if p.ready.Load() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready.Load() {
		return nil
	}
	migrated, from, err := preparePostgres(ctx, conn, p.location, p.opts)
	if err != nil {
		_ = conn.Close(context.WithoutCancel(ctx)) // pgx's connector leaks it otherwise
		return err
	}
	p.migrated, p.upgradedFrom = migrated, from
	p.ready.Store(true)
	return nil
}

// preparePostgres checks the schema of the connection's current schema in
// one transaction holding the schema advisory lock, so runtimes starting at
// once on an empty database create it exactly once. A database with another
// schema version, or with foreign tables, is refused and left untouched; one
// at a released older version is upgraded in the same transaction (see
// [planUpgrade]) unless o.noUpgrade. from is the version it upgraded from.
func preparePostgres(ctx context.Context, conn *pgx.Conn, location string, o options) (migrated bool, from string, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, "", fmt.Errorf("open the team store %s: %w", location, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(pgSchemaLock)); err != nil {
		return false, "", fmt.Errorf("lock the team store schema: %w", err)
	}
	var schemaName *string
	if err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&schemaName); err != nil {
		return false, "", fmt.Errorf("read the current schema: %w", err)
	}
	if schemaName == nil {
		return false, "", fmt.Errorf("the team store %s has no current schema: its search_path names no existing schema", location)
	}
	rows, err := tx.Query(ctx, "SELECT table_name FROM information_schema.tables "+
		"WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name")
	if err != nil {
		return false, "", fmt.Errorf("list the team store tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, "", fmt.Errorf("list the team store tables: %w", err)
	}
	want := postgresVersion.Get()
	have := ""
	if contains(tables, metaTable) {
		err := tx.QueryRow(ctx, "SELECT value FROM "+metaTable+" WHERE key = $1", metaSchemaVersion).Scan(&have)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return false, "", fmt.Errorf("read the team store schema version: %w", err)
		}
	} else if len(tables) > 0 {
		return false, "", fmt.Errorf("%w: schema %q of %s is not an agent-interop-runtime store (it has tables %v and no %s table); "+
			"refusing to use it. Point %s at an empty database or schema",
			ErrForeignStore, *schemaName, location, truncateList(tables, 5), metaTable, EnvDB)
	}
	if have == want {
		return false, "", nil
	}
	stmts := schemaStatements(postgresSchemaSQL)
	if have != "" {
		hist, err := o.snapshotsFor(dialect.Postgres)
		if err != nil {
			return false, "", err
		}
		if stmts, err = upgradeSteps(hist, have, want, postgresSchemaSQL, dialect.Postgres, location, "database", o.noUpgrade); err != nil {
			return false, "", err
		}
	} else if _, err := tx.Exec(ctx, createMetaSQL); err != nil {
		return false, "", fmt.Errorf("create the team store (%s): %w; the role needs CREATE on schema %q the first time (docs/team.md)",
			location, err, *schemaName)
	}
	for _, stmt := range stmts {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			if have != "" {
				return false, "", fmt.Errorf("upgrade the team store schema from %.12s (%.60s): %w; nothing was changed. "+
					"The role needs to own the store's tables to upgrade them (docs/team.md)", have, stmt, err)
			}
			return false, "", fmt.Errorf("create the team store schema (%.60s): %w", stmt, err)
		}
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+metaTable+" (key, value) VALUES ($1, $2) "+
		"ON CONFLICT (key) DO UPDATE SET value = excluded.value", metaSchemaVersion, want); err != nil {
		return false, "", fmt.Errorf("record the team store schema version: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, "", fmt.Errorf("commit the team store schema: %w", err)
	}
	return true, have, nil
}

// ConnLostError says the connection to the team database broke (or could
// not be made) during a call. Nothing of that call was written: PostgreSQL
// rolls back a transaction whose connection is gone. The next call opens
// a new connection.
type ConnLostError struct {
	Location string
	Err      error
}

func (e *ConnLostError) Error() string {
	return fmt.Sprintf("the connection to the team store %s failed: %v; nothing of this call was written, and the next call reconnects",
		e.Location, e.Err)
}

func (e *ConnLostError) Unwrap() error { return e.Err }

// CommitUnknownError says the connection broke while a transaction was
// committing: the change may or may not be stored. The store never retries
// such a write; the caller reports it as unknown.
type CommitUnknownError struct {
	Location string
	Err      error
}

func (e *CommitUnknownError) Error() string {
	return fmt.Sprintf("the connection to the team store %s broke while committing: %v; the change may or may not have been stored "+
		"and is not retried — look it up before repeating it", e.Location, e.Err)
}

func (e *CommitUnknownError) Unwrap() error { return e.Err }

// BusyError says a write transaction kept failing PostgreSQL's
// serialization check (concurrent writers on other machines) after every
// retry.
type BusyError struct {
	Attempts int
	Err      error
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("the team store stayed busy: %d attempts of this write conflicted with concurrent writers (%v); nothing was written, try again",
		e.Attempts, e.Err)
}

func (e *BusyError) Unwrap() error { return e.Err }

// pgConnLost reports whether err says the connection to the server broke
// or could not be made, as opposed to an error the server answered with.
func pgConnLost(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01..03: the server is shutting down
		// or terminated this backend (pg_terminate_backend).
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	}
	return strings.Contains(err.Error(), "conn closed")
}

// pgRetryable reports whether err is PostgreSQL aborting the transaction
// so that it can be run again: a serialization failure or a deadlock.
func pgRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// explainingDriver is ent's PostgreSQL driver with a lost connection
// reported as a *ConnLostError on every query, in or out of a transaction.
type explainingDriver struct {
	*entsql.Driver
	explain func(error) error
}

func (d explainingDriver) Exec(ctx context.Context, query string, args, v any) error {
	return d.explain(d.Driver.Exec(ctx, query, args, v))
}

func (d explainingDriver) Query(ctx context.Context, query string, args, v any) error {
	return d.explain(d.Driver.Query(ctx, query, args, v))
}

func (d explainingDriver) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

func (d explainingDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	tx, err := d.Driver.BeginTx(ctx, opts)
	if err != nil {
		return nil, d.explain(err)
	}
	return &explainingTx{Tx: tx, explain: d.explain}, nil
}

// explainingTx remembers the first statement error of its transaction.
// PostgreSQL aborts a transaction at its first failed statement and
// answers every later one, and the commit, with "current transaction is
// aborted" (25P02): when code went on after an error it handled (a unique
// violation it looked up instead, a terminated backend), that later error
// is replaced by the first one, which names the cause.
type explainingTx struct {
	dialect.Tx
	explain func(error) error

	mu    sync.Mutex
	first error // the first statement error, explained
}

func (t *explainingTx) Exec(ctx context.Context, query string, args, v any) error {
	return t.note(t.Tx.Exec(ctx, query, args, v))
}

func (t *explainingTx) Query(ctx context.Context, query string, args, v any) error {
	return t.note(t.Tx.Query(ctx, query, args, v))
}

// Commit of a transaction that had a failed statement writes nothing
// (PostgreSQL rolls it back): it fails with that statement's error, never
// as an unknown commit.
func (t *explainingTx) Commit() error {
	err := t.Tx.Commit()
	if err == nil {
		return nil
	}
	t.mu.Lock()
	first := t.first
	t.mu.Unlock()
	if first != nil {
		return &abortedTxError{Err: first}
	}
	return err
}

// abortedTxError is the commit of a transaction PostgreSQL had aborted at
// a failed statement: nothing was written, Err is that statement's error.
type abortedTxError struct{ Err error }

func (e *abortedTxError) Error() string {
	return fmt.Sprintf("nothing was written: the transaction failed at %v", e.Err)
}

func (e *abortedTxError) Unwrap() error { return e.Err }

func (t *explainingTx) note(err error) error {
	if err == nil {
		return nil
	}
	err = t.explain(err)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first == nil {
		t.first = err
		return err
	}
	if pgTxAborted(err) {
		return t.first
	}
	return err
}

// pgUniqueViolation reports a unique constraint PostgreSQL refused (23505).
func pgUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// pgTxAborted reports PostgreSQL's "current transaction is aborted,
// commands ignored until end of transaction block" (25P02).
func pgTxAborted(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25P02"
}

// Rebind rewrites the "?" and "?N" placeholders of a dialect-neutral
// statement into the store's dialect ($N on PostgreSQL; unchanged on
// SQLite). Quoted text is left alone.
func (s *Store) Rebind(query string) string {
	if s.dialect != dialect.Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n, quoted := 0, false
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
			} else {
				n++
				fmt.Fprintf(&b, "%d", n)
			}
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
