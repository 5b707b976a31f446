// Package freebuff is the Freebuff provider: a [Service] that answers the
// fifteen Freebuff tools (list_projects … set_thread_reasoning) and an
// [Adapter] that plugs Freebuff threads into the provider registry as
// native sessions.
//
// Freebuff runs in one of two shapes, each driven by its own backend
// package, and the service picks whichever it finds on every call:
//
//   - Desktop (package desktop): the Electron app's Bun orchestrator on a
//     127.0.0.1 port, over HTTP with the per-launch header
//     x-freebuff-launch-id, and its SSE event stream for live progress.
//   - CLI (package cli): the freebuff terminal UI in a managed
//     pseudo-terminal, with its history read from ~/.config/manicode.
//
// Package core holds what the service and both backends share (records,
// errors, Config). The arrows point one way: freebuff → desktop, cli →
// core; neither backend imports the service.
//
// Nothing is fabricated: when neither shape is found, or writes cannot be
// authorized, every answer says so with the reason.
package freebuff
