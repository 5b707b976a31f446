package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Defaults of ServeOptions.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultConnIdle      = 2 * time.Minute
	DefaultSweepEvery    = time.Minute
	DefaultShutdownGrace = 10 * time.Second
	DefaultMaxHeaderSize = 64 << 10
)

// ServeOptions bound the HTTP server's connections. The body read time is
// the guard's (httpguard.Options.BodyTimeout).
type ServeOptions struct {
	// HeaderTimeout bounds reading a request's headers (slowloris).
	HeaderTimeout time.Duration
	// ConnIdle closes a keep-alive connection idle this long.
	ConnIdle time.Duration
	// SweepEvery is how often idle sessions are looked for.
	SweepEvery time.Duration
	// ShutdownGrace is how long in-flight requests may finish once ctx
	// ends, before connections are closed.
	ShutdownGrace time.Duration
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
}

// NewHTTPServer is the http.Server Serve runs: header read time, idle
// connections and header size bounded. It sets no WriteTimeout (answers
// stream for as long as a tool waits, at most 30 s of events) and no
// ReadTimeout (which would also cancel long handlers once it passes); the
// guard bounds each body's read time instead.
func NewHTTPServer(h http.Handler, o ServeOptions) *http.Server {
	o = o.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.HeaderTimeout,
		IdleTimeout:       o.ConnIdle,
		MaxHeaderBytes:    o.MaxHeaderBytes,
	}
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.ConnIdle <= 0 {
		o.ConnIdle = DefaultConnIdle
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderSize
	}
	return o
}

// Serve serves h on ln until ctx ends, sweeping idle sessions every
// SweepEvery on h's clock. Then it stops accepting, lets in-flight requests
// finish for up to ShutdownGrace, closes every session and returns.
//
// Keep-alive connections idle for ConnIdle are closed by a ticker on h's
// clock rather than by net/http's per-request deadline (see idleConns).
func Serve(ctx context.Context, ln net.Listener, h *Handler, o ServeOptions) error {
	o = o.withDefaults()
	srv := NewHTTPServer(h, o)
	idle := h.conns
	srv.IdleTimeout = -1 // no deadline per request: idle closes them (a negative value, not 0, which would fall back to ReadTimeout)
	srv.ConnState = idle.track
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()

	sweepCtx, stopSweeping := context.WithCancel(ctx)
	sweeper := h.clock.TickerFunc(sweepCtx, o.SweepEvery, func() error {
		h.Sweep()
		return nil
	}, "httpserve", "sweep")
	reaper := h.clock.TickerFunc(sweepCtx, o.ConnIdle/4, func() error {
		idle.closeIdle(o.ConnIdle)
		return nil
	}, "httpserve", "idle-conns")
	// A sweep in progress finishes before the sessions are closed.
	stopSweep := func() {
		stopSweeping()
		_ = sweeper.Wait() // the context's error: sweeping never fails
		_ = reaper.Wait()
	}
	select {
	case err := <-done:
		stopSweep()
		h.CloseAll()
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
		stopSweep()
		grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownGrace)
		err := srv.Shutdown(grace)
		cancel()
		h.CloseAll()
		if err != nil {
			_ = srv.Close()
		}
		<-done
		return nil
	}
}
