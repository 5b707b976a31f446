package opencode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers/kit/supervise"
)

// Endpoint sources, in the order they are tried.
const (
	sourceConfigured = "configured" // OPENCODE_SERVER_URL
	sourceDefault    = "default"    // 127.0.0.1:4096
	sourceDiscovered = "discovered" // a loopback listener found in /proc/net
	sourceStarted    = "started"    // opencode serve started by this adapter
)

// endpoint is the server the adapter currently talks to.
type endpoint struct {
	base    string // URL without trailing slash
	version string // from /global/health
	source  string
}

// ConnectError says why no OpenCode server is usable, with a fix to try.
type ConnectError struct {
	Reason       string
	Fix          string
	Unauthorized bool
	// NotStarted says no server answered and none was started because
	// starting one is disabled (OPENCODE_AUTO_START=false or
	// Config.NoStartReason).
	NotStarted bool
	// settled says nothing was started or found and nothing would be if
	// asked again right away (no server answered, and starting one is
	// disabled or the program is missing): the answer is kept for
	// noServerTTL.
	settled bool
}

// noServerTTL is how long the answer that no OpenCode server runs (and
// none can be started) is given again without looking: a listing right
// after another one does not probe and scan again.
const noServerTTL = 2 * time.Second

func (e *ConnectError) Error() string { return e.Reason }

// HandshakeSkipped reports whether the handshake was not attempted because
// no server runs and starting one is disabled (doctor reports it as
// skipped rather than failed).
func (e *ConnectError) HandshakeSkipped() bool { return e.NotStarted }

// health is the answer of GET /global/health.
type health struct {
	Healthy bool   `json:"healthy"`
	Version string `json:"version"`
}

// probe checks that base is an OpenCode server and returns its version,
// waiting at most ProbeTimeout (for candidates that may not be OpenCode at
// all).
func (a *Adapter) probe(ctx context.Context, base string) (string, error) {
	return a.probeWithin(ctx, base, a.cfg.ProbeTimeout)
}

// probeWithin is probe with its own bound. A server the user named, or one
// that answered before, gets the request timeout: a busy server on a loaded
// machine can take seconds to answer, and that is not a missing server.
func (a *Adapter) probeWithin(ctx context.Context, base string, d time.Duration) (string, error) {
	ctx, cancel := clockctx.WithTimeout(ctx, a.clock, d, "opencode", "probe")
	defer cancel()
	var h health
	if _, err := a.do(ctx, base, request{method: http.MethodGet, path: "/global/health", out: &h}); err != nil {
		return "", err
	}
	if !h.Healthy || h.Version == "" {
		return "", fmt.Errorf("%s/global/health did not answer {healthy:true, version} (not an OpenCode server?)", base)
	}
	return h.Version, nil
}

func isUnauthorized(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusUnauthorized
}

// current returns the endpoint, resolving it when there is none or when the
// server this adapter started has died (it is then started again).
func (a *Adapter) current(ctx context.Context) (*endpoint, error) {
	a.epMu.Lock()
	defer a.epMu.Unlock()
	if a.closed.Load() {
		return nil, errClosed
	}
	if a.ep != nil && (a.ep.source != sourceStarted || (a.managed != nil && a.managed.alive())) {
		return a.ep, nil
	}
	a.ep = nil
	var ep *endpoint
	var err error
	switch {
	case a.held != nil:
		ep, err = a.reconnect(ctx, a.held)
	case a.startedOwn:
		// The server this adapter started died: it is started again (its
		// sessions are in the same data), never replaced by a listener.
		ep, err = a.startInstead(ctx, "the OpenCode server this runtime started is gone")
	case a.none != nil && a.clock.Now().Before(a.noneUntil):
		return nil, a.none
	default:
		ep, err = a.resolve(ctx)
	}
	var ce *ConnectError
	if errors.As(err, &ce) && ce.settled {
		a.none, a.noneUntil = err, a.clock.Now().Add(noServerTTL)
	}
	if err != nil {
		return nil, err
	}
	a.none = nil
	if ep.source == sourceStarted {
		a.startedOwn = true
	} else {
		a.held = ep
	}
	a.ep = ep
	return ep, nil
}

// reconnect probes the server this adapter used before it was lost. No
// other server takes its place: its sessions are not on another one (a
// send there would be refused, "Session not found", or reach a stranger's
// session of the same id), so until it answers again calls fail, saying
// so.
func (a *Adapter) reconnect(ctx context.Context, held *endpoint) (*endpoint, error) {
	v, err := a.probeWithin(ctx, held.base, a.cfg.RequestTimeout)
	if err != nil {
		return nil, &ConnectError{
			Reason:       fmt.Sprintf("the OpenCode server at %s (%s), where this runtime found its OpenCode sessions, stopped answering: %v; no other server is used in its place", held.base, held.source, err),
			Fix:          "start that OpenCode server again at the same address, or restart the runtime to look for another",
			Unauthorized: isUnauthorized(err),
		}
	}
	return &endpoint{base: held.base, version: v, source: held.source}, nil
}

// invalidate forgets ep after a connection failure so the next call
// resolves again.
func (a *Adapter) invalidate(ep *endpoint) {
	a.epMu.Lock()
	defer a.epMu.Unlock()
	if a.ep == ep {
		a.ep = nil
	}
}

// resolve finds a server: the configured URL (a remote one is never
// replaced), the default URL, loopback listeners, then a started server.
// It runs until one answered; after that, current reconnects to it only.
func (a *Adapter) resolve(ctx context.Context) (*endpoint, error) {
	a.starting.Add(1)
	defer a.starting.Add(-1)
	var tried []string
	seen := map[string]bool{}
	if a.cfg.ServerURL != "" {
		base, loopback, err := normalizeURL(a.cfg.ServerURL, a.cfg.Password != "", a.cfg.AllowInsecureRemote)
		if err != nil {
			return nil, &ConnectError{Reason: err.Error(), Fix: "fix OPENCODE_SERVER_URL (and OPENCODE_SERVER_USERNAME/OPENCODE_SERVER_PASSWORD)"}
		}
		v, err := a.probeWithin(ctx, base, a.cfg.RequestTimeout)
		if err == nil {
			return &endpoint{base: base, version: v, source: sourceConfigured}, nil
		}
		if !loopback || isUnauthorized(err) {
			return nil, &ConnectError{
				Reason:       fmt.Sprintf("OpenCode server %s from OPENCODE_SERVER_URL is not usable: %v; a configured server is never replaced by another one", base, err),
				Fix:          "start the server at OPENCODE_SERVER_URL, fix OPENCODE_SERVER_USERNAME/OPENCODE_SERVER_PASSWORD, or unset OPENCODE_SERVER_URL",
				Unauthorized: isUnauthorized(err),
			}
		}
		tried = append(tried, fmt.Sprintf("%s (%v)", base, err))
		seen[base] = true
	}
	// The default URL and the loopback listeners are probed together (the
	// default URL wins when it answers): the listing waits for the slower
	// of the two, not for their sum.
	var scanned chan *endpoint
	stopScan := func() {}
	if !a.cfg.DisableScan {
		skip := map[string]bool{a.cfg.DefaultURL: true}
		for b := range seen {
			skip[b] = true
		}
		sctx, cancel := context.WithCancel(ctx)
		scanned = make(chan *endpoint, 1)
		go func() { scanned <- a.scan(sctx, skip) }()
		stopScan = func() { cancel(); <-scanned }
	}
	if owner, ok := foreignOwner(a.cfg.ProcNetFiles, a.cfg.DefaultURL, a.cfg.UID()); ok && !seen[a.cfg.DefaultURL] {
		tried = append(tried, fmt.Sprintf("%s (another user's server, uid %d: not probed)", a.cfg.DefaultURL, owner))
		seen[a.cfg.DefaultURL] = true
	}
	if !seen[a.cfg.DefaultURL] {
		v, err := a.probe(ctx, a.cfg.DefaultURL)
		if err == nil {
			stopScan()
			return &endpoint{base: a.cfg.DefaultURL, version: v, source: sourceDefault}, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%v)", a.cfg.DefaultURL, err))
		seen[a.cfg.DefaultURL] = true
	}
	if scanned != nil {
		if ep := <-scanned; ep != nil {
			return ep, nil
		}
		tried = append(tried, listenerSource(a.cfg.ProcNetFiles))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("looking for an OpenCode server: %w", err)
	}
	return a.startInstead(ctx, "no OpenCode server answered at "+strings.Join(tried, "; "))
}

// startInstead starts a server when none answered (none says where it
// looked), unless starting one is disabled.
func (a *Adapter) startInstead(ctx context.Context, none string) (*endpoint, error) {
	if a.cfg.DisableAutoStart || a.cfg.NoStartReason != "" {
		why := "automatic start is disabled (OPENCODE_AUTO_START=false)"
		if a.cfg.NoStartReason != "" {
			why = a.cfg.NoStartReason
		}
		fix := "run `opencode serve --hostname 127.0.0.1 --port 4096` or set OPENCODE_SERVER_URL"
		if _, err := exec.LookPath(a.cfg.Program); err != nil {
			fix = "npm i -g opencode-ai@" + PinnedVersion + " (or set OPENCODE_COMMAND), then " + fix
		}
		return nil, &ConnectError{Reason: none + "; " + why, Fix: fix, NotStarted: true, settled: ctx.Err() == nil}
	}
	program, err := exec.LookPath(a.cfg.Program)
	if err != nil {
		return nil, &ConnectError{
			Reason:  fmt.Sprintf("%s, and the opencode program was not found (%v)", none, err),
			Fix:     "npm i -g opencode-ai@" + PinnedVersion + " (or set OPENCODE_COMMAND or OPENCODE_SERVER_URL)",
			settled: ctx.Err() == nil,
		}
	}
	return a.start(ctx, program)
}

// startReporter is the adapter's providers.StartReporter: the adapter is
// finding a server or starting one of its own (resolve). Finding one takes
// milliseconds when a server answers and none is busy; a resolve still
// under way at a listing's start grace is a probe of a server that does
// not answer promptly or an `opencode serve` starting (seconds).
type startReporter struct{ a *Adapter }

func (s startReporter) Starting() bool { return s.a.starting.Load() > 0 }

// candidate is a loopback listener worth probing.
type candidate struct {
	port int
	base string
}

// listenerScan bounds reading the system's listener table (lsof on
// macOS, the IP Helper table on Windows; /proc needs no bound).
const listenerScan = 5 * time.Second

// scan probes the loopback listeners of /proc/net/tcp{,6} and returns the
// OpenCode server on the lowest port, if any.
func (a *Adapter) scan(ctx context.Context, skip map[string]bool) *endpoint {
	const maxProbes, parallel = 64, 8
	var cands []candidate
	lctx, cancel := clockctx.WithTimeout(ctx, a.clock, listenerScan, "opencode", "listeners")
	defer cancel()
	for _, c := range loopbackListeners(lctx, a.cfg.ProcNetFiles, a.cfg.UID()) {
		if !skip[c.base] && len(cands) < maxProbes {
			cands = append(cands, c)
		}
	}
	type found struct {
		port    int
		base    string
		version string
	}
	var (
		mu   sync.Mutex
		best *found
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallel)
	)
	for _, c := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func(c candidate) {
			defer wg.Done()
			defer func() { <-sem }()
			v, err := a.probe(ctx, c.base)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if best == nil || c.port < best.port {
				best = &found{c.port, c.base, v}
			}
		}(c)
	}
	wg.Wait()
	if best == nil {
		return nil
	}
	return &endpoint{base: best.base, version: best.version, source: sourceDiscovered}
}

// stopGrace is how long a started server may take to end after SIGTERM
// before its process group is killed.
const stopGrace = 3 * time.Second

// managedServer is an `opencode serve` this adapter started.
type managedServer struct {
	proc     *supervise.Process
	program  string
	base     string
	exited   <-chan struct{}
	stopping atomic.Bool // stopped by the adapter, not lost
}

func (m *managedServer) alive() bool { return m.proc.Alive() }

// stop ends the server's process group: SIGTERM, then SIGKILL after
// stopGrace on the adapter's clock.
func (m *managedServer) stop() {
	m.stopping.Store(true)
	m.proc.Stop(supervise.Grace{AfterTerm: stopGrace})
}

// start runs `opencode serve --hostname 127.0.0.1 --port <free> --pure` in
// its own process group and waits for /global/health.
func (a *Adapter) start(ctx context.Context, program string) (*endpoint, error) {
	if a.managed != nil {
		a.managed.stop() // a dead or stale previous server
		a.managed = nil
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		ep, err := a.startOnce(ctx, program)
		if err == nil {
			return ep, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, &ConnectError{
		Reason: fmt.Sprintf("starting `%s serve` failed: %v", program, lastErr),
		Fix:    "run `opencode serve --hostname 127.0.0.1 --port 4096` yourself, or reinstall with npm i -g opencode-ai@" + PinnedVersion,
	}
}

func (a *Adapter) startOnce(ctx context.Context, program string) (*endpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	var extra []string
	if a.cfg.Password != "" {
		// Protect the started server with the configured credentials.
		extra = []string{"OPENCODE_SERVER_USERNAME=" + a.cfg.Username, "OPENCODE_SERVER_PASSWORD=" + a.cfg.Password}
	}
	proc, err := supervise.Start(supervise.Spec{
		Argv: []string{program, "serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port), "--pure"},
		Dir:  a.cfg.ServeDir, Env: a.cfg.ServeEnv, Extra: extra,
		Stdout: supervise.StdoutTail, TailBytes: 8 << 10, ParentDeath: true, Clock: a.clock,
	})
	if err != nil {
		return nil, err
	}
	m := &managedServer{proc: proc, program: program, base: "http://127.0.0.1:" + strconv.Itoa(port), exited: proc.Exited()}
	ready := make(chan struct{}) // the exit is a loss only once the server served
	go func() {
		<-m.exited
		select {
		case <-ready:
			a.managedExited(m)
		default:
		}
	}()

	wait, cancel := clockctx.WithTimeout(ctx, a.clock, a.cfg.StartTimeout, "opencode", "start")
	defer cancel()
	for {
		if v, err := a.probe(wait, m.base); err == nil {
			a.managed = m
			close(ready)
			return &endpoint{base: m.base, version: v, source: sourceStarted}, nil
		}
		tick := make(chan struct{})
		t := a.clock.AfterFunc(250*time.Millisecond, func() { close(tick) })
		select {
		case <-m.exited:
			t.Stop()
			return nil, fmt.Errorf("exited before answering (%v): %s", proc.State(), truncate(proc.Tail(), 500))
		case <-wait.Done():
			t.Stop()
			m.stop()
			return nil, fmt.Errorf("no answer on %s within %s: %s", m.base, a.cfg.StartTimeout, truncate(proc.Tail(), 500))
		case <-tick:
		}
	}
}
