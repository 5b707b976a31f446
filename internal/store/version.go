package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	_ "embed" // schema.sql
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/agent-interop/runtime/internal/lazy"
)

// storeFormat is bumped by hand when something outside the ent schema
// changes what a current file must contain (for example the meta table).
const storeFormat = "interop-store/1"

// metaTable holds the store's own bookkeeping. It is created with plain,
// dialect-neutral DDL before ent's migration runs, so the fast path can read
// it without touching ent's schema.
const metaTable = "interop_meta"

// Meta keys.
const (
	metaSchemaVersion = "schema_version"
	metaRecovery      = "recovery"
)

const createMetaSQL = "CREATE TABLE IF NOT EXISTS " + metaTable +
	" (key VARCHAR(64) NOT NULL PRIMARY KEY, value TEXT NOT NULL)"

// schemaSQL and postgresSchemaSQL are the DDL of every ent table, generated
// from ent/schema by internal/store/internal/schemagen (see
// TestSchemaSQLIsCurrent), one file per dialect. The runtime creates the
// store from them instead of linking ent's migration engine, which would
// add its start-up cost to every spawn.
//
//go:generate go run ./internal/schemagen sqlite3 schema.sql
//go:generate go run ./internal/schemagen postgres schema_postgres.sql
//go:embed schema.sql
var schemaSQL string

//go:embed schema_postgres.sql
var postgresSchemaSQL string

// SchemaVersion returns the version the compiled binary expects of a SQLite
// store: a SHA-256 over storeFormat and the generated DDL. A team store on
// PostgreSQL has its own ([Store.SchemaVersion]), so a change in how one
// dialect is rendered never refuses the other dialect's stores.
func SchemaVersion() string { return sqliteVersion.Get() }

// PostgresSchemaVersion returns the version a team store on PostgreSQL
// has at this build ([Store.SchemaVersion] of one): like SchemaVersion, a
// SHA-256 over storeFormat and the generated PostgreSQL DDL. Test support
// keys its template database of a current store by it.
func PostgresSchemaVersion() string { return postgresVersion.Get() }

var (
	sqliteVersion   = lazy.Value[string]{New: func() string { return versionOf(schemaSQL) }}
	postgresVersion = lazy.Value[string]{New: func() string { return versionOf(postgresSchemaSQL) }}
)

func versionOf(ddl string) string {
	// Hashed in parts: the same sum as over storeFormat+"\n"+ddl, without
	// copying the DDL on every start.
	h := sha256.New()
	for _, part := range [...]string{storeFormat, "\n", ddl} {
		_, _ = io.WriteString(h, part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// schemaStatements returns the DDL statements of one generated file in order.
func schemaStatements(ddl string) []string {
	var out []string
	for _, line := range strings.Split(ddl, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// queryer is satisfied by *sql.DB, *sql.Conn and *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// readMeta returns every meta key. It fails (with "no such table") on a
// file that has no meta table yet.
func readMeta(ctx context.Context, q queryer) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT key, value FROM "+metaTable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := make(map[string]string, 2)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// writeMeta upserts one key (INSERT ... ON CONFLICT is understood by both
// SQLite ≥ 3.24 and PostgreSQL).
func writeMeta(ctx context.Context, q queryer, key, value string) error {
	_, err := q.ExecContext(ctx, "INSERT INTO "+metaTable+" (key, value) VALUES (?, ?) "+
		"ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value)
	if err != nil {
		return fmt.Errorf("write store meta %s: %w", key, err)
	}
	return nil
}

func deleteMeta(ctx context.Context, q queryer, key string) error {
	_, err := q.ExecContext(ctx, "DELETE FROM "+metaTable+" WHERE key = ?", key)
	if err != nil {
		return fmt.Errorf("delete store meta %s: %w", key, err)
	}
	return nil
}
