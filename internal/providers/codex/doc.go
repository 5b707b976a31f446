// Package codex is the provider adapter for OpenAI Codex: it drives
// `codex app-server` over newline-delimited JSON-RPC on the process's stdio.
//
// The adapter starts the app-server on first use (program from
// [Config.Program], the CODEX_APP_SERVER_COMMAND environment variable, or
// `codex` on PATH) in its own process group, and kills the whole group when
// it closes. Threads are the sessions: thread/list, thread/read, thread/start
// and thread/resume discover and open them; turn/start sends a prompt (the
// receipt is queued with the turn id as its Ref, and turn/completed later
// reports completed or rejected through the [providers.Host]); turn/interrupt
// cancels. Approval requests from the server are held as
// [providers.PermissionRequest]s until RespondPermission answers them with one
// of the decisions they offered. The latest turn/diff/updated per thread is
// the session diff.
//
// When the app-server process dies (or its connection is lost), nothing in
// flight is sent again: every affected turn is reported as delivery_unknown,
// each affected session gets a [providers.EventProviderRestarted] event with
// the reason, the open subscriptions end (the registry reopens them, counting
// a new epoch) and the process is started again.
package codex
