// Package desktop drives Freebuff Desktop: an Electron app whose Bun
// orchestrator listens on an ephemeral 127.0.0.1 port and guards its API
// with the per-launch header x-freebuff-launch-id.
//
// [Backend] finds the orchestrator through a readiness file a deployment
// supplies (FREEBUFF_DESKTOP_READINESS_FILE), FREEBUFF_ORCHESTRATOR_URL +
// FREEBUFF_LAUNCH_ID, the orchestrator process itself (/proc/<pid>/environ
// and its listening loopback sockets, or the system's process list) and its
// stderr log. Reads need a reachable orchestrator; writes need a launch id
// verified through GET /healthz, the connection is refreshed before every
// write, and a write refused for authorization is retried exactly once
// after re-discovery. Live progress comes from the SSE stream GET
// /api/events into bounded per-thread buffers.
package desktop

import "time"

const (
	// ConnectionTTL is how long a discovered (or failed) connection is
	// reused for reads before discovery runs again. Writes always refresh.
	ConnectionTTL = 5 * time.Second
	// readinessMaxAge ignores readiness records older than this.
	readinessMaxAge = 10 * time.Minute
)

// Timer tags: tests trap these (quartz.Mock.Trap) to wait until a timer is
// armed.
const (
	TagBackoff = "freebuff-backoff" // the event stream's reconnect back-off
	TagWait    = "freebuff-wait"    // a bounded wait for progress
	TagRequest = "freebuff-request" // the bound of one request to the orchestrator
	TagProbe   = "freebuff-probe"   // the bound of one discovery or sign-in probe
)
