package store

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"entgo.io/ent/dialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agent-interop/runtime/internal/store/internal/stmtcache"
)

// This file is the SQLite seam: everything here would be replaced (or become
// a no-op) for a PostgreSQL backend. The rest of the package speaks ent and
// dialect-neutral SQL.

// applicationID is written to the SQLite header (PRAGMA application_id) so a
// file can be recognised as ours from its first 100 bytes. "AIRT".
const applicationID = 0x41495254

// sqliteMagic is the first 16 bytes of every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// sqliteDialect is ent's name for the dialect (modernc registers "sqlite").
const sqliteDialect = dialect.SQLite

// sqliteDSN builds the modernc DSN for path. Keys read by modernc v1.62:
// _journal_mode, _synchronous, _foreign_keys, _busy_timeout, _txlock,
// _time_format, _timezone and _pragma (sqlite.go applyQueryParams). The path is a
// file: URI so '?' or '#' in a directory name cannot cut the query.
func sqliteDSN(path string) string {
	q := "_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1&_busy_timeout=5000" +
		"&_txlock=immediate&_time_format=sqlite&_timezone=UTC" +
		"&_pragma=" + url.QueryEscape(fmt.Sprintf("wal_autocheckpoint(%d)", autoCheckpointBackstop))
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q
}

// stmtCacheSize is how many prepared statements each SQLite connection
// keeps (see package stmtcache). A connection of the workflow and claims
// tests uses at most 58 distinct statements; a statement holds about 8 KiB
// of SQLite memory (SQLITE_DBSTATUS_STMT_USED), so a full cache is about
// 1 MiB per connection.
const stmtCacheSize = 128

// openSQLite opens a pool of SQLite connections on dsn, each keeping its
// prepared statements: modernc's driver compiles the SQL again for every
// query otherwise, the largest single CPU cost of a store call.
func openSQLite(dsn string) (*sql.DB, error) {
	c, err := sqliteConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// sqliteConnector is openSQLite's connector, for a pool opened later.
func sqliteConnector(dsn string) (driver.Connector, error) {
	base, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return stmtcache.New(base, stmtCacheSize), nil
}

// sqliteReadOnlyDSN opens path without any pragma that would change it.
func sqliteReadOnlyDSN(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro"
}

// fileKind is what the first 100 bytes of a file say about it.
type fileKind int

const (
	fileMissing   fileKind = iota // no file yet
	fileEmpty                     // zero bytes: SQLite treats it as a new database
	fileOurs                      // SQLite header with our application id
	fileUnmarked                  // SQLite header, application id 0 (new, or foreign)
	fileForeign                   // SQLite header, another application's id
	fileNotSQLite                 // anything else: corrupt or not a database
)

// header is what the first 100 bytes of the store file say.
type header struct {
	kind        fileKind
	userVersion uint32 // PRAGMA user_version: our schema stamp
	info        os.FileInfo
}

// inspectHeader classifies path by its header without opening it as a
// database. It costs one open and one 100-byte read. In WAL mode the header
// on disk can lag behind the newest page 1 in the -wal file; a lagging
// header only sends Open down the slow path, it never misclassifies a store
// as damaged (the magic string never changes).
func inspectHeader(path string) (header, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return header{kind: fileMissing}, nil
	}
	if err != nil {
		return header{}, fmt.Errorf("open store file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return header{}, fmt.Errorf("stat store file: %w", err)
	}
	h := header{info: info}
	if !info.Mode().IsRegular() {
		return h, fmt.Errorf("store path %s is not a regular file", path)
	}
	if info.Size() == 0 {
		h.kind = fileEmpty
		return h, nil
	}
	var buf [100]byte
	if _, err := io.ReadFull(f, buf[:]); err != nil || !bytes.Equal(buf[:16], sqliteMagic) {
		h.kind = fileNotSQLite // shorter than a SQLite header, or not one
		return h, nil
	}
	h.userVersion = binary.BigEndian.Uint32(buf[60:64])
	switch binary.BigEndian.Uint32(buf[68:72]) {
	case applicationID:
		h.kind = fileOurs
	case 0:
		h.kind = fileUnmarked
	default:
		h.kind = fileForeign
	}
	return h, nil
}

// versionStamp folds a schema version into the 32-bit PRAGMA user_version
// (never 0, which is SQLite's default).
func versionStamp(version string) uint32 {
	var v uint32
	for i := 0; i < 8 && i < len(version); i++ {
		v = v<<4 | uint32(hexNibble(version[i]))
	}
	if v == 0 {
		v = 1
	}
	return v
}

func hexNibble(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return 0
}

// stampVersion writes our application id and the schema stamp into the
// header. Runs inside the migration transaction.
func stampVersion(ctx context.Context, db queryer, version string) error {
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", int32(versionStamp(version))))
	return err
}

// checkpoint copies the WAL into the main file so the next Open can read the
// fresh header. Only called after a migration, never on the request path.
func checkpoint(ctx context.Context, db queryer) error {
	_, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

// userTables lists the tables of an unmarked SQLite file (to tell a fresh
// database from a foreign one).
func userTables(ctx context.Context, db queryer) ([]string, error) {
	rows, err := db.QueryContext(ctx,
		"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// integrityProblem runs PRAGMA quick_check (O(pages), so only on the slow
// migration path) and returns "" when the file is sound.
func integrityProblem(ctx context.Context, db queryer) (string, error) {
	res, err := scanString(ctx, db, "PRAGMA quick_check(1)")
	if err != nil {
		if isCorruption(err) {
			return err.Error(), nil
		}
		return "", err
	}
	if res != "ok" {
		return "quick_check: " + res, nil
	}
	return "", nil
}

// isCorruption reports whether err is SQLite saying the file is damaged or
// not a database at all.
func isCorruption(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// sideFiles are the files SQLite keeps next to the database in WAL mode.
var sideFiles = []string{"-wal", "-shm"}

// createFile creates an empty database file with mode 0600 (SQLite gives the
// -wal and -shm files the same mode) inside a 0700 directory.
func createFile(path string, dirMode, fileMode os.FileMode) error {
	if err := os.MkdirAll(dirOf(path), dirMode); err != nil {
		return fmt.Errorf("create store directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if errors.Is(err, os.ErrExist) {
		return nil // another process created it first
	}
	if err != nil {
		return fmt.Errorf("create store file: %w", err)
	}
	return f.Close()
}

// dirOf is filepath.Dir, named for readability at the call site.
func dirOf(path string) string { return filepath.Dir(path) }

// scanString returns the first column of the first row of query.
func scanString(ctx context.Context, db queryer, query string) (string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var v string
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return "", err
		}
	}
	return v, rows.Err()
}
