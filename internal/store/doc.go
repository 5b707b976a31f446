// Package store opens the runtime's coordination store: one SQLite file (pure
// Go, modernc.org/sqlite) behind the generated ent client.
//
// Open resolves nothing by itself; callers pass the path from [ResolvePath].
// Opening a file whose schema is current costs one small read of the file
// header and one query of the meta table: the ent migration (which inspects
// every table) runs only when the recorded schema version differs from the
// compiled one. A corrupt file is moved aside, never silently replaced, and
// the move is reported through [Store.Recovery]; a foreign database (another
// application's file) is refused. docs/store.md describes the rules.
//
// Every state change should run inside [Store.Tx], which executes one
// function in one write transaction (BEGIN IMMEDIATE on SQLite, so two
// runtime processes on the same file queue behind each other instead of
// failing with SQLITE_BUSY halfway through a transaction).
//
// The SQLite-specific pieces (DSN, file-header inspection, corruption error
// classification, side files) are in sqlite.go behind the small backend
// seam; everything else is dialect-neutral SQL or ent.
package store
