package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
)

// pipeClient is a Client over in-memory pipes to agent, a fake agent that
// answers every session/prompt by writing a tool_call_update and the
// prompt's answer back to back, in one write.
func pipeClient(t *testing.T, clock quartz.Clock) *Client {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	c := &Client{
		cfg: Config{Clock: clock}, clock: clock, log: slog.New(slog.DiscardHandler), tag: "pipe",
		sessions: make(map[string]*session), held: make(map[string]*held), orphans: make(map[string][]providers.NativeEvent),
	}
	c.conn = newConn(toAgentW, fromAgentR, c, nil)
	go func() {
		sc := bufio.NewScanner(toAgentR)
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
			out := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}}`+"\n"+
				`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", req.Params.SessionID, req.ID)
			if _, err := fromAgentW.Write([]byte(out)); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = toAgentW.Close()
		_ = fromAgentW.Close()
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
