package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// pipeClient is a Client over the in-memory pipes of newPipe to a fake
// agent that answers every session/prompt by writing a tool_call_update
// and the prompt's answer back to back, in one write.
func pipeClient(t *testing.T, clock quartz.Clock) *Client {
	t.Helper()
	c := &Client{
		cfg: Config{Clock: clock}, clock: clock, log: slog.New(slog.DiscardHandler), tag: "pipe",
		sessions: make(map[string]*session), held: make(map[string]*held), orphans: make(map[string][]providers.NativeEvent),
	}
	var agent *pipePeer
	c.conn, agent = newPipe(t, c)
	fromAgentW := agent.out
	go func() {
		sc := bufio.NewScanner(agent.in)
		for sc.Scan() {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || req.Method != "session/prompt" {
				continue
			}
			if strings.Contains(sc.Text(), "PERMISSION") {
				// A tool_call, then the request to permit it, back to back.
				out := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%[1]q,"update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit a.go","kind":"edit"}}}`+"\n"+
					`{"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":%[1]q,"toolCall":{"toolCallId":"t1"},"options":[{"optionId":"ok","name":"Allow","kind":"allow_once"}]}}`+"\n", req.Params.SessionID)
				if _, err := fromAgentW.Write([]byte(out)); err != nil {
					return
				}
				continue
			}
			out := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}}`+"\n"+
				`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", req.Params.SessionID, req.ID)
			if _, err := fromAgentW.Write([]byte(out)); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = agent.out.Close() // the client's reader ends, and with it the connection
		<-c.conn.Done()
	})
	return c
}

// TestTurnEndsAfterItsUpdatesWereTaken: an update the agent wrote right
// before the prompt's answer reaches the subscriber before the turn ends,
// so an outcome reported at the turn's end never overtakes the events of
// the turn (the conformance flake: the turn ended before the
// tool_call_update was recorded). The subscriber is held until the turn
// waits for it; a turn that ends without waiting fails.
func TestTurnEndsAfterItsUpdatesWereTaken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clock := quartz.NewMock(t)
	trap := clock.Trap().NewTimer("acp", "delivery")
	defer trap.Close()
	c := pipeClient(t, clock)
	c.register("s1", t.TempDir())
	subCtx, unsubscribe := context.WithCancel(ctx)
	defer unsubscribe()
	ch, err := c.Subscribe(subCtx, "s1")
	if err != nil {
		t.Fatal(err)
	}

	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		<-release
		for ev := range ch {
			mu.Lock()
			got = append(got, ev.Type)
			mu.Unlock()
		}
	}()

	turn, err := c.Prompt(ctx, "s1", "go")
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		call, err := trap.Wait(ctx)
		if err == nil {
			err = call.Release(ctx)
		}
		waiting <- err
	}()
	select {
	case <-turn.Done():
		t.Fatal("the turn ended before its subscriber took the tool_call_update that arrived before the answer")
	case err := <-waiting:
		if err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	select {
	case <-turn.Done():
	case <-ctx.Done():
		t.Fatal("the turn did not end once its subscriber read")
	}
	if turn.Err != nil || turn.StopReason != "end_turn" {
		t.Fatalf("turn: %v %q", turn.Err, turn.StopReason)
	}
	mu.Lock()
	first := append([]string(nil), got...)
	mu.Unlock()
	// The consumer took the answer, so it had handled the update.
	if len(first) == 0 || first[0] != "tool_call_update" {
		t.Fatalf("events handled when the turn ended: %v, want the tool_call_update first", first)
	}
	unsubscribe()
	<-consumed
}

// TestPermissionHeldAfterItsToolCallWasTaken: a permission request the
// agent wrote right after its tool_call update is listed (Pending) only
// once the subscriber took that update, so whoever answers it has the
// tool call in the session's events. The subscriber is held until the
// request waits for it; a request listed without waiting fails.
func TestPermissionHeldAfterItsToolCallWasTaken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clock := quartz.NewMock(t)
	trap := clock.Trap().NewTimer("acp", "delivery")
	defer trap.Close()
	c := pipeClient(t, clock)
	c.register("s1", t.TempDir())
	subCtx, unsubscribe := context.WithCancel(ctx)
	defer unsubscribe()
	ch, err := c.Subscribe(subCtx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		<-release
		for ev := range ch {
			mu.Lock()
			got = append(got, ev.Type)
			mu.Unlock()
		}
	}()
	if _, err := c.Prompt(ctx, "s1", "PERMISSION please"); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan *quartz.Call, 1)
	go func() {
		if call, err := trap.Wait(ctx); err == nil {
			waiting <- call
		}
	}()
	var call *quartz.Call
	wait.For(t, "the request to wait for its subscriber (or to be listed)", wait.InProcess, func() bool {
		select {
		case call = <-waiting:
			return true
		default:
			return len(c.Pending()) > 0
		}
	})
	if call == nil || len(c.Pending()) != 0 {
		t.Fatalf("%d request(s) listed before the subscriber took the tool_call", len(c.Pending()))
	}
	if err := call.Release(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	wait.For(t, "the request to be held", wait.InProcess, func() bool { return len(c.Pending()) > 0 })
	mu.Lock()
	first := append([]string(nil), got...)
	mu.Unlock()
	if len(first) == 0 || first[0] != "tool_call" {
		t.Fatalf("events handled when the request was listed: %v, want the tool_call first", first)
	}
	_ = c.Cancel("s1") // answers the held request "cancelled"
	unsubscribe()
	<-consumed
}
