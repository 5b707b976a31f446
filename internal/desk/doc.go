// Package desk is the traffic desk: a local web page over the runtime's
// store that shows which provider sessions exist and how they
// are doing, the receipts of every send, cancel and permission answer, the
// work items with their dependency graph, evidence, handoffs and reviews,
// the active claims (with refused, conflicting requests highlighted), the
// conversations, and a session's event stream, live.
//
// It is served by `interop-runtime desk` on its own loopback listener and
// at /desk on the HTTP server of `serve --http`. Both read the same store,
// so the page shows what every runtime process on the machine recorded,
// including a `serve` running over stdio in a client (SQLite in WAL mode
// lets the desk read while that process writes).
//
// # Access
//
// Every route, the static assets included, is screened by an
// [httpguard.Guard] (Host must name loopback, Origin must be the desk's own)
// and then needs a credential, with a rate limit per desk session or bearer
// token and one per address for failed sign-ins: the bearer token of HTTP
// mode (or the per-boot token file's), or the desk's session cookie
// (HttpOnly, SameSite=Strict, named after the port). A browser gets the
// cookie from a one-time login link that the command prints to stderr, or
// by pasting the token into the sign-in form. Requests a browser makes on
// behalf of another page (Sec-Fetch-Site same-site or cross-site, other
// than a top-level navigation) are refused too, so a page on another local
// port can neither read nor embed the desk.
//
// # Actions
//
// Inside serve --http (Options.Tools, never with Options.ReadOnly) a
// signed-in person can answer a pending permission request, cancel a turn
// and release a claim; the stand-alone desk (Options.NoProviders) can only
// release a claim, and refuses the others with a sentence saying where to
// act. Each is the MCP tool of the same name, decoded by
// its catalog entry and run by the runtime's handlers (act.go), so it goes
// through the delivery ledger or the claims service like a tool call. A
// POST needs the cookie, the desk's own Origin, Sec-Fetch-Site
// same-origin and the session's form token; anything else is 403 before
// the body is read.
//
// # Rendering
//
// Pages are server-rendered by Go functions (html_pages.go, html_rows.go)
// over [markup.Writer], not html/template: text/template's executor calls
// reflect's MethodByName with a run-time name, which makes the linker keep
// every exported method of every reachable type (issue 21; the archtest
// TestNoReflectMethodInTheBinary, the linker step of scripts/test.sh,
// fails when any such lookup is linked again). Markup comes
// only from constants; every value is escaped for its context exactly as
// html/template escaped it (a prompt or a file name shaped like HTML is
// shown as text), and a URL that a value starts is filtered to the desk's
// own paths. The front end is htmx with its SSE extension and, on work
// item pages only, Mermaid for the dependency graph; the three are vendored
// from npm at pinned versions (assets/vendor.sh) and embedded, and the
// Content-Security-Policy lets the page load nothing but its own origin.
// Nothing is built at package initialisation, so linking the desk into the
// binary adds no start-up work to `serve` over stdio.
//
// # Reads
//
// Every view is one keyset page on indexed columns through ent, the same
// on SQLite and on a PostgreSQL team store: the services' own paged reads
// where they answer what a view shows (work items, conversations, a
// conversation's messages, a session's events), keyset queries of the
// same form for the rest. A session's liveness comes from the runtime
// that serves the page when it drives the session (serve --http, through
// Options.Liveness: the sessions of its own operations, runtimeSessions),
// else it is inferred from the store, and the page says which (see
// deriveLiveness); the counts per liveness follow the same rule. A list's
// rows and counts are read in one read transaction (reader.snapshot).
//
// # Live updates
//
// One change feed per desk polls a change counter of the store (SQLite's
// PRAGMA data_version, PostgreSQL's pg_current_snapshot()), a statement
// that reads no table, on a dedicated connection. When it moves, each open
// Server-Sent Events stream re-reads only its own view's first page and
// pushes what changed, as htmx out-of-band swaps. Every event carries an
// id (a digest of the list shown, or an event or message sequence), so a
// dropped connection resumes from its cursor (Last-Event-ID).
package desk
