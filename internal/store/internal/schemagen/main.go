// Command schemagen writes the store's DDL files: the statements that ent's
// migration produces for an empty database, one file per SQL dialect
// (internal/store/schema.sql for SQLite, schema_postgres.sql for
// PostgreSQL). The runtime creates its store from those files, so the served
// binary does not link ent's migration engine (atlas) and its start-up cost.
// Run it with `go generate ./internal/store`; a store test fails when a file
// is stale.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agent-interop/runtime/internal/store/internal/ddl"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: schemagen sqlite3|postgres OUTPUT.sql")
		os.Exit(2)
	}
	sql, err := ddl.Generate(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], sql, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
