// Package freebuffsim holds simulated Freebuff peers for tests, faithful to
// the documented protocols (shared/reference/cursor-freebuff-protocols.md):
//
//   - [Desktop], a simulated Desktop orchestrator on a 127.0.0.1 ephemeral
//     port: the x-freebuff-launch-id check with the 401/403 bodies of three
//     app versions, /healthz, /api/projects, /api/thread/:id and its
//     message/stop/resume/agent/effort/close/rename/compact/changes routes,
//     POST /api/threads, the /api/events SSE stream (replay on connect,
//     per-thread seq, optional pings), launch-id rotation and restarts on a
//     new port, and switches for turns that fail, never run or hold, and for
//     writes whose connection is cut or that hang.
//   - cmd/fakefreebuff, a fake freebuff terminal UI driven through a real
//     PTY (Connecting, the model picker, the ready placeholder, login and
//     lock screens, bracketed paste, Esc, slash commands, session expiry,
//     --continue, and the on-disk history layout).
//   - cmd/fakedesktop, the Desktop simulator as a separate process, for
//     discovery through /proc.
//
// [Build] compiles those programs into a test's temporary directory.
package freebuffsim
