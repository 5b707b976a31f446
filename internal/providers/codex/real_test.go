package codex_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// These tests drive the real `codex app-server` (installed by
// scripts/install-providers.sh) against the fake Responses endpoint.

func TestRealCodexDiscoverCreateSendCompletes(t *testing.T) {
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	s, _ := realStack(t, fm, nil, nil)
	ctx := ctxFor(t, wait.Process)

	caps := s.reg.ListProviders(ctx)[2]
	if caps.Provider != providers.Codex || caps.SendMessage.State != providers.Available || caps.ProviderVersion != "0.171.0" || caps.Authorization != "authorized" {
		t.Fatalf("capabilities = %+v", caps)
	}
	sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project, Title: "interop probe"})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Endpoint == "" || sess.CWD != s.project || sess.Title != "interop probe" {
		t.Fatalf("session = %+v", sess)
	}
	// Subscribe first (shared subscription), then send.
	p, err := s.hub.Read(ctx, events.ReadRequest{Provider: providers.Codex, NativeID: sess.NativeID})
	if err != nil || p.Warning != "" {
		t.Fatalf("first read = %+v, %v", p, err)
	}
	res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "say hello 7f3a", IdempotencyKey: "real-send-1"})
	if err != nil {
		t.Fatal(err)
	}
	// Queued, or already completed when the turn ended before the receipt
	// was stored (a fast model); either way it names the turn.
	if (res.Operation.Status != providers.StatusQueued && res.Operation.Status != providers.StatusCompleted) ||
		res.Operation.Ref == "" || res.Receipt.NativeTurnID != res.Operation.Ref || res.Receipt.Status != res.Operation.Status {
		t.Fatalf("receipt = %+v", res)
	}
	done, _ := waitEvent(t, s, sess.NativeID, 0, ofType("turn/completed"))
	if turnStatus(done) != "completed" || done.Epoch != 1 {
		t.Fatalf("turn/completed = %s (epoch %d)", done.Data, done.Epoch)
	}
	delta, _ := waitEvent(t, s, sess.NativeID, 0, ofType("item/agentMessage/delta"))
	if !strings.Contains(string(delta.Data), "Hello") {
		t.Fatalf("delta = %s", delta.Data)
	}
	if op := waitOp(t, s, res.Operation.ID); op.Status != providers.StatusCompleted {
		t.Fatalf("op = %+v", op)
	}
	if n := fm.Count("say hello 7f3a"); n != 1 {
		t.Fatalf("model saw the prompt %d times", n)
	}
	// Discovery lists the thread, routed to this endpoint.
	list, err := s.reg.ListSessions(ctx, "codex")
	if err != nil || len(list.ProviderErrors) != 0 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	found := false
	for _, x := range list.Sessions {
		if x.NativeID == sess.NativeID {
			found = x.Endpoint == sess.Endpoint && x.Title == "interop probe"
		}
	}
	if !found {
		t.Fatalf("created thread not listed: %+v", list.Sessions)
	}
}

func TestRealCodexDiffAfterFileEdit(t *testing.T) {
	fm := fakemodel.New(t)
	patch := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+hello world\n*** End Patch\nEOF\n"
	fm.On(fakemodel.Contains("PATCHME"), fakemodel.RunCommand(patch).WithFollowUp("Patched."))
	fm.SetDefault(fakemodel.Text("ok"))
	s, _ := realStack(t, fm, nil, nil)
	ctx := ctxFor(t, wait.Process)
	sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "PATCHME please"})
	if err != nil {
		t.Fatal(err)
	}
	if op := waitOp(t, s, res.Operation.ID); op.Status != providers.StatusCompleted {
		t.Fatalf("op = %+v %s", op, op.Detail)
	}
	b, err := os.ReadFile(filepath.Join(s.project, "hello.txt"))
	if err != nil || string(b) != "hello world\n" {
		t.Fatalf("file = %q, %v", b, err)
	}
	d, err := s.reg.Diff(ctx, "codex", sess.NativeID, providers.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(d)
	if !contains(string(raw), `"observed":true`, "hello.txt", "+hello world", res.Operation.Ref) {
		t.Fatalf("diff = %s", raw)
	}
}

func TestRealCodexApprovalAskAndReply(t *testing.T) {
	fm := fakemodel.New(t)
	fm.On(fakemodel.Contains("RUNSHELL"), fakemodel.RunCommand("echo hi > shell.txt").WithFollowUp("Ran it."))
	s, _ := realStack(t, fm, nil, func(c *codex.Config) {
		c.ThreadParams = map[string]any{"approvalPolicy": "untrusted", "sandbox": "workspace-write"}
	})
	ctx := ctxFor(t, wait.Process)
	sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.Read(ctx, events.ReadRequest{Provider: providers.Codex, NativeID: sess.NativeID}); err != nil {
		t.Fatal(err)
	}
	send, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "RUNSHELL now"})
	if err != nil {
		t.Fatal(err)
	}
	ask, cursor := waitEvent(t, s, sess.NativeID, 0, ofType("item/commandExecution/requestApproval"))
	var asked struct {
		RequestID string `json:"requestId"`
	}
	_ = json.Unmarshal(ask.Data, &asked)
	perms, err := s.reg.PendingPermissions(ctx, "codex", sess.NativeID)
	if err != nil || len(perms.Requests) != 1 || perms.Requests[0].RequestID != asked.RequestID {
		t.Fatalf("pending = %+v, %v", perms, err)
	}
	p := perms.Requests[0]
	if !strings.Contains(p.Title, "echo hi > shell.txt") {
		t.Fatalf("title = %q", p.Title)
	}
	// What a command writes is known only once it has run.
	if !p.PathsUnknown || len(p.Paths) != 0 {
		t.Fatalf("a command approval names paths %q (unknown %v)", p.Paths, p.PathsUnknown)
	}
	if l := s.reg.Liveness(providers.Codex, sess.NativeID); l.State != providers.LiveWaitingOnApproval || l.ObservedAt == nil {
		t.Fatalf("liveness while the approval is held = %+v", l)
	}
	var ids []string
	for _, o := range p.Options {
		ids = append(ids, o.ID)
	}
	// A decision the request did not offer is refused, naming the offered ones.
	bad, err := s.del.RespondPermission(ctx, delivery.PermissionResponse{Provider: "codex", NativeID: sess.NativeID, RequestID: p.RequestID, Decision: "yolo"})
	if err != nil || bad.Operation.Status != providers.StatusRejected || !strings.Contains(string(bad.Operation.Detail), "offered: "+strings.Join(ids, ", ")) {
		t.Fatalf("bad decision = %+v %s, %v", bad.Operation, bad.Operation.Detail, err)
	}
	if _, err := os.Stat(filepath.Join(s.project, "shell.txt")); err == nil {
		t.Fatal("command ran before it was approved")
	}
	ok, err := s.del.RespondPermission(ctx, delivery.PermissionResponse{Provider: "codex", NativeID: sess.NativeID, RequestID: p.RequestID, Decision: "accept"})
	// Queued until codex resolves the request, which a fast app-server may
	// do before the receipt is stored.
	if err != nil || (ok.Operation.Status != providers.StatusQueued && ok.Operation.Status != providers.StatusCompleted) {
		t.Fatalf("accept = %+v, %v", ok, err)
	}
	if op := waitOp(t, s, ok.Operation.ID); op.Status != providers.StatusCompleted {
		t.Fatalf("permission op = %+v", op)
	}
	waitEvent(t, s, sess.NativeID, cursor, ofType("turn/completed"))
	if op := waitOp(t, s, send.Operation.ID); op.Status != providers.StatusCompleted {
		t.Fatalf("send op = %+v", op)
	}
	if b, err := os.ReadFile(filepath.Join(s.project, "shell.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("shell.txt = %q, %v", b, err)
	}
}

// TestRealCodexFileEditAsksAFileChangeApproval: a fake-model write reaches
// Codex's file-edit path, through its apply_patch tool (which Codex offers
// for a model whose catalog entry asks for it, as for its GPT models) and,
// without the catalog, through `apply_patch` in its shell tool. Either way
// Codex asks item/fileChange/requestApproval, and the request names the
// file, absolute, before anything is written.
func TestRealCodexFileEditAsksAFileChangeApproval(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configEdit func(string) string
		call       string // the response item the model's write was
	}{
		{"apply_patch tool", nil, "custom_tool_call"},
		{"apply_patch through the shell", func(c string) string {
			return regexp.MustCompile(`(?m)^model_catalog_json = .*\n`).ReplaceAllString(c, "")
		}, "function_call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := fakemodel.New(t)
			fm.On(fakemodel.Contains("EDITFILE"), fakemodel.WriteFile("sub/old.txt", "new line\n").WithFollowUp("Edited."))
			fm.SetDefault(fakemodel.Text("ok"))
			s, _ := realStack(t, fm, tc.configEdit, func(c *codex.Config) {
				c.ThreadParams = map[string]any{"approvalPolicy": "untrusted", "sandbox": "workspace-write"}
			})
			target := filepath.Join(s.project, "sub", "old.txt")
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target, []byte("old line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := ctxFor(t, wait.Process)
			sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.hub.Read(ctx, events.ReadRequest{Provider: providers.Codex, NativeID: sess.NativeID}); err != nil {
				t.Fatal(err)
			}
			send, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "EDITFILE now"})
			if err != nil {
				t.Fatal(err)
			}
			ask, cursor := waitEvent(t, s, sess.NativeID, 0, func(e events.Event) bool {
				return strings.HasSuffix(e.Type, "/requestApproval")
			})
			if ask.Type != "item/fileChange/requestApproval" {
				t.Fatalf("codex asked %s %s, want a file-change approval", ask.Type, ask.Data)
			}
			perms, err := s.reg.PendingPermissions(ctx, "codex", sess.NativeID)
			if err != nil || len(perms.Requests) != 1 {
				t.Fatalf("pending = %+v, %v", perms, err)
			}
			p := perms.Requests[0]
			if len(p.Paths) != 1 || p.Paths[0] != target || p.PathsUnknown {
				t.Fatalf("request names %q (unknown %v), want [%s]", p.Paths, p.PathsUnknown, target)
			}
			if b, _ := os.ReadFile(target); string(b) != "old line\n" {
				t.Fatalf("written before the approval: %q", b)
			}
			if _, err := s.del.RespondPermission(ctx, delivery.PermissionResponse{Provider: "codex", NativeID: sess.NativeID, RequestID: p.RequestID, Decision: "accept"}); err != nil {
				t.Fatal(err)
			}
			waitEvent(t, s, sess.NativeID, cursor, ofType("turn/completed"))
			if op := waitOp(t, s, send.Operation.ID); op.Status != providers.StatusCompleted {
				t.Fatalf("send op = %+v", op)
			}
			if b, err := os.ReadFile(target); err != nil || string(b) != "new line\n" {
				t.Fatalf("after the approval: %q, %v", b, err)
			}
			// The model's write was the tool call this case is about.
			var body string
			for _, r := range fm.Requests() {
				if r.Continuation {
					body = string(r.Body)
				}
			}
			if !strings.Contains(body, `"type":"`+tc.call+`"`) || !strings.Contains(body, "*** Add File: sub/old.txt") {
				t.Fatalf("the continuation does not carry a %s of the patch: %.2000s", tc.call, body)
			}
		})
	}
}

func TestRealCodexCancelDuringSlowReply(t *testing.T) {
	fm := fakemodel.New(t)
	fm.On(fakemodel.Contains("SLOWREPLY"), fakemodel.Text("too late").WithDelay(time.Minute))
	s, _ := realStack(t, fm, nil, nil)
	ctx := ctxFor(t, wait.Process)
	sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project})
	if err != nil {
		t.Fatal(err)
	}
	send, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "SLOWREPLY please"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fm.Await(ctx, func(r fakemodel.Request) bool { return strings.Contains(r.LastUser, "SLOWREPLY") }); err != nil {
		t.Fatal(err)
	}
	cancel, err := s.del.Cancel(ctx, delivery.CancelRequest{Provider: "codex", NativeID: sess.NativeID})
	// The interrupt may already be observed when Cancel returns.
	if err != nil || (cancel.Operation.Status != providers.StatusQueued && cancel.Operation.Status != providers.StatusCompleted) {
		t.Fatalf("cancel = %+v, %v", cancel, err)
	}
	if op := waitOp(t, s, cancel.Operation.ID); op.Status != providers.StatusCompleted {
		t.Fatalf("cancel op = %+v %s", op, op.Detail)
	}
	op := waitOp(t, s, send.Operation.ID)
	if op.Status != providers.StatusRejected || !strings.Contains(string(op.Detail), "turn interrupted") {
		t.Fatalf("send op = %+v %s", op, op.Detail)
	}
	// Nothing left to cancel: refused before it reaches codex.
	again, err := s.del.Cancel(ctx, delivery.CancelRequest{Provider: "codex", NativeID: sess.NativeID})
	if err != nil || again.Operation.Status != providers.StatusRejected || !strings.Contains(string(again.Operation.Detail), "no active turn") {
		t.Fatalf("second cancel = %+v %s, %v", again.Operation, again.Operation.Detail, err)
	}
}

func TestRealCodexProvider401IsRejected(t *testing.T) {
	fm := fakemodel.New(t)
	fm.On(fakemodel.Contains("FAIL401"), fakemodel.Fail(401, "Incorrect API key provided"))
	s, _ := realStack(t, fm, nil, nil)
	ctx := ctxFor(t, wait.Process)
	sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "FAIL401 please"})
	if err != nil {
		t.Fatal(err)
	}
	op := waitOp(t, s, res.Operation.ID)
	if op.Status != providers.StatusRejected || !contains(string(op.Detail), "401", "Incorrect API key provided") {
		t.Fatalf("op = %+v %s", op, op.Detail)
	}
	if n := fm.Count("FAIL401 please"); n != 1 {
		t.Fatalf("model saw it %d times (retried?)", n)
	}
	_ = context.Background
}
