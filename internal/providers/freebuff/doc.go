// Package freebuff is the Freebuff provider: a [Service] that answers the
// fifteen Freebuff tools (list_projects … set_thread_reasoning) and an
// [Adapter] that plugs Freebuff threads into the provider registry as
// native sessions.
//
// Freebuff runs in one of two shapes, and the service drives whichever it
// finds:
//
//   - Desktop: an Electron app whose Bun orchestrator listens on an
//     ephemeral 127.0.0.1 port and guards its API with the per-launch header
//     x-freebuff-launch-id. The orchestrator is found through a readiness
//     file a deployment supplies (FREEBUFF_DESKTOP_READINESS_FILE),
//     FREEBUFF_ORCHESTRATOR_URL + FREEBUFF_LAUNCH_ID, the orchestrator
//     process itself (/proc/<pid>/environ and its listening loopback
//     sockets) and its stderr log. Reads need a reachable orchestrator;
//     writes need a launch id verified through GET /healthz, the connection
//     is refreshed before every write, and a write refused for authorization
//     is retried exactly once after re-discovery. Live progress comes from
//     the SSE stream GET /api/events into bounded per-thread buffers.
//   - CLI: the freebuff terminal UI, started in a managed pseudo-terminal
//     (github.com/creack/pty) in its own process group. Prompts are pasted
//     with bracketed paste, Esc stops a turn, an exact conversation is
//     resumed with --continue <id>, and history is read from
//     ~/.config/manicode/projects/<basename>/chats/<id>/.
//
// Nothing is fabricated: when neither shape is found, or writes cannot be
// authorized, every answer says so with the reason.
package freebuff
