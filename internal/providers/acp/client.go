package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/kit/pending"
	"github.com/agent-interop/runtime/internal/providers/kit/supervise"
	"github.com/agent-interop/runtime/internal/security"
)

// ProtocolVersion is the ACP version this client speaks.
const ProtocolVersion = 1

// ClientName is sent as clientInfo.name.
const ClientName = "agent-interop-runtime"

// FileReader reads a text file for fs/read_text_file. root is the session's
// workspace; path is the absolute path the agent asked for; line is 1-based
// (0: from the start) and limit a line count (0: to the end). It must refuse
// paths outside root and protected files.
type FileReader interface {
	ReadText(root, path string, line, limit int) (string, error)
}

// Inbound is an agent request the generic client does not handle itself,
// offered to Config.Extension.
type Inbound struct {
	Client *Client
	Method string
	Params json.RawMessage
}

// ExtensionFunc answers an inbound request beyond the ACP client methods.
// It returns handled=false to let the client answer -32601.
type ExtensionFunc func(ctx context.Context, in Inbound) (result any, rerr *RPCError, handled bool)

// Config configures one agent process.
type Config struct {
	Provider providers.ID
	Argv     []string // program and arguments
	Dir      string   // working directory of the process
	Env      []string // full environment; nil inherits ours

	ClientVersion string         // clientInfo.version
	ClientMeta    map[string]any // clientCapabilities._meta, if any
	// AuthMethod, when the agent advertises it, is used for authenticate right
	// after initialize (Cursor's cursor_login).
	AuthMethod string

	Clock      quartz.Clock
	Logger     *slog.Logger
	FileReader FileReader
	// NoFileReads offers no fs/read_text_file (the no-fs-read quirk).
	NoFileReads bool
	Extension   ExtensionFunc
	// Trace sees every message line exchanged (for fixtures and debugging).
	Trace func(Direction, []byte)
	// Observe sees every session/update in arrival order, with the id of
	// the session's prompt in flight ("" when none). It must not block.
	Observe func(sessionID, kind string, update json.RawMessage, turnID string)
	// HandshakeTimeout bounds initialize (default DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	// StopGrace is how long Close waits for the agent to exit on stdin EOF
	// before signalling its process group (default 1 s).
	StopGrace time.Duration
}

// AuthError says authenticate failed; the agent needs a login.
type AuthError struct {
	Method string
	Err    error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("authenticate %s: %v", e.Method, e.Err)
}
func (e *AuthError) Unwrap() error { return e.Err }

// IsAuthRequired reports whether err is the agent's "Authentication required"
// answer (ACP code -32000).
func IsAuthRequired(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Code == CodeAuthRequired
}

// Client is one running agent speaking ACP over its stdio.
type Client struct {
	cfg   Config
	clock quartz.Clock
	log   *slog.Logger
	proc  *supervise.Process
	conn  *conn
	init  InitializeResult
	tag   string

	mu       sync.Mutex
	sessions map[string]*session
	held     map[string]*held
	orphans  map[string][]providers.NativeEvent
	heldSeq  int
	turnSeq  int
	ops      pending.Tracker // prompts written whose answer was not read

	closeOnce sync.Once
	closeErr  error
}

// stopTermGrace is how long Close waits after SIGTERM before it kills
// the agent's process group.
const stopTermGrace = 2 * time.Second

// DefaultHandshakeTimeout bounds an agent's answer to initialize.
const DefaultHandshakeTimeout = 2 * time.Minute

// Start spawns the agent, initializes it and, when Config.AuthMethod is
// advertised, authenticates. On error the process is already stopped.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.FileReader == nil {
		cfg.FileReader = DefaultFileReader{}
	}
	if cfg.StopGrace == 0 {
		cfg.StopGrace = time.Second
	}
	// The kit's supervisor: the environment given, its own process group
	// (children end with it), parent death, a bounded stderr tail.
	proc, err := supervise.Start(supervise.Spec{
		Argv: cfg.Argv, Dir: cfg.Dir, Env: cfg.Env, Clock: cfg.Clock,
		Stdin: true, Stdout: supervise.StdoutPipe, ParentDeath: true,
	})
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:      cfg,
		clock:    cfg.Clock,
		log:      cfg.Logger,
		proc:     proc,
		tag:      "p" + strconv.Itoa(proc.PID()),
		sessions: make(map[string]*session),
		held:     make(map[string]*held),
		orphans:  make(map[string][]providers.NativeEvent),
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	// The handshake ends at once when the program prints something that
	// is not JSON-RPC before its first answer (it is not in its ACP mode).
	hctx, hcancel := context.WithCancelCause(ctx)
	defer hcancel(nil)
	c.conn = newConn(proc.Stdin(), proc.Stdout(), c, cfg.Trace, func(line []byte) {
		hcancel(newNotACPError(line, cfg.Argv))
	}, func(rerr *RPCError) {
		hcancel(&HandshakeError{Code: rerr.Code, Message: sanitize(rpcWords(rerr))})
	})
	// An agent that exited ends the connection even when a grandchild
	// still holds its stdout.
	supervise.EndAfterExit(cfg.Clock, proc.Exited(), c.conn.Done(), supervise.ExitDrain, func() { _ = proc.Stdout().Close() })
	go func() {
		<-c.conn.Done()
		c.dropHeld()
		c.closeSubscribers()
	}()
	// The handshake is bounded on the injected clock: a program that
	// never answers is stopped, not waited on.
	timer := cfg.Clock.AfterFunc(cfg.HandshakeTimeout, func() {
		hcancel(fmt.Errorf("no answer to initialize within %s", cfg.HandshakeTimeout))
	}, "acp", "handshake")
	err = c.initialize(hctx)
	var notWritten *NotWrittenError
	if errors.As(err, &notWritten) && context.Cause(hctx) == nil {
		// A program that prints a line and exits can close its stdin
		// before that line is read, so the write fails first. Let the
		// reader reach the end of what it printed (the connection ends
		// at its EOF, or after the exit's drain), within the handshake's
		// bound, so a non-ACP line is reported rather than the pipe.
		select {
		case <-c.conn.Done():
		case <-hctx.Done():
		}
	}
	timer.Stop()
	// A stray line read before the answer wins even when the answer was
	// returned first: the connection reports it before it hands the
	// answer over, so the outcome does not depend on scheduling.
	var notACP *NotACPError
	var refused *HandshakeError
	cause := context.Cause(hctx)
	switch {
	case errors.As(cause, &notACP):
		err = fmt.Errorf("initialize: %w", notACP)
	case errors.As(cause, &refused):
		err = fmt.Errorf("initialize: %w", refused)
	case err != nil && cause != nil && ctx.Err() == nil:
		err = fmt.Errorf("%w (the program does not speak ACP on its stdin/stdout, or is stuck: check the command and that it runs in ACP mode)", cause)
	}
	hcancel(nil)
	if err != nil {
		_ = c.Close()
		return nil, c.withStderr(err)
	}
	if cfg.AuthMethod != "" && c.init.HasAuthMethod(cfg.AuthMethod) {
		if _, err := c.conn.Call(ctx, "authenticate", sdk.AuthenticateRequest{MethodId: cfg.AuthMethod}, nil); err != nil {
			_ = c.Close()
			return nil, &AuthError{Method: cfg.AuthMethod, Err: err}
		}
	}
	return c, nil
}

// HandshakeError says the agent answered initialize with an error that
// names no request (id null: JSON-RPC's answer to a request it could not
// read, such as a parse error). Message is the agent's words (message and
// data.message), redacted, without control characters, at most 200
// characters.
type HandshakeError struct {
	Code    int
	Message string
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("the agent answered initialize with an error for no request (id null, code %d): %s "+
		"(it could not read the request: check that the command runs the agent's ACP mode and that it speaks ACP v%d)", e.Code, strconv.Quote(e.Message), ProtocolVersion)
}

// rpcWords is an error answer's message with its data.message, if any.
func rpcWords(re *RPCError) string {
	var data struct {
		Message string `json:"message"`
	}
	if len(re.Data) > 0 && json.Unmarshal(re.Data, &data) == nil && data.Message != "" && data.Message != re.Message {
		return re.Message + ": " + data.Message
	}
	return re.Message
}

// withStderr appends the agent's last stderr lines to a start-up error.
func (c *Client) withStderr(err error) error {
	tail := c.proc.Tail()
	if tail == "" {
		return err
	}
	tail = security.RedactString(tail)
	if len(tail) > 600 {
		tail = "…" + strings.ToValidUTF8(tail[len(tail)-600:], "")
	}
	return fmt.Errorf("%w; agent stderr: %s", err, tail)
}

type initializeParams struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientInfo         sdk.Implementation `json:"clientInfo"`
	ClientCapabilities clientCapabilities `json:"clientCapabilities"`
}

type clientCapabilities struct {
	Fs       fsCapabilities `json:"fs"`
	Terminal bool           `json:"terminal"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

type fsCapabilities struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

func (c *Client) initialize(ctx context.Context) error {
	version := c.cfg.ClientVersion
	if version == "" {
		version = "dev"
	}
	raw, err := c.conn.Call(ctx, "initialize", initializeParams{
		ProtocolVersion:    ProtocolVersion,
		ClientInfo:         sdk.Implementation{Name: ClientName, Version: version},
		ClientCapabilities: clientCapabilities{Fs: fsCapabilities{ReadTextFile: !c.cfg.NoFileReads}, Meta: c.cfg.ClientMeta},
	}, nil)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var res InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("initialize: decoding answer: %w", err)
	}
	res.Raw = raw
	if res.ProtocolVersion != ProtocolVersion {
		return fmt.Errorf("initialize: agent speaks ACP protocol version %d, this client speaks %d", res.ProtocolVersion, ProtocolVersion)
	}
	c.init = res
	return nil
}

// Init returns the initialize answer.
func (c *Client) Init() InitializeResult { return c.init }

// PID returns the agent's process id.
func (c *Client) PID() int { return c.proc.PID() }

// Stderr returns the tail of the agent's stderr.
func (c *Client) Stderr() string { return c.proc.Tail() }

// Done is closed when the connection to the agent has ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Close stops the agent and its process group. Held requests are dropped and
// subscriber channels closed.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		// stdin closed (an agent exits on EOF), then SIGTERM, then the
		// group is killed, on the injected clock.
		c.proc.Stop(supervise.Grace{AfterStdin: c.cfg.StopGrace, AfterTerm: stopTermGrace})
		var ee *exec.ExitError
		if err := c.proc.Err(); err != nil && !errors.As(err, &ee) {
			c.closeErr = fmt.Errorf("waiting for agent: %w", err)
		}
		<-c.conn.Done()
	})
	return c.closeErr
}

// Call sends any request and returns the raw answer (for methods the client
// has no helper for).
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.conn.Call(ctx, method, params, nil)
}

// --- sessions -------------------------------------------------------------

// NewSession creates a session in cwd (made absolute).
func (c *Client) NewSession(ctx context.Context, cwd string) (SessionSetup, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return SessionSetup{}, &NotWrittenError{Err: fmt.Errorf("workspace %q: %w", cwd, err)}
	}
	raw, err := c.conn.Call(ctx, "session/new", sdk.NewSessionRequest{Cwd: abs, McpServers: []sdk.McpServer{}}, nil)
	if err != nil {
		return SessionSetup{}, fmt.Errorf("session/new: %w", err)
	}
	setup := decodeSetup(raw)
	if setup.SessionID == "" {
		return SessionSetup{}, fmt.Errorf("session/new: answer has no sessionId: %s", raw)
	}
	c.register(setup.SessionID, abs).apply(setup)
	return setup, nil
}

// LoadSession loads a session (agentCapabilities.loadSession). The history
// the agent replays arrives as events before this returns.
func (c *Client) LoadSession(ctx context.Context, sessionID, cwd string) (SessionSetup, error) {
	if !c.init.AgentCapabilities.LoadSession {
		return SessionSetup{}, &NotWrittenError{Err: errors.New("the agent does not advertise loadSession")}
	}
	return c.reopen(ctx, "session/load", sdk.LoadSessionRequest{SessionId: sdk.SessionId(sessionID), Cwd: cwd, McpServers: []sdk.McpServer{}}, sessionID, cwd)
}

// ResumeSession resumes a session without replay (sessionCapabilities.resume).
func (c *Client) ResumeSession(ctx context.Context, sessionID, cwd string) (SessionSetup, error) {
	if !c.init.AgentCapabilities.Session("resume") {
		return SessionSetup{}, &NotWrittenError{Err: errors.New("the agent does not advertise sessionCapabilities.resume")}
	}
	return c.reopen(ctx, "session/resume", sdk.ResumeSessionRequest{SessionId: sdk.SessionId(sessionID), Cwd: cwd, McpServers: []sdk.McpServer{}}, sessionID, cwd)
}

func (c *Client) reopen(ctx context.Context, method string, params any, sessionID, cwd string) (SessionSetup, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil || cwd == "" {
		return SessionSetup{}, &NotWrittenError{Err: fmt.Errorf("%s needs the session's workspace, got %q", method, cwd)}
	}
	c.mu.Lock()
	_, existed := c.sessions[sessionID]
	c.mu.Unlock()
	s := c.register(sessionID, abs) // replayed updates land in its backlog
	raw, err := c.conn.Call(ctx, method, params, nil)
	if err != nil {
		if !existed {
			c.mu.Lock()
			delete(c.sessions, sessionID)
			c.mu.Unlock()
		}
		return SessionSetup{}, fmt.Errorf("%s: %w", method, err)
	}
	setup := decodeSetup(raw)
	setup.SessionID = sessionID // Cursor's load answer may omit it
	s.apply(setup)
	return setup, nil
}

// ListSessions pages through session/list (sessionCapabilities.list). cwd
// filters when not empty.
func (c *Client) ListSessions(ctx context.Context, cwd string) ([]SessionInfo, error) {
	if !c.init.AgentCapabilities.Session("list") {
		return nil, &NotWrittenError{Err: errors.New("the agent does not advertise sessionCapabilities.list")}
	}
	var out []SessionInfo
	var cursor *string
	for page := 0; page < 50; page++ {
		req := sdk.ListSessionsRequest{Cursor: cursor}
		if cwd != "" {
			req.Cwd = &cwd
		}
		raw, err := c.conn.Call(ctx, "session/list", req, nil)
		if err != nil {
			return out, fmt.Errorf("session/list: %w", err)
		}
		var res struct {
			Sessions   []json.RawMessage `json:"sessions"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return out, fmt.Errorf("session/list: decoding answer: %w", err)
		}
		for _, r := range res.Sessions {
			var info SessionInfo
			if json.Unmarshal(r, &info) == nil && info.SessionID != "" {
				info.Raw = r
				out = append(out, info)
			}
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// CloseSession closes a session (sessionCapabilities.close) and forgets it.
func (c *Client) CloseSession(ctx context.Context, sessionID string) error {
	if !c.init.AgentCapabilities.Session("close") {
		return &NotWrittenError{Err: errors.New("the agent does not advertise sessionCapabilities.close")}
	}
	if _, err := c.conn.Call(ctx, "session/close", sdk.CloseSessionRequest{SessionId: sdk.SessionId(sessionID)}, nil); err != nil {
		return fmt.Errorf("session/close: %w", err)
	}
	c.forget(sessionID)
	return nil
}

// forget drops a session from this client without telling the agent
// (its subscribers' channels are closed): the next use reopens it.
func (c *Client) forget(sessionID string) {
	c.mu.Lock()
	s := c.sessions[sessionID]
	delete(c.sessions, sessionID)
	c.mu.Unlock()
	if s != nil {
		s.closeSubscribers()
	}
}

// Session returns what the client knows of an open session.
func (c *Client) Session(sessionID string) (SessionView, bool) {
	c.mu.Lock()
	s := c.sessions[sessionID]
	c.mu.Unlock()
	if s == nil {
		return SessionView{}, false
	}
	return s.view(), true
}

// Sessions lists the sessions open in this agent process.
func (c *Client) Sessions() []SessionView {
	c.mu.Lock()
	list := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		list = append(list, s)
	}
	c.mu.Unlock()
	out := make([]SessionView, 0, len(list))
	for _, s := range list {
		out = append(out, s.view())
	}
	return out
}

func (c *Client) register(id, cwd string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.sessions[id]; ok {
		s.mu.Lock()
		s.cwd = cwd
		s.mu.Unlock()
		return s
	}
	s := newSession(id, cwd, c.clock.Now())
	c.sessions[id] = s
	for _, ev := range c.orphans[id] {
		s.publish(ev)
	}
	delete(c.orphans, id)
	return s
}

func (c *Client) lookup(id string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

// --- prompts --------------------------------------------------------------

// Turn is one prompt. Done is closed when its answer (or the end of the
// connection) arrived; then StopReason/Result or Err are set.
type Turn struct {
	ID        string
	SessionID string
	SentAt    time.Time

	done       chan struct{}
	StopReason string
	Result     json.RawMessage
	Err        error
}

// Done is closed when the turn ended.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Prompt queues text for the session: it waits (bounded by ctx) until the
// session's previous prompt ended, writes session/prompt, and returns once
// the request was written. A *NotWrittenError means it was never written.
// The turn's outcome arrives on Turn.Done.
func (c *Client) Prompt(ctx context.Context, sessionID, text string) (*Turn, error) {
	s := c.lookup(sessionID)
	if s == nil {
		return nil, &NotWrittenError{Err: fmt.Errorf("session %s is not open in this agent process", sessionID)}
	}
	select {
	case s.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, &NotWrittenError{Err: fmt.Errorf("waiting for the session's previous prompt: %w", ctx.Err())}
	case <-c.conn.Done():
		return nil, &NotWrittenError{Err: fmt.Errorf("connection closed: %w", c.conn.Err())}
	}
	c.mu.Lock()
	c.turnSeq++
	t := &Turn{ID: fmt.Sprintf("%s-turn-%d", c.tag, c.turnSeq), SessionID: sessionID, done: make(chan struct{})}
	c.mu.Unlock()

	written := make(chan struct{})
	failed := make(chan error, 1)
	req := sdk.PromptRequest{SessionId: sdk.SessionId(sessionID), Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}
	// The turn is current before the request leaves: the agent's first
	// messages (cursor/* requests carry no sessionId) may be dispatched
	// before the write call returns.
	s.setTurn(t)
	go func() {
		raw, err := c.conn.Call(context.Background(), "session/prompt", req, func() {
			t.SentAt = c.clock.Now()
			// In flight until its answer is read; a lost connection
			// settles it (Lost). Added before Call can return, so the
			// loss never misses it.
			c.ops.Add(pending.Op{NativeID: sessionID, Ref: t.ID,
				Unsettled: "turn " + t.ID + " had not completed and may have run in part; it is not resent"})
			close(written)
		})
		var nw *NotWrittenError
		if errors.As(err, &nw) {
			s.setTurn(nil)
			t.Err = err
			close(t.done) // nobody holds it; Lost does not wait for it
			<-s.slot
			failed <- err
			return
		}
		c.finishTurn(s, t, raw, err)
	}()
	select {
	case <-written:
		return t, nil
	case err := <-failed:
		return nil, err
	}
}

func (c *Client) finishTurn(s *session, t *Turn, raw json.RawMessage, err error) {
	t.Result, t.Err = raw, err
	if !errors.Is(err, ErrConnectionClosed) {
		c.ops.Settle(t.ID) // answered: its outcome is the answer, not the loss
	}
	if err == nil {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(raw, &res)
		t.StopReason = res.StopReason
	}
	data := raw
	if err != nil {
		var re *RPCError
		if errors.As(err, &re) {
			data, _ = json.Marshal(map[string]any{"error": re})
		} else {
			data, _ = json.Marshal(map[string]any{"error": map[string]string{"message": err.Error()}})
		}
	}
	// The prompt's answer is an event too, typed by its method: no
	// session/update kind contains a slash, so it cannot be mistaken for one.
	c.emit(s.id, "session/prompt", data)
	// The outcome is reported once the turn is done: by then every
	// subscriber took every update that arrived before the answer (the
	// notifications were dispatched in order before it), and the answer.
	s.awaitDelivery(c.clock)
	s.setTurn(nil)
	<-s.slot
	close(t.done)
}

// Cancel sends session/cancel (a notification) and answers the session's
// held permission requests with "cancelled", as the protocol requires.
func (c *Client) Cancel(sessionID string) error {
	if err := c.conn.Notify("session/cancel", sdk.CancelNotification{SessionId: sdk.SessionId(sessionID)}); err != nil {
		return fmt.Errorf("session/cancel: %w", err)
	}
	c.cancelHeld(sessionID)
	return nil
}

// Lost settles, once the connection ended, every prompt whose answer was
// never read as delivery_unknown with why (pending.Tracker.Lost), after
// the turns still in flight ended: a turn whose answer was read before
// the end is settled by its answer, never by the loss. It waits for the
// connection's end.
func (c *Client) Lost(why string) []pending.Outcome {
	<-c.conn.Done()
	c.mu.Lock()
	list := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		list = append(list, s)
	}
	c.mu.Unlock()
	for _, s := range list {
		if t := s.turn(); t != nil {
			<-t.Done() // its Call returns at once: the connection ended
		}
	}
	return c.ops.Lost(why)
}

// Running returns the session's turn in flight, if any.
func (c *Client) Running(sessionID string) *Turn {
	if s := c.lookup(sessionID); s != nil {
		return s.turn()
	}
	return nil
}

// --- configuration -------------------------------------------------------

// UnsupportedError says the agent did not advertise what was asked.
type UnsupportedError struct {
	Operation string
	Reason    string
}

func (e *UnsupportedError) Error() string { return e.Operation + ": " + e.Reason }

// ChoiceError says a value is not one the agent offered (refused before
// anything was written).
type ChoiceError struct {
	What    string
	Value   string
	Offered []string
}

func (e *ChoiceError) Error() string {
	return fmt.Sprintf("%s %q is not offered by the agent; offered: %v", e.What, e.Value, e.Offered)
}

// SetConfigOption sets a config option and records the refreshed options.
func (c *Client) SetConfigOption(ctx context.Context, sessionID, configID, value string) error {
	s := c.lookup(sessionID)
	if s == nil {
		return &NotWrittenError{Err: fmt.Errorf("session %s is not open in this agent process", sessionID)}
	}
	req := sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: sdk.SessionId(sessionID), ConfigId: sdk.SessionConfigId(configID), Value: sdk.SessionConfigValueId(value)}}
	raw, err := c.conn.Call(ctx, "session/set_config_option", req, nil)
	if err != nil {
		return fmt.Errorf("session/set_config_option %s: %w", configID, err)
	}
	var res struct {
		ConfigOptions []json.RawMessage `json:"configOptions"`
	}
	if json.Unmarshal(raw, &res) == nil && res.ConfigOptions != nil {
		s.setConfigOptions(decodeConfigOptions(res.ConfigOptions))
	} else {
		s.setConfigValue(configID, value)
	}
	return nil
}

// SetMode switches the session's mode: through the "mode" config option
// when advertised, else session/set_mode when modes are advertised.
func (c *Client) SetMode(ctx context.Context, sessionID, mode string) error {
	v, ok := c.Session(sessionID)
	if !ok {
		return &NotWrittenError{Err: fmt.Errorf("session %s is not open in this agent process", sessionID)}
	}
	if o, ok := optionFor(v.ConfigOptions, "mode", "mode"); ok {
		if !o.Offers(mode) {
			return &ChoiceError{What: "mode", Value: mode, Offered: o.Values()}
		}
		return c.SetConfigOption(ctx, sessionID, o.ID, mode)
	}
	if v.Modes == nil {
		return &UnsupportedError{Operation: "set mode", Reason: "the session advertises neither a mode config option nor modes"}
	}
	var offered []string
	for _, m := range v.Modes.AvailableModes {
		offered = append(offered, m.ID)
	}
	if !contains(offered, mode) {
		return &ChoiceError{What: "mode", Value: mode, Offered: offered}
	}
	if _, err := c.conn.Call(ctx, "session/set_mode", sdk.SetSessionModeRequest{SessionId: sdk.SessionId(sessionID), ModeId: sdk.SessionModeId(mode)}, nil); err != nil {
		return fmt.Errorf("session/set_mode: %w", err)
	}
	c.lookup(sessionID).setMode(mode)
	return nil
}

// SetModeID switches the session's mode through session/set_mode, whatever
// config options the session advertises.
func (c *Client) SetModeID(ctx context.Context, sessionID, mode string) error {
	if _, ok := c.Session(sessionID); !ok {
		return &NotWrittenError{Err: fmt.Errorf("session %s is not open in this agent process", sessionID)}
	}
	if _, err := c.conn.Call(ctx, "session/set_mode", sdk.SetSessionModeRequest{SessionId: sdk.SessionId(sessionID), ModeId: sdk.SessionModeId(mode)}, nil); err != nil {
		return fmt.Errorf("session/set_mode: %w", err)
	}
	c.lookup(sessionID).setMode(mode)
	return nil
}

// SetModel selects the session's model: through the "model" config option
// when advertised, else session/set_model when models are advertised.
func (c *Client) SetModel(ctx context.Context, sessionID, model string) error {
	v, ok := c.Session(sessionID)
	if !ok {
		return &NotWrittenError{Err: fmt.Errorf("session %s is not open in this agent process", sessionID)}
	}
	if o, ok := optionFor(v.ConfigOptions, "model", "model"); ok {
		if !o.Offers(model) {
			return &ChoiceError{What: "model", Value: model, Offered: o.Values()}
		}
		return c.SetConfigOption(ctx, sessionID, o.ID, model)
	}
	if v.Models == nil {
		return &UnsupportedError{Operation: "set model", Reason: "the session advertises neither a model config option nor models"}
	}
	if _, err := c.conn.Call(ctx, "session/set_model", sdk.UnstableSetSessionModelRequest{SessionId: sdk.SessionId(sessionID), ModelId: sdk.UnstableModelId(model)}, nil); err != nil {
		return fmt.Errorf("session/set_model: %w", err)
	}
	c.lookup(sessionID).setModel(model)
	return nil
}

// SetReasoning sets the thought level through a config option of category
// thought_level (or id thought_level, reasoning, effort, thinking).
func (c *Client) SetReasoning(ctx context.Context, sessionID, level string) error {
	v, ok := c.Session(sessionID)
	if !ok {
		return &NotWrittenError{Err: fmt.Errorf("session %s is not open in this agent process", sessionID)}
	}
	o, ok := optionFor(v.ConfigOptions, "thought_level", "thought_level", "reasoning", "effort", "thinking")
	if !ok {
		return &UnsupportedError{Operation: "set reasoning", Reason: "the session advertises no thought_level config option"}
	}
	if !o.Offers(level) {
		return &ChoiceError{What: "reasoning level", Value: level, Offered: o.Values()}
	}
	return c.SetConfigOption(ctx, sessionID, o.ID, level)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
