package codex

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// RunSim is the simulated app-server: the test binary re-executed with
// CODEX_SIM_APP_SERVER=1 (see TestMain in main_test.go) speaks codex
// app-server's wire protocol on stdio (no "jsonrpc" field, emittedAtMs on
// notifications, server request ids from 0, -32600 for unknown methods).
// Magic words in a prompt pick the turn's behaviour. Threads persist in
// state across restarts, and every turn/start text is appended to
// state/turns.log.
func RunSim(in io.Reader, out io.Writer, state string) { runSim(in, out, state) }

type sim struct {
	state string
	out   io.Writer
	wmu   sync.Mutex

	mu          sync.Mutex
	initialized bool
	threads     map[string]*simThread
	loaded      map[string]bool
	nextReq     int
	waiting     map[int]chan json.RawMessage // server request id -> answer
	turnN       int
}

type simThread struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Preview string `json:"preview"`
	Cwd     string `json:"cwd"`
	active  *simTurn
}

type simTurn struct {
	id        string
	interrupt chan struct{}
}

func runSim(in io.Reader, out io.Writer, state string) {
	s := &sim{state: state, out: out, threads: map[string]*simThread{}, loaded: map[string]bool{}, waiting: map[int]chan json.RawMessage{}}
	s.load()
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			s.handle(line)
		}
		if err != nil {
			return
		}
	}
}

func (s *sim) load() {
	if s.state == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(s.state, "threads.json"))
	if err != nil {
		return
	}
	var ts []*simThread
	_ = json.Unmarshal(b, &ts)
	for _, t := range ts {
		s.threads[t.ID] = t
	}
}

func (s *sim) save() {
	if s.state == "" {
		return
	}
	var ts []*simThread
	for _, t := range s.threads {
		ts = append(ts, t)
	}
	b, _ := json.Marshal(ts)
	_ = os.WriteFile(filepath.Join(s.state, "threads.json"), b, 0o600)
}

func (s *sim) logTurn(text string) {
	if s.state == "" {
		return
	}
	f, err := os.OpenFile(filepath.Join(s.state, "turns.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintln(f, text)
	f.Close()
}

func (s *sim) send(v any) {
	b, _ := json.Marshal(v)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = s.out.Write(append(b, '\n'))
}

func (s *sim) notify(method string, params any) {
	s.send(map[string]any{"method": method, "params": params, "emittedAtMs": time.Now().UnixMilli()})
}

func (s *sim) reply(id json.RawMessage, result any) {
	s.send(map[string]any{"id": id, "result": result})
}

func (s *sim) fail(id json.RawMessage, msg string) {
	s.send(map[string]any{"id": id, "error": map[string]any{"code": -32600, "message": msg}})
}

func (s *sim) threadJSON(t *simThread) map[string]any {
	status := "idle"
	if !s.loaded[t.ID] {
		status = "notLoaded"
	} else if t.active != nil {
		status = "active"
	}
	return map[string]any{"id": t.ID, "name": nilIfEmpty(t.Name), "preview": t.Preview, "cwd": t.Cwd,
		"status": map[string]any{"type": status}, "model": "echo", "modelProvider": "fake", "createdAt": 1, "updatedAt": 2, "turns": []any{}}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *sim) handle(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return
	}
	if m.Method == "" { // an answer to one of our requests
		var id int
		_ = json.Unmarshal(m.ID, &id)
		s.mu.Lock()
		ch := s.waiting[id]
		delete(s.waiting, id)
		s.mu.Unlock()
		if ch != nil {
			if m.Result != nil {
				ch <- m.Result
			} else {
				ch <- m.Error
			}
		}
		return
	}
	if m.ID == nil { // notification
		return
	}
	var p struct {
		ThreadID string `json:"threadId"`
		TurnID   string `json:"turnId"`
		Cwd      string `json:"cwd"`
		Name     string `json:"name"`
		Input    []struct {
			Text string `json:"text"`
		} `json:"input"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Method != "initialize" && !s.initialized {
		s.fail(m.ID, "Not initialized")
		return
	}
	switch m.Method {
	case "initialize":
		if s.initialized {
			s.fail(m.ID, "Already initialized")
			return
		}
		s.initialized = true
		s.reply(m.ID, map[string]any{"userAgent": "agent-interop-runtime/0.171.0-sim (test)", "codexHome": s.state, "platformFamily": "unix", "platformOs": "linux"})
		s.notify("configWarning", map[string]any{"summary": "simulated"})
	case "account/read":
		s.reply(m.ID, map[string]any{"account": nil, "requiresOpenaiAuth": false})
	case "thread/list":
		if os.Getenv("CODEX_SIM_OLD") == "1" {
			s.fail(m.ID, "Invalid request: unknown variant `thread/list`, expected one of `initialize`")
			return
		}
		var data []any
		for _, t := range s.threads {
			data = append(data, s.threadJSON(t))
		}
		s.reply(m.ID, map[string]any{"data": data, "nextCursor": nil})
	case "thread/start":
		s.turnN++
		t := &simThread{ID: fmt.Sprintf("01a22b15-0000-7000-8000-%012d", s.turnN), Cwd: p.Cwd}
		s.threads[t.ID] = t
		s.loaded[t.ID] = true
		s.save()
		s.reply(m.ID, map[string]any{"thread": s.threadJSON(t)})
		s.notify("thread/started", map[string]any{"thread": s.threadJSON(t)})
	case "thread/name/set":
		if os.Getenv("CODEX_SIM_OLD") == "1" {
			s.send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			return
		}
		if t := s.threads[p.ThreadID]; t != nil {
			t.Name = p.Name
			s.save()
		}
		s.reply(m.ID, map[string]any{})
	case "thread/resume":
		t := s.threads[p.ThreadID]
		if t == nil {
			s.fail(m.ID, "no rollout found for thread id "+p.ThreadID)
			return
		}
		s.loaded[t.ID] = true
		s.reply(m.ID, map[string]any{"thread": s.threadJSON(t)})
	case "thread/read":
		t := s.threads[p.ThreadID]
		if t == nil {
			s.fail(m.ID, "thread not loaded: "+p.ThreadID)
			return
		}
		s.reply(m.ID, map[string]any{"thread": s.threadJSON(t)})
	case "turn/start":
		t := s.threads[p.ThreadID]
		if t == nil || !s.loaded[p.ThreadID] {
			s.fail(m.ID, "thread not found: "+p.ThreadID)
			return
		}
		text := ""
		if len(p.Input) > 0 {
			text = p.Input[0].Text
		}
		s.logTurn(text)
		if t.Preview == "" {
			t.Preview = text
			s.save()
		}
		switch {
		case strings.Contains(text, "CRASHNOW"):
			os.Exit(3)
		case strings.Contains(text, "HANG"):
			return
		}
		if t.active != nil { // joins the active turn, like codex
			s.reply(m.ID, map[string]any{"turn": map[string]any{"id": t.active.id, "status": "inProgress", "items": []any{}}})
			return
		}
		s.turnN++
		turn := &simTurn{id: fmt.Sprintf("turn-%d", s.turnN), interrupt: make(chan struct{})}
		t.active = turn
		s.reply(m.ID, map[string]any{"turn": map[string]any{"id": turn.id, "status": "inProgress", "items": []any{}}})
		go s.runTurn(t, turn, text)
	case "turn/interrupt":
		t := s.threads[p.ThreadID]
		if t == nil || t.active == nil || t.active.id != p.TurnID {
			s.fail(m.ID, "no active turn to interrupt")
			return
		}
		select {
		case <-t.active.interrupt:
		default:
			close(t.active.interrupt)
		}
		s.reply(m.ID, map[string]any{})
	default:
		s.fail(m.ID, "Invalid request: unknown variant `"+m.Method+"`, expected one of `initialize`, `thread/start`")
	}
}

func (s *sim) ask(method string, params any) json.RawMessage {
	s.mu.Lock()
	id := s.nextReq
	s.nextReq++
	ch := make(chan json.RawMessage, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	s.send(map[string]any{"id": id, "method": method, "params": params})
	ans := <-ch
	s.notify("serverRequest/resolved", map[string]any{"threadId": "", "requestId": id})
	return ans
}

func (s *sim) runTurn(t *simThread, turn *simTurn, text string) {
	tp := map[string]any{"threadId": t.ID, "turnId": turn.id}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range tp {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	if strings.Contains(text, "DELAYSTART") {
		// The turn starts once the test says so (it creates the file after
		// its cancel was queued), however slow the machine.
		wait.Until(wait.Process, func() bool { _, err := os.Stat(filepath.Join(s.state, startTurnFile)); return err == nil })
	}
	s.notify("turn/started", map[string]any{"threadId": t.ID, "turn": map[string]any{"id": turn.id, "status": "inProgress"}})
	status, errObj := "completed", any(nil)
	switch {
	case strings.Contains(text, "SLOW"):
		select {
		case <-turn.interrupt:
			status = "interrupted"
		case <-time.After(wait.Process): // longer than any test waits to interrupt it
		}
	case strings.Contains(text, "CRASHMID"):
		time.Sleep(50 * time.Millisecond)
		os.Exit(4)
	case strings.Contains(text, "FAIL401"):
		msg := "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:1/v1/responses"
		s.notify("error", with(map[string]any{"error": map[string]any{"message": msg}, "willRetry": false}))
		status, errObj = "failed", map[string]any{"message": msg}
	case strings.Contains(text, "APPROVE"):
		ans := s.ask("item/commandExecution/requestApproval", with(map[string]any{
			"itemId": "call_1", "startedAtMs": time.Now().UnixMilli(), "command": "/bin/bash -lc 'echo hi > shell.txt'", "cwd": t.Cwd,
			"availableDecisions": []any{"accept", map[string]any{"acceptWithExecpolicyAmendment": map[string]any{"execpolicy_amendment": []string{"echo"}}}, "cancel"},
		}))
		var d struct {
			Decision json.RawMessage `json:"decision"`
		}
		_ = json.Unmarshal(ans, &d)
		s.notify("item/completed", with(map[string]any{"item": map[string]any{"type": "commandExecution", "decision": d.Decision}}))
	case strings.Contains(text, "FILEAPPROVE"):
		s.ask("item/fileChange/requestApproval", with(map[string]any{"itemId": "call_2", "startedAtMs": time.Now().UnixMilli()}))
	case strings.Contains(text, "DIFF"):
		s.notify("turn/diff/updated", with(map[string]any{"diff": "diff --git a/hello.txt b/hello.txt\n+hello world\n"}))
	}
	s.notify("item/agentMessage/delta", with(map[string]any{"itemId": "msg_1", "delta": "Hello from sim."}))
	s.mu.Lock()
	t.active = nil
	s.mu.Unlock()
	s.notify("turn/completed", map[string]any{"threadId": t.ID, "turn": map[string]any{"id": turn.id, "status": status, "error": errObj, "items": []any{}}})
}

// simAdapter returns an adapter driving the simulated app-server.
// startTurnFile, in the sim's state directory, lets a DELAYSTART turn
// start.
const startTurnFile = "start-turn"

func simAdapter(t *testing.T, host *recHost, mutate func(*Config)) (*Adapter, string) {
	t.Helper()
	state := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Program:     exe + " -test.run=^$",
		Env:         append(os.Environ(), "CODEX_SIM_APP_SERVER=1", "CODEX_SIM_STATE="+state),
		Host:        host,
		CallTimeout: wait.Process, // generous for a loaded machine; the timeout test sets its own
		RetryAfter:  time.Millisecond,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	a := New(cfg)
	t.Cleanup(func() { a.Close() })
	return a, state
}
