package httpserve

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/quartz"
)

// idleConns closes the keep-alive connections that wait too long for their
// next request, in place of http.Server.IdleTimeout. net/http applies
// IdleTimeout as a read deadline set after every answer, so every request
// arms a runtime timer on the connection, and a pending timer makes the Go
// scheduler read the clock each time it looks for work while the server
// waits for the client: 5–6% of serve-http's CPU per trivial call on a
// 2-core machine (docs/benchmarks.md, "The HTTP floor"). Here the
// server's ConnState hook stamps each connection when it turns idle and a
// ticker closes those idle for ConnIdle or more: the same bound, checked
// every ConnIdle/4, so a connection is closed between ConnIdle and 1.25 ×
// ConnIdle after its last answer, with no timer per request.
//
// A request that arrives in the instant its connection is closed is lost
// as it would be when net/http's deadline fires: the client sees the
// connection closed and opens another.
type idleConns struct {
	clock quartz.Clock
	mu    sync.Mutex
	since map[net.Conn]time.Time // idle connections, since when
}

func newIdleConns(clock quartz.Clock) *idleConns {
	return &idleConns{clock: clock, since: map[net.Conn]time.Time{}}
}

// track is the http.Server's ConnState hook: an idle connection is stamped,
// any other state forgets it (active: a request is being read or
// answered; hijacked or closed: no longer the server's).
func (c *idleConns) track(conn net.Conn, state http.ConnState) {
	switch state {
	case http.StateIdle:
		now := c.clock.Now()
		c.mu.Lock()
		c.since[conn] = now
		c.mu.Unlock()
	case http.StateActive, http.StateHijacked, http.StateClosed:
		c.mu.Lock()
		delete(c.since, conn)
		c.mu.Unlock()
	}
}

// closeIdle closes the connections idle for after or longer and returns
// how many it closed.
func (c *idleConns) closeIdle(after time.Duration) int {
	now := c.clock.Now()
	var stale []net.Conn
	c.mu.Lock()
	for conn, since := range c.since {
		if now.Sub(since) >= after {
			stale = append(stale, conn)
			delete(c.since, conn)
		}
	}
	c.mu.Unlock()
	for _, conn := range stale {
		_ = conn.Close() // net/http's read of the next request fails, and it lets the connection go
	}
	return len(stale)
}

// count is the number of idle connections.
func (c *idleConns) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.since)
}
