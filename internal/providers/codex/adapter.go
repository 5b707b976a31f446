package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/jsonrpc"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/kit/fanout"
	"github.com/agent-interop/runtime/internal/providers/kit/pending"
	"github.com/agent-interop/runtime/internal/providers/kit/startonce"
	"github.com/agent-interop/runtime/internal/providers/kit/supervise"
)

const (
	transport = "stdio"
	protocol  = "codex-app-server-jsonrpc"
	// subscriberBuffer bounds the events queued for one subscription; a
	// subscriber that falls this far behind is ended (the registry reopens
	// it, so the reader sees a new epoch rather than a silent hole).
	subscriberBuffer = 4096
	// recentTurns is how many finished turn ids (and diffs) a thread keeps.
	recentTurns = 16
)

var errAdapterClosed = errors.New("codex adapter is closed")

// Adapter is the Codex provider adapter. It is safe for concurrent use.
type Adapter struct {
	cfg Config
	// program is the app-server's command line, resolved on first use (a
	// PATH search), not when the adapter is built: serving starts without it.
	program func() program
	ids     atomic.Int64 // request ids, shared by every connection

	// starter runs one start at a time, detached from the call that
	// began it (bounded by StartTimeout, ended by Close).
	starter *startonce.Starter[*generation]

	mu      sync.Mutex
	closed  bool
	gen     *generation
	genN    int
	lastErr error
	lastTry time.Time
	threads map[string]*thread
	perms   map[string]*permission // by public request id
	// itemPaths are the files of recent fileChange items, by item id.
	itemPaths map[string][]string
	last      *generation // the last connection that ended
}

// generation is one connection to one app-server process.
type generation struct {
	n      int
	link   *Link
	conn   *jsonrpc.Conn
	loaded map[string]bool // threads started or resumed on this connection
	// inflight counts requests about a thread that were written and not
	// yet answered (turn/start, turn/interrupt).
	inflight map[string]int
	subs     *fanout.Hub // the threads' subscriptions
	closing  bool        // closed on purpose
	dead     bool
	diedAt   time.Time
	why      string        // why the connection ended, when it was lost
	ended    chan struct{} // closed after the death was handled
	// ops are the operations written on this connection whose outcome
	// was not observed: the active turns, interrupts and permission
	// answers; its loss settles them (pending.Tracker.Lost).
	ops pending.Tracker

	userAgent  string
	codexHome  string
	auth       string
	authDetail string
}

type thread struct {
	activeTurn string
	turnGen    *generation
	started    bool
	startedCh  chan struct{}
	finished   []string        // recently finished turn ids
	interrupts map[string]bool // turn ids with an interrupt requested
	diffs      []TurnDiff      // latest last
	model      string          // override for the next turns
	effort     string
	seen       time.Time             // last message about the thread
	turnFacts  map[string]*turnFacts // running turns' observed facts (turnfacts.go)
}

// TurnDiff is the latest diff codex reported for one turn of a thread
// (turn/diff/updated): a unified git-style diff of the workspace changes.
type TurnDiff struct {
	NativeID  string    `json:"nativeId"`
	TurnID    string    `json:"turnId"`
	Diff      string    `json:"diff"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// DiffResult is what Diff returns.
type DiffResult struct {
	NativeID string `json:"nativeId"`
	TurnID   string `json:"turnId,omitempty"`
	Diff     string `json:"diff"`
	// Observed is false when no turn/diff/updated was seen for the thread
	// since this runtime started (codex does not replay old diffs).
	Observed  bool       `json:"observed"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty"`
	Source    string     `json:"source"`
}

type permission struct {
	req     providers.PermissionRequest
	gen     *generation
	rawID   jsonrpc.ID
	answers map[string]json.RawMessage // option id -> response result
	replied bool
}

// New returns an adapter; the app-server starts on first use.
func New(cfg Config) *Adapter {
	c := cfg.withDefaults()
	a := &Adapter{
		cfg:     c,
		starter: startonce.New[*generation]("codex", c.Clock, c.StartTimeout, "codex", "start"),
		threads: map[string]*thread{},
		perms:   map[string]*permission{},
	}
	a.program = sync.OnceValue(func() program {
		argv, err := c.command()
		if err != nil {
			return program{err: err}
		}
		return program{argv: argv, endpoint: c.endpoint(argv)}
	})
	return a
}

// program is the resolved app-server command: its argv and the endpoint
// that names it, or why codex is not available.
type program struct {
	argv     []string
	endpoint string
	err      error
}

// ID implements providers.Adapter.
func (a *Adapter) ID() providers.ID { return providers.Codex }

// Endpoint names the app-server this adapter drives ("" when codex is missing).
func (a *Adapter) Endpoint() string { return a.program().endpoint }

// Roles implements providers.Adapter: sessions routed to the app-server
// that exposed them, liveness, thread/read history and the handshake.
func (a *Adapter) Roles() providers.Roles {
	return providers.Roles{Endpoints: a, Liveness: a, History: a, Handshake: a, Starting: a.starter}
}

// ForEndpoint implements providers.EndpointRouter: a session is served only
// by the app-server configuration that exposed it.
func (a *Adapter) ForEndpoint(_ context.Context, endpoint string) (providers.Adapter, error) {
	p := a.program()
	if endpoint == "" || endpoint == p.endpoint {
		return a, nil
	}
	if p.endpoint == "" {
		return nil, fmt.Errorf("session was exposed by %s, but codex is not available here: %w", endpoint, p.err)
	}
	return nil, fmt.Errorf("session was exposed by %s, which is not this runtime's codex endpoint (%s)", endpoint, p.endpoint)
}

// PID returns the pid of the running app-server (0 when none).
func (a *Adapter) PID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gen == nil || a.gen.dead {
		return 0
	}
	return a.gen.link.PID
}

// Probe starts the app-server when none runs and completes the initialize
// handshake (at most one start every RetryAfter after a failure): the
// handshake `interop-runtime doctor` reports. Close stops the process.
func (a *Adapter) Probe(ctx context.Context) error {
	if _, err := a.ensure(ctx); err != nil {
		return fmt.Errorf("codex app-server handshake: %w", err)
	}
	return nil
}

func (a *Adapter) thread(id string) *thread {
	th := a.threads[id]
	if th == nil {
		th = &thread{interrupts: map[string]bool{}}
		a.threads[id] = th
	}
	return th
}

// ensure returns a live, initialized connection, starting the app-server
// when needed. Failed starts are retried at most every RetryAfter.
//
// The start runs detached from ctx (bounded by StartTimeout, ended by
// Close): a caller whose ctx ends first gets "codex is still starting" and
// the next caller joins the same start, so an app-server slower to
// initialize than one listing may wait is not killed and started again by
// every listing.
func (a *Adapter) ensure(ctx context.Context) (*generation, error) {
	if g, err, done := a.ready(); done {
		return g, err
	}
	g, err := a.starter.Do(ctx, func(sctx context.Context) (*generation, error) {
		// A caller may have found no connection just before the last
		// start set one.
		if g, err, done := a.ready(); done {
			return g, err
		}
		g, err := a.start(sctx)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.lastTry = a.cfg.Clock.Now()
		if err != nil {
			a.lastErr = err
			return nil, err
		}
		a.lastErr = nil
		if a.closed {
			g.closing = true
			go g.conn.Close()
			return nil, errAdapterClosed
		}
		a.gen = g
		return g, nil
	})
	if errors.Is(err, startonce.ErrClosed) {
		return nil, errAdapterClosed
	}
	return g, err
}

// ready returns the live connection, or the error of a start that failed
// less than RetryAfter ago; done is false when a start is needed.
func (a *Adapter) ready() (g *generation, err error, done bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errAdapterClosed, true
	}
	if g := a.gen; g != nil && !g.dead {
		return g, nil, true
	}
	if a.lastErr != nil && a.cfg.Clock.Now().Sub(a.lastTry) < a.cfg.RetryAfter {
		return nil, a.lastErr, true
	}
	return nil, nil, false
}

// start spawns the app-server and initializes it, within ctx (the
// starter's bound).
func (a *Adapter) start(ctx context.Context) (*generation, error) {
	p := a.program()
	if p.err != nil {
		return nil, p.err
	}
	link, err := a.cfg.Dial(ctx, ProcessSpec{Argv: p.argv, Env: a.cfg.Env, Dir: a.cfg.Dir, Clock: a.cfg.Clock})
	if err != nil {
		return nil, fmt.Errorf("start codex app-server: %w", err)
	}
	a.mu.Lock()
	a.genN++
	g := &generation{
		n:        a.genN,
		link:     link,
		loaded:   map[string]bool{},
		inflight: map[string]int{},
		subs:     fanout.New(subscriberBuffer),
		ended:    make(chan struct{}),
		auth:     "unknown",
	}
	a.mu.Unlock()
	g.conn = jsonrpc.NewConn(link, jsonrpc.Options{
		Handler: func(r *jsonrpc.Request) { a.onMessage(g, r) },
		NextID:  func() int64 { return a.ids.Add(1) },
		OnClose: func(err error) { a.onConnClosed(g, err) },
	})
	if link.Exited != nil {
		// Give the last messages a moment to be read, then end the
		// connection even if a grandchild still holds the pipe.
		supervise.EndAfterExit(a.cfg.Clock, link.Exited, g.conn.Done(), supervise.ExitDrain, func() { g.conn.Close() })
	}
	var init struct {
		UserAgent string `json:"userAgent"`
		CodexHome string `json:"codexHome"`
	}
	err = g.conn.Call(ctx, "initialize", map[string]any{
		"clientInfo": map[string]string{
			"name":    "agent-interop-runtime",
			"title":   "Agent Interop Runtime",
			"version": a.cfg.ClientVersion,
		},
		"capabilities": map[string]any{},
	}, &init)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
	case errors.As(err, &rpcErr) && strings.Contains(strings.ToLower(rpcErr.Message), "already initialized"):
		// A link re-attached to a server that is already initialized.
	default:
		g.closing = true
		g.conn.Close()
		return nil, fmt.Errorf("codex app-server initialize failed: %w%s", err, a.exitSuffix(link))
	}
	g.userAgent, g.codexHome = init.UserAgent, init.CodexHome
	if err := g.conn.Notify("initialized", nil); err != nil {
		g.closing = true
		g.conn.Close()
		return nil, fmt.Errorf("codex app-server initialized notification: %w%s", err, a.exitSuffix(link))
	}
	var acct struct {
		Account            json.RawMessage `json:"account"`
		RequiresOpenaiAuth bool            `json:"requiresOpenaiAuth"`
	}
	actx, acancel := clockctx.WithTimeout(ctx, a.cfg.Clock, a.cfg.CallTimeout, "codex", "call")
	defer acancel()
	if err := g.conn.Call(actx, "account/read", map[string]any{"refreshToken": false}, &acct); err == nil {
		switch {
		case len(acct.Account) > 0 && string(acct.Account) != "null":
			g.auth = "authorized"
		case !acct.RequiresOpenaiAuth:
			g.auth, g.authDetail = "authorized", "the configured model provider needs no OpenAI login"
		default:
			g.auth, g.authDetail = "unauthorized", "codex reports no login; turns on the OpenAI provider fail until `codex login`"
		}
	}
	a.cfg.Logf("codex: app-server pid %d ready (%s)", link.PID, g.userAgent)
	return g, nil
}

// exitSuffix describes how the process ended, if it did (waiting up to
// 500 ms on the adapter's clock for it to end).
func (a *Adapter) exitSuffix(link *Link) string {
	if link.Exited == nil {
		return ""
	}
	t := a.cfg.Clock.NewTimer(500*time.Millisecond, "codex", "exit-reason")
	defer t.Stop()
	select {
	case <-link.Exited:
	case <-t.C:
		return ""
	}
	if r := link.ExitReason(); r != "" {
		return " (process " + r + ")"
	}
	return ""
}

// Close stops the app-server (its whole process group).
func (a *Adapter) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	// The start under way sees closed and stops what it started.
	a.starter.Close()
	a.mu.Lock()
	g := a.gen
	a.gen = nil
	if g != nil {
		g.closing = true
	}
	a.mu.Unlock()
	if g != nil {
		g.conn.Close()
		<-g.ended
	}
	return nil
}

// onConnClosed runs when a connection ends, on purpose or not.
func (a *Adapter) onConnClosed(g *generation, reason error) {
	a.mu.Lock()
	g.dead, g.diedAt = true, a.cfg.Clock.Now()
	if reason != nil {
		g.why = "codex app-server connection lost: " + reason.Error()
	}
	a.last = g
	if a.gen == g {
		a.gen = nil
	}
	intentional := g.closing || a.closed
	type lost struct{ thread, turn string }
	var turns []lost
	affected := map[string]bool{}
	for id, th := range a.threads {
		if th.turnGen != g || th.activeTurn == "" {
			continue
		}
		turns = append(turns, lost{id, th.activeTurn})
		delete(th.interrupts, th.activeTurn)
		affected[id] = true
		th.activeTurn, th.turnGen, th.started = "", nil, false
		if th.startedCh != nil {
			close(th.startedCh)
			th.startedCh = nil
		}
	}
	dropped := map[string][]string{}
	for rid, p := range a.perms {
		if p.gen != g {
			continue
		}
		delete(a.perms, rid)
		affected[p.req.NativeID] = true
		if !p.replied { // an answered one is in g.ops
			dropped[p.req.NativeID] = append(dropped[p.req.NativeID], rid)
		}
	}
	inflight := map[string]int{}
	for id, n := range g.inflight {
		if n > 0 {
			inflight[id] = n
			affected[id] = true
		}
	}
	for _, id := range g.subs.Keys() { // ended below, after the loss was reported
		affected[id] = true
	}
	a.mu.Unlock()

	go func() {
		defer close(g.ended)
		if g.link.Kill != nil {
			g.link.Kill()
		}
		if intentional {
			g.subs.EndAll()
			return
		}
		why := "codex app-server connection lost: " + reason.Error() + a.exitSuffix(g.link)
		a.cfg.Logf("codex: %s", why)
		pending.Report(a.cfg.Host, providers.Codex, g.ops.Lost(why))
		if rep, ok := a.cfg.Host.(providers.EventReporter); ok {
			now := a.cfg.Clock.Now()
			for id := range affected {
				data := map[string]any{
					"reason":      why,
					"previousPid": g.link.PID,
					"resent":      false,
				}
				for _, t := range turns {
					if t.thread == id {
						data["lostTurnId"] = t.turn
					}
				}
				if n := inflight[id]; n > 0 {
					data["unansweredRequests"] = n
				}
				if d := dropped[id]; len(d) > 0 {
					data["droppedPermissionRequests"] = d
				}
				raw, _ := json.Marshal(data)
				rep.ReportEvent(providers.Codex, providers.NativeEvent{
					NativeID: id, Timestamp: now, Type: providers.EventProviderRestarted, Data: raw,
				})
			}
		}
		g.subs.EndAll()
		// Start again right away; nothing that was in flight is replayed.
		ctx, cancel := clockctx.WithTimeout(context.Background(), a.cfg.Clock, a.cfg.StartTimeout, "codex", "start")
		defer cancel()
		if _, err := a.ensure(ctx); err != nil && !errors.Is(err, errAdapterClosed) {
			a.cfg.Logf("codex: restart failed: %v", err)
		}
	}()
}

func interruptRef(turn string) string { return "interrupt:" + turn }
func permissionRef(rid string) string { return "permission:" + rid }

// turnOp, interruptOp and permissionOp are the operations g.ops tracks.
func turnOp(thread, turn string) pending.Op {
	return pending.Op{NativeID: thread, Ref: turn,
		Unsettled: fmt.Sprintf("turn %s had not completed and may have run in part; it is not resent", turn)}
}

func interruptOp(thread, turn string) pending.Op {
	return pending.Op{NativeID: thread, Ref: interruptRef(turn), Unsettled: "the interrupt's effect was not observed"}
}

func permissionOp(thread, rid string) pending.Op {
	return pending.Op{NativeID: thread, Ref: permissionRef(rid), Unsettled: "codex did not confirm the decision"}
}
func requestKey(g *generation, raw jsonrpc.ID) string {
	return fmt.Sprintf("%d-%s", g.n, strings.Trim(string(raw), `"`))
}
