package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// Store dialects a scale run measures (ScaleConfig.Stores).
const (
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
)

// pgStores hands out the PostgreSQL stores of a scale run: one schema per
// size in one database, either of a throw-away cluster the run starts or
// of an existing server (ScaleConfig.PostgresURL). The schemas are dropped
// and the cluster stopped by close.
type pgStores struct {
	base    string // the database's URL (with the throw-away role's password)
	server  string // what the report says about the server
	prefix  string // schema names start with it
	schemas []string
	stop    func() error // stops the throw-away cluster; nil for a given server
}

// pgSchemaSizeSQL is the on-disk size of a schema's tables with their
// indexes and TOAST.
const pgSchemaSizeSQL = "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c " +
	"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'"

// openPGStores starts a throw-away cluster (dsn empty) or uses the server
// of dsn, and checks that it answers.
func openPGStores(ctx context.Context, dsn string, progress io.Writer) (*pgStores, error) {
	p := &pgStores{base: dsn, prefix: fmt.Sprintf("interop_bench_%d_", os.Getpid())}
	if dsn == "" {
		fmt.Fprintln(progress, "starting a throw-away PostgreSQL cluster…")
		// The cluster keeps PostgreSQL's default durability (fsync on), as
		// a team server would; the SQLite stores sync as the runtime does.
		base, stop, err := pgtest.ThrowAwayDatabase(ctx, pgtest.Options{})
		if err != nil {
			return nil, fmt.Errorf("start a throw-away PostgreSQL cluster: %w", err)
		}
		p.base, p.stop = base, stop
	}
	conn, err := pgx.Connect(ctx, p.base)
	if err != nil {
		p.close(ctx)
		return nil, fmt.Errorf("connect to %s: %w", store.RedactDSN(p.base), err)
	}
	defer conn.Close(ctx)
	var version string
	var db map[string]any // the pg_database row: its collation columns differ between versions
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), to_jsonb(d) FROM pg_database d WHERE datname = current_database()").
		Scan(&version, &db); err != nil {
		p.close(ctx)
		return nil, fmt.Errorf("read the server version of %s: %w", store.RedactDSN(p.base), err)
	}
	collation := fmt.Sprint(db["datcollate"])
	if db["datlocprovider"] == "i" {
		icu := db["daticulocale"] // PostgreSQL 15 and 16
		if icu == nil {
			icu = db["datlocale"] // 17 and later
		}
		collation = fmt.Sprintf("ICU %v", icu)
	}
	where := "throw-away cluster on 127.0.0.1"
	if p.stop == nil {
		where = store.RedactDSN(p.base)
	}
	p.server = fmt.Sprintf("PostgreSQL %s, %s, database collation %s", version, where, collation)
	return p, nil
}

// schemaName is the schema of the store of size n and shape (the chain
// shape keeps the name it had before shapes).
func (p *pgStores) schemaName(shape string, n int) string {
	if shape == "" || shape == ShapeChain {
		return fmt.Sprintf("%sn%d", p.prefix, n)
	}
	return fmt.Sprintf("%s%s_n%d", p.prefix, shape, n)
}

// location creates the schema of size n and shape and returns the URL whose
// search_path selects it (the runtime creates its tables in the current
// schema).
func (p *pgStores) location(ctx context.Context, shape string, n int) (string, error) {
	schema := p.schemaName(shape, n)
	if err := p.exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", err
	}
	p.schemas = append(p.schemas, schema)
	u, err := url.Parse(p.base)
	if err != nil {
		return "", fmt.Errorf("PostgreSQL URL %s: %w", store.RedactDSN(p.base), err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	// The server's activity view and logs tell the sizes apart.
	q.Set("application_name", fmt.Sprintf("interop-bench-n%d", n))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// vacuum vacuums and analyses the tables of the schema of size n, as
// autovacuum does on a server whose store grew to that size over time (it
// analyses a table once a tenth of it changed and vacuums it after
// inserts). Right after a bulk seed there are no planner statistics:
// PostgreSQL then guesses that a few works match thousands of rows and
// hashes a whole table (30 ms at 100,000 works instead of 0.2 ms), and
// index-only scans visit the heap.
func (p *pgStores) vacuum(ctx context.Context, shape string, n int) error {
	conn, err := pgx.Connect(ctx, p.base)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", store.RedactDSN(p.base), err)
	}
	defer conn.Close(ctx)
	schema := p.schemaName(shape, n)
	rows, err := conn.Query(ctx, "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables "+
		"WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name", schema)
	if err != nil {
		return fmt.Errorf("list the tables of the store of %d: %w", n, err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list the tables of the store of %d: %w", n, err)
	}
	if len(tables) == 0 {
		return fmt.Errorf("the store of %d has no tables in schema %s", n, schema)
	}
	if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) "+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("vacuum the store of %d: %w", n, err)
	}
	return nil
}

// sizeMiB is the size of the schema of size n.
func (p *pgStores) sizeMiB(ctx context.Context, shape string, n int) (float64, error) {
	conn, err := pgx.Connect(ctx, p.base)
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", store.RedactDSN(p.base), err)
	}
	defer conn.Close(ctx)
	var bytes int64
	if err := conn.QueryRow(ctx, pgSchemaSizeSQL, p.schemaName(shape, n)).Scan(&bytes); err != nil {
		return 0, fmt.Errorf("size of the store of %d: %w", n, err)
	}
	return MiB(bytes), nil
}

func (p *pgStores) exec(ctx context.Context, stmt string) error {
	conn, err := pgx.Connect(ctx, p.base)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", store.RedactDSN(p.base), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s on %s: %w", stmt, store.RedactDSN(p.base), err)
	}
	return nil
}

// close drops the run's schemas and stops the throw-away cluster.
func (p *pgStores) close(ctx context.Context) error {
	var errs []error
	if p.stop != nil {
		errs = append(errs, p.stop()) // the schemas go with the cluster
	} else {
		for _, s := range p.schemas {
			errs = append(errs, p.exec(context.WithoutCancel(ctx), "DROP SCHEMA "+s+" CASCADE"))
		}
	}
	p.schemas = nil
	return errors.Join(errs...)
}

// env is what a served runtime on the stores needs of the bench's
// environment besides INTEROP_DB: nothing for the throw-away cluster (its
// URL carries everything); for a given server the libpq variables pgx
// reads (the password among them, never on a command line) and the
// password file, which the isolated HOME would hide.
func (p *pgStores) env() []string {
	if p.stop != nil {
		return nil
	}
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	if os.Getenv("PGPASSFILE") == "" {
		if home, err := os.UserHomeDir(); err == nil {
			if pass := filepath.Join(home, ".pgpass"); fileExists(pass) {
				env = append(env, "PGPASSFILE="+pass)
			}
		}
	}
	return env
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// withEnv returns env with every NAME=… of set replacing the one in env.
func withEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	names := map[string]bool{}
	for _, kv := range set {
		names[strings.SplitN(kv, "=", 2)[0]] = true
	}
	for _, kv := range env {
		if !names[strings.SplitN(kv, "=", 2)[0]] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
