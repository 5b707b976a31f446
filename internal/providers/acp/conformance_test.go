package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers/acp"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// conformance is the shared state of one peer's run through the table.
type conformance struct {
	top *testing.T // the peer's test: owns subscriptions that outlive a row
	p   *peer
	c   *acp.Client
	sid string
	ev  *events
}

type behaviour struct {
	name string
	run  func(t *testing.T, s *conformance)
}

// behaviours is the generic ACP conformance table, run in order against
// every peer (later rows use the session the "new session" row made).
var behaviours = []behaviour{
	{"initialize", testInitialize},
	{"new session", testNewSession},
	{"prompt streams chunks and ends end_turn", testPrompt},
	{"permission answered allow by kind", func(t *testing.T, s *conformance) { testPermission(t, s, "allow_once") }},
	{"permission answered reject by kind", func(t *testing.T, s *conformance) { testPermission(t, s, "reject_once") }},
	{"cancel during a slow reply ends cancelled", testCancel},
	{"set mode and model where advertised", testSetModeModel},
	{"unsupported inbound request answered -32601", testUnsupportedInbound},
	{"unknown method to the agent gets -32601", testUnknownMethod},
	{"load with history", testLoad},
}

func TestConformance(t *testing.T) {
	peers := []struct {
		name string
		make func(*testing.T) *peer
	}{
		{"cursor-sim", simPeer},
		{"claude-agent-acp", claudePeer},
		{"opencode-acp", opencodePeer},
	}
	for _, pp := range peers {
		t.Run(pp.name, func(t *testing.T) {
			p := pp.make(t)
			s := &conformance{top: t, p: p, c: p.start(t)}
			for _, b := range behaviours {
				start := time.Now()
				t.Run(b.name, func(t *testing.T) {
					if b.name != "initialize" && b.name != "new session" && b.name != "unknown method to the agent gets -32601" && s.sid == "" {
						t.Skip("no session (the new session row failed)")
					}
					b.run(t, s)
				})
				// A failed row must not leave a turn running for the next.
				if s.sid != "" && s.c.Running(s.sid) != nil {
					_ = s.c.Cancel(s.sid)
					if turn := s.c.Running(s.sid); turn != nil {
						wait.RecvWithin(wait.Process, turn.Done())
					}
				}
				t.Logf("%s / %s: %s", pp.name, b.name, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func awaitTurn(t *testing.T, turn *acp.Turn) {
	t.Helper()
	wait.Recv(t, "turn "+turn.ID+" to end", wait.Process, turn.Done())
	if turn.Err != nil {
		t.Fatalf("turn %s failed: %v", turn.ID, turn.Err)
	}
}

func testInitialize(t *testing.T, s *conformance) {
	init := s.c.Init()
	if init.ProtocolVersion != 1 {
		t.Fatalf("protocolVersion %d, want 1", init.ProtocolVersion)
	}
	if len(init.Raw) == 0 {
		t.Fatal("raw initialize answer not kept")
	}
	if s.p.auth != "" && !init.HasAuthMethod(s.p.auth) {
		t.Fatalf("auth method %s not advertised: %s", s.p.auth, init.Raw)
	}
	// The request we wrote is exactly the one the brief fixes.
	first := s.p.trace.Entries()[0]
	var req struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion    int `json:"protocolVersion"`
			ClientInfo         struct{ Name string }
			ClientCapabilities struct {
				Fs       map[string]bool `json:"fs"`
				Terminal *bool           `json:"terminal"`
			} `json:"clientCapabilities"`
		} `json:"params"`
	}
	if err := json.Unmarshal(first.Msg, &req); err != nil || req.Method != "initialize" {
		t.Fatalf("first message %s", first.Msg)
	}
	if req.Params.ProtocolVersion != 1 || req.Params.ClientInfo.Name != "agent-interop-runtime" ||
		!req.Params.ClientCapabilities.Fs["readTextFile"] || req.Params.ClientCapabilities.Terminal == nil || *req.Params.ClientCapabilities.Terminal {
		t.Fatalf("initialize request %s", first.Msg)
	}
	if s.p.auth != "" && !slices.Contains(s.p.trace.Methods(string(acp.ToAgent)), "authenticate") {
		t.Fatal("authenticate not sent although the agent advertised " + s.p.auth)
	}
}

func testNewSession(t *testing.T, s *conformance) {
	setup, err := s.c.NewSession(ctxT(t, 60*time.Second), s.p.workspace)
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if setup.SessionID == "" || len(setup.Raw) == 0 {
		t.Fatalf("setup %+v", setup)
	}
	v, ok := s.c.Session(setup.SessionID)
	if !ok || v.CWD != s.p.workspace {
		t.Fatalf("session view %+v", v)
	}
	s.sid = setup.SessionID
	s.ev = collect(s.top, s.c, s.sid)
}

func testPrompt(t *testing.T, s *conformance) {
	n := s.ev.len()
	turn, err := s.c.Prompt(ctxT(t, 30*time.Second), s.sid, s.p.hello)
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	awaitTurn(t, turn)
	if turn.StopReason != "end_turn" {
		t.Fatalf("stopReason %q, want end_turn", turn.StopReason)
	}
	wait.For(t, "the prompt's result event", wait.Process, func() bool { return has(s.ev.since(n), "session/prompt") })
	evs := s.ev.since(n)
	if got := text(evs, "agent_message_chunk"); !strings.Contains(got, s.p.helloReply) {
		t.Fatalf("streamed text %q lacks %q; events %v", got, s.p.helloReply, kinds(evs))
	}
	// Every chunk was delivered before the answer's event.
	last := slices.IndexFunc(evs, func(e providersEvent) bool { return e.Type == "session/prompt" })
	for i, e := range evs {
		if e.Type == "agent_message_chunk" && i > last {
			t.Fatalf("chunk after the prompt's answer: %v", kinds(evs))
		}
	}
	if s.p.fm != nil {
		if got := s.p.fm.Count(s.p.hello); got != 1 {
			t.Fatalf("the fake model saw the prompt %d times, want 1", got)
		}
	}
}

func testPermission(t *testing.T, s *conformance, kind string) {
	if s.p.permitted != nil {
		_ = os.Remove(s.p.workspace + "/hello.txt")
	}
	n := s.ev.len()
	prompt := s.p.permission + " " + kind
	turn, err := s.c.Prompt(ctxT(t, 30*time.Second), s.sid, prompt)
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	wait.For(t, "a permission request", wait.Process, func() bool { return len(s.c.Pending()) > 0 })
	req := s.c.Pending()[0]
	if req.NativeID != s.sid || req.Method != "session/request_permission" {
		t.Fatalf("held request %+v", req)
	}
	// The tool_call update sent before the request was delivered first.
	if !has(s.ev.since(n), "tool_call") {
		t.Fatalf("permission request overtook its tool_call update: %v", kinds(s.ev.since(n)))
	}
	var offered []string
	for _, o := range req.Options {
		offered = append(offered, o.Kind)
	}
	if !slices.Contains(offered, "allow_once") || !slices.Contains(offered, "reject_once") {
		t.Fatalf("offered kinds %v", offered)
	}
	// A decision naming nothing offered is refused, naming the kinds.
	_, err = s.c.Respond(ctxT(t, 5*time.Second), s.sid, req.RequestID, "approve_everything")
	var de *acp.DecisionError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "allow_once") {
		t.Fatalf("bad decision: %v", err)
	}
	d, err := s.c.Respond(ctxT(t, 10*time.Second), s.sid, req.RequestID, kind)
	if err != nil {
		t.Fatalf("respond %s: %v", kind, err)
	}
	if d.Option == nil || d.Option.Kind != kind {
		t.Fatalf("decision %+v", d)
	}
	// Our reply carried the agent's own option id for that kind.
	wantReply := `"optionId":"` + d.Option.ID + `"`
	wait.For(t, "the reply in the trace", wait.Process, func() bool {
		for _, e := range s.p.trace.Entries() {
			if e.Dir == string(acp.ToAgent) && strings.Contains(string(e.Msg), wantReply) {
				return true
			}
		}
		return false
	})
	wait.For(t, fmt.Sprintf("turn %s to end after the %s answer", turn.ID, kind), wait.Process, func() bool {
		select {
		case <-turn.Done():
			return true
		default:
		}
		// OpenCode may ask again for the same edit; answer alike.
		if p := s.c.Pending(); len(p) > 0 {
			if _, err := s.c.Respond(ctxT(t, 10*time.Second), s.sid, p[0].RequestID, kind); err != nil {
				t.Fatalf("respond again: %v", err)
			}
		}
		return false
	})
	awaitTurn(t, turn)
	t.Logf("stopReason %s; events %v", turn.StopReason, kinds(s.ev.since(n)))
	if s.p.permitted != nil {
		if got := s.p.permitted(); got != (kind == "allow_once") {
			t.Fatalf("file written = %v after %s", got, kind)
		}
		return
	}
	var outcome struct {
		Status    string          `json:"status"`
		RawOutput json.RawMessage `json:"rawOutput"`
	}
	for _, e := range s.ev.since(n) {
		if e.Type == "tool_call_update" {
			_ = json.Unmarshal(e.Data, &outcome)
		}
	}
	want := map[string]string{"allow_once": "completed", "reject_once": "failed"}[kind]
	if outcome.Status != want {
		t.Fatalf("tool status %q, want %q", outcome.Status, want)
	}
}

func testCancel(t *testing.T, s *conformance) {
	n := s.ev.len()
	turn, err := s.c.Prompt(ctxT(t, 30*time.Second), s.sid, s.p.slow)
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if s.p.fm != nil {
		if _, err := s.p.fm.Await(ctxT(t, 60*time.Second), func(r fakemodelRequest) bool {
			return strings.Contains(r.LastUser, s.p.slow)
		}); err != nil {
			t.Fatal(err)
		}
	} else {
		wait.For(t, "the first chunk", wait.Process, func() bool { return has(s.ev.since(n), "agent_message_chunk") })
	}
	if s.c.Running(s.sid) != turn {
		t.Fatal("turn not reported running")
	}
	start := time.Now()
	if err := s.c.Cancel(s.sid); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	awaitTurn(t, turn)
	if turn.StopReason != "cancelled" {
		t.Fatalf("stopReason %q, want cancelled", turn.StopReason)
	}
	t.Logf("cancelled after %s", time.Since(start).Round(time.Millisecond))
	if !slices.Contains(s.p.trace.Methods(string(acp.ToAgent)), "session/cancel") {
		t.Fatal("session/cancel not sent")
	}
}

func testSetModeModel(t *testing.T, s *conformance) {
	v, _ := s.c.Session(s.sid)
	ctx := ctxT(t, 30*time.Second)
	var modes []string
	current := ""
	for _, o := range v.ConfigOptions {
		if o.Category == "mode" || o.ID == "mode" {
			modes, current = o.Values(), o.Current()
		}
	}
	if modes == nil && v.Modes != nil {
		current = v.Modes.CurrentModeID
		for _, m := range v.Modes.AvailableModes {
			modes = append(modes, m.ID)
		}
	}
	if len(modes) == 0 {
		err := s.c.SetMode(ctx, s.sid, "plan")
		var ue *acp.UnsupportedError
		if !errors.As(err, &ue) {
			t.Fatalf("set mode without modes: %v", err)
		}
	} else {
		other := modes[0]
		for _, m := range modes {
			if m != current && m != "bypassPermissions" {
				other = m
				break
			}
		}
		if err := s.c.SetMode(ctx, s.sid, other); err != nil {
			t.Fatalf("set mode %s: %v", other, err)
		}
		if got := modeOf(s.c, s.sid); got != other {
			t.Fatalf("mode %q after setting %q", got, other)
		}
		var ce *acp.ChoiceError
		if err := s.c.SetMode(ctx, s.sid, "no-such-mode"); !errors.As(err, &ce) {
			t.Fatalf("unoffered mode: %v", err)
		}
		if err := s.c.SetMode(ctx, s.sid, current); err != nil {
			t.Fatalf("restore mode %s: %v", current, err)
		}
		t.Logf("modes %v: set %s, restored %s", modes, other, current)
	}
	v, _ = s.c.Session(s.sid)
	var models []string
	for _, o := range v.ConfigOptions {
		if o.Category == "model" || o.ID == "model" {
			models = o.Values()
		}
	}
	if models == nil && v.Models != nil {
		for _, m := range v.Models.AvailableModels {
			models = append(models, m.ModelID)
		}
	}
	if len(models) == 0 {
		var ue *acp.UnsupportedError
		if err := s.c.SetModel(ctx, s.sid, "x"); !errors.As(err, &ue) {
			t.Fatalf("set model without models: %v", err)
		}
		return
	}
	model := models[len(models)-1]
	if err := s.c.SetModel(ctx, s.sid, model); err != nil {
		t.Fatalf("set model %s: %v", model, err)
	}
	t.Logf("models %v: set %s", models, model)
	// Reasoning is refused with the reason when no thought_level is offered.
	v, _ = s.c.Session(s.sid)
	offersReasoning := false
	for _, o := range v.ConfigOptions {
		offersReasoning = offersReasoning || o.Category == "thought_level"
	}
	if !offersReasoning {
		var ue *acp.UnsupportedError
		if err := s.c.SetReasoning(ctx, s.sid, "high"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "thought_level") {
			t.Fatalf("set reasoning without a thought_level option: %v", err)
		}
	}
}

func modeOf(c *acp.Client, sid string) string {
	v, _ := c.Session(sid)
	for _, o := range v.ConfigOptions {
		if o.Category == "mode" || o.ID == "mode" {
			return o.Current()
		}
	}
	if v.Modes != nil {
		return v.Modes.CurrentModeID
	}
	return ""
}

func testUnsupportedInbound(t *testing.T, s *conformance) {
	if s.p.unsupportedInbound == "" {
		t.Skip(s.p.name + " sends no request outside the ACP client methods this client serves")
	}
	if s.p.permitted != nil {
		_ = os.Remove(s.p.workspace + "/hello.txt")
	}
	turn, err := s.c.Prompt(ctxT(t, 30*time.Second), s.sid, s.p.unsupportedInbound)
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	wait.For(t, "the turn to end", wait.Process, func() bool {
		select {
		case <-turn.Done():
			return true
		default:
		}
		for _, p := range s.c.Pending() {
			_, _ = s.c.Respond(ctxT(t, 10*time.Second), s.sid, p.RequestID, "allow_once")
		}
		return false
	})
	awaitTurn(t, turn)
	// Find the agent's request and our answer to it.
	var id json.RawMessage
	for _, e := range s.p.trace.Entries() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(e.Msg, &m)
		if e.Dir == string(acp.FromAgent) && m.Method == s.p.unsupportedMethodWant && m.ID != nil {
			id = m.ID
		}
		if e.Dir == string(acp.ToAgent) && id != nil && string(m.ID) == string(id) && m.Method == "" {
			if m.Error == nil || m.Error.Code != acp.CodeMethodNotFound {
				t.Fatalf("answer to %s: %s", s.p.unsupportedMethodWant, e.Msg)
			}
			return
		}
	}
	t.Fatalf("no %s request answered in the trace", s.p.unsupportedMethodWant)
}

func testUnknownMethod(t *testing.T, s *conformance) {
	_, err := s.c.Call(ctxT(t, 30*time.Second), "bogus/method", map[string]any{})
	var re *acp.RPCError
	if !errors.As(err, &re) || re.Code != acp.CodeMethodNotFound {
		t.Fatalf("bogus/method: %v", err)
	}
}

func testLoad(t *testing.T, s *conformance) {
	if !s.c.Init().AgentCapabilities.LoadSession {
		t.Skip("agent does not advertise loadSession")
	}
	if err := s.c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	c := s.p.start(t)
	setup, err := c.LoadSession(ctxT(t, 60*time.Second), s.sid, s.p.workspace)
	if err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if setup.SessionID != s.sid {
		t.Fatalf("loaded %q", setup.SessionID)
	}
	ev := collect(t, c, s.sid)
	// The replay's chunks reach the collector one by one: wait for both
	// the user's message and the agent's reply, not only the first.
	wait.For(t, "the replayed history: the user's message and the agent's reply", wait.Process, func() bool {
		all := ev.all()
		return strings.Contains(text(all, "user_message_chunk"), s.p.hello) &&
			strings.Contains(text(all, "agent_message_chunk"), s.p.helloReply)
	})
	turn, err := c.Prompt(ctxT(t, 30*time.Second), s.sid, s.p.hello+" again")
	if err != nil {
		t.Fatalf("prompt after load: %v", err)
	}
	awaitTurn(t, turn)
	if turn.StopReason != "end_turn" {
		t.Fatalf("stopReason after load %q", turn.StopReason)
	}
}
