package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/lazy"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/kit/pending"
	"github.com/agent-interop/runtime/internal/providers/kit/startonce"
)

// Launch is how to run one agent program.
type Launch struct {
	Argv    []string // program path and arguments
	Env     []string // full environment; nil inherits ours
	Dir     string
	Program string // the program found (for Capabilities)
	Label   string // what it is, e.g. "claude-agent-acp"
}

// AdapterConfig configures an ACP provider adapter.
type AdapterConfig struct {
	Provider       providers.ID
	AdapterVersion string
	Protocol       string // capability protocol label
	// Locate finds the program; its error is the reason the provider is
	// unavailable and MissingFix says how to install it.
	Locate     func() (Launch, error)
	MissingFix string
	// AuthMethod is authenticated right after initialize when advertised.
	AuthMethod string
	// AuthFix tells the user how to log in when the agent needs it.
	AuthFix string
	// VersionProbe, if set, finds the program's version when initialize's
	// agentInfo carries none (e.g. by running it with --version).
	VersionProbe func(ctx context.Context, l Launch) string
	// VersionCheck, if set, says what is wrong with the version found
	// ("" = nothing): it becomes a limitation doctor shows.
	VersionCheck func(version string) string
	// HandshakeTimeout bounds initialize (default DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	ClientMeta       map[string]any
	Extension        ExtensionFunc
	Limitations      []string

	Host       providers.Host
	Clock      quartz.Clock
	Logger     *slog.Logger
	FileReader FileReader
	// NoFileReads offers the agent no fs/read_text_file.
	NoFileReads bool
	// StartMode, if set, names the mode a new session is switched to
	// right after session/new ("" = keep the agent's), given how the
	// agent was launched (its environment, nil: ours; its arguments) and
	// the session's workspace: the claude-default-mode quirk. The switch
	// is made only when the session offers that mode in
	// modes.availableModes and is not in it already; if it fails, the
	// session is not used and creation fails. After session/load or
	// session/resume the same switch is made when the session reopened
	// in a mode that asks less than default (reopenMode).
	StartMode func(l Launch, cwd string) string
	Trace     func(Direction, []byte)
	// DefaultCWD is the workspace of CreateSession without a CWD (default:
	// the process working directory).
	DefaultCWD string
}

// Adapter implements providers.Adapter over one lazily started agent
// process. A dead agent is restarted on the next call; sessions it had open
// are loaded again on demand from their recorded workspaces.
type Adapter struct {
	cfg AdapterConfig

	startMu sync.Mutex // serialises starts
	// starter runs the start detached from the call that began it.
	starter  *startonce.Starter[*Client]
	mu       sync.Mutex
	client   *Client
	launch   Launch
	startErr error
	auth     string // authorized | unauthorized | unknown
	authWhy  string
	known    map[string]string        // nativeID -> workspace
	opening  map[string]chan struct{} // sessions being reopened (closed when done)
	dirs     []string                 // distinct workspaces of known, newest first (bounded)
	closed   bool
	death    *agentDeath // how the last agent process ended

	diffs     *diffBook
	turnFacts *turnBook // turn verdicts and usage (turnfacts.go)
	replayMu  sync.Mutex
	replays   map[string]*replay // sessions being looked up by replay
}

// NewAdapter builds an adapter; nothing is started until it is used.
func NewAdapter(cfg AdapterConfig) *Adapter {
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Protocol == "" {
		cfg.Protocol = "ACP v1 (JSON-RPC over stdio)"
	}
	bound := cfg.HandshakeTimeout
	if bound <= 0 {
		bound = DefaultHandshakeTimeout
	}
	// The handshake has its own bound; the start's covers authenticate too.
	starter := startonce.New[*Client](string(cfg.Provider), cfg.Clock, 2*bound, "acp", "start")
	return &Adapter{cfg: cfg, starter: starter, auth: "unknown", known: make(map[string]string), opening: map[string]chan struct{}{}, diffs: newDiffBook(), turnFacts: newTurnBook(), replays: map[string]*replay{}}
}

// ID implements providers.Adapter.
func (a *Adapter) ID() providers.ID { return a.cfg.Provider }

// Client returns the running agent connection, starting it if needed.
//
// The start runs detached from ctx, bounded by twice the handshake
// timeout and cancelled by Close: a caller whose ctx ends stops waiting for it and the
// next caller joins the same start, so a program that takes longer to
// start than one call may wait (node programs on a busy machine take tens
// of seconds) is not killed and started again by every call.
func (a *Adapter) Client(ctx context.Context) (*Client, error) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, errors.New("adapter closed")
	}
	if c := a.client; c != nil {
		select {
		case <-c.Done():
			a.client = nil
		default:
			a.mu.Unlock()
			return c, nil
		}
	}
	a.mu.Unlock()
	return a.starter.Do(ctx, a.start)
}

// start spawns, initializes and (when configured) authenticates the agent.
func (a *Adapter) start(ctx context.Context) (*Client, error) {
	a.startMu.Lock()
	defer a.startMu.Unlock()
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if closed {
		return nil, errors.New("adapter closed")
	}
	// A caller may have found no client just before the last start set one.
	if c := a.running(); c != nil {
		select {
		case <-c.Done():
		default:
			return c, nil
		}
	}
	l, err := a.cfg.Locate()
	if err != nil {
		a.setStart(nil, Launch{}, err)
		return nil, err
	}
	c, err := Start(ctx, Config{
		Provider: a.cfg.Provider, Argv: l.Argv, Dir: l.Dir, Env: l.Env,
		ClientVersion: a.cfg.AdapterVersion, ClientMeta: a.cfg.ClientMeta,
		AuthMethod: a.cfg.AuthMethod, Clock: a.cfg.Clock, Logger: a.cfg.Logger,
		FileReader: a.cfg.FileReader, NoFileReads: a.cfg.NoFileReads, Extension: a.cfg.Extension, Trace: a.cfg.Trace,
		Observe: a.observe, HandshakeTimeout: a.cfg.HandshakeTimeout,
	})
	var ae *AuthError
	if errors.As(err, &ae) {
		a.setAuth("unauthorized", ae.Error())
	}
	if err == nil && a.cfg.AuthMethod != "" && c.Init().HasAuthMethod(a.cfg.AuthMethod) {
		a.setAuth("authorized", "")
	}
	a.setStart(c, l, err)
	if err != nil {
		return nil, err
	}
	go func() {
		<-c.Done()
		why := a.agentEnded(c)
		// One place settles what the dead agent never answered.
		pending.Report(a.cfg.Host, a.cfg.Provider, c.Lost(why))
		a.cfg.Logger.Info("agent connection ended", "provider", a.cfg.Provider, "pid", c.PID(), "stderr", c.Stderr())
	}()
	return c, nil
}

// Roles implements providers.Adapter: liveness, session/load history and
// the ACP handshake; one agent process is one endpoint.
func (a *Adapter) Roles() providers.Roles {
	return providers.Roles{Liveness: a, History: a, Handshake: a, Workspaces: a, Starting: a.starter}
}

// KnowWorkspace implements providers.WorkspaceHints: the workspace the
// runtime recorded for a session, so a restarted runtime lists and
// reopens it in its own directory.
func (a *Adapter) KnowWorkspace(nativeID, cwd string) { a.remember(nativeID, cwd) }

// Probe starts the agent when it is not running and completes initialize
// (and authenticate, when configured and advertised): the handshake
// `interop-runtime doctor` reports. Close stops the agent.
func (a *Adapter) Probe(ctx context.Context) error {
	if _, err := a.Client(ctx); err != nil {
		return fmt.Errorf("%s ACP handshake: %w", a.cfg.Provider, err)
	}
	return nil
}

func (a *Adapter) setStart(c *Client, l Launch, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.client, a.launch, a.startErr = c, l, err
}

func (a *Adapter) setAuth(state, why string) {
	a.mu.Lock()
	a.auth, a.authWhy = state, why
	a.mu.Unlock()
}

func (a *Adapter) running() *Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.client
}

// Capabilities implements providers.Adapter. It starts the agent (bounded by
// ctx) so that what it reports was observed: the program and version found,
// the handshake, the login state and what the agent advertises.
func (a *Adapter) Capabilities(ctx context.Context) providers.Capabilities {
	caps := providers.Capabilities{
		Provider: a.cfg.Provider, AdapterVersion: a.cfg.AdapterVersion, Authorization: "unknown",
		Limitations: append([]string(nil), a.cfg.Limitations...),
	}
	all := func(c providers.Capability) {
		caps.Discovery, caps.Sessions, caps.SendMessage, caps.Steer, caps.Cancel = c, c, c, c, c
		caps.Events, caps.Diff, caps.Permissions, caps.Model, caps.Reasoning = c, c, c, c, c
	}
	l, err := a.cfg.Locate()
	if err != nil {
		all(providers.Capability{State: providers.Unavailable, Reason: err.Error(), Fix: a.cfg.MissingFix})
		return caps
	}
	caps.Program = l.Program
	c, err := a.Client(ctx)
	a.mu.Lock()
	auth, authWhy := a.auth, a.authWhy
	a.mu.Unlock()
	caps.Authorization = auth
	if err != nil {
		if auth == "unauthorized" {
			all(providers.Capability{State: providers.Unavailable, Reason: "Authentication required: " + authWhy, Fix: a.cfg.AuthFix})
		} else {
			// A program that is not in its ACP mode says what to change.
			fix := ""
			var na *NotACPError
			if errors.As(err, &na) {
				fix = na.Fix()
			}
			all(providers.Capability{State: providers.Unavailable, Reason: fmt.Sprintf("%s did not start: %v", sanitize(l.Label), err), Fix: fix})
		}
		return caps
	}
	init := c.Init()
	if init.AgentInfo != nil && init.AgentInfo.Version != "" {
		caps.ProviderVersion = init.AgentInfo.Version
	} else if a.cfg.VersionProbe != nil {
		caps.ProviderVersion = a.cfg.VersionProbe(ctx, l)
	}
	if a.cfg.VersionCheck != nil {
		if w := a.cfg.VersionCheck(caps.ProviderVersion); w != "" {
			caps.Limitations = append(caps.Limitations, "warning: "+w)
		}
	}
	name := l.Label
	if init.AgentInfo != nil && init.AgentInfo.Name != "" {
		name = fmt.Sprintf("%s (agentInfo %s)", l.Label, init.AgentInfo.Name)
	}
	proto := fmt.Sprintf("%s; %s %s", a.cfg.Protocol, name, caps.ProviderVersion)
	ok := func(transport string) providers.Capability {
		return providers.Capability{Supported: true, State: providers.Available, Transport: transport, Protocol: proto}
	}
	caps.Discovery = ok("stdio")
	if !init.AgentCapabilities.Session("list") {
		caps.Discovery = providers.Capability{Supported: false, State: providers.Degraded, Transport: "stdio", Protocol: proto,
			Reason: "the agent does not advertise session/list; only sessions opened by this runtime are known"}
	}
	caps.Sessions = ok("stdio")
	switch {
	case init.AgentCapabilities.LoadSession:
		caps.Sessions.Reason = "create with session/new; resume with session/load (history replayed as events)"
	case init.AgentCapabilities.Session("resume"):
		caps.Sessions.Reason = "create with session/new; resume with session/resume (no history replay)"
	default:
		caps.Sessions.State = providers.Degraded
		caps.Sessions.Reason = "the agent advertises neither session/load nor session/resume; sessions cannot be resumed"
	}
	caps.SendMessage = ok("stdio")
	caps.SendMessage.Reason = "session/prompt, one at a time per session; later sends wait for the running prompt"
	if auth == "unauthorized" {
		caps.SendMessage.State = providers.Degraded
		caps.SendMessage.Reason = "Authentication required: " + authWhy
		caps.SendMessage.Fix = a.cfg.AuthFix
	}
	caps.Steer = providers.Capability{Supported: false, State: providers.Unavailable, Reason: "ACP has no steering of a running prompt"}
	caps.Cancel = ok("stdio")
	caps.Cancel.Reason = "session/cancel notification; held permission requests are answered cancelled"
	caps.Events = ok("stdio")
	caps.Events.Reason = "session/update notifications, live only; not replayable after the agent restarts"
	caps.Diff = ok("stdio")
	caps.Diff.State = providers.Degraded
	caps.Diff.Reason = "built from the diff content (path, oldText, newText) of completed tool calls this runtime observed in " +
		"tool_call/tool_call_update notifications; pending and failed (e.g. rejected) calls are left out; " +
		"edits made before this runtime watched the session, or by tools that send no diff content, are not in it"
	caps.Permissions = ok("stdio")
	caps.Permissions.Reason = "session/request_permission held until answered by option kind"
	caps.Model = providers.Capability{Supported: false, State: providers.Degraded, Transport: "stdio", Protocol: proto,
		Reason: "negotiated per session: the model config option or session/set_model, when the session advertises them"}
	caps.Reasoning = providers.Capability{Supported: false, State: providers.Degraded, Transport: "stdio", Protocol: proto,
		Reason: "negotiated per session: a thought_level config option, when the session advertises one"}
	return caps
}

func (a *Adapter) session(c *Client, v SessionView) providers.Session {
	meta := map[string]any{}
	if v.Modes != nil {
		meta["mode"] = v.Modes.CurrentModeID
	}
	model := ""
	if o, ok := optionFor(v.ConfigOptions, "model", "model"); ok {
		model = o.Current()
	} else if v.Models != nil {
		model = v.Models.CurrentModelID
	}
	state := "idle"
	if v.Busy {
		state = "running"
	}
	if len(meta) == 0 {
		meta = nil
	}
	return providers.Session{
		ID: string(a.cfg.Provider) + ":" + v.ID, Provider: a.cfg.Provider, NativeID: v.ID,
		Title: v.Title, State: state, Model: model, CWD: v.CWD, Transport: "stdio",
		Endpoint:   fmt.Sprintf("%s pid %d", a.label(), c.PID()),
		Provenance: providers.Provenance{DiscoveredAt: v.OpenedAt, Source: "acp", Native: true},
		Metadata:   meta,
	}
}

func (a *Adapter) label() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.launch.Label != "" {
		return a.launch.Label
	}
	return string(a.cfg.Provider)
}

func (a *Adapter) listed(c *Client, info SessionInfo) providers.Session {
	return providers.Session{
		ID: string(a.cfg.Provider) + ":" + info.SessionID, Provider: a.cfg.Provider, NativeID: info.SessionID,
		Title: info.Title, State: "stored", CWD: info.CWD, Transport: "stdio",
		Endpoint:   fmt.Sprintf("%s pid %d", a.label(), c.PID()),
		Provenance: providers.Provenance{DiscoveredAt: a.cfg.Clock.Now(), Source: "session/list", Native: true},
		Metadata:   map[string]any{"updatedAt": info.UpdatedAt},
	}
}

// maxListedWorkspaces bounds the extra session/list calls of one
// listing: one per workspace the adapter knows sessions in, the most
// recently learnt first.
const maxListedWorkspaces = 16

func (a *Adapter) remember(id, cwd string) {
	if id == "" || cwd == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.known[id] = cwd
	if len(a.dirs) > 0 && a.dirs[0] == cwd {
		return
	}
	a.dirs = slices.DeleteFunc(a.dirs, func(d string) bool { return d == cwd })
	a.dirs = slices.Insert(a.dirs, 0, cwd)
	if len(a.dirs) > maxListedWorkspaces {
		a.dirs = a.dirs[:maxListedWorkspaces]
	}
}

// workspace is the recorded workspace of a session ("" when unknown).
func (a *Adapter) workspace(nativeID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.known[nativeID]
}

// listAll asks session/list without a cwd, then in every known workspace:
// agents such as Qwen Code and opencode answer the first with the
// sessions of the directory they run in only. A workspace the agent
// refuses (removed since) is skipped and logged; only the first call's
// failure is an error.
func (a *Adapter) listAll(ctx context.Context, c *Client) ([]SessionInfo, error) {
	infos, err := c.ListSessions(ctx, "")
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	dirs := slices.Clone(a.dirs)
	a.mu.Unlock()
	seen := make(map[string]bool, len(infos))
	for _, info := range infos {
		seen[info.SessionID] = true
	}
	for _, dir := range dirs {
		more, err := c.ListSessions(ctx, dir)
		if err != nil {
			if ctx.Err() != nil {
				return infos, err
			}
			a.cfg.Logger.Warn("session/list in a recorded workspace failed", "provider", a.cfg.Provider, "cwd", dir, "err", err)
			continue
		}
		for _, info := range more {
			if !seen[info.SessionID] {
				seen[info.SessionID] = true
				infos = append(infos, info)
			}
		}
	}
	return infos, nil
}

// find looks a session up with session/list: in its recorded workspace
// when known, else without a cwd.
func (a *Adapter) find(ctx context.Context, c *Client, nativeID string) (SessionInfo, bool, error) {
	infos, err := c.ListSessions(ctx, a.workspace(nativeID))
	if err != nil {
		return SessionInfo{}, false, err
	}
	for _, info := range infos {
		if info.SessionID == nativeID {
			a.remember(info.SessionID, info.CWD)
			return info, true, nil
		}
	}
	return SessionInfo{}, false, nil
}

// ListSessions implements providers.Adapter: the sessions open in the agent
// process, plus session/list when the agent advertises it.
func (a *Adapter) ListSessions(ctx context.Context) ([]providers.Session, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return nil, err
	}
	var out []providers.Session
	seen := map[string]bool{}
	for _, v := range c.Sessions() {
		out = append(out, a.session(c, v))
		seen[v.ID] = true
	}
	if !c.Init().AgentCapabilities.Session("list") {
		return out, nil
	}
	infos, err := a.listAll(ctx, c)
	if err != nil {
		return out, fmt.Errorf("%s: %w", a.cfg.Provider, err) // err names session/list
	}
	for _, info := range infos {
		a.remember(info.SessionID, info.CWD)
		if !seen[info.SessionID] {
			out = append(out, a.listed(c, info))
		}
	}
	return out, nil
}

// GetSession implements providers.Adapter.
func (a *Adapter) GetSession(ctx context.Context, nativeID string) (*providers.Session, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return nil, err
	}
	if v, ok := c.Session(nativeID); ok {
		s := a.session(c, v)
		return &s, nil
	}
	if !c.Init().AgentCapabilities.Session("list") {
		return nil, nil
	}
	info, ok, err := a.find(ctx, c, nativeID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.cfg.Provider, err) // err names session/list
	}
	if !ok {
		return nil, nil
	}
	s := a.listed(c, info)
	return &s, nil
}

// CreateSession implements providers.Adapter (session/new).
func (a *Adapter) CreateSession(ctx context.Context, opts providers.CreateOptions) (providers.Session, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return providers.Session{}, err
	}
	cwd := opts.CWD
	if cwd == "" {
		cwd = a.cfg.DefaultCWD
	}
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return providers.Session{}, fmt.Errorf("%s create session: %w", a.cfg.Provider, err)
		}
	}
	setup, err := c.NewSession(ctx, cwd)
	if err != nil {
		return providers.Session{}, a.classify("create session", err)
	}
	if err := a.startMode(ctx, c, setup.SessionID); err != nil {
		return providers.Session{}, err
	}
	v, _ := c.Session(setup.SessionID)
	a.remember(v.ID, v.CWD)
	s := a.session(c, v)
	if opts.Title != "" {
		if s.Metadata == nil {
			s.Metadata = map[string]any{}
		}
		s.Metadata["requestedTitle"] = opts.Title
	}
	return s, nil
}

// ResumeSession implements providers.Adapter: session/load when advertised
// (history arrives as events), else session/resume.
func (a *Adapter) ResumeSession(ctx context.Context, nativeID string) (providers.Session, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return providers.Session{}, err
	}
	if err := a.open(ctx, c, nativeID); err != nil {
		return providers.Session{}, err
	}
	v, _ := c.Session(nativeID)
	return a.session(c, v), nil
}

// open makes sure nativeID is open in c, loading or resuming it from its
// recorded workspace.
func (a *Adapter) open(ctx context.Context, c *Client, nativeID string) error {
	for {
		// One reopen of a session at a time: a send and the events
		// stream asking together load it once. The client knows a session
		// from the moment its load is written (its replay lands there),
		// so a session it knows is open only when no reopen of it is
		// under way: a prompt written before the load's answer reaches an
		// agent that does not have the session yet. (A reopen is marked
		// in opening before the client learns of the session, so checking
		// opening after the client cannot miss one.)
		_, known := c.Session(nativeID)
		a.mu.Lock()
		busy, waiting := a.opening[nativeID]
		if !waiting {
			if known {
				a.mu.Unlock()
				return nil
			}
			busy = make(chan struct{})
			a.opening[nativeID] = busy
		}
		a.mu.Unlock()
		if waiting {
			select {
			case <-busy:
				continue
			case <-ctx.Done():
				return &providers.NotSentError{Err: fmt.Errorf("waiting for %s session %s to be reopened: %w", a.cfg.Provider, nativeID, ctx.Err())}
			}
		}
		err := a.reopen(ctx, c, nativeID)
		a.mu.Lock()
		delete(a.opening, nativeID)
		a.mu.Unlock()
		close(busy)
		return err
	}
}

// reopen loads or resumes nativeID in c from its recorded workspace.
func (a *Adapter) reopen(ctx context.Context, c *Client, nativeID string) error {
	init := c.Init()
	if !init.AgentCapabilities.LoadSession && !init.AgentCapabilities.Session("resume") {
		return &providers.UnsupportedError{Provider: a.cfg.Provider, Operation: "resume",
			Reason: "the agent advertises neither session/load nor session/resume"}
	}
	cwd := a.workspace(nativeID)
	if cwd == "" && init.AgentCapabilities.Session("list") {
		if info, ok, err := a.find(ctx, c, nativeID); err == nil && ok {
			cwd = info.CWD
		}
	}
	if cwd == "" {
		return &providers.NotSentError{Err: fmt.Errorf("the workspace of %s session %s is unknown (not listed by the agent and not opened by this runtime)", a.cfg.Provider, nativeID)}
	}
	var err error
	if init.AgentCapabilities.LoadSession {
		_, err = c.LoadSession(ctx, nativeID, cwd)
	} else {
		_, err = c.ResumeSession(ctx, nativeID, cwd)
	}
	if err == nil {
		return a.reopenMode(ctx, c, nativeID)
	}
	if err != nil {
		var re *RPCError
		if errors.As(err, &re) {
			if reason, ok := sessionLost(re); ok {
				le := &SessionLostError{Provider: a.cfg.Provider, NativeID: nativeID, Op: "resume", Reason: reason, RPC: re}
				return &providers.RejectedError{Reason: le.Error(), Detail: re, Err: le}
			}
		}
		return a.classify("resume session", err)
	}
	return nil
}

// lostWords is how an agent's invalid-params answer says it does not
// know the session (Cursor: `Session "<id>" not found`).
var lostWords = lazy.Regexp{Expr: `(?i)\bsession\b.*\b(not found|unknown|does not exist|no such)\b|\bunknown session\b|\bno such session\b`}

// sessionLost reports whether an agent's answer to session/load or
// session/resume says it does not have the session, with its words:
// ACP's resource_not_found (-32002; Qwen Code's "Resource not found:
// session:<id>"), or an invalid-params answer (-32602) whose message or
// data.message says the session is not found or unknown (Cursor's).
// Any other -32602 (a bad cwd, a malformed request) is not a lost
// session.
func sessionLost(re *RPCError) (string, bool) {
	detail := re.Message
	var data struct {
		Message string `json:"message"`
	}
	if len(re.Data) > 0 && json.Unmarshal(re.Data, &data) == nil && data.Message != "" {
		detail = strings.TrimSpace(re.Message + ": " + data.Message)
	}
	switch re.Code {
	case CodeNotFound:
		return detail, true
	case CodeInvalidParams:
		if lostWords.Get().MatchString(re.Message) || lostWords.Get().MatchString(data.Message) {
			return detail, true
		}
	}
	return "", false
}

// Send implements providers.Adapter. It returns a queued receipt once
// session/prompt was written; the outcome (completed with the stopReason, or
// rejected with the agent's error) is reported through Host.ReportOutcome
// with the receipt's Ref.
func (a *Adapter) Send(ctx context.Context, nativeID, text string, opts providers.SendOptions) (providers.Receipt, error) {
	if opts.Mode == "steer" {
		return providers.Receipt{}, &providers.UnsupportedError{Provider: a.cfg.Provider, Operation: "steer", Reason: "ACP has no steering of a running prompt"}
	}
	c, err := a.Client(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: err}
	}
	if err := a.open(ctx, c, nativeID); err != nil {
		return providers.Receipt{}, notSent(lostAs("send to", err))
	}
	if opts.Agent != "" {
		if err := c.SetMode(ctx, nativeID, opts.Agent); err != nil {
			return providers.Receipt{}, notSent(a.classify("set agent mode", err))
		}
	}
	if opts.Model != nil {
		if err := a.setModel(ctx, c, nativeID, *opts.Model); err != nil {
			return providers.Receipt{}, notSent(err)
		}
	}
	if opts.Reasoning != "" {
		if err := c.SetReasoning(ctx, nativeID, opts.Reasoning); err != nil {
			return providers.Receipt{}, notSent(a.classify("set reasoning", err))
		}
	}
	turn, err := c.Prompt(ctx, nativeID, text)
	if err != nil {
		return providers.Receipt{}, a.classify("send", err)
	}
	go a.watch(turn)
	return providers.Receipt{
		Provider: a.cfg.Provider, NativeID: nativeID, Operation: "send", Accepted: true,
		Status: providers.StatusQueued, ProviderState: "prompt_sent", Ref: turn.ID, NativeTurnID: turn.ID,
		Detail: map[string]any{"delivery": "transport_accepted", "completion": "pending", "turn": turn.ID},
	}, nil
}

// notSent keeps unsupported, not-sent and lost-session errors, and marks everything else
// as not sent (a step before the prompt failed, so the prompt never left).
func notSent(err error) error {
	var ue *providers.UnsupportedError
	var ns *providers.NotSentError
	if errors.As(err, &ue) || errors.As(err, &ns) || errors.Is(err, providers.ErrSessionLost) {
		return err // a lost session is the agent's refusal (lostAs)
	}
	return &providers.NotSentError{Err: err}
}

func (a *Adapter) watch(t *Turn) {
	<-t.Done()
	if errors.Is(t.Err, ErrConnectionClosed) {
		return // the connection's loss settles it, with the others (Client.Lost)
	}
	var status providers.ReceiptStatus
	var reason string
	var re *RPCError
	switch {
	case t.Err == nil && (t.StopReason == "cancelled" || t.StopReason == "refusal"):
		// The turn ended without doing the prompt's work: never completed.
		status, reason = providers.StatusRejected, "stopReason: "+t.StopReason
	case t.Err == nil:
		status, reason = providers.StatusCompleted, "stopReason: "+t.StopReason
		a.mu.Lock()
		if a.auth != "authorized" && a.cfg.AuthMethod == "" {
			a.auth, a.authWhy = "authorized", ""
		}
		a.mu.Unlock()
	case IsAuthRequired(t.Err):
		errors.As(t.Err, &re)
		a.setAuth("unauthorized", re.Message)
		status, reason = providers.StatusRejected, fmt.Sprintf("Authentication required: %s. %s", re.Message, a.cfg.AuthFix)
		if re.Message == "Authentication required" {
			reason = "Authentication required. " + a.cfg.AuthFix
		}
	case errors.As(t.Err, &re):
		status, reason = providers.StatusRejected, re.Error()
	default:
		status, reason = providers.StatusDeliveryUnknown, t.Err.Error()
	}
	if a.cfg.Host != nil {
		a.cfg.Host.ReportOutcome(a.cfg.Provider, t.SessionID, t.ID, providers.Outcome{Status: status, Reason: reason, Turn: a.turnResult(t, status, reason)})
	}
}

// turnResult is what was observed of the ended turn t: its verdict, usage
// and the files its completed tool calls wrote.
func (a *Adapter) turnResult(t *Turn, status providers.ReceiptStatus, reason string) *providers.TurnResult {
	a.mu.Lock()
	cwd := a.known[t.SessionID]
	a.mu.Unlock()
	var changed []string
	if d, ok := a.diffs.diff(t.SessionID, t.ID, cwd); ok {
		for _, f := range d.Files {
			changed = append(changed, f.Path)
		}
	}
	rpcErr := ""
	if t.Err != nil {
		rpcErr = reason
	}
	return a.turnFacts.end(t, rpcErr, status == providers.StatusDeliveryUnknown, changed)
}

// Cancel implements providers.Adapter: session/cancel is a notification, so
// the receipt is completed once it was written.
func (a *Adapter) Cancel(ctx context.Context, nativeID string) (providers.Receipt, error) {
	c := a.running()
	if c == nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("%s is not running; nothing to cancel", a.label())}
	}
	if _, ok := c.Session(nativeID); !ok {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("session %s is not open in the running agent; nothing to cancel", nativeID)}
	}
	running := c.Running(nativeID) != nil
	if err := c.Cancel(nativeID); err != nil {
		return providers.Receipt{}, a.classify("cancel", err)
	}
	return providers.Receipt{
		Provider: a.cfg.Provider, NativeID: nativeID, Operation: "cancel", Accepted: true,
		Status: providers.StatusCompleted, ProviderState: "cancel_notification_sent",
		Detail: map[string]any{"promptRunning": running},
	}, nil
}

// Subscribe implements providers.Adapter. A session that is not open in
// the agent process is reopened first (session/load or session/resume
// from its recorded workspace, as a send does); one the agent no longer
// has is refused with a *SessionLostError saying how to go on.
func (a *Adapter) Subscribe(ctx context.Context, nativeID string) (<-chan providers.NativeEvent, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.open(ctx, c, nativeID); err != nil {
		var ue *providers.UnsupportedError
		switch {
		case errors.Is(err, providers.ErrSessionLost):
			return nil, lostAs("watch the events of", err)
		case !errors.As(err, &ue): // an agent that cannot reopen sessions: c.Subscribe says it is not open
			return nil, fmt.Errorf("open %s session %s for its events: %w", a.cfg.Provider, nativeID, err)
		}
	}
	return c.Subscribe(ctx, nativeID)
}

// Diff implements providers.Adapter: the unified diff of the latest turn
// (or of the turn opts.MessageID names: a receipt's nativeTurnId) built
// from the diff content of the tool calls that completed, as this runtime
// observed them (see diffs.go).
//
// When this runtime observed nothing of the session, the agent is asked
// for it (reopened as a send would): a session the agent no longer has is
// refused with a *SessionLostError saying how to go on, instead of an
// empty diff.
func (a *Adapter) Diff(ctx context.Context, nativeID string, opts providers.DiffOptions) (any, error) {
	if !a.diffs.knows(nativeID) {
		if c, err := a.Client(ctx); err == nil {
			if err := a.open(ctx, c, nativeID); errors.Is(err, providers.ErrSessionLost) {
				return nil, lostAs("read the diff of", err)
			}
		}
	}
	a.mu.Lock()
	cwd := a.known[nativeID]
	a.mu.Unlock()
	res, known := a.diffs.diff(nativeID, opts.MessageID, cwd)
	if !known {
		return nil, fmt.Errorf("no tool calls observed for %s turn %s of session %s", a.cfg.Provider, opts.MessageID, nativeID)
	}
	return res, nil
}

// PendingPermissions implements providers.Adapter.
func (a *Adapter) PendingPermissions(context.Context) ([]providers.PermissionRequest, error) {
	c := a.running()
	if c == nil {
		return []providers.PermissionRequest{}, nil
	}
	return c.Pending(), nil
}

// RespondPermission implements providers.Adapter. decision is an offered
// option kind (allow_once, allow_always, reject_once, reject_always), an
// offered option id, or "cancelled".
func (a *Adapter) RespondPermission(ctx context.Context, nativeID, requestID, decision string) (providers.Receipt, error) {
	c := a.running()
	if c == nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("%w: %s (the agent is not running)", ErrUnknownRequest, requestID)}
	}
	d, err := c.Respond(ctx, nativeID, requestID, decision)
	if err != nil {
		return providers.Receipt{}, a.classify("respond to permission", err)
	}
	detail := map[string]any{"outcome": "cancelled"}
	if d.Option != nil {
		detail = map[string]any{"outcome": "selected", "optionId": d.Option.ID, "kind": d.Option.Kind}
	}
	return providers.Receipt{
		Provider: a.cfg.Provider, NativeID: nativeID, Operation: "respond_permission", Accepted: true,
		Status: providers.StatusCompleted, ProviderState: "decision_sent", Detail: detail,
	}, nil
}

// SetModel implements providers.Adapter.
func (a *Adapter) SetModel(ctx context.Context, nativeID string, model providers.Model) (providers.Receipt, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: err}
	}
	if err := a.open(ctx, c, nativeID); err != nil {
		return providers.Receipt{}, notSent(lostAs("set the model of", err))
	}
	if err := a.setModel(ctx, c, nativeID, model); err != nil {
		return providers.Receipt{}, err
	}
	return a.applied(nativeID, "set_model"), nil
}

// setModel picks the first spelling of model the session offers: the model
// id, then "providerID/modelID".
func (a *Adapter) setModel(ctx context.Context, c *Client, nativeID string, model providers.Model) error {
	value := model.ModelID
	if v, ok := c.Session(nativeID); ok {
		if o, ok := optionFor(v.ConfigOptions, "model", "model"); ok && model.ProviderID != "" && !o.Offers(value) {
			if alt := model.ProviderID + "/" + model.ModelID; o.Offers(alt) {
				value = alt
			}
		}
	}
	if err := c.SetModel(ctx, nativeID, value); err != nil {
		return a.classify("set model", err)
	}
	return nil
}

// SetReasoning implements providers.Adapter.
func (a *Adapter) SetReasoning(ctx context.Context, nativeID, effort string) (providers.Receipt, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: err}
	}
	if err := a.open(ctx, c, nativeID); err != nil {
		return providers.Receipt{}, notSent(lostAs("set the reasoning of", err))
	}
	if err := c.SetReasoning(ctx, nativeID, effort); err != nil {
		return providers.Receipt{}, a.classify("set reasoning", err)
	}
	return a.applied(nativeID, "set_reasoning"), nil
}

// SetMode switches the session's mode (agent/plan/ask for Cursor).
func (a *Adapter) SetMode(ctx context.Context, nativeID, mode string) (providers.Receipt, error) {
	c, err := a.Client(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: err}
	}
	if err := a.open(ctx, c, nativeID); err != nil {
		return providers.Receipt{}, notSent(lostAs("set the mode of", err))
	}
	if err := c.SetMode(ctx, nativeID, mode); err != nil {
		return providers.Receipt{}, a.classify("set mode", err)
	}
	return a.applied(nativeID, "set_mode"), nil
}

func (a *Adapter) applied(nativeID, op string) providers.Receipt {
	return providers.Receipt{
		Provider: a.cfg.Provider, NativeID: nativeID, Operation: op, Accepted: true,
		Status: providers.StatusCompleted, ProviderState: "configuration_applied",
	}
}

// Close implements providers.Adapter: the agent's process group is stopped.
func (a *Adapter) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.starter.Close()
	a.startMu.Lock()
	defer a.startMu.Unlock()
	a.mu.Lock()
	c := a.client
	a.client, a.closed = nil, true
	a.mu.Unlock()
	if c == nil {
		return nil
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("%s close: %w", a.cfg.Provider, err)
	}
	return nil
}

// classify maps client errors onto the delivery contract: unsupported,
// refused before writing (not sent), refused by the agent (rejected), or
// uncertain.
func (a *Adapter) classify(op string, err error) error {
	var ue *UnsupportedError
	var nw *NotWrittenError
	var ce *ChoiceError
	var re *RPCError
	switch {
	case errors.As(err, &ue):
		return &providers.UnsupportedError{Provider: a.cfg.Provider, Operation: op, Reason: ue.Reason}
	case errors.As(err, &nw), errors.As(err, &ce):
		return &providers.NotSentError{Err: fmt.Errorf("%s %s: %w", a.cfg.Provider, op, err)}
	case errors.As(err, &re):
		reason := re.Message
		if re.Code == CodeAuthRequired {
			a.setAuth("unauthorized", re.Message)
			reason = strings.TrimSpace("Authentication required. " + a.cfg.AuthFix)
		}
		return &providers.RejectedError{Reason: reason, Detail: re}
	default:
		return fmt.Errorf("%s %s (outcome unknown): %w", a.cfg.Provider, op, err)
	}
}
