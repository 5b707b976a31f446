package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agent-interop/runtime/internal/testutil/browser"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestDeskApprovalInRealBrowser: a real Codex turn on the fake model asks
// to write a file; a person signed in to the desk of serve --http answers
// it by clicking the provider's "accept" option on the session page. The
// file is written, the receipt says the desk made the answer and shows
// its events, and the same form posted without its token from the page
// is refused with 403 and changes nothing.
func TestDeskApprovalInRealBrowser(t *testing.T) {
	realpeers.Require(t, realpeers.Codex)
	chromium := browser.Require(t)
	shots := browser.ScreenshotDir(t)
	fm, env := codexDeskEnv(t)
	env.Set("AGENT_INTEROP_HTTP_TOKEN", "desk-act-token")
	r := startHTTP(t, nil, env.Environ())
	links := deskLoginLine.FindAllStringSubmatch(r.stderr.String(), -1)
	if len(links) == 0 {
		t.Fatalf("no desk login link: %s", r.stderr)
	}
	cs := r.connect(t)
	dir := t.TempDir()
	s := createSession(t, cs, "codex", dir, "desk approval")
	tag := unique("DESKACT")
	fm.On(fakemodel.Contains(tag), fakemodel.WriteFile("desk.txt", "written after a click\n").WithFollowUp("Wrote it."))
	if rcpt := send(t, cs, "codex", s.NativeID, tag+" write desk.txt", ""); !rcpt.Accepted {
		t.Fatalf("receipt %+v", rcpt)
	}
	req := awaitPermission(t, cs, "codex", s.NativeID, turnTimeout)

	br := browser.Start(t, chromium, 1280, 900)
	ctx := br.Context()
	run(t, ctx, wait.Process, "open the login link", chromedp.Navigate(links[0][1]))
	waitFor(t, ctx, wait.Process, "the desk after login", `location.pathname === "/desk/"`)
	run(t, ctx, wait.Process, "open the session page", chromedp.Navigate(r.base+"/desk/sessions/codex/"+url.PathEscape(s.NativeID)))
	form := fmt.Sprintf(`document.querySelector('form.ask[data-request-id=%q]')`, req.RequestID)
	waitFor(t, ctx, wait.Process, "the pending request with its options", form+` !== null && `+form+`.querySelector("button.allow") !== null`)
	browser.Screenshot(t, ctx, shots, "act-01-pending")

	// The same form without its token, posted by the page itself (same
	// origin, the cookie attached): refused, and the request stays open.
	c, cancel := context.WithTimeout(ctx, wait.Process)
	defer cancel()
	status, err := chromedp.Run(c, chromedp.Evaluate[float64](`(async () => { const f = new FormData(`+form+`); f.delete("csrf"); f.set("decision", "accept");
		const r = await fetch("/desk/act/permission", {method: "POST", body: new URLSearchParams(f), redirect: "manual"});
		return r.status + (await r.text()).includes("csrf_token") * 1000; })()`, chromedp.EvalAwaitPromise))
	if err != nil || status != 1403 { // 403 for the token (csrf_token), not another check
		t.Fatalf("the form without its token: %v %v, want 403", status, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "desk.txt")); err == nil {
		t.Fatal("the file was written after a refused request")
	}
	still := awaitPermission(t, cs, "codex", s.NativeID, wait.Process)
	if still.RequestID != req.RequestID {
		t.Fatalf("the refused request changed the pending one: %+v", still)
	}

	clicked := time.Now()
	eval[bool](t, ctx, form+`.querySelector("button.allow").click(), true`)
	landed := waitAcross(t, ctx, wait.Process, `location.pathname.startsWith("/desk/receipts/") || location.pathname.startsWith("/desk/act/")`,
		`location.pathname + " " + document.body.innerText.slice(0, 400)`)
	if !strings.HasPrefix(landed, "/desk/receipts/") {
		browser.Screenshot(t, ctx, shots, "act-02-after-click")
		t.Fatalf("the click did not land on the receipt: %s", landed)
	}
	wait.For(t, "the provider's write of desk.txt", turnTimeout, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "desk.txt"))
		return err == nil && strings.Contains(string(b), "written after a click")
	})
	t.Logf("figure: click on allow -> file written: %s", time.Since(clicked).Round(time.Millisecond))

	waitFor(t, ctx, wait.Process, "the receipt of the answer", `location.pathname.startsWith("/desk/receipts/") && !!document.querySelector('[data-via="desk"]')`)
	waitFor(t, ctx, turnTimeout, "the answer settled, with its event", `document.querySelector("#receipt-detail").dataset.status === "completed" && document.querySelector(".timeline").innerText.includes("event #")`)
	browser.Screenshot(t, ctx, shots, "act-02-receipt")
	for _, l := range br.Logged() {
		if !strings.Contains(l, "403 (Forbidden) "+r.base+"/desk/act/permission") { // the refused POST above
			t.Fatalf("the pages logged: %v", br.Logged())
		}
	}
}
