package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
)

// TestClaimsEnforcedAtPermissionRequests drives the real Claude Code (ACP),
// Codex, OpenCode and Qwen Code (ACP) programs: two sessions share a workspace, one holds an
// exclusive claim on claimed-<provider>/ (relative); the other's write turn
// asks permission, the request lists the conflict, the allow is refused
// naming the holder and nothing is written; an explicit override goes
// through and is recorded as evidence; the holder's own edit is not held
// up. The workspace is reached through a symlink, so the relative claim
// relates to the file only once both sides are resolved: Claude Code works
// in the link and names the file by its real path; Codex works in the real
// directory and is given the file's path through the link (its sandbox
// cannot write under a symlinked working directory: "Failed to write
// file"). OpenCode is created in the link but resolves it itself (it
// answers with the real directory and names the real file), so its case
// shows a relative file name, not the runtime's resolution.
func TestClaimsEnforcedAtPermissionRequests(t *testing.T) {
	// OpenCode asks before an edit only when its config says so.
	p := startPeersWith(t, peerOptions{openCodePermission: map[string]any{"edit": "ask"}})
	cs, fm := p.cs, p.fm
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, link := filepath.Join(base, "real"), filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		provider, allow string
		peer            realpeers.Program
		cwd             string // the sessions' working directory
		// fileRoot is the directory the model names the file from ("":
		// relative to cwd).
		fileRoot string
	}{
		{"claude-code", "allow_once", realpeers.ClaudeACP, link, real},
		{"codex", "accept", realpeers.Codex, real, link},
		{"opencode", "allow_once", realpeers.OpenCode, link, ""},
		// Qwen Code (an ACP agent of the catalog) works in the real
		// directory and is named the file there.
		{"qwen", "allow_once", realpeers.QwenCode, real, real},
	} {
		t.Run(c.provider, func(t *testing.T) {
			realpeers.Require(t, c.peer)
			claimed := "claimed-" + c.provider // claims are relative: one name per subtest
			if err := os.Mkdir(filepath.Join(real, claimed), 0o755); err != nil {
				t.Fatal(err)
			}
			holder := createSession(t, cs, c.provider, c.cwd, "claim holder")
			other := createSession(t, cs, c.provider, c.cwd, "claim other")
			holderID := c.provider + ":" + holder.NativeID
			var work struct{ ID string }
			call(t, cs, "create_work_item", map[string]any{"objective": "Own " + claimed, "acceptanceCriteria": []string{"only the holder edits it"}}, &work)
			call(t, cs, "acquire_claim", map[string]any{"workId": work.ID, "sessionId": holderID, "resource": claimed, "kind": "directory"}, nil)

			target := func(name string) string {
				if c.fileRoot != "" {
					return filepath.Join(c.fileRoot, claimed, name)
				}
				return claimed + "/" + name
			}
			written := func(name string) (string, bool) {
				b, err := os.ReadFile(filepath.Join(real, claimed, name))
				return string(b), err == nil
			}
			// turn starts a turn of s whose model answers with reply and
			// waits for its permission request; end waits for that turn's end.
			type turn struct {
				req    permission
				cursor int64
				msgID  string // the receipt's nativeTurnId
			}
			start := func(s session, reply fakemodel.Reply) turn {
				tag := unique("CLAIMTURN")
				fm.On(fakemodel.Contains(tag), reply)
				tr := turn{cursor: openEvents(t, cs, c.provider, s.NativeID)}
				tr.msgID = send(t, cs, c.provider, s.NativeID, tag+" now", "").NativeTurnID
				tr.req = awaitPermission(t, cs, c.provider, s.NativeID, turnTimeout)
				return tr
			}
			end := func(s session, tr turn) {
				switch c.provider {
				case "opencode":
					awaitOpenCodeTurn(t, cs, s.NativeID, tr.cursor, tr.msgID)
				case "codex":
					awaitEvent(t, cs, c.provider, s.NativeID, tr.cursor, turnTimeout, "turn/completed", ofType("turn/completed"))
				default:
					awaitEvent(t, cs, c.provider, s.NativeID, tr.cursor, turnTimeout, "session/prompt", ofType("session/prompt"))
				}
			}
			respond := func(s session, tr turn, decision string, override bool) {
				args := map[string]any{"provider": c.provider, "nativeId": s.NativeID, "requestId": tr.req.RequestID, "decision": decision}
				if override {
					args["override"] = true
				}
				var r receipt
				call(t, cs, "respond_to_permission", args, &r)
				if !r.Accepted {
					t.Fatalf("%s receipt %+v", decision, r)
				}
			}
			write := func(s session, name string) fakemodel.Reply {
				return fakemodel.WriteFile(target(name), "by "+s.NativeID+"\n").WithFollowUp("Done writing.")
			}

			tr := start(other, write(other, "a.txt"))
			t.Logf("session cwd %s; the model named %s; the request names %q", other.CWD, target("a.txt"), tr.req.Paths)
			if len(tr.req.Paths) != 1 || tr.req.PathsUnknown || len(tr.req.Conflicts) != 1 {
				t.Fatalf("the request does not name its file and the claim: %+v", tr.req)
			}
			if cf := tr.req.Conflicts[0]; cf.Holder != holderID || cf.Resource != claimed || cf.WorkID != work.ID || cf.ClaimID == "" {
				t.Fatalf("conflict %+v, want %s's claim on %s", cf, holderID, claimed)
			}
			refused := callFail(t, cs, "respond_to_permission", map[string]any{"provider": c.provider, "nativeId": other.NativeID, "requestId": tr.req.RequestID, "decision": c.allow})
			if !strings.Contains(refused, holderID) || !strings.Contains(refused, "override") {
				t.Fatalf("refusal does not name the holder: %s", refused)
			}
			if again := awaitPermission(t, cs, c.provider, other.NativeID, turnTimeout); again.RequestID != tr.req.RequestID {
				t.Fatalf("after the refusal the pending request is %+v, want %s still held", again, tr.req.RequestID)
			}
			if _, ok := written("a.txt"); ok {
				t.Fatal("the claimed file was written although the allow was refused")
			}
			respond(other, tr, c.allow, true)
			end(other, tr)
			if got, ok := written("a.txt"); !ok || got != "by "+other.NativeID+"\n" {
				t.Fatalf("the overridden write: %q, %v", got, ok)
			}
			ev := call(t, cs, "list_evidence", map[string]any{"workId": work.ID}, nil)
			if !strings.Contains(ev, "Claim override") || !strings.Contains(ev, holderID) {
				t.Fatalf("the override is not in the work's evidence: %s", ev)
			}

			own := start(holder, write(holder, "b.txt"))
			if len(own.req.Paths) != 1 || len(own.req.Conflicts) != 0 {
				t.Fatalf("the holder's own edit: %+v", own.req)
			}
			respond(holder, own, c.allow, false)
			end(holder, own)
			if got, ok := written("b.txt"); !ok || got != "by "+holder.NativeID+"\n" {
				t.Fatalf("the holder's edit: %q, %v", got, ok)
			}

			if c.provider == "codex" {
				// What a shell command writes is known only once it has run:
				// the request says so and shows no conflict (not enforced).
				cmd := start(other, fakemodel.RunCommand("printf x > "+claimed+"/c.txt").WithFollowUp("Ran it."))
				if cmd.req.Method != "item/commandExecution/requestApproval" || !cmd.req.PathsUnknown || len(cmd.req.Paths) != 0 || len(cmd.req.Conflicts) != 0 {
					t.Fatalf("command approval %+v", cmd.req)
				}
				respond(other, cmd, "cancel", false) // the command approval offers accept or cancel
				end(other, cmd)
				if _, ok := written("c.txt"); ok {
					t.Fatal("the declined command ran")
				}
			}
		})
	}
}
