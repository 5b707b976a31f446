package store

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"entgo.io/ent/dialect"
)

// ErrUpgradeNeeded is wrapped by the error Open returns, with
// [WithoutUpgrade], for a store at a released older schema that this build
// would upgrade: a command that only reads leaves it as it is.
var ErrUpgradeNeeded = errors.New("store schema is older than this build's")

// history holds the DDL of every released schema, one file per dialect and
// version, named <dialect>-<first 12 hex digits of its version>.sql: a copy
// of schema.sql or schema_postgres.sql at the release (CONTRIBUTING.md,
// "Releasing a store schema"). A store recorded at one of these versions is
// upgraded to the current schema when the steps between the two are
// additive ([planUpgrade]).
//
//go:embed history/*.sql
var history embed.FS

// snapshots maps a schema version to its DDL, for one dialect.
type snapshots map[string]string

// releasedSnapshots reads the embedded history of one ent dialect.
func releasedSnapshots(entDialect string) (snapshots, error) {
	prefix := "sqlite-"
	if entDialect == dialect.Postgres {
		prefix = "postgres-"
	}
	entries, err := fs.ReadDir(history, "history")
	if err != nil {
		return nil, fmt.Errorf("read the store schema history: %w", err)
	}
	out := snapshots{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		raw, err := history.ReadFile(path.Join("history", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read the store schema history: %w", err)
		}
		out[versionOf(string(raw))] = string(raw)
	}
	return out, nil
}

// ddlTable is one CREATE TABLE statement of the generated DDL.
type ddlTable struct {
	name        string
	create      string      // the whole statement
	columns     []ddlColumn // in declaration order
	constraints []string    // PRIMARY KEY (...), CONSTRAINT ... FOREIGN KEY ..., as written
}

// ddlColumn is one column definition: its unquoted name and the rest of
// its definition as written ("text NOT NULL DEFAULT (”)").
type ddlColumn struct{ name, def string }

// ddlIndex is one CREATE [UNIQUE] INDEX statement.
type ddlIndex struct{ name, table, create string }

// ddlSchema is a parsed generated DDL file, in statement order.
type ddlSchema struct {
	quote   byte // '`' (SQLite) or '"' (PostgreSQL)
	tables  []*ddlTable
	indexes []*ddlIndex
}

func (s *ddlSchema) table(name string) *ddlTable {
	for _, t := range s.tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

func (s *ddlSchema) index(name string) *ddlIndex {
	for _, ix := range s.indexes {
		if ix.name == name {
			return ix
		}
	}
	return nil
}

func (t *ddlTable) column(name string) (ddlColumn, bool) {
	for _, c := range t.columns {
		if c.name == name {
			return c, true
		}
	}
	return ddlColumn{}, false
}

// parseDDL parses the DDL schemagen writes: one statement a line, each a
// CREATE TABLE or a CREATE [UNIQUE] INDEX, identifiers quoted with the
// dialect's quote. Anything else is an error, so a change in how schemagen
// renders is caught by TestEverySnapshotUpgrades rather than misread.
func parseDDL(ddl string, quote byte) (*ddlSchema, error) {
	s := &ddlSchema{quote: quote}
	for _, stmt := range schemaStatements(ddl) {
		switch {
		case strings.HasPrefix(stmt, "CREATE TABLE "):
			t, err := parseTable(stmt, quote)
			if err != nil {
				return nil, err
			}
			s.tables = append(s.tables, t)
		case strings.HasPrefix(stmt, "CREATE INDEX "), strings.HasPrefix(stmt, "CREATE UNIQUE INDEX "):
			ix, err := parseIndex(stmt, quote)
			if err != nil {
				return nil, err
			}
			s.indexes = append(s.indexes, ix)
		default:
			return nil, fmt.Errorf("unexpected DDL statement %.60q: only CREATE TABLE and CREATE INDEX are understood", stmt)
		}
	}
	return s, nil
}

// quoted reads a quoted identifier at the start of s and returns it and
// the rest of s.
func quoted(s string, quote byte) (name, rest string, ok bool) {
	if len(s) < 2 || s[0] != quote {
		return "", s, false
	}
	end := strings.IndexByte(s[1:], quote)
	if end < 0 {
		return "", s, false
	}
	return s[1 : end+1], s[end+2:], true
}

func parseTable(stmt string, quote byte) (*ddlTable, error) {
	name, rest, ok := quoted(strings.TrimPrefix(stmt, "CREATE TABLE "), quote)
	if !ok || !strings.HasPrefix(rest, " (") || !strings.HasSuffix(rest, ");") {
		return nil, fmt.Errorf("unexpected CREATE TABLE statement %.60q", stmt)
	}
	t := &ddlTable{name: name, create: stmt}
	for _, part := range splitTop(rest[2 : len(rest)-2]) {
		if part == "" {
			return nil, fmt.Errorf("table %s: empty element in %.60q", name, stmt)
		}
		if part[0] != quote {
			t.constraints = append(t.constraints, part)
			continue
		}
		col, def, ok := quoted(part, quote)
		if !ok {
			return nil, fmt.Errorf("table %s: unexpected column %.60q", name, part)
		}
		t.columns = append(t.columns, ddlColumn{name: col, def: strings.TrimSpace(def)})
	}
	return t, nil
}

func parseIndex(stmt string, quote byte) (*ddlIndex, error) {
	rest := strings.TrimPrefix(strings.TrimPrefix(stmt, "CREATE UNIQUE INDEX "), "CREATE INDEX ")
	name, rest, ok := quoted(rest, quote)
	if !ok || !strings.HasPrefix(rest, " ON ") {
		return nil, fmt.Errorf("unexpected CREATE INDEX statement %.60q", stmt)
	}
	table, _, ok := quoted(rest[len(" ON "):], quote)
	if !ok {
		return nil, fmt.Errorf("unexpected CREATE INDEX statement %.60q", stmt)
	}
	return &ddlIndex{name: name, table: table, create: stmt}, nil
}

// splitTop splits a CREATE TABLE body at the commas outside parentheses
// and quotes.
func splitTop(body string) []string {
	var parts []string
	depth, start := 0, 0
	var inQuote byte
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '`' || c == '"' || c == '\'':
			inQuote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, strings.TrimSpace(body[start:i]))
			start = i + 1
		}
	}
	return append(parts, strings.TrimSpace(body[start:]))
}

// planUpgrade returns the statements that turn a store created from the
// DDL from into one equal to the DDL to, when every difference is
// additive: a new table, a new column that existing rows can do without
// (nullable, or NOT NULL with a default), a new, changed or dropped index
// (an index holds no data). Anything else — a dropped table or column, a
// changed column definition, a new NOT NULL column without a default, a
// new or changed table constraint (primary key, foreign key) — is an error
// that names it: the data would need converting, which this build does not
// do.
func planUpgrade(from, to string, entDialect string) ([]string, error) {
	quote := byte('`')
	if entDialect == dialect.Postgres {
		quote = '"'
	}
	q := func(name string) string { return string(quote) + name + string(quote) }
	old, err := parseDDL(from, quote)
	if err != nil {
		return nil, fmt.Errorf("the older schema: %w", err)
	}
	cur, err := parseDDL(to, quote)
	if err != nil {
		return nil, fmt.Errorf("this build's schema: %w", err)
	}
	var problems, steps []string
	for _, t := range old.tables {
		if cur.table(t.name) == nil {
			problems = append(problems, fmt.Sprintf("table %s is dropped", t.name))
		}
	}
	for _, t := range cur.tables {
		was := old.table(t.name)
		if was == nil {
			steps = append(steps, t.create)
			continue
		}
		if strings.Join(was.constraints, ", ") != strings.Join(t.constraints, ", ") {
			problems = append(problems, fmt.Sprintf("the constraints of table %s change from %q to %q",
				t.name, strings.Join(was.constraints, ", "), strings.Join(t.constraints, ", ")))
		}
		for _, c := range was.columns {
			now, ok := t.column(c.name)
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("column %s.%s is dropped", t.name, c.name))
			case now.def != c.def:
				problems = append(problems, fmt.Sprintf("column %s.%s changes from %q to %q", t.name, c.name, c.def, now.def))
			}
		}
		for _, c := range t.columns {
			if _, ok := was.column(c.name); ok {
				continue
			}
			if why := notAddable(c.def); why != "" {
				problems = append(problems, fmt.Sprintf("new column %s.%s (%s) %s", t.name, c.name, c.def, why))
				continue
			}
			steps = append(steps, "ALTER TABLE "+q(t.name)+" ADD COLUMN "+q(c.name)+" "+c.def+";")
		}
	}
	var drops, creates []string
	for _, ix := range old.indexes {
		now := cur.index(ix.name)
		if now == nil || now.create != ix.create {
			if cur.table(ix.table) != nil { // a dropped table is a problem above
				drops = append(drops, "DROP INDEX "+q(ix.name)+";")
			}
		}
	}
	for _, ix := range cur.indexes {
		if was := old.index(ix.name); was == nil || was.create != ix.create {
			creates = append(creates, ix.create)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("the change is not additive: %s", strings.Join(problems, "; "))
	}
	steps = append(steps, drops...)
	return append(steps, creates...), nil
}

// notAddable says why a new column cannot be added to a table that has
// rows ("" when it can).
func notAddable(def string) string {
	upper := " " + strings.ToUpper(def) + " "
	for _, word := range []string{" PRIMARY KEY ", " UNIQUE ", " AUTOINCREMENT ", " GENERATED ", " REFERENCES "} {
		if strings.Contains(upper, word) {
			return "is" + strings.ToLower(word) + "column, which ALTER TABLE ADD COLUMN cannot add"
		}
	}
	if strings.Contains(upper, " NOT NULL ") && !strings.Contains(upper, " DEFAULT ") {
		return "is NOT NULL without a default, so the existing rows would have no value for it (make it Optional or give it a Default)"
	}
	return ""
}

// upgradeSteps returns the statements that upgrade a store recorded at
// version have to want (whose DDL is current), or the error that refuses
// it: an unknown version, a change that is not additive, or (noUpgrade) a
// command that only reads. what is "file" or "database", for messages.
func upgradeSteps(hist snapshots, have, want, current, entDialect, location, what string, noUpgrade bool) ([]string, error) {
	leave := "so it leaves the " + what + " untouched"
	older, ok := hist[have]
	if !ok {
		return nil, fmt.Errorf("%w: %s has store schema %.12s, this build uses %.12s and upgrades only from the %d released older schema(s) it carries; "+
			"%.12s is none of them (a newer build's, or an unreleased one's), %s. "+
			"Use the build that wrote it, or set %s to another %s to start a new store",
			ErrSchemaMismatch, location, have, want, len(hist), have, leave, EnvDB, what)
	}
	steps, err := planUpgrade(older, current, entDialect)
	if err != nil {
		return nil, fmt.Errorf("%w: %s has store schema %.12s, a released schema this build knows, but it cannot upgrade it to %.12s: %v; %s. "+
			"Use the build that wrote it, or set %s to another %s to start a new store",
			ErrSchemaMismatch, location, have, want, err, leave, EnvDB, what)
	}
	if noUpgrade {
		return nil, fmt.Errorf("%w: %s has store schema %.12s, older than this build's %.12s; this command only reads, so it does not upgrade it (%s). "+
			"Run `interop-runtime serve` once: it upgrades the store in one transaction when it opens it, keeping every row",
			ErrUpgradeNeeded, location, have, want, describeSteps(steps))
	}
	return steps, nil
}

// describeSteps summarises upgrade statements for people: "adds column
// conversations.max_messages, index x".
func describeSteps(steps []string) string {
	var tables, columns, indexes int
	for _, s := range steps {
		switch {
		case strings.HasPrefix(s, "CREATE TABLE"):
			tables++
		case strings.HasPrefix(s, "ALTER TABLE"):
			columns++
		default:
			indexes++
		}
	}
	return fmt.Sprintf("%d additive step(s): %d new table(s), %d new column(s), %d index change(s)", len(steps), tables, columns, indexes)
}
