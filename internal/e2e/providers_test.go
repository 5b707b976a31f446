package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// Bounds of one provider turn on a shared machine, and of the events that
// follow it.
const (
	turnTimeout = wait.Process
	diffTimeout = wait.Process
)

// TestRealProvidersOverMCP drives the real OpenCode, Codex and Claude Code
// programs (installed by scripts/install-providers.sh, answered by the
// fake model server) through the built interop-runtime over stdio, as an
// MCP client does. The three providers run in parallel; conversations and
// request_review then use the sessions they left.
func TestRealProvidersOverMCP(t *testing.T) {
	start := time.Now()
	p := startPeers(t)
	t.Logf("setup (fake model, opencode serve, runtime): %s", time.Since(start).Round(time.Millisecond))

	var oc, cl *liveSession // left by the opencode and claude-code groups
	// The workspaces of the sessions used after their group ended belong to
	// the top-level test (a subtest's TempDir is removed when it ends).
	ocDir, clDir := gitRepo(t), t.TempDir()
	t.Run("providers", func(t *testing.T) {
		t.Run("opencode", func(t *testing.T) { t.Parallel(); oc = openCodeSteps(t, p, ocDir) })
		t.Run("codex", func(t *testing.T) { t.Parallel(); codexSteps(t, p) })
		t.Run("claude-code", func(t *testing.T) { t.Parallel(); cl = claudeSteps(t, p, clDir) })
		t.Run("bad input", func(t *testing.T) { t.Parallel(); badInputSteps(t, p) })
	})
	t.Run("conversation", func(t *testing.T) {
		if oc == nil || cl == nil {
			t.Skip("needs the opencode and claude-code sessions of the provider steps")
		}
		conversationSteps(t, p, oc, cl)
	})
	t.Run("request_review", func(t *testing.T) {
		if oc == nil || cl == nil {
			t.Skip("needs the opencode and claude-code sessions of the provider steps")
		}
		reviewSteps(t, p, oc, cl)
	})
	t.Logf("total: %s", time.Since(start).Round(time.Millisecond))
}

// liveSession is a session a provider group leaves for the later steps.
type liveSession struct {
	session
	cursor  int64  // events read up to here
	diffTag string // opencode: text of the file its write tool created
}

func openCodeSteps(t *testing.T, p *peers, dir string) *liveSession {
	realpeers.Require(t, realpeers.OpenCode)
	cs, fm := p.cs, p.fm
	var s session
	var cursor int64

	step(t, "create, send, completion in events", func(t *testing.T) {
		s = createSession(t, cs, "opencode", dir, "e2e opencode")
		if s.CWD != dir {
			t.Fatalf("session cwd %q, want %q", s.CWD, dir)
		}
		cursor = openEvents(t, cs, "opencode", s.NativeID)
		text := unique("hello")
		fm.On(fakemodel.Exact(text), fakemodel.Text("Hi from the fake."))
		key := unique("key")
		r := send(t, cs, "opencode", s.NativeID, text, key)
		if !r.Accepted || !queuedOr(r.Status, "completed") || r.OperationID == "" || r.IdempotencyKey != key ||
			(r.Status == "queued" && r.ProviderState != "transport_accepted") {
			t.Fatalf("receipt %+v", r)
		}
		// Each read waits up to timeoutMs for the next events; the cursor
		// (next) is passed back until the turn's completion shows up. (The
		// first turn of a fresh session: its first idle is its end.)
		cursor = awaitEvent(t, cs, "opencode", s.NativeID, cursor, turnTimeout, "session.idle", ofType("session.idle")).Sequence
		if n := fm.Count(text); n != 1 {
			t.Fatalf("the model saw the prompt %d times, want 1", n)
		}

		// The same request again under its key: the recorded operation's
		// receipt, nothing sent; another text under it: refused.
		if again := send(t, cs, "opencode", s.NativeID, text, key); again.OperationID != r.OperationID {
			t.Fatalf("repeated send answered %+v, want operation %s", again, r.OperationID)
		}
		msg := callFail(t, cs, "send_session_message", map[string]any{"provider": "opencode", "nativeId": s.NativeID, "text": text + " again", "idempotencyKey": key})
		if !containsAll(msg, "Idempotency key '"+key+"' already has an operation ("+r.OperationID, "for other arguments; nothing was sent. Rule: an idempotencyKey names one request") {
			t.Fatalf("reused key: %s", msg)
		}
		if n := fm.Count(text); n != 1 {
			t.Fatalf("after the repeated and refused sends the model saw the prompt %d times, want 1", n)
		}
	})

	step(t, "progress while a read waits", func(t *testing.T) {
		wait.For(t, "a read that waited with progress", wait.Process, func() bool {
			token := unique("progress")
			params := &mcp.CallToolParams{Name: "read_session_events", Arguments: map[string]any{
				"provider": "opencode", "nativeId": s.NativeID, "afterSequence": cursor, "timeoutMs": 1500,
			}}
			params.SetProgressToken(token)
			ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
			defer cancel()
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("read with progress: %v %+v", err, res)
			}
			var page eventPage
			_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &page)
			if len(page.Events) > 0 { // late events of the turn: read on
				cursor = page.Next
				return false
			}
			if !p.progress.await(token, 1, wait.Process) {
				t.Fatal("a read that waited 1.5 s sent no progress notification")
			}
			for _, n := range p.progress.get(token) {
				if n.Total != 1500 || n.Progress < 0 || n.Progress > n.Total || n.Message == "" {
					t.Fatalf("progress notification %+v", n)
				}
			}
			return true
		})
	})

	step(t, "a cancelled wait returns promptly", func(t *testing.T) {
		// startWait starts a 30 s read_session_events with a progress
		// token; the server reports its progress every 500 ms.
		type result struct {
			res *mcp.CallToolResult
			err error
		}
		startWait := func(token string) (context.CancelFunc, <-chan result) {
			params := &mcp.CallToolParams{Name: "read_session_events", Arguments: map[string]any{
				"provider": "opencode", "nativeId": s.NativeID, "afterSequence": cursor, "timeoutMs": 30000,
			}}
			params.SetProgressToken(token)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan result, 1)
			go func() {
				res, err := cs.CallTool(ctx, params)
				done <- result{res, err}
			}()
			return cancel, done
		}
		// readOn reports whether a wait that ended on its own ended with
		// events (late events of the turn: read on and try again).
		readOn := func(r result) bool {
			if r.err != nil || r.res.IsError {
				return false
			}
			var page eventPage
			_ = json.Unmarshal([]byte(r.res.Content[0].(*mcp.TextContent).Text), &page)
			if len(page.Events) == 0 {
				return false
			}
			cursor = page.Next
			return true
		}
		// endedEarly takes the answer of a wait whose progress stopped
		// before the test cancelled it: true when events ended it (read
		// on), a failure otherwise.
		endedEarly := func(what string, done <-chan result) bool {
			r := wait.Recv(t, what+" to end", wait.Process, done)
			if !readOn(r) {
				t.Fatalf("%s stopped its progress: %+v %v", what, r.res, r.err)
			}
			return true
		}
		wait.For(t, "a wait to cancel", wait.Process, func() bool {
			token := unique("cancel")
			cancel, done := startWait(token)
			defer cancel()
			if !p.progress.await(token, 1, wait.Process) && endedEarly("the wait", done) {
				return false
			}
			cancel()
			// A call that was not cancelled would end after its 30 s wait
			// with a page, not with context.Canceled.
			r := wait.Recv(t, "the cancelled call to return", wait.Process, done)
			if !errors.Is(r.err, context.Canceled) {
				t.Fatalf("cancelled call returned %v", r.err)
			}
			// The server cancelled its side of the call too: a second wait on
			// the same session, started after the cancel, is the yardstick.
			// While it reports 4 ticks (1.5 s of the server's time between the
			// first and the last), a wait the server did not cancel would
			// report about as many; the cancelled one may report one that was
			// under way when the cancel arrived, never more. No wall-clock
			// window: the server's own ticks measure the time.
			yard := unique("yardstick")
			cancelYard, yardDone := startWait(yard)
			defer cancelYard()
			if !p.progress.await(yard, 1, wait.Process) && endedEarly("the yardstick wait", yardDone) {
				return false
			}
			before := len(p.progress.get(token))
			if !p.progress.await(yard, 4, wait.Process) && endedEarly("the yardstick wait", yardDone) {
				return false
			}
			if after := len(p.progress.get(token)); after > before+1 {
				t.Fatalf("the cancelled call sent %d progress notifications while the yardstick wait sent 3 (1.5 s of the server's time): the server went on with it", after-before)
			}
			select {
			case r := <-yardDone:
				if readOn(r) {
					return false
				}
				t.Fatalf("the yardstick wait ended before it was cancelled: %+v %v", r.res, r.err)
			default:
			}
			cancelYard()
			if r := wait.Recv(t, "the cancelled yardstick call to return", wait.Process, yardDone); !errors.Is(r.err, context.Canceled) && !readOn(r) {
				t.Fatalf("cancelled yardstick call returned %+v %v", r.res, r.err)
			}
			// And the server goes on answering calls.
			call(t, cs, "get_runtime_status", map[string]any{}, nil)
			return true
		})
	})

	live := &liveSession{session: s}
	step(t, "cancel_session during a slow reply", func(t *testing.T) {
		text := unique("SLOWREPLY")
		fm.On(fakemodel.Exact(text), fakemodel.Text("too late").WithDelay(5*time.Minute))
		key := unique("slow")
		slow := send(t, cs, "opencode", s.NativeID, text, key)
		ctx, cancel := context.WithTimeout(context.Background(), turnTimeout)
		defer cancel()
		if _, err := fm.Await(ctx, func(r fakemodel.Request) bool { return r.LastUser == text }); err != nil {
			t.Fatal(err)
		}
		var r receipt
		call(t, cs, "cancel_session", map[string]any{"provider": "opencode", "nativeId": s.NativeID}, &r)
		if !r.Accepted || r.Operation != "cancel" || r.Status != "completed" || r.ProviderState != "abort_requested" {
			t.Fatalf("cancel receipt %+v", r)
		}
		cursor = awaitOpenCodeTurn(t, cs, s.NativeID, cursor, slow.NativeTurnID)
		// The send's stored operation now says rejected (aborted); a resend
		// with its key is refused and names that status.
		awaitOperationStatus(t, p, s.NativeID, text, key, "rejected")
	})

	step(t, "a 401 from the model rejects the send", func(t *testing.T) {
		text := unique("FAIL401")
		fm.On(fakemodel.Exact(text), fakemodel.Fail(401, "Incorrect API key provided"))
		key := unique("k401")
		// The transport accepted it; the outcome comes later (or was seen
		// already: a fast provider may fail the turn before the receipt).
		r := send(t, cs, "opencode", s.NativeID, text, key)
		if !queuedOr(r.Status, "rejected") || (r.Status == "queued" && !r.Accepted) {
			t.Fatalf("receipt %+v", r)
		}
		ev := awaitEvent(t, cs, "opencode", s.NativeID, cursor, turnTimeout, "session.error", ofType("session.error"))
		if !containsAll(string(ev.Data), "Incorrect API key provided", "401") {
			t.Fatalf("session.error data %s", ev.Data)
		}
		// OpenCode goes idle twice after a failed turn; a prompt sent
		// between the two is stored but never run, so wait for the end.
		cursor = awaitOpenCodeTurn(t, cs, s.NativeID, cursor, r.NativeTurnID)
		awaitOperationStatus(t, p, s.NativeID, text, key, "rejected")
		if n := fm.Count(text); n != 1 {
			t.Fatalf("the model saw the failing prompt %d times, want 1", n)
		}
	})

	step(t, "diff after the model's write tool edits a file", func(t *testing.T) {
		text := unique("WRITEFILE")
		live.diffTag = unique("line")
		fm.On(fakemodel.Exact(text), fakemodel.WriteFile("diffed.txt", live.diffTag+"\n"))
		var r receipt
		call(t, cs, "send_session_message", map[string]any{
			"provider": "opencode", "nativeId": s.NativeID, "text": text,
			"model": map[string]any{"providerID": realpeers.FakeProvider, "modelID": realpeers.FakeModel},
		}, &r)
		if !queuedOr(r.Status, "completed") {
			t.Fatalf("receipt %+v", r)
		}
		cursor = awaitOpenCodeTurn(t, cs, s.NativeID, cursor, r.NativeTurnID)
		if b, err := os.ReadFile(filepath.Join(dir, "diffed.txt")); err != nil || string(b) != live.diffTag+"\n" {
			t.Fatalf("diffed.txt = %q, %v", b, err)
		}
		// OpenCode writes the turn's summary just after the turn ends.
		var got string
		wait.For(t, "the turn's diff", diffTimeout, func() bool {
			got = call(t, cs, "get_session_diff", map[string]any{"provider": "opencode", "nativeId": s.NativeID}, nil)
			return strings.Contains(got, "diffed.txt")
		})
		if !containsAll(got, `"provider":"opencode"`, `"nativeId":"`+s.NativeID+`"`, "+"+live.diffTag) {
			t.Fatalf("get_session_diff = %s", got)
		}
	})

	live.cursor = cursor
	return live
}

// awaitOpenCodeTurn waits for the end of the OpenCode turn of the prompt
// whose user message is msgID (the receipt's nativeTurnId: the runtime names
// the message it sends): the assistant message answering it finished, then
// session.idle. Events of consecutive turns interleave (the previous turn's
// session.idle can follow the next prompt's user message), so the turn is
// followed by message ids. It answers the sequence of that idle event.
func awaitOpenCodeTurn(t *testing.T, cs *mcp.ClientSession, nativeID string, after int64, msgID string) int64 {
	t.Helper()
	if msgID == "" {
		t.Fatal("the OpenCode receipt names no nativeTurnId (the prompt's message id)")
	}
	answer := awaitEvent(t, cs, "opencode", nativeID, after, turnTimeout, "the final answer to "+msgID, func(ev sessionEvent) bool {
		var d struct {
			Properties struct {
				Info struct {
					Role     string          `json:"role"`
					ParentID string          `json:"parentID"`
					Finish   string          `json:"finish"`
					Error    json.RawMessage `json:"error"`
					Time     struct {
						Completed int64 `json:"completed"`
					} `json:"time"`
				} `json:"info"`
			} `json:"properties"`
		}
		if ev.Type != "message.updated" || json.Unmarshal(ev.Data, &d) != nil {
			return false
		}
		info := d.Properties.Info
		return info.Role == "assistant" && info.ParentID == msgID &&
			(len(info.Error) > 0 || (info.Time.Completed > 0 && info.Finish != "tool-calls"))
	})
	return awaitEvent(t, cs, "opencode", nativeID, answer.Sequence, turnTimeout, "session.idle", ofType("session.idle")).Sequence
}

// awaitOperationStatus polls the stored status of the send recorded under
// key. No tool reads an operation by id; the same request again under its
// key answers the recorded operation as it is now, and is never
// dispatched.
func awaitOperationStatus(t *testing.T, p *peers, nativeID, text, key, status string) {
	t.Helper()
	// The session's event log carries the outcome as an interop.operation
	// event naming the operation's key and its new status.
	ev := awaitEvent(t, p.cs, "opencode", nativeID, 0, wait.Process, "interop.operation "+key+" "+status, func(ev sessionEvent) bool {
		var d struct{ IdempotencyKey, Status string }
		return ev.Type == "interop.operation" && json.Unmarshal(ev.Data, &d) == nil && d.IdempotencyKey == key && d.Status == status
	})
	if !strings.Contains(string(ev.Data), `"operationId":"op`) && !strings.Contains(string(ev.Data), `"operationId":"`) {
		t.Fatalf("interop.operation event without an operation id: %s", ev.Data)
	}
	before := p.fm.Count(text)
	wait.For(t, "operation "+key+" to be "+status, wait.Process, func() bool {
		ok, out := callTool(t, p.cs, "send_session_message", map[string]any{"provider": "opencode", "nativeId": nativeID, "text": text, "idempotencyKey": key})
		if !ok {
			return status == "delivery_unknown" && strings.Contains(out, "delivery_unknown")
		}
		var r receipt
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.IdempotencyKey != key {
			t.Fatalf("repeated send with a used key: %s (%v)", out, err)
		}
		return r.Status == status
	})
	if n := p.fm.Count(text); n != before {
		t.Fatalf("the repeated sends reached the model (%d -> %d)", before, n)
	}
}

func codexSteps(t *testing.T, p *peers) {
	realpeers.Require(t, realpeers.Codex)
	cs, fm := p.cs, p.fm
	dir := t.TempDir()
	var s session
	var cursor int64

	step(t, "create, send, completion in events", func(t *testing.T) {
		s = createSession(t, cs, "codex", dir, "e2e codex")
		cursor = openEvents(t, cs, "codex", s.NativeID)
		text := unique("say hello")
		r := send(t, cs, "codex", s.NativeID, text, "")
		if !r.Accepted || !queuedOr(r.Status, "completed") || r.OperationID == "" || r.NativeTurnID == "" {
			t.Fatalf("receipt %+v", r)
		}
		done := awaitEvent(t, cs, "codex", s.NativeID, cursor, turnTimeout, "turn/completed", ofType("turn/completed"))
		if !strings.Contains(string(done.Data), `"status":"completed"`) {
			t.Fatalf("turn/completed data %s", done.Data)
		}
		cursor = done.Sequence
		if n := fm.Count(text); n != 1 {
			t.Fatalf("the model saw the prompt %d times, want 1", n)
		}
	})

	step(t, "approval asked, listed and answered", func(t *testing.T) {
		tag := unique("RUNSHELL")
		fm.On(fakemodel.Contains(tag), fakemodel.RunCommand("echo hi > shell.txt").WithFollowUp("Ran it."))
		send(t, cs, "codex", s.NativeID, tag+" now", "")
		req := awaitPermission(t, cs, "codex", s.NativeID, turnTimeout)
		offered := map[string]bool{}
		for _, o := range req.Options {
			offered[o.ID] = true
		}
		if !offered["accept"] || !strings.Contains(req.Title, "echo hi > shell.txt") {
			t.Fatalf("request %+v", req)
		}
		if _, err := os.Stat(filepath.Join(dir, "shell.txt")); err == nil {
			t.Fatal("the command ran before it was approved")
		}
		var r receipt
		call(t, cs, "respond_to_permission", map[string]any{"provider": "codex", "nativeId": s.NativeID, "requestId": req.RequestID, "decision": "accept"}, &r)
		if !r.Accepted || r.Operation != "permission" || (r.Status != "queued" && r.Status != "completed") {
			t.Fatalf("respond receipt %+v", r)
		}
		cursor = awaitEvent(t, cs, "codex", s.NativeID, cursor, turnTimeout, "turn/completed", ofType("turn/completed")).Sequence
		if b, err := os.ReadFile(filepath.Join(dir, "shell.txt")); err != nil || string(b) != "hi\n" {
			t.Fatalf("shell.txt = %q, %v", b, err)
		}
	})

	step(t, "steer is refused with the reason", func(t *testing.T) {
		var r receipt
		call(t, cs, "send_session_message", map[string]any{"provider": "codex", "nativeId": s.NativeID, "text": unique("steer"), "mode": "steer"}, &r)
		if r.Accepted || r.Status != "rejected" || !strings.Contains(string(r.Detail), "codex does not support steer") {
			t.Fatalf("steer receipt %+v detail %s", r, r.Detail)
		}
	})
}

func claudeSteps(t *testing.T, p *peers, ws string) *liveSession {
	realpeers.Require(t, realpeers.ClaudeACP)
	cs, fm := p.cs, p.fm
	var s session
	var cursor int64

	step(t, "create, send, completion in events", func(t *testing.T) {
		s = createSession(t, cs, "claude-code", ws, "e2e claude")
		if s.CWD != ws {
			t.Fatalf("session cwd %q, want %q", s.CWD, ws)
		}
		cursor = openEvents(t, cs, "claude-code", s.NativeID)
		text := unique("hello there")
		r := send(t, cs, "claude-code", s.NativeID, text, "")
		if !r.Accepted || !queuedOr(r.Status, "completed") {
			t.Fatalf("receipt %+v", r)
		}
		var chunks strings.Builder
		done := awaitEvent(t, cs, "claude-code", s.NativeID, cursor, turnTimeout, "session/prompt", func(ev sessionEvent) bool {
			var u struct {
				Content struct{ Text string } `json:"content"`
			}
			if ev.Type == "agent_message_chunk" && json.Unmarshal(ev.Data, &u) == nil {
				chunks.WriteString(u.Content.Text)
			}
			return ev.Type == "session/prompt"
		})
		if !strings.Contains(string(done.Data), `"stopReason":"end_turn"`) || !strings.Contains(chunks.String(), "Hello from fake model.") {
			t.Fatalf("turn end %s, streamed %s", done.Data, chunks.String())
		}
		cursor = done.Sequence
		if n := fm.Count(text); n != 1 {
			t.Fatalf("the model saw the prompt %d times, want 1", n)
		}
	})

	turns := map[string]string{} // decision kind -> the turn it answered
	files := map[string]string{}
	for _, c := range []struct{ kind, word string }{{"allow_once", "WRITE-ALLOW"}, {"reject_once", "WRITE-REJECT"}} {
		step(t, "permission asked and answered "+c.kind, func(t *testing.T) {
			tag := unique(c.word)
			file := filepath.Join(ws, tag+".txt")
			files[c.kind] = tag + ".txt"
			fm.On(fakemodel.Contains(tag), fakemodel.WriteFile(file, "content\n").WithFollowUp("Done writing."))
			turns[c.kind] = send(t, cs, "claude-code", s.NativeID, tag+" now", "").NativeTurnID
			req := awaitPermission(t, cs, "claude-code", s.NativeID, turnTimeout)
			kinds := map[string]bool{}
			for _, o := range req.Options {
				kinds[o.Kind] = true
			}
			if !kinds[c.kind] || req.Title == "" {
				t.Fatalf("request %+v offers no %s", req, c.kind)
			}
			if _, err := os.Stat(file); err == nil {
				t.Fatal("the file was written before the answer")
			}
			var r receipt
			call(t, cs, "respond_to_permission", map[string]any{"provider": "claude-code", "nativeId": s.NativeID, "requestId": req.RequestID, "decision": c.kind}, &r)
			if !r.Accepted || r.Status != "completed" || r.ProviderState != "decision_sent" {
				t.Fatalf("respond receipt %+v", r)
			}
			cursor = awaitEvent(t, cs, "claude-code", s.NativeID, cursor, turnTimeout, "session/prompt", ofType("session/prompt")).Sequence
			_, err := os.Stat(file)
			if written := err == nil; written != (c.kind == "allow_once") {
				t.Fatalf("%s: file written = %v", c.kind, written)
			}
		})
	}

	step(t, "native diff from the completed tool calls", func(t *testing.T) {
		type acpDiff struct {
			Diff struct {
				TurnID   string `json:"turnId"`
				Observed bool   `json:"observed"`
				Files    []struct {
					Path  string `json:"path"`
					Patch string `json:"patch"`
				} `json:"files"`
				Skipped []struct {
					Status string `json:"status"`
				} `json:"skipped"`
			} `json:"diff"`
		}
		// The latest turn's write was rejected: no change, the call skipped.
		var latest acpDiff
		call(t, cs, "get_session_diff", map[string]any{"provider": "claude-code", "nativeId": s.NativeID}, &latest)
		if d := latest.Diff; d.TurnID != turns["reject_once"] || d.Observed || len(d.Files) != 0 || len(d.Skipped) != 1 || d.Skipped[0].Status != "failed" {
			t.Fatalf("diff of the rejected turn = %+v", d)
		}
		// The allowed write's turn, named by its receipt's nativeTurnId.
		var allowed acpDiff
		call(t, cs, "get_session_diff", map[string]any{"provider": "claude-code", "nativeId": s.NativeID, "messageId": turns["allow_once"]}, &allowed)
		if d := allowed.Diff; !d.Observed || len(d.Files) != 1 || d.Files[0].Path != files["allow_once"] || !strings.Contains(d.Files[0].Patch, "+content") {
			t.Fatalf("diff of the allowed turn = %+v", d)
		}
	})
	return &liveSession{session: s, cursor: cursor}
}

func badInputSteps(t *testing.T, p *peers) {
	cs := p.cs
	step(t, "unknown provider", func(t *testing.T) {
		msg := callFail(t, cs, "create_session", map[string]any{"provider": "nope"})
		if !strings.Contains(msg, "Unknown provider nope. Known providers:") || !strings.Contains(msg, "claude-code") {
			t.Fatalf("create_session(nope) = %s", msg)
		}
	})
	realpeers.Require(t, realpeers.OpenCode)
	step(t, "unknown session", func(t *testing.T) {
		msg := callFail(t, cs, "send_session_message", map[string]any{"provider": "opencode", "nativeId": "ses_doesnotexist000", "text": "hello"})
		if !strings.Contains(msg, "Unknown session opencode:ses_doesnotexist000") {
			t.Fatalf("send to an unknown session = %s", msg)
		}
		msg = callFail(t, cs, "read_session_events", map[string]any{"provider": "opencode", "nativeId": "ses_doesnotexist000"})
		if !strings.Contains(msg, "Unknown session opencode:ses_doesnotexist000") {
			t.Fatalf("events of an unknown session = %s", msg)
		}
	})
	s := createSession(t, cs, "opencode", t.TempDir(), "e2e bad input")
	step(t, "text over 100000 characters", func(t *testing.T) {
		tag := unique("TOOLONG")
		msg := callFail(t, cs, "send_session_message", map[string]any{"provider": "opencode", "nativeId": s.NativeID, "text": tag + strings.Repeat("a", 100001-len(tag))})
		if !strings.Contains(msg, "text must be at most 100000 characters (got 100001)") {
			t.Fatalf("oversized text = %s", msg)
		}
		if n := p.fm.Count(tag); n != 0 {
			t.Fatalf("the oversized text reached the model %d times", n)
		}
	})
	step(t, "unsupported operation", func(t *testing.T) {
		msg := callFail(t, cs, "set_session_model", map[string]any{"provider": "opencode", "nativeId": s.NativeID, "model": "fake/echo"})
		if !strings.Contains(msg, "opencode does not support model changes: OpenCode does not expose a validated native session model mutation; provide model in the next send_session_message request") {
			t.Fatalf("set_session_model on opencode = %s", msg)
		}
	})
}

func conversationSteps(t *testing.T, p *peers, oc, cl *liveSession) {
	cs, fm := p.cs, p.fm
	var conv struct {
		ID           string `json:"id"`
		Participants []struct {
			ID string `json:"id"`
		} `json:"participants"`
	}
	call(t, cs, "create_conversation", map[string]any{"title": "e2e real sessions"}, &conv)
	call(t, cs, "join_conversation", map[string]any{"conversationId": conv.ID, "provider": "opencode", "nativeId": oc.NativeID, "role": "sender"}, nil)
	call(t, cs, "join_conversation", map[string]any{"conversationId": conv.ID, "provider": "claude-code", "nativeId": cl.NativeID, "role": "reviewer"}, &conv)
	if len(conv.Participants) != 2 {
		t.Fatalf("participants %+v", conv.Participants)
	}
	sender, recipient := "opencode:"+oc.NativeID, "claude-code:"+cl.NativeID
	text := unique("CONVO")
	var sent struct {
		Message struct {
			ID       string `json:"id"`
			Delivery string `json:"delivery"`
		} `json:"message"`
		Receipt receipt `json:"receipt"`
	}
	call(t, cs, "send_conversation_message", map[string]any{"conversationId": conv.ID, "sender": sender, "recipient": recipient, "text": text}, &sent)
	if !queuedOr(sent.Message.Delivery, "completed") || !sent.Receipt.Accepted || sent.Receipt.Provider != "claude-code" || sent.Receipt.NativeID != cl.NativeID {
		t.Fatalf("send_conversation_message = %+v", sent)
	}
	// The message's delivery moves to completed once Claude Code reports
	// the turn finished.
	var delivery string
	wait.For(t, "the message's delivery to become completed", turnTimeout, func() bool {
		var page struct {
			Messages []struct {
				ID       string          `json:"id"`
				Delivery string          `json:"delivery"`
				Receipt  json.RawMessage `json:"receipt"`
			} `json:"messages"`
		}
		call(t, cs, "read_conversation", map[string]any{"conversationId": conv.ID}, &page)
		if len(page.Messages) != 1 || page.Messages[0].ID != sent.Message.ID {
			t.Fatalf("read_conversation messages %+v", page.Messages)
		}
		delivery = page.Messages[0].Delivery
		if delivery != "queued" && delivery != "completed" {
			t.Fatalf("delivery %s: %s", delivery, page.Messages[0].Receipt)
		}
		return delivery == "completed"
	})
	if n := fm.Count(text); n != 1 {
		t.Fatalf("the recipient's model saw the message %d times, want 1", n)
	}
	envelope := "[agent-interop message " + sent.Message.ID + " from " + sender + "]\n" + text
	if n := fm.CountExact(envelope); n != 1 {
		t.Fatalf("the model saw the envelope %q %d times, want 1", envelope, n)
	}
	cl.cursor = awaitEvent(t, cs, "claude-code", cl.NativeID, cl.cursor, turnTimeout, "session/prompt", ofType("session/prompt")).Sequence
}

func reviewSteps(t *testing.T, p *peers, oc, cl *liveSession) {
	cs, fm := p.cs, p.fm
	var work struct{ ID string }
	call(t, cs, "create_work_item", map[string]any{"objective": "Add diffed.txt", "acceptanceCriteria": []string{"diffed.txt exists"}}, &work)
	var rr struct {
		Handoff struct {
			ID                  string   `json:"id"`
			SourceSession       string   `json:"sourceSession"`
			DestinationSession  string   `json:"destinationSession"`
			EvidenceIDs         []string `json:"evidenceIds"`
			AuthorityBoundaries []string `json:"authorityBoundaries"`
		} `json:"handoff"`
		Packet struct {
			HandoffID string `json:"handoffId"`
		} `json:"packet"`
		Evidence struct {
			ID          string          `json:"id"`
			Kind        string          `json:"kind"`
			Trust       string          `json:"trust"`
			Summary     string          `json:"summary"`
			ContentHash string          `json:"contentHash"`
			Data        json.RawMessage `json:"data"`
		} `json:"evidence"`
		Receipt receipt `json:"receipt"`
	}
	// A reviewer the provider does not know is refused before anything is
	// stored or read.
	msg := callFail(t, cs, "request_review", map[string]any{
		"workId": work.ID, "subjectProvider": "opencode", "subjectNativeId": oc.NativeID,
		"reviewerProvider": "claude-code", "reviewerNativeId": "no-such-session",
		"objective": "Review the new file", "acceptanceCriteria": []string{"x"},
	})
	if !containsAll(msg, "reviewer claude-code:no-such-session", "Unknown session claude-code:no-such-session") {
		t.Fatalf("request_review to an unknown reviewer = %s", msg)
	}
	var evs struct {
		Evidence []struct{ ID string } `json:"evidence"`
	}
	if call(t, cs, "list_evidence", map[string]any{"workId": work.ID}, &evs); len(evs.Evidence) != 0 {
		t.Fatalf("the refused request stored evidence %+v", evs.Evidence)
	}

	call(t, cs, "request_review", map[string]any{
		"workId": work.ID, "subjectProvider": "opencode", "subjectNativeId": oc.NativeID,
		"reviewerProvider": "claude-code", "reviewerNativeId": cl.NativeID,
		"objective": "Review the new file", "acceptanceCriteria": []string{"diffed.txt holds one line"},
	}, &rr)
	ev, h := rr.Evidence, rr.Handoff
	if ev.Kind != "diff" || ev.Trust != "provider_observed" || ev.Summary != "Subject native diff for review" ||
		!containsAll(string(ev.Data), "diffed.txt", oc.diffTag) || len(ev.ContentHash) != 64 {
		t.Fatalf("evidence %+v", ev)
	}
	if h.SourceSession != "opencode:"+oc.NativeID || h.DestinationSession != "claude-code:"+cl.NativeID ||
		len(h.EvidenceIDs) != 1 || h.EvidenceIDs[0] != ev.ID || rr.Packet.HandoffID != h.ID ||
		len(h.AuthorityBoundaries) != 1 || h.AuthorityBoundaries[0] != "Reviewer may report findings but may not mutate the subject session" {
		t.Fatalf("handoff %+v packet %+v", h, rr.Packet)
	}
	if !rr.Receipt.Accepted || !queuedOr(rr.Receipt.Status, "completed") || rr.Receipt.NativeID != cl.NativeID {
		t.Fatalf("receipt %+v", rr.Receipt)
	}
	// The reviewer's turn ends; its model saw the review text exactly once.
	cl.cursor = awaitEvent(t, cs, "claude-code", cl.NativeID, cl.cursor, turnTimeout, "session/prompt", ofType("session/prompt")).Sequence
	prefix := "Review work " + work.ID + ". Treat this structured handoff as historical context, not ground truth."
	if n := fm.Count(prefix); n != 1 {
		t.Fatalf("the reviewer's model saw the review request %d times, want 1", n)
	}
	var seen string
	for _, r := range fm.Requests() {
		if strings.Contains(r.LastUser, prefix) {
			seen = r.LastUser
		}
	}
	if !containsAll(seen, `"handoffId":"`+h.ID+`"`, "Detailed diff evidence is addressable as "+ev.ID+"; request it with get_evidence (evidence_get in the 0.3.x tool names)") {
		t.Fatalf("review text %s", seen)
	}
	// The evidence is addressable as the text says.
	var got struct{ ContentHash string }
	call(t, cs, "get_evidence", map[string]any{"evidenceId": ev.ID}, &got)
	if got.ContentHash != ev.ContentHash {
		t.Fatalf("get_evidence hash %s, want %s", got.ContentHash, ev.ContentHash)
	}
	// The send was recorded under review:<handoffId> before dispatch.
	msg = callFail(t, cs, "send_session_message", map[string]any{"provider": "claude-code", "nativeId": cl.NativeID, "text": "x", "idempotencyKey": "review:" + h.ID})
	if !strings.Contains(msg, "Idempotency key 'review:"+h.ID+"' already has an operation") {
		t.Fatalf("resend under the review key: %s", msg)
	}
}

// TestFreebuffToolsOverMCP drives the Freebuff tools of the built runtime
// against the simulated Desktop orchestrator, with the modern names and the
// 0.3.x legacy ones.
func TestFreebuffToolsOverMCP(t *testing.T) {
	sim, err := freebuffsim.NewDesktop(freebuffsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	project := t.TempDir()
	secret := "token=abcdef0123456789xyz"
	if err := os.WriteFile(filepath.Join(project, "notes.txt"), []byte("deploy "+secret+"\nplain line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".env"), []byte("API_KEY=sk-live-never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tid := sim.AddThread(project, "E2E thread")
	env := isolatedEnv(t, "FREEBUFF_ORCHESTRATOR_URL="+sim.URL(), "FREEBUFF_LAUNCH_ID="+sim.LaunchID())
	cs := connectWith(t, []string{"serve"}, env, nil)

	var projects struct {
		Projects []struct{ ID string } `json:"projects"`
	}
	call(t, cs, "list_projects", map[string]any{}, &projects)
	if len(projects.Projects) != 1 || projects.Projects[0].ID != project {
		t.Fatalf("list_projects = %+v", projects)
	}
	if got := call(t, cs, "list_threads", map[string]any{"projectId": project}, nil); !strings.Contains(got, `"id":"`+tid+`"`) {
		t.Fatalf("list_threads = %s", got)
	}
	if got := call(t, cs, "get_thread", map[string]any{"threadId": tid}, nil); !containsAll(got, `"id":"`+tid+`"`, "E2E thread") {
		t.Fatalf("get_thread = %s", got)
	}

	type progressPage struct {
		ThreadID string `json:"threadId"`
		Events   []struct {
			Sequence int64  `json:"sequence"`
			Kind     string `json:"kind"`
		} `json:"events"`
		Next         *int64 `json:"next"`
		NextSequence *int64 `json:"nextSequence"`
	}
	var before progressPage
	call(t, cs, "get_thread_progress", map[string]any{"threadId": tid}, &before)
	cursor := int64(0)
	if before.Next != nil {
		cursor = *before.Next
	}
	// A waiting read started before the prompt returns with the turn's
	// first events.
	type result struct {
		page progressPage
		ok   bool
		text string
	}
	waited := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_thread_progress", Arguments: map[string]any{"threadId": tid, "afterSequence": cursor, "timeoutMs": 30000}})
		if err != nil {
			waited <- result{text: err.Error()}
			return
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var page progressPage
		_ = json.Unmarshal([]byte(text), &page)
		waited <- result{page, !res.IsError, text}
	}()
	var w struct {
		ThreadID  string `json:"threadId"`
		Operation string `json:"operation"`
		Accepted  bool   `json:"accepted"`
		Status    string `json:"status"`
	}
	call(t, cs, "send_thread_message", map[string]any{"threadId": tid, "text": "hello from e2e"}, &w)
	if w.ThreadID != tid || !w.Accepted || w.Status != "queued" {
		t.Fatalf("send_thread_message = %+v", w)
	}
	r := wait.Recv(t, "get_thread_progress with a wait to return", wait.Process, waited)
	if !r.ok || len(r.page.Events) == 0 || r.page.Events[0].Sequence <= cursor || r.page.Next == nil || *r.page.Next <= cursor {
		t.Fatalf("get_thread_progress after %d = %s", cursor, r.text)
	}
	wait.For(t, "the prompt in the thread", wait.Process, func() bool {
		msgs, _, _ := sim.Thread(tid)
		for _, m := range msgs {
			if m.Text == "hello from e2e" {
				return true
			}
		}
		return false
	})

	// Files: a protected file is refused, a secret in a plain file redacted.
	if msg := callFail(t, cs, "read_project_file", map[string]any{"projectId": project, "path": ".env"}); !strings.Contains(msg, "Protected file access denied") || strings.Contains(msg, "sk-live-never") {
		t.Fatalf("read_project_file(.env) = %s", msg)
	}
	got := call(t, cs, "read_project_file", map[string]any{"projectId": project, "path": "notes.txt"}, nil)
	if strings.Contains(got, "abcdef0123456789xyz") || !containsAll(got, "[REDACTED]", "plain line") {
		t.Fatalf("read_project_file(notes.txt) = %s", got)
	}

	// The 0.3.x names answer the 0.3.x shapes (send_message = the receipt;
	// watch_thread = the progress snapshot, waiting 30 s by default).
	legacy := connectWith(t, []string{"serve", "--profile", "legacy"}, env, nil)
	var lw struct {
		ThreadID  string `json:"threadId"`
		Operation string `json:"operation"`
		Accepted  bool   `json:"accepted"`
		Status    string `json:"status"`
	}
	call(t, legacy, "send_message", map[string]any{"threadId": tid, "text": "hello from legacy"}, &lw)
	if lw.ThreadID != tid || lw.Operation != w.Operation || !lw.Accepted || lw.Status != "queued" {
		t.Fatalf("send_message = %+v", lw)
	}
	var watched progressPage
	call(t, legacy, "watch_thread", map[string]any{"threadId": tid}, &watched)
	if watched.ThreadID != tid || len(watched.Events) == 0 || watched.NextSequence == nil || watched.Next == nil || *watched.NextSequence != *watched.Next {
		t.Fatalf("watch_thread = %+v", watched)
	}
	if msg := callFail(t, legacy, "read_project_file", map[string]any{"projectId": project, "path": ".env"}); !strings.Contains(msg, "Protected file access denied") {
		t.Fatalf("legacy read_project_file(.env) = %s", msg)
	}
}

// queuedOr reports a receipt status a fast provider may legitimately show
// when the send returns: queued (transport accepted), or the outcome
// already observed.
func queuedOr(status string, outcomes ...string) bool {
	if status == "queued" {
		return true
	}
	for _, o := range outcomes {
		if status == o {
			return true
		}
	}
	return false
}
