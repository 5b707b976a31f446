// Package fakemodel is the project's fake model server for tests.
//
// One [Server] listens on 127.0.0.1 on an ephemeral port and speaks the four
// model APIs the real provider programs call:
//
//   - OpenAI Chat Completions, POST /v1/chat/completions (streaming SSE or
//     JSON), used by OpenCode through @ai-sdk/openai-compatible;
//   - OpenAI Responses, POST /v1/responses (SSE), used by Codex;
//   - Anthropic Messages, POST /v1/messages (SSE or JSON) and
//     /v1/messages/count_tokens, used by Claude Code (claude-agent-acp);
//   - the Gemini API, POST /v1beta/models/{model}:streamGenerateContent,
//     :generateContent and :countTokens, used by Gemini CLI (gemini.go).
//
// A test scripts the answers with rules matched on the LAST user message of a
// request only (never the whole body, so one magic word cannot poison later
// turns of the same conversation):
//
//	fm := fakemodel.New(t)
//	fm.On(fakemodel.Contains("WRITEFILE"), fakemodel.WriteFile("/abs/hello.txt", "hi\n"))
//	fm.On(fakemodel.Contains("SLOW"), fakemodel.Text("late").WithDelay(time.Minute))
//	fm.On(fakemodel.Contains("FAIL401"), fakemodel.Fail(401, "Incorrect API key provided"))
//	fm.SetDefault(fakemodel.Text("Hello from fake model."))
//
// A tool reply is turned into the calling program's own tool format (OpenCode
// "write"/"bash", Claude Code "Write"/"Bash", Codex "apply_patch" or
// "exec_command"), chosen from the tools the request offers. When the request continues after a tool
// result, the server answers the rule's follow-up text instead of matching
// again, so a tool rule never loops.
//
// Every request is counted and logged with its last user message; [Server.Count]
// counts the turn-starting requests that carried a given text, which lets a
// test detect a provider send that went out twice. Delays end early when the
// client disconnects or the server closes. Request bodies, the log and delays
// are bounded.
package fakemodel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bounds of the server.
const (
	// MaxBody is the largest request body read; larger bodies get 413.
	MaxBody = 16 << 20
	// MaxLoggedBody is how much of each request body the log keeps.
	MaxLoggedBody = 256 << 10
	// MaxLog is how many requests the log keeps (the oldest are dropped).
	MaxLog = 1000
	// MaxDelay caps any scripted delay.
	MaxDelay = 10 * time.Minute
)

// API names the model API a request used.
type API string

// The APIs the server answers.
const (
	ChatCompletions API = "chat.completions"
	Responses       API = "responses"
	Messages        API = "messages"
	CountTokens     API = "messages.count_tokens"
	Models          API = "models"
	OtherAPI        API = "other"
)

// Request is one logged request.
type Request struct {
	Seq    int       // 1-based arrival order
	Time   time.Time // arrival time
	API    API
	Method string
	Path   string
	Model  string
	Stream bool
	// LastUser is the text of the last user message, without the context
	// blocks programs add (<system-reminder>, <environment_context>, …).
	LastUser string
	// Continuation is true when the request's last input item is a tool
	// result: the program continues a turn after running a tool.
	Continuation bool
	// Tools lists the names of the tools the request offered.
	Tools []string
	// Side is true for a request that offered no tools, such as OpenCode's
	// session-title generation. Side requests are answered with text only.
	Side bool
	// Rule names what answered: a rule label, "default", "follow-up" or "side".
	Rule string
	// Status is the HTTP status answered.
	Status int
	// Note holds a diagnostic, e.g. why a scripted tool call could not be made.
	Note string
	// Body is the request body, truncated to MaxLoggedBody.
	Body []byte
}

// Server is a running fake model server. It is safe for concurrent use.
type Server struct {
	srv    *httptest.Server
	closed chan struct{}
	once   sync.Once

	mu       sync.Mutex
	rules    []*rule
	deflt    Reply
	log      []Request
	total    int
	changed  chan struct{} // closed and replaced on every new log entry
	nextCall int
	nextID   int
}

// New starts a server for the test and closes it at cleanup.
func New(tb testing.TB) *Server {
	tb.Helper()
	s, err := Start()
	if err != nil {
		tb.Fatalf("fakemodel: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server on 127.0.0.1 with an ephemeral port. The caller must
// Close it. Use it where no testing.TB is at hand (TestMain, shared servers).
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	s := &Server{
		closed:  make(chan struct{}),
		changed: make(chan struct{}),
		deflt:   Text("Hello from fake model."),
	}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(s.routes))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Config.ReadHeaderTimeout = 10 * time.Second
	hs.Config.MaxHeaderBytes = 1 << 20
	hs.Start()
	s.srv = hs
	return s, nil
}

// URL is the server's root, e.g. "http://127.0.0.1:41234". Anthropic clients
// take it as their base URL (ANTHROPIC_BASE_URL).
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is the OpenAI-style base URL, URL()+"/v1" (OpenCode's
// provider.options.baseURL, Codex's model_providers.<id>.base_url).
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Close ends every pending delay and stream, then stops the server and waits
// for its handlers. It is idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Match selects requests by their last user message.
type Match struct {
	Substring string // matches when the text contains it
	Exact     string // matches when the text equals it (after trimming spaces)
	Last      string // matches when the text's last paragraph equals it
}

// Contains matches a last user message that contains sub.
func Contains(sub string) Match { return Match{Substring: sub} }

// Exact matches a last user message equal to text (surrounding spaces ignored).
func Exact(text string) Match { return Match{Exact: text} }

// Last matches a last user message whose last paragraph is text: the message
// is text, or ends with a blank line and text. Claude Code, after a failed
// turn whose transcript holds no reply, sends the failed prompt again as
// history in the same user message as the next prompt; Last matches that
// next prompt, and not the later message that carries text as history.
func Last(text string) Match { return Match{Last: text} }

// lastParagraph reports whether text's last paragraph is want.
func lastParagraph(text, want string) bool {
	text, want = strings.TrimSpace(text), strings.TrimSpace(want)
	return text == want || strings.HasSuffix(text, "\n\n"+want)
}

func (m Match) matches(text string) bool {
	switch {
	case m.Exact != "":
		return strings.TrimSpace(text) == strings.TrimSpace(m.Exact)
	case m.Last != "":
		return lastParagraph(text, m.Last)
	case m.Substring != "":
		return strings.Contains(text, m.Substring)
	}
	return false
}

func (m Match) String() string {
	if m.Exact != "" {
		return fmt.Sprintf("exact %q", m.Exact)
	}
	if m.Last != "" {
		return fmt.Sprintf("last paragraph %q", m.Last)
	}
	return fmt.Sprintf("contains %q", m.Substring)
}

// ToolKind says what a scripted tool call does.
type ToolKind int

// Tool kinds.
const (
	// ToolRaw calls Name with Arguments verbatim.
	ToolRaw ToolKind = iota
	// ToolWriteFile writes Content to Path with the program's file-edit
	// tool: OpenCode and Claude Code write, Codex applies a patch (its
	// apply_patch tool, else `apply_patch` through its shell tool), so the
	// program asks a file-edit approval, not a command approval.
	ToolWriteFile
	// ToolRunCommand runs Command with the program's shell tool.
	ToolRunCommand
)

// ToolCall is a scripted tool call.
type ToolCall struct {
	Kind      ToolKind
	Path      string         // ToolWriteFile; Claude Code requires an absolute path
	Content   string         // ToolWriteFile
	Command   string         // ToolRunCommand
	Name      string         // ToolRaw
	Arguments map[string]any // ToolRaw
}

// HTTPError is a scripted HTTP error, answered with the provider-shaped body
// of the API called (OpenAI {"error":{…}} or Anthropic {"type":"error",…}).
type HTTPError struct {
	Status  int
	Message string
}

// Reply is what the server answers to a matched request. Exactly one of
// Text, Tool and Error is meaningful; Error wins over Tool, Tool over Text.
type Reply struct {
	Text  string
	Tool  *ToolCall
	Error *HTTPError
	// Delay postpones the whole answer (before any byte is written). It ends
	// early, without an answer, when the client disconnects or the server
	// closes. It is capped at MaxDelay.
	Delay time.Duration
	// Gate, when set, holds the answer (after Delay) until the channel is
	// closed: a test answers when its condition holds, not after a guessed
	// time. It ends the same way as Delay when the client or server goes.
	Gate <-chan struct{}
	// Drop, when set, ends a held answer (see Gate) without one: once the
	// channel is closed the connection is dropped, as a model connection
	// lost mid-request. A test uses it to end a request a program it no
	// longer drives still waits on.
	Drop <-chan struct{}
	// FollowUp is the text answered when the program continues after the
	// tool result; "Done." when empty.
	FollowUp string
	// Empty answers no output at all ([Empty]); Truncated ends Text on the
	// output token limit ([Truncated]); Usage is the token usage reported
	// (nil: [DefaultUsage]). See outcome.go.
	Empty     bool
	Truncated bool
	Usage     *Usage
}

// Text answers text.
func Text(s string) Reply { return Reply{Text: s} }

// WriteFile answers a tool call that writes content to path.
func WriteFile(path, content string) Reply {
	return Reply{Tool: &ToolCall{Kind: ToolWriteFile, Path: path, Content: content}}
}

// RunCommand answers a tool call that runs a shell command.
func RunCommand(command string) Reply {
	return Reply{Tool: &ToolCall{Kind: ToolRunCommand, Command: command}}
}

// CallTool answers a call of the named tool with the given arguments.
func CallTool(name string, args map[string]any) Reply {
	return Reply{Tool: &ToolCall{Kind: ToolRaw, Name: name, Arguments: args}}
}

// Fail answers an HTTP error with the provider-shaped error body.
func Fail(status int, message string) Reply {
	return Reply{Error: &HTTPError{Status: status, Message: message}}
}

// WithDelay returns r answered after d (cancellable, capped at MaxDelay).
func (r Reply) WithDelay(d time.Duration) Reply { r.Delay = d; return r }

// WithGate returns r answered only once gate is closed.
func (r Reply) WithGate(gate <-chan struct{}) Reply { r.Gate = gate; return r }

// WithDrop returns r whose held answer is dropped once drop is closed.
func (r Reply) WithDrop(drop <-chan struct{}) Reply { r.Drop = drop; return r }

// WithFollowUp returns r whose tool result is answered with text.
func (r Reply) WithFollowUp(text string) Reply { r.FollowUp = text; return r }

type rule struct {
	label string
	match Match
	reply Reply
	left  int // remaining uses; <0 means unlimited
}

// On adds a rule used for every matching request. Rules are tried in the
// order they were added; the first match answers.
func (s *Server) On(m Match, r Reply) { s.add(m, r, -1) }

// Times adds a rule used for at most n matching requests.
func (s *Server) Times(n int, m Match, r Reply) { s.add(m, r, n) }

func (s *Server) add(m Match, r Reply, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &rule{label: m.String(), match: m, reply: r, left: n})
}

// SetDefault sets the answer for requests no rule matches
// (initially Text("Hello from fake model.")).
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deflt = r
}

// Reset removes every rule, restores the default answer and clears the log.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
	s.deflt = Text("Hello from fake model.")
	s.log = nil
	s.total = 0
}

// Requests returns a copy of the log, oldest first (at most MaxLog entries).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Total is the number of requests received since start or Reset.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Count is the number of turn-starting model requests whose last user message
// contains text. A turn-starting request is one to a model API that is
// neither a Continuation after a tool result nor a Side request; every prompt
// a provider delivers produces exactly one, so a count above one for a text
// sent once means the provider received it twice.
func (s *Server) Count(text string) int {
	return s.count(func(r Request) bool { return strings.Contains(r.LastUser, text) })
}

// CountExact is Count with equality (surrounding spaces ignored) instead of
// containment.
func (s *Server) CountExact(text string) int {
	want := strings.TrimSpace(text)
	return s.count(func(r Request) bool { return strings.TrimSpace(r.LastUser) == want })
}

// CountLast is Count with Last's rule instead of containment: the requests
// that delivered text as their new prompt, alone or after history.
func (s *Server) CountLast(text string) int {
	return s.count(func(r Request) bool { return lastParagraph(r.LastUser, text) })
}

func (s *Server) count(pred func(Request) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if r.turnStarting() && pred(r) {
			n++
		}
	}
	return n
}

func (r Request) turnStarting() bool {
	switch r.API {
	case ChatCompletions, Responses, Messages, GeminiGenerate:
		return !r.Continuation && !r.Side
	}
	return false
}

// Await waits until a logged request satisfies pred and returns it. It looks
// at the requests already logged first. It fails when ctx ends or the server
// closes.
func (s *Server) Await(ctx context.Context, pred func(Request) bool) (Request, error) {
	seen := 0
	for {
		s.mu.Lock()
		for ; seen < len(s.log); seen++ {
			if pred(s.log[seen]) {
				r := s.log[seen]
				s.mu.Unlock()
				return r, nil
			}
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("fakemodel: awaiting a request: %w", ctx.Err())
		case <-s.closed:
			return Request{}, errors.New("fakemodel: server closed while awaiting a request")
		}
		s.mu.Lock()
		if seen > len(s.log) { // the log was trimmed or reset
			seen = 0
		}
		s.mu.Unlock()
	}
}

// record appends r to the log and wakes Await.
func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total++
	r.Seq = s.total
	if len(r.Body) > MaxLoggedBody {
		r.Body = r.Body[:MaxLoggedBody]
	}
	s.log = append(s.log, r)
	if len(s.log) > MaxLog {
		s.log = append([]Request(nil), s.log[len(s.log)-MaxLog:]...)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// decide picks the answer for a parsed request and names what answered.
func (s *Server) decide(p parsed) (Reply, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.continuation {
		follow := "Done."
		for _, r := range s.rules {
			if r.match.matches(p.lastUser) && r.reply.Tool != nil {
				if r.reply.FollowUp != "" {
					follow = r.reply.FollowUp
				}
				break
			}
		}
		return Text(follow), "follow-up"
	}
	reply, label := s.deflt, "default"
	for _, r := range s.rules {
		if r.left == 0 || !r.match.matches(p.lastUser) {
			continue
		}
		if r.left > 0 {
			r.left--
		}
		reply, label = r.reply, r.label
		break
	}
	if len(p.tools) == 0 && reply.Error == nil {
		// A side request (title generation…) cannot take a tool call; answer
		// plain text at once so it never competes with the scripted turn.
		text := reply.Text
		if reply.Tool != nil || text == "" {
			text = "Fake title"
		}
		return Text(text), "side"
	}
	return reply, label
}

// callID returns a fresh tool-call id.
func (s *Server) callID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextCall++
	return fmt.Sprintf("%s%d", prefix, s.nextCall)
}

// newID returns a fresh response/message id.
func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprintf("%s%d", prefix, s.nextID)
}

// hold waits for a closed gate (nil: no gate) unless the request or the
// server ends first or drop (nil: never) is closed; it reports whether the
// gate opened.
func (s *Server) hold(ctx context.Context, gate, drop <-chan struct{}) bool {
	if gate == nil {
		return true
	}
	select {
	case <-gate:
		return true
	case <-drop:
		return false
	case <-ctx.Done():
		return false
	case <-s.closed:
		return false
	}
}

// wait sleeps d unless the request or the server ends first; it reports
// whether the full delay elapsed.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	if d > MaxDelay {
		d = MaxDelay
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closed:
		return false
	}
}
