// Command schemagen writes internal/store/schema.sql: the DDL that ent's
// migration produces for an empty SQLite database. The runtime creates its
// store from that file, so the served binary does not link ent's migration
// engine (atlas) and its start-up cost. Run it with `go generate
// ./internal/store`; a store test fails when the file is stale.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agent-interop/runtime/internal/store/internal/ddl"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: schemagen OUTPUT.sql")
		os.Exit(2)
	}
	sql, err := ddl.Generate(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], sql, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
