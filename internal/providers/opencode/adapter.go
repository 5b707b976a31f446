// Package opencode is the OpenCode provider adapter: it drives `opencode
// serve` over its HTTP API and one Server-Sent Events stream.
//
// # Finding a server
//
// The adapter talks to OPENCODE_SERVER_URL when set; a remote (non-loopback)
// URL must use HTTPS (unless OPENCODE_ALLOW_INSECURE_REMOTE=1) and carry
// credentials, and is never silently replaced by a local server. A loopback
// URL that does not answer is replaced only until it first answers: once it
// did, the adapter keeps to it (its sessions live there) and calls fail with
// a *ConnectError until it answers again. Otherwise it tries
// http://127.0.0.1:4096, then the loopback listeners of /proc/net/tcp
// and /proc/net/tcp6 that answer GET /global/health as OpenCode, then starts
// `opencode serve --hostname 127.0.0.1 --port <free> --pure` in its own
// process group and reuses it (starting it again if it dies) unless
// OPENCODE_AUTO_START=false. HTTP Basic credentials (OPENCODE_SERVER_USERNAME,
// default "opencode", and OPENCODE_SERVER_PASSWORD) go with every request,
// the event stream included. Redirects are refused, answers must be JSON
// (unknown routes answer 200 text/html), and the server's three error-body
// shapes become an *APIError with secrets redacted.
//
// # Sessions, prompts and outcomes
//
// One server serves many directories: sessions are listed across all of
// them with GET /experimental/session and every session-scoped call carries
// ?directory=<the session's directory>. A prompt goes through
// POST /session/:id/prompt_async; its 204 only means the transport accepted
// it, so Send returns a queued receipt and the adapter follows the session
// on GET /global/event: an error (session.error, or an assistant message
// carrying one) turns the receipt rejected with the provider's reason, and
// the end of the turn (session.idle, or the final assistant message
// completing) turns it completed, both through providers.Host.ReportOutcome.
//
// The adapter keeps ONE /global/event connection and fans its events out to
// the sessions subscribed, attributing each event to a session by the
// sessionID found in the event (upstream rule AI-06) and dropping events of
// other sessions or of none.
package opencode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
)

// AdapterVersion is reported in the capability record.
const AdapterVersion = "1.0.0"

var errClosed = errors.New("opencode adapter is closed")

// Adapter is the OpenCode provider adapter. It is safe for concurrent use.
type Adapter struct {
	cfg   Config
	host  providers.Host
	clock quartz.Clock

	// The HTTP clients are built on first use (clients), not with the
	// adapter: cloning net/http's transport sets up its HTTP/2 support,
	// which serving never needs until OpenCode is called.
	httpOnce  sync.Once
	httpBuilt atomic.Bool
	http      *http.Client // reads and the event stream
	writeHTTP *http.Client // prompts, aborts and replies

	epMu    sync.Mutex // guards ep, managed, held and startedOwn; held while resolving
	ep      *endpoint
	managed *managedServer
	// starting counts the resolves under way: finding a server or
	// starting one (the Starting role).
	starting atomic.Int32
	// held is the first server found that this adapter did not start:
	// its sessions live there, so once it answered it is the only one
	// used again after a loss (never another listener in its place).
	held *endpoint
	// startedOwn is set once the adapter started a server itself: when
	// that one dies it is started again, never replaced by a listener.
	startedOwn bool
	// none is the last answer that no server runs and none can be started
	// (nil when there is none), given again until noneUntil on the clock.
	none      error
	noneUntil time.Time
	closed    atomic.Bool

	mu       sync.Mutex
	dirs     map[string]string    // session id → directory
	variants map[string]string    // session id → reasoning variant for the next prompts
	permSeen map[string]time.Time // permission id → first seen

	msgIDs messageIDs
	hub    *hub
}

var _ providers.Adapter = (*Adapter)(nil)

// New returns an adapter. Nothing is contacted until the first call.
// host receives the outcomes of queued prompts; it may be nil.
func New(cfg Config, host providers.Host) *Adapter {
	cfg = cfg.withDefaults()
	a := &Adapter{
		cfg:      cfg,
		host:     host,
		clock:    cfg.Clock,
		dirs:     map[string]string{},
		variants: map[string]string{},
		permSeen: map[string]time.Time{},
	}
	a.hub = newHub(a)
	return a
}

// clients returns the read and the write HTTP client, built the first time.
func (a *Adapter) clients() (read, write *http.Client) {
	a.httpOnce.Do(func() {
		a.http, a.writeHTTP = newHTTPClients(a.cfg.Transport)
		a.httpBuilt.Store(true)
	})
	return a.http, a.writeHTTP
}

// ID returns providers.OpenCode.
func (a *Adapter) ID() providers.ID { return providers.OpenCode }

// Close stops the event stream and any server the adapter started.
func (a *Adapter) Close() error {
	if a.closed.Swap(true) {
		return nil
	}
	a.hub.close()
	// Pooled keep-alive connections (two goroutines each) would otherwise
	// stay open to a server this adapter no longer uses.
	if a.httpBuilt.Load() {
		a.http.CloseIdleConnections()
	}
	a.epMu.Lock()
	defer a.epMu.Unlock()
	if a.managed != nil {
		a.managed.stop()
		a.managed = nil
	}
	a.ep = nil
	return nil
}

// Endpoint returns the base URL of the server in use, resolving it (and
// possibly starting a server) when needed.
func (a *Adapter) Endpoint(ctx context.Context) (string, error) {
	ep, err := a.current(ctx)
	if err != nil {
		return "", err
	}
	return ep.base, nil
}

// Capabilities reports what works now, contacting (or starting) the server.
func (a *Adapter) Capabilities(ctx context.Context) providers.Capabilities {
	c := providers.Capabilities{
		Provider:       providers.OpenCode,
		AdapterVersion: AdapterVersion,
		Authorization:  "unknown",
		Limitations: []string{
			"prompt_async only confirms transport acceptance; completion is observed on the event stream",
			"steer is delivered as a normal prompt (OpenCode has no separate steer contract)",
			"model and reasoning apply per prompt; there is no session model mutation",
			"diffs are per user turn (GET /session/:id/diff?messageID=)",
		},
	}
	ep, err := a.current(ctx)
	c.Program = a.programPath()
	if err != nil {
		reason, fix := err.Error(), "set OPENCODE_SERVER_URL or npm i -g opencode-ai@"+PinnedVersion
		var ce *ConnectError
		if errors.As(err, &ce) {
			reason, fix = ce.Reason, ce.Fix
			if ce.Unauthorized {
				c.Authorization = "unauthorized"
			}
		}
		down := providers.Capability{Supported: true, State: providers.Unavailable, Transport: "http", Reason: reason, Fix: fix}
		c.Discovery, c.Sessions, c.SendMessage, c.Steer = down, down, down, down
		c.Cancel, c.Events, c.Diff, c.Permissions, c.Reasoning = down, down, down, down, down
		c.Model = modelCapability()
		return c
	}
	c.ProviderVersion = ep.version
	c.Authorization = "authorized"
	avail := func(protocol string) providers.Capability {
		return providers.Capability{Supported: true, State: providers.Available, Transport: "http", Protocol: protocol}
	}
	c.Discovery = avail("GET /experimental/session (every directory) at " + ep.base)
	c.Sessions = avail("POST /session?directory=; GET /session/:id")
	c.SendMessage = avail("POST /session/:id/prompt_async; transport acceptance only")
	c.Steer = avail("POST /session/:id/prompt_async (same as send)")
	c.Steer.State = providers.Degraded
	c.Steer.Reason = "OpenCode has no separate steer contract; a steer is queued as a normal prompt"
	c.Cancel = avail("POST /session/:id/abort")
	c.Events = avail("GET /global/event (one SSE stream per adapter, fanned out per session)")
	c.Diff = avail("GET /session/:id/diff?messageID=<latest user message>")
	c.Permissions = avail("GET /permission; POST /permission/:id/reply")
	c.Reasoning = avail("model variant on the next prompt_async")
	c.Model = modelCapability()
	if ep.version != PinnedVersion {
		c.Limitations = append(c.Limitations, fmt.Sprintf("tested with OpenCode %s; server reports %s", PinnedVersion, ep.version))
	}
	return c
}

// Roles implements providers.Adapter: liveness from the event stream,
// the stored-message history and the health handshake.
func (a *Adapter) Roles() providers.Roles {
	return providers.Roles{Liveness: a, History: a, Handshake: a, Starting: startReporter{a}}
}

// Probe finds a usable server the way every call does (and starts one
// unless starting is disabled) and checks it with GET /global/health: the
// handshake `interop-runtime doctor` reports. A server the adapter started
// is stopped by Close.
func (a *Adapter) Probe(ctx context.Context) error {
	if _, err := a.current(ctx); err != nil {
		return fmt.Errorf("opencode: %w", err)
	}
	return nil
}

// programPath is the path of the server program this adapter started, else
// the one it would start, if found.
func (a *Adapter) programPath() string {
	a.epMu.Lock()
	defer a.epMu.Unlock()
	if a.managed != nil {
		return a.managed.program
	}
	if p, err := exec.LookPath(a.cfg.Program); err == nil {
		return p
	}
	return ""
}

// modelReason is upstream's reason for not supporting SetModel, naming
// the modern tool (and its 0.3.x name).
const modelReason = "OpenCode does not expose a validated native session model mutation; provide model in the next send_session_message request (agent_send in 0.3.x)"

func modelCapability() providers.Capability {
	return providers.Capability{
		Supported: false, State: providers.Unavailable, Transport: "http",
		Protocol: "model {providerID, modelID} per prompt_async",
		Reason:   modelReason,
		Fix:      "pass model on send_session_message instead of setting it on the session",
	}
}

// rememberDir records a session's directory.
func (a *Adapter) rememberDir(id, dir string) {
	if id == "" || dir == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.dirs) > 50000 {
		a.dirs = map[string]string{}
	}
	a.dirs[id] = dir
}

func (a *Adapter) knownDirs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, d := range a.dirs {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
