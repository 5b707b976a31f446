// Package server serves a profile of the generated catalog over MCP with the
// go-sdk: raw tool registration, generated argument validation, compact JSON
// answers, legacy answer shapes for aliases, and a tools/list answer that is
// serialized once and then served from memory.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/callinfo"
	"github.com/agent-interop/runtime/internal/growstack"
	"github.com/agent-interop/runtime/internal/progress"
	"github.com/agent-interop/runtime/internal/secrets"
	"github.com/agent-interop/runtime/internal/tokens"
)

// Name is the MCP server name.
const Name = "agent-interop-runtime"

// MaxArgumentBytes caps one call's arguments as a whole.
const MaxArgumentBytes = 1 << 20

// Options configure a Server.
type Options struct {
	Profile  catalogs.Profile
	ReadOnly bool
	Version  string
	Handlers catalogs.Handlers
	// OpenHandlers, when Handlers is nil, gives the handlers at each tool
	// call whose arguments were accepted (serve assembles the runtime on
	// the first one); its error is the call's tool error.
	OpenHandlers func(context.Context) (catalogs.Handlers, error)
	Logger       *slog.Logger
	// Redactor is the one redactor every answer and tool error passes
	// through (default: secrets.Default, built on the first call).
	Redactor func() *secrets.Redactor
	// AfterInitialize runs once, in its own goroutine, after the client's
	// initialized notification: start-up work that must not delay
	// initialize (reconciliation of interrupted sends, provider warm-up).
	// It may keep running until its context ends: Run cancels it and
	// waits for it before returning.
	AfterInitialize func(context.Context)
	// Tokens counts o200k tokens for the answer budgets; defaults to
	// tokens.NewO200k (its table is embedded, nothing is built for it).
	Tokens tokens.Counter
	// SessionID names each new HTTP session (the SDK's default when nil).
	SessionID func() string
	// Signals, when set, are the process's SIGINT and SIGTERM handlers,
	// which serve installs only once it has answered initialize (see
	// package interrupt). The client's next message starts installing
	// them; ping and tools/list, answered from memory, do not wait for
	// them; every other request (a tool call first of all) and the
	// start-up work (AfterInitialize) do, so nothing that reads the store
	// or starts a program runs before Ctrl-C would end it gracefully.
	Signals interface {
		Start()
		Wait()
	}
}

// Server is one MCP server over one profile.
type Server struct {
	mcp     *mcp.Server
	entries []*catalogs.Entry
	byName  map[string]mcp.ToolHandler
	opts    Options
	guard   guard

	listOnce sync.Once
	list     []byte
	listErr  error
	initOnce sync.Once

	// background is the context of the start-up work; Run cancels it and
	// waits for that work before it returns.
	background context.Context
	stopBg     context.CancelFunc
	bg         sync.WaitGroup
}

// New builds the server over the profile's tools. Tools are not registered
// with the SDK one by one (its AddTool re-parses every schema, about 1 ms
// for the full profile on every spawn): tools/list and tools/call are
// answered by a receiving middleware from the generated table.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Tokens == nil {
		opts.Tokens = tokens.NewO200k()
	}
	if opts.Redactor == nil {
		opts.Redactor = secrets.Default
	}
	s := &Server{opts: opts, entries: opts.Profile.Entries(opts.ReadOnly), guard: guard{counter: opts.Tokens}}
	s.background, s.stopBg = context.WithCancel(context.Background())
	s.byName = make(map[string]mcp.ToolHandler, len(s.entries))
	for _, e := range s.entries {
		s.byName[e.Name] = s.handler(e)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: Name, Version: opts.Version}, &mcp.ServerOptions{
		Logger:             opts.Logger,
		Capabilities:       &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		InitializedHandler: s.initialized,
		GetSessionID:       opts.SessionID,
	})
	s.mcp.AddReceivingMiddleware(s.tools)
	return s
}

// Run serves on t until the client disconnects or ctx ends. Before it
// returns, the start-up work (AfterInitialize) is cancelled and waited for,
// so the caller may close what that work uses.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	s.initOnce.Do(func() {}) // no start-up work begins after this point
	s.stopBg()
	s.bg.Wait()
	return err
}

func (s *Server) initialized(context.Context, *mcp.InitializedRequest) { s.startBackground() }

// startBackground starts the start-up work once: after the client's
// initialized notification, or after the first other request was answered
// (a client on the sessionless protocol revision sends no initialize).
func (s *Server) startBackground() {
	if s.opts.AfterInitialize == nil {
		return
	}
	s.initOnce.Do(func() {
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			if s.opts.Signals != nil {
				s.opts.Signals.Wait() // the start-up work reads the store: Ctrl-C ends it gracefully
			}
			s.opts.AfterInitialize(s.background)
		}()
	})
}

// handler decodes, validates and answers one tool call. Every failure the
// caller can act on is a tool error (isError), never a protocol error.
func (s *Server) handler(e *catalogs.Entry) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			// A bug in a handler must not end the process (and with it every
			// session): it becomes this call's tool error.
			if p := recover(); p != nil {
				s.opts.Logger.Error("tool panicked", "tool", e.Name, "panic", fmt.Sprint(p))
				res, err = s.toolError(fmt.Sprintf("%s failed: internal error (%v)", e.Name, p)), nil
			}
		}()
		raw := req.Params.Arguments
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			raw = json.RawMessage("{}")
		}
		if len(raw) > MaxArgumentBytes {
			return s.toolError(fmt.Sprintf("invalid arguments for %s: arguments are %d bytes; the limit is %d", e.Name, len(raw), MaxArgumentBytes)), nil
		}
		in, err := e.Decode(raw)
		if err != nil {
			return s.toolError(err.Error()), nil
		}
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			ctx = progress.With(ctx, func(p, total float64, msg string) {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: total, Message: msg})
			})
		}
		if e.Legacy {
			ctx = callinfo.WithLegacy(ctx)
		}
		// Most calls read the store: the stack SQLite needs, in one step
		// (before the first call assembles the runtime, too).
		growstack.Grow()
		h := s.opts.Handlers
		if h == nil && s.opts.OpenHandlers != nil {
			var herr error
			if h, herr = s.opts.OpenHandlers(ctx); herr != nil {
				return s.toolError(fmt.Sprintf("%s: the runtime could not start: %v", e.Name, herr)), nil
			}
		}
		out, err := e.Call(ctx, h, in)
		if err != nil {
			var ni *catalogs.NotImplementedError
			msg := s.opts.Redactor().String(err.Error())
			if !errors.As(err, &ni) && ctx.Err() == nil {
				s.opts.Logger.Debug("tool failed", "tool", e.Name, "err", msg)
			}
			return s.toolError(msg), nil
		}
		encoded, eerr := s.answer(out, e)
		if eerr != nil {
			s.opts.Logger.Error("tool answer not encodable", "tool", e.Name, "err", eerr)
			return s.toolError(fmt.Sprintf("%s produced an answer that cannot be encoded: %v", e.Name, eerr)), nil
		}
		return encoded, nil
	}
}

// toolError is a tool error whose text went through the redactor: provider
// error texts quote what the provider saw.
func (s *Server) toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s.opts.Redactor().String(msg)}}}
}

// answer encodes a handler's value as compact JSON text and as
// structuredContent (always an object), within the tool's answer budget
// and the wire cap: a page that would pass either is cut short with
// nextCursor (see guard). A legacy alias gets its 0.3.x shape, mapped from
// the typed (and possibly cut) answer: in the text, and in
// structuredContent only when it is an object.
// This is the choke point of secret redaction: every string of every answer
// (file text, verification output, diffs, event data, provider texts)
// passes through the redactor before it leaves, whichever tool built it;
// the guard measures redacted pages.
func (s *Server) answer(out any, e *catalogs.Entry) (*mcp.CallToolResult, error) {
	red := s.opts.Redactor()
	// The first encoding (the handler's whole answer) is kept: a shorter
	// page the guard encodes shares it up to its last record, so only the
	// rest of it is redacted again (secrets.JSONFrom).
	var memo *secrets.JSONMemo
	encode := func(v any) ([]byte, error) {
		var b []byte
		var err error
		if memo == nil {
			b, err = marshal(v)
		} else {
			// A shorter page is about as long as the first: its buffer is
			// sized once instead of doubling up to it.
			b, err = marshalSized(v, len(memo.Raw()))
		}
		if err != nil {
			return nil, err
		}
		if memo == nil {
			out, m := red.JSONKeep(b)
			memo = m
			return out, nil
		}
		return red.JSONFrom(memo, b), nil
	}
	body, err := encode(out)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 || body[0] != '{' {
		return nil, errors.New("answer is not a JSON object")
	}
	fit, err := s.guard.fit(out, body, e.Budget, encode)
	if err != nil {
		return nil, err
	}
	if fit.cut {
		s.opts.Logger.Debug("answer page cut to its budget", "tool", e.Name, "budget", e.Budget, "bytes", len(fit.body), "tokenized", fit.counted)
	}
	body = fit.body
	text, structured := body, body
	if legacy, ok := e.Reshaped(fit.value); ok {
		if text, err = encode(legacy); err != nil {
			return nil, err
		}
		// A 0.3.x answer that is not an object (a bare array, a string) is
		// the text alone: structuredContent must be an object, and a client
		// that hands structuredContent to its model would otherwise show it
		// the modern shape instead of the 0.3.x one.
		structured = nil
		if len(text) > 0 && text[0] == '{' {
			structured = text
		}
	}
	text, wire, err := capWire(text, structured)
	if err != nil {
		return s.toolError(fmt.Sprintf("%s: %v", e.Name, err)), nil
	}
	// text is an encoding of this answer alone, never written to after
	// (see encode), so the content holds it without a copy.
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: unsafe.String(unsafe.SliceData(text), len(text))}}}
	if wire != nil {
		res.StructuredContent = wire
	}
	return res, nil
}

func marshal(v any) ([]byte, error) { return marshalSized(v, 0) }

// marshalSized is marshal with the buffer sized for size bytes first.
func marshalSized(v any, size int) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		// A copy: the answer's text holds its encoding without one, so it
		// must not share the handler's bytes.
		return bytes.Clone(raw), nil
	}
	var b bytes.Buffer
	if size > 0 {
		b.Grow(size + 1) // and Encode's newline
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ToolsList is the compact tools/list result this server answers.
func (s *Server) ToolsList() ([]byte, error) {
	s.listOnce.Do(func() { s.list, s.listErr = BuildToolsList(s.entries) })
	return s.list, s.listErr
}

// BuildToolsList serializes entries as a tools/list result from their
// generated listings.
func BuildToolsList(entries []*catalogs.Entry) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.Listing)
	}
	b.WriteString("]}")
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("generated tool listings do not form valid JSON")
	}
	return b.Bytes(), nil
}

// cachedList is a tools/list result whose tools were serialized once.
// For protocol 2026-07-28 it adds the fields that revision requires
// (resultType, the cache hints and the _meta the SDK annotates).
type cachedList struct {
	mcp.ResultBase
	tools   []byte // the compact {"tools":[...]} object
	current bool   // protocol 2026-07-28 or later
}

func (r *cachedList) MarshalJSON() ([]byte, error) {
	if !r.current {
		return r.tools, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"resultType":"complete",`)
	if len(r.Meta) > 0 {
		meta, err := json.Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		b.WriteString(`"_meta":`)
		b.Write(meta)
		b.WriteByte(',')
	}
	b.WriteString(`"ttlMs":0,"cacheScope":"public",`)
	b.Write(r.tools[1:]) // drop the opening brace of {"tools":[...]}
	return b.Bytes(), nil
}

// tools answers tools/list from bytes built once (paginated requests are
// not expected: the list is one page) and tools/call from the generated
// table; every other method goes to the SDK.
func (s *Server) tools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s.opts.Signals != nil {
			switch {
			case method == "initialize", method == "server/discover": // a session's first answer
			case method == "ping", method == "tools/list", strings.HasPrefix(method, "notifications/"):
				s.opts.Signals.Start() // these answer from memory: nothing to end gracefully yet
			default:
				s.opts.Signals.Wait()
			}
		}
		if method != "initialize" && !strings.HasPrefix(method, "notifications/") {
			defer s.startBackground()
		}
		switch method {
		case "tools/list":
			lr, ok := req.(*mcp.ListToolsRequest)
			if !ok {
				break
			}
			if lr.Params != nil && lr.Params.Cursor != "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: the tool list has a single page"}
			}
			list, err := s.ToolsList()
			if err != nil {
				return nil, err
			}
			return &cachedList{tools: list, current: isCurrentProtocol(lr)}, nil
		case "tools/call":
			cr, ok := req.(*mcp.CallToolRequest)
			if !ok || cr.Params == nil {
				break
			}
			h, ok := s.byName[cr.Params.Name]
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", cr.Params.Name)}
			}
			res, err := h(ctx, cr)
			if err != nil {
				return nil, err
			}
			return wrapResult(cr, res), nil
		}
		return next(ctx, method, req)
	}
}

// isCurrentProtocol reports a request on protocol 2026-07-28 or later. A
// session opened with initialize always negotiates an older revision.
func isCurrentProtocol(req *mcp.ListToolsRequest) bool {
	v := req.ProtocolVersion()
	if req.Session != nil && req.Session.InitializeParams() != nil {
		return false
	}
	return v != "" && strings.Compare(v, "2026-07-28") >= 0
}
