//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/browser"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/syncbuf"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// startServe runs `interop-runtime serve` over stdio with env, as a client
// would, and returns it so that the test can kill it.
func startServe(t *testing.T, env []string) *runtimeProc {
	t.Helper()
	cmd := exec.Command(binary, "serve")
	cmd.Env = env
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-desk", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start serve: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return &runtimeProc{cs: cs, cmd: cmd, stderr: stderr}
}

// deskOwnerGone: another `serve` drives a Codex turn that waits on an
// approval and is killed. The desk (another process, which drives
// nothing) shows the session waiting on approval, then, without a reload,
// unknown with its owner gone (the store's runtime_owners row names a pid
// that no longer runs); the runtime still running settles the receipt
// from Codex's history, and the receipts page shows it leave queued.
func deskOwnerGone(t *testing.T, br *browser.Browser, dk *deskProcess, env *realpeers.Env, fm *fakemodel.Server, shots string) {
	rt := startServe(t, env.Environ())
	s := createSession(t, rt.cs, "codex", t.TempDir(), "desk orphan")
	sessions, receipts := br.NewTab(t), br.NewTab(t)
	run(t, sessions, wait.Process, "open the sessions page", chromedp.Navigate(dk.base+"/desk/sessions?provider=codex"))
	run(t, receipts, wait.Process, "open the receipts page", chromedp.Navigate(dk.base+"/desk/receipts?provider=codex"))
	for _, tab := range []context.Context{sessions, receipts} {
		waitFor(t, tab, wait.Process, "the stream open", `document.querySelector("#live-state").dataset.state === "open"`)
		eval[string](t, tab, `window.__deskMark = "not reloaded"`)
	}
	tag := unique("DESKORPHAN")
	fm.On(fakemodel.Contains(tag), fakemodel.RunCommand("echo orphan > orphan.txt").WithFollowUp("Ran it."))
	r := send(t, rt.cs, "codex", s.NativeID, tag+" now", "")
	if !r.Accepted || r.OperationID == "" {
		t.Fatalf("receipt %+v", r)
	}
	awaitPermission(t, rt.cs, "codex", s.NativeID, turnTimeout)
	row := fmt.Sprintf(`document.querySelector('tr[data-native-id=%q] [data-liveness]')`, s.NativeID)
	receipt := fmt.Sprintf(`document.querySelector('tr.receipt[data-operation-id=%q]')`, r.OperationID)
	waitFor(t, sessions, turnTimeout, "the session waiting on approval", row+` && `+row+`.dataset.liveness === "waiting_on_approval"`)
	waitFor(t, receipts, turnTimeout, "the receipt queued", receipt+` && `+receipt+`.dataset.status === "queued"`)

	rt.kill(t, nil)
	// Nothing is written when a process dies: the page notices when its
	// stream looks again (every reconnection, 2 s here; every 15 s idle).
	// The first serve, still running, may settle the send first (it looks
	// every 15 s, at any phase): then the page goes straight to idle, and
	// the owner-gone state was never there to show.
	gone := row + `.dataset.liveness === "unknown" && ` + row + `.dataset.ownerGone === "true" && ` + row + `.dataset.livenessSource === "store"`
	waitFor(t, sessions, turnTimeout, "the session unknown with its owner gone (or settled by the running serve), without a reload",
		`(`+gone+`) || (`+row+`.dataset.liveness === "idle" && `+row+`.dataset.ownerGone !== "true")`)
	if evalBool(t, sessions, gone) {
		if why := eval[string](t, sessions, row+`.title`); !strings.Contains(why, "is no longer running") {
			t.Fatalf("the reason does not say the runtime is gone: %q", why)
		}
		browser.Screenshot(t, sessions, shots, "14-session-owner-gone")
	} else {
		t.Log("the running serve settled the send before the desk looked again: the owner-gone state was not shown")
	}
	// The test's first serve, still running, settles it (every 15 s) from
	// Codex's history:
	// never resent; completed or rejected only when the history shows it.
	waitFor(t, receipts, turnTimeout, "the receipt settled without a reload", receipt+`.dataset.status !== "queued"`)
	waitFor(t, sessions, turnTimeout, "the owner-gone mark gone once settled", row+`.dataset.ownerGone !== "true"`)
	browser.Screenshot(t, receipts, shots, "15-receipt-settled")
	for _, tab := range []context.Context{sessions, receipts} {
		if !evalBool(t, tab, `window.__deskMark === "not reloaded"`) {
			t.Fatal("a page was reloaded")
		}
	}
}
