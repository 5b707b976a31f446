package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// withHistory replaces the embedded schema history (by ent dialect).
func withHistory(h map[string]snapshots) Option { return func(o *options) { o.history = h } }

func currentDDL(entDialect string) string {
	if entDialect == dialect.Postgres {
		return postgresSchemaSQL
	}
	return schemaSQL
}

func quoteOf(entDialect string) byte {
	if entDialect == dialect.Postgres {
		return '"'
	}
	return '`'
}

// render writes a parsed schema back in schemagen's format.
func render(s *ddlSchema) string {
	q := func(n string) string { return string(s.quote) + n + string(s.quote) }
	var b strings.Builder
	b.WriteString("-- an older schema, derived by a test\n")
	for _, t := range s.tables {
		var parts []string
		for _, c := range t.columns {
			parts = append(parts, q(c.name)+" "+c.def)
		}
		parts = append(parts, t.constraints...)
		fmt.Fprintf(&b, "CREATE TABLE %s (%s);\n", q(t.name), strings.Join(parts, ", "))
	}
	for _, ix := range s.indexes {
		b.WriteString(ix.create + "\n")
	}
	return b.String()
}

func mustParse(t testing.TB, ddl string, quote byte) *ddlSchema {
	t.Helper()
	s, err := parseDDL(ddl, quote)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// derive returns the current schema of a dialect changed by edit, in
// schemagen's format.
func derive(t testing.TB, entDialect string, edit func(s *ddlSchema)) string {
	t.Helper()
	s := mustParse(t, currentDDL(entDialect), quoteOf(entDialect))
	edit(s)
	return render(s)
}

func dropColumn(t testing.TB, s *ddlSchema, table, column string) {
	t.Helper()
	tb := s.table(table)
	for i, c := range tb.columns {
		if c.name == column {
			tb.columns = append(tb.columns[:i], tb.columns[i+1:]...)
			return
		}
	}
	t.Fatalf("no column %s.%s", table, column)
}

func dropTable(s *ddlSchema, table string) {
	var tables []*ddlTable
	for _, tb := range s.tables {
		if tb.name != table {
			tables = append(tables, tb)
		}
	}
	var indexes []*ddlIndex
	for _, ix := range s.indexes {
		if ix.table != table {
			indexes = append(indexes, ix)
		}
	}
	s.tables, s.indexes = tables, indexes
}

func dropIndex(s *ddlSchema, name string) {
	var indexes []*ddlIndex
	for _, ix := range s.indexes {
		if ix.name != name {
			indexes = append(indexes, ix)
		}
	}
	s.indexes = indexes
}

// olderAdditive is an older schema the current one is reachable from: a
// table, a defaulted NOT NULL column, a nullable column and an index fewer.
func olderAdditive(t testing.TB, entDialect string) string {
	return derive(t, entDialect, func(s *ddlSchema) {
		dropTable(s, "claim_conflicts")
		dropColumn(t, s, "operations", "native_turn") // NOT NULL DEFAULT ''
		dropColumn(t, s, "handoffs", "next_action")   // NULL
		dropIndex(s, "operation_created_at_id")       // an index of a kept table
		dropIndex(s, "work_item_depends_on_by_dependent")
	})
}

func TestParseDDLRoundTrips(t *testing.T) {
	for _, d := range []string{dialect.SQLite, dialect.Postgres} {
		s := mustParse(t, currentDDL(d), quoteOf(d))
		if len(s.tables) < 10 || len(s.indexes) < 10 {
			t.Fatalf("%s: parsed %d tables, %d indexes", d, len(s.tables), len(s.indexes))
		}
		got := schemaStatements(render(s))
		want := schemaStatements(currentDDL(d))
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: rendering the parsed DDL does not give it back", d)
		}
	}
}

func TestPlanUpgrade(t *testing.T) {
	const base = "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NOT NULL DEFAULT (0), PRIMARY KEY (`id`));\n" +
		"CREATE INDEX `a_n` ON `a` (`n`);\n"
	tests := []struct {
		name    string
		to      string
		steps   []string
		problem string
	}{
		{name: "same", to: base},
		{name: "new nullable and defaulted columns", to: "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NOT NULL DEFAULT (0), `x` text NULL, `y` integer NOT NULL DEFAULT (40), `z` json, PRIMARY KEY (`id`));\n" +
			"CREATE INDEX `a_n` ON `a` (`n`);\n",
			steps: []string{"ALTER TABLE `a` ADD COLUMN `x` text NULL;", "ALTER TABLE `a` ADD COLUMN `y` integer NOT NULL DEFAULT (40);", "ALTER TABLE `a` ADD COLUMN `z` json;"}},
		{name: "new table and index", to: base + "CREATE TABLE `b` (`id` text NOT NULL, `a_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `b_a` FOREIGN KEY (`a_id`) REFERENCES `a` (`id`) ON DELETE NO ACTION);\n" +
			"CREATE UNIQUE INDEX `b_a_id` ON `b` (`a_id`);\n",
			steps: []string{"CREATE TABLE `b` (`id` text NOT NULL, `a_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `b_a` FOREIGN KEY (`a_id`) REFERENCES `a` (`id`) ON DELETE NO ACTION);",
				"CREATE UNIQUE INDEX `b_a_id` ON `b` (`a_id`);"}},
		{name: "changed and dropped index", to: "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NOT NULL DEFAULT (0), PRIMARY KEY (`id`));\n" +
			"CREATE INDEX `a_n` ON `a` (`n`, `id`);\n",
			steps: []string{"DROP INDEX `a_n`;", "CREATE INDEX `a_n` ON `a` (`n`, `id`);"}},
		{name: "index dropped", to: "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NOT NULL DEFAULT (0), PRIMARY KEY (`id`));\n",
			steps: []string{"DROP INDEX `a_n`;"}},
		{name: "not null without default", to: "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NOT NULL DEFAULT (0), `m` integer NOT NULL, PRIMARY KEY (`id`));\n",
			problem: "new column a.m (integer NOT NULL) is NOT NULL without a default"},
		{name: "dropped column", to: "CREATE TABLE `a` (`id` text NOT NULL, PRIMARY KEY (`id`));\n",
			problem: "column a.n is dropped"},
		{name: "changed column", to: "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NULL, PRIMARY KEY (`id`));\n",
			problem: "column a.n changes from \"integer NOT NULL DEFAULT (0)\" to \"integer NULL\""},
		{name: "dropped table", to: "CREATE TABLE `b` (`id` text NOT NULL, PRIMARY KEY (`id`));\n",
			problem: "table a is dropped"},
		{name: "new constraint", to: "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NOT NULL DEFAULT (0), PRIMARY KEY (`id`, `n`));\n",
			problem: "the constraints of table a change"},
		{name: "new unique column", to: "CREATE TABLE `a` (`id` text NOT NULL, `n` integer NOT NULL DEFAULT (0), `u` text NULL UNIQUE, PRIMARY KEY (`id`));\n",
			problem: "new column a.u (text NULL UNIQUE) is unique column"},
		{name: "unparsable", to: "CREATE VIEW `v` AS SELECT 1;\n", problem: "only CREATE TABLE and CREATE INDEX are understood"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := planUpgrade(base, tt.to, dialect.SQLite)
			if tt.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("planUpgrade = %q, %v; want an error with %q", steps, err, tt.problem)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(steps, tt.steps) {
				t.Fatalf("planUpgrade = %q, %v; want %q", steps, err, tt.steps)
			}
		})
	}
}

// TestEverySnapshotUpgrades is the release check: every released schema in
// history/ is named after its version and upgrades additively to this
// build's schema. It fails on an ent schema change that is not additive
// (a dropped or changed column, a new NOT NULL column without a default, a
// new edge on an existing table); see CONTRIBUTING.md, "Changing the store
// schema".
func TestEverySnapshotUpgrades(t *testing.T) {
	entries, err := fs.ReadDir(history, "history")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range entries {
		name := e.Name()
		raw, _ := history.ReadFile("history/" + name)
		d := dialect.SQLite
		if strings.HasPrefix(name, "postgres-") {
			d = dialect.Postgres
		} else if !strings.HasPrefix(name, "sqlite-") {
			t.Errorf("history/%s: a snapshot is named sqlite-<version>.sql or postgres-<version>.sql", name)
			continue
		}
		count[d]++
		version := versionOf(string(raw))
		if want := strings.SplitN(name, "-", 2)[0] + "-" + version[:12] + ".sql"; name != want {
			t.Errorf("history/%s holds schema %.12s: it was edited after its release, or should be named %s", name, version, want)
		}
		if _, err := planUpgrade(string(raw), currentDDL(d), d); err != nil {
			t.Errorf("a store at the released schema history/%s cannot be upgraded to this build's: %v", name, err)
		}
	}
	for _, d := range []string{dialect.SQLite, dialect.Postgres} {
		if count[d] == 0 {
			t.Errorf("history/ holds no %s snapshot", d)
		}
		hist, err := releasedSnapshots(d)
		if err != nil || len(hist) != count[d] {
			t.Errorf("releasedSnapshots(%s) = %d, %v; want %d", d, len(hist), err, count[d])
		}
	}
}

// oldStore creates a store at location from the DDL older, records its
// version and puts one row in every table. It returns each table's rows as
// read back, by table.
func oldStore(t *testing.T, location, older string) map[string]string {
	t.Helper()
	ctx := context.Background()
	d := dialect.SQLite
	var db *sql.DB
	var err error
	if IsPostgres(location) {
		d = dialect.Postgres
		db, err = sql.Open("pgx", location)
	} else {
		db, err = sql.Open("sqlite", sqliteDSN(location))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rebind := (&Store{dialect: d}).Rebind
	stmts := append([]string{createMetaSQL}, schemaStatements(older)...)
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	if _, err := db.ExecContext(ctx, rebind("INSERT INTO "+metaTable+" (key, value) VALUES (?, ?)"), metaSchemaVersion, versionOf(older)); err != nil {
		t.Fatal(err)
	}
	if d == dialect.SQLite {
		if err := stampVersion(ctx, db, versionOf(older)); err != nil {
			t.Fatal(err)
		}
	}
	s := mustParse(t, older, quoteOf(d))
	ids := map[string]any{}
	for _, tb := range insertOrder(s) {
		refs := references(tb, quoteOf(d))
		var names, marks []string
		var args []any
		for _, c := range tb.columns {
			v := valueFor(tb.name, c, refs, ids)
			if c.name == "id" {
				ids[tb.name] = v
			}
			names = append(names, string(quoteOf(d))+c.name+string(quoteOf(d)))
			marks = append(marks, "?")
			args = append(args, v)
		}
		stmt := fmt.Sprintf("INSERT INTO %s%s%s (%s) VALUES (%s)", string(quoteOf(d)), tb.name, string(quoteOf(d)),
			strings.Join(names, ", "), strings.Join(marks, ", "))
		if _, err := db.ExecContext(ctx, rebind(stmt), args...); err != nil {
			t.Fatalf("insert into %s: %v", tb.name, err)
		}
	}
	return readRows(t, db, s)
}

// insertOrder puts every table after the tables its foreign keys name.
func insertOrder(s *ddlSchema) []*ddlTable {
	var out []*ddlTable
	done := map[string]bool{}
	var visit func(tb *ddlTable)
	visit = func(tb *ddlTable) {
		if done[tb.name] {
			return
		}
		done[tb.name] = true
		for _, target := range references(tb, s.quote) {
			if r := s.table(target); r != nil {
				visit(r)
			}
		}
		out = append(out, tb)
	}
	for _, tb := range s.tables {
		visit(tb)
	}
	return out
}

// references maps a table's foreign-key columns to the tables they name.
func references(tb *ddlTable, quote byte) map[string]string {
	out := map[string]string{}
	for _, c := range tb.constraints {
		i := strings.Index(c, "FOREIGN KEY (")
		j := strings.Index(c, "REFERENCES ")
		if i < 0 || j < 0 {
			continue
		}
		col, _, _ := quoted(c[i+len("FOREIGN KEY ("):], quote)
		target, _, _ := quoted(c[j+len("REFERENCES "):], quote)
		out[col] = target
	}
	return out
}

func valueFor(table string, c ddlColumn, refs map[string]string, ids map[string]any) any {
	if target, ok := refs[c.name]; ok {
		return ids[target]
	}
	typ := strings.ToLower(strings.Fields(c.def)[0])
	switch typ {
	case "integer", "bigint", "int", "smallint":
		return int64(1)
	case "datetime", "timestamptz", "timestamp":
		return testNow
	case "json", "jsonb":
		return `null`
	case "bool", "boolean":
		return true
	case "real", "double":
		return 1.5
	}
	return table + "." + c.name
}

// readRows reads every row of the tables of s, only the columns s names.
func readRows(t *testing.T, db *sql.DB, s *ddlSchema) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range s.tables {
		var names []string
		for _, c := range tb.columns {
			names = append(names, string(s.quote)+c.name+string(s.quote))
		}
		rows, err := db.Query("SELECT " + strings.Join(names, ", ") + " FROM " + string(s.quote) + tb.name + string(s.quote))
		if err != nil {
			t.Fatalf("read %s: %v", tb.name, err)
		}
		var b strings.Builder
		for rows.Next() {
			vals := make([]any, len(names))
			ptrs := make([]any, len(names))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if raw, ok := v.([]byte); ok {
					vals[i] = string(raw)
				}
			}
			fmt.Fprintf(&b, "%v\n", vals)
		}
		rows.Close()
		if b.Len() == 0 {
			t.Fatalf("table %s has no row", tb.name)
		}
		out[tb.name] = b.String()
	}
	return out
}

// logicalSchema describes a store's tables for comparison: columns (by
// name: ALTER TABLE appends), their types, nullability and defaults,
// indexes and constraints.
func logicalSchema(t *testing.T, s *Store) string {
	t.Helper()
	var queries []string
	if s.Dialect() == dialect.Postgres {
		queries = []string{
			"SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, ''), coalesce(collation_name, '') " +
				"FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1, 2",
			"SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1, 2",
			"SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint " +
				"WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2",
		}
	} else {
		queries = []string{
			"SELECT m.name, p.name, p.type, p.\"notnull\", coalesce(p.dflt_value, ''), p.pk FROM sqlite_master m, pragma_table_info(m.name) p " +
				"WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY 1, 2",
			"SELECT m.name, l.name, l.\"unique\", l.origin, group_concat(i.name, ',') FROM sqlite_master m, pragma_index_list(m.name) l, pragma_index_info(l.name) i " +
				"WHERE m.type = 'table' GROUP BY 1, 2 ORDER BY 1, 2",
			"SELECT m.name, f.\"table\", f.\"from\", f.\"to\", f.on_delete FROM sqlite_master m, pragma_foreign_key_list(m.name) f " +
				"WHERE m.type = 'table' ORDER BY 1, 2, 3",
		}
	}
	var b strings.Builder
	for _, q := range queries {
		rows, err := s.DB().Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if raw, ok := v.([]byte); ok {
					vals[i] = string(raw)
				}
			}
			fmt.Fprintf(&b, "%v\n", vals)
		}
		rows.Close()
	}
	return b.String()
}

// TestUpgradeKeepsEveryRow: a store at an older schema, with a row in every
// table, opens with this build, keeps every row, and ends with the schema
// of a fresh store. Older schemas: every released one (history/) and one
// derived here with a table, two columns and two indexes fewer, so the
// upgrade runs even while the current schema is the last release.
func TestUpgradeKeepsEveryRow(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		d := dialect.SQLite
		if IsPostgres(location) {
			d = dialect.Postgres
		}
		released, err := releasedSnapshots(d)
		if err != nil {
			t.Fatal(err)
		}
		olders := map[string]string{"derived": olderAdditive(t, d)}
		for v, ddl := range released {
			olders["released "+v[:12]] = ddl
		}
		names := make([]string, 0, len(olders))
		for n := range olders {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, name := range names {
			older := olders[name]
			t.Run(name, func(t *testing.T) {
				loc := location
				if d == dialect.SQLite {
					loc = filepath.Join(filepath.Dir(location), fmt.Sprintf("old%d.db", i))
				} else if i > 0 {
					loc = pgtest.Database(t)
				}
				before := oldStore(t, loc, older)
				hist := map[string]snapshots{d: {versionOf(older): older}}
				ctx := context.Background()
				s, err := Open(ctx, loc, withHistory(hist))
				if err != nil {
					t.Fatalf("Open of a store at %s: %v", name, err)
				}
				defer s.Close()
				if err := s.Check(ctx); err != nil {
					t.Fatal(err)
				}
				wantFrom := versionOf(older)
				if wantFrom == s.SchemaVersion() {
					wantFrom = "" // the last release is this build's schema: nothing to upgrade
				}
				if got := s.UpgradedFrom(); got != wantFrom {
					t.Fatalf("UpgradedFrom = %q, want %q", got, wantFrom)
				}
				after := readRows(t, s.DB(), mustParse(t, older, quoteOf(d)))
				if !reflect.DeepEqual(before, after) {
					t.Fatalf("rows changed by the upgrade:\nbefore %v\nafter  %v", before, after)
				}
				// ent reads every current column of the upgraded rows.
				if n, err := s.Client().Operation.Query().Count(ctx); err != nil || n != 1 {
					t.Fatalf("operations through ent = %d, %v", n, err)
				}
				if _, err := s.Client().Handoff.Query().All(ctx); err != nil {
					t.Fatalf("handoffs through ent: %v", err)
				}
				var fresh *Store
				if d == dialect.SQLite {
					fresh = openT(t, filepath.Join(t.TempDir(), "fresh.db"))
				} else {
					fresh = openT(t, pgtest.Database(t))
				}
				if got, want := logicalSchema(t, s), logicalSchema(t, fresh); got != want {
					t.Fatalf("upgraded schema differs from a fresh store's:\nupgraded:\n%s\nfresh:\n%s", got, want)
				}
				s.Close()
				again, err := Open(ctx, loc, withHistory(hist))
				if err != nil || again.Migrated() || again.UpgradedFrom() != "" {
					t.Fatalf("second Open = %v (migrated %v); want the current store as it is", err, again != nil && again.Migrated())
				}
				again.Close()
			})
		}
	})
}

// TestUpgradeRefusals: a store at a non-additive or unknown older schema
// is refused and left as it was; with WithoutUpgrade (doctor, desk) even an
// additive one is, with ErrUpgradeNeeded.
func TestUpgradeRefusals(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		d := dialect.SQLite
		if IsPostgres(location) {
			d = dialect.Postgres
		}
		nonAdditive := derive(t, d, func(s *ddlSchema) {
			tb := s.table("conversations")
			tb.columns = append(tb.columns, ddlColumn{name: "legacy", def: "text NOT NULL"})
		})
		tests := []struct {
			name    string
			older   string
			known   bool
			opts    []Option
			wantErr error
			want    string
		}{
			{name: "non-additive", older: nonAdditive, known: true, wantErr: ErrSchemaMismatch, want: "column conversations.legacy is dropped"},
			{name: "unknown", older: olderAdditive(t, d), known: false, wantErr: ErrSchemaMismatch, want: "is none of them"},
			{name: "read-only command", older: olderAdditive(t, d), known: true, opts: []Option{WithoutUpgrade()}, wantErr: ErrUpgradeNeeded, want: "this command only reads"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				loc := location
				if d == dialect.SQLite {
					loc = filepath.Join(filepath.Dir(location), fmt.Sprintf("refused%d.db", i))
				} else if i > 0 {
					loc = pgtest.Database(t)
				}
				before := oldStore(t, loc, tt.older)
				var raw []byte
				if d == dialect.SQLite {
					raw, _ = os.ReadFile(loc)
				}
				hist := map[string]snapshots{d: {}}
				if tt.known {
					hist[d][versionOf(tt.older)] = tt.older
				}
				ctx := context.Background()
				s, err := Open(ctx, loc, append(tt.opts, withHistory(hist))...)
				if err == nil {
					err = s.Check(ctx)
					s.Close()
				}
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), versionOf(tt.older)[:12]) {
					t.Fatalf("Open = %v; want %v naming the version and %q", err, tt.wantErr, tt.want)
				}
				if d == dialect.SQLite {
					if now, _ := os.ReadFile(loc); !bytes.Equal(raw, now) {
						t.Fatal("a refused store file was modified")
					}
				}
				check := readOnlyRows(t, loc, tt.older)
				if !reflect.DeepEqual(before, check) {
					t.Fatalf("rows changed by a refused open")
				}
			})
		}
	})
}

// readOnlyRows reads the rows of a store at older without opening it as a
// Store.
func readOnlyRows(t *testing.T, location, older string) map[string]string {
	t.Helper()
	var db *sql.DB
	var err error
	quote := byte('`')
	if IsPostgres(location) {
		quote = '"'
		db, err = sql.Open("pgx", location)
	} else {
		db, err = sql.Open("sqlite", sqliteReadOnlyDSN(location))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version string
	if err := db.QueryRow("SELECT value FROM " + metaTable + " WHERE key = '" + metaSchemaVersion + "'").Scan(&version); err != nil || version != versionOf(older) {
		t.Fatalf("recorded version = %q, %v; want the older one", version, err)
	}
	return readRows(t, db, mustParse(t, older, quote))
}
