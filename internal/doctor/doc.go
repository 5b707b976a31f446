// Package doctor checks what the runtime can reach on this computer and
// says, for anything that does not work, why and what to try: the
// `interop-runtime doctor` command.
//
// For every provider, in registry order, [Run] reports the program found
// (path and version), the result of a bounded protocol handshake (for an
// adapter that declares the handshake role, [Prober]: codex app-server initialize, the ACP
// agent's initialize, OpenCode's GET /global/health, Freebuff discovery),
// and every capability the adapter reports, with the exact reason and a
// concrete fix when it is not available. It also opens the state store with
// its integrity check and reports the schema version and any recovery
// record.
//
// Everything is bounded: one deadline for the whole run (cleanup included),
// one per provider, and ctx. A provider that does not answer in time is
// reported as timed out without delaying the others. Run closes every
// adapter it was given before it returns, so no provider process it caused
// to start outlives it. Nothing here touches the network beyond what the
// adapters do on loopback.
//
// [Render] prints the human table and [RenderJSON] the compact JSON form.
package doctor
