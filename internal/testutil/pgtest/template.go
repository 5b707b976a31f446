package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
)

// Template is what NewDatabaseFrom copies a new database from, instead of
// preparing each one anew: Prepare runs once per cluster and Key, on an
// empty database owned by the application role (dsn is that role's URL),
// which then becomes a template database. A copy (CREATE DATABASE …
// TEMPLATE) costs the server about a third of an empty database plus a
// store's schema migration.
type Template struct {
	// Key names what Prepare makes, e.g. a hash of the DDL it runs. A
	// changed preparation must come with a new key: a database of the
	// same key is reused as it is, by every process sharing the cluster.
	Key string
	// Prepare fills the template database and closes every connection it
	// opened to it (a database with connections cannot be copied).
	Prepare func(ctx context.Context, dsn string) error
}

// TemplateName is the database name of the template of key on a cluster.
func TemplateName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "interop_tmpl_" + hex.EncodeToString(sum[:10])
}

// NewDatabaseFrom creates a database owned by the application role as a
// copy of tmpl's template database, making that first if no process did
// yet, and returns the role's URL for it (password included).
func (c *Cluster) NewDatabaseFrom(ctx context.Context, tmpl Template) (string, error) {
	if tmpl.Key == "" || tmpl.Prepare == nil {
		return "", errors.New("pgtest: a template needs a key and a preparation")
	}
	name := TemplateName(tmpl.Key)
	if err := c.ensureTemplate(ctx, name, tmpl.Prepare); err != nil {
		return "", err
	}
	db := newName()
	// FILE_COPY copies the template's files; the default WAL_LOG writes
	// every page to the WAL as well, 1.7 times the server's CPU for a
	// store's template (and nothing here reads the WAL).
	if err := c.create(ctx, "CREATE DATABASE "+db+" OWNER "+AppRole+" TEMPLATE "+name+" STRATEGY FILE_COPY"); err != nil {
		return "", err
	}
	return c.DSN(db), nil
}

// ensureTemplate makes template database name unless it exists. Test
// binaries sharing a cluster (EnvShared) make it once between them: the
// check and the preparation hold an advisory lock named after it. A
// database of that name that is not yet marked a template is what a
// process that died while preparing left: it is dropped and made again.
func (c *Cluster) ensureTemplate(ctx context.Context, name string, prepare func(context.Context, string) error) error {
	c.tmplMu.Lock()
	defer c.tmplMu.Unlock()
	if c.tmplReady[name] {
		return nil
	}
	conn, err := pgx.Connect(ctx, c.AdminDSN("postgres"))
	if err != nil {
		return fmt.Errorf("pgtest: connect as admin: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	sum := sha256.Sum256([]byte(name))
	// Session-level: CREATE DATABASE cannot run inside a transaction. The
	// lock ends with the connection at the latest.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(binary.BigEndian.Uint64(sum[:8]))); err != nil {
		return fmt.Errorf("pgtest: lock template %s: %w", name, err)
	}
	var isTemplate bool
	err = conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&isTemplate)
	switch {
	case err == nil && isTemplate:
	case err == nil || errors.Is(err, pgx.ErrNoRows):
		if err == nil {
			if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
				return fmt.Errorf("pgtest: drop the unfinished template %s: %w", name, err)
			}
		}
		if err := c.makeTemplate(ctx, conn, name, prepare); err != nil {
			return err
		}
	default:
		return fmt.Errorf("pgtest: look up template %s: %w", name, err)
	}
	if c.tmplReady == nil {
		c.tmplReady = map[string]bool{}
	}
	c.tmplReady[name] = true
	return nil
}

// makeTemplate creates database name, runs prepare on it as the
// application role, and marks it a template no one connects to.
func (c *Cluster) makeTemplate(ctx context.Context, conn *pgx.Conn, name string, prepare func(context.Context, string) error) error {
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+AppRole); err != nil {
		return fmt.Errorf("pgtest: create template %s: %w", name, err)
	}
	if err := prepare(ctx, c.DSN(name)); err != nil {
		return fmt.Errorf("pgtest: prepare template %s: %w", name, err)
	}
	// Marked a template last: that is what says it is complete.
	for _, stmt := range []string{"ALTER DATABASE " + name + " ALLOW_CONNECTIONS false", "ALTER DATABASE " + name + " IS_TEMPLATE true"} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("pgtest: %s: %w", stmt, err)
		}
	}
	return nil
}

// newName is the name of a new database of this process.
func newName() string { return fmt.Sprintf("interop_%d_%d", os.Getpid(), nextDB.Add(1)) }
