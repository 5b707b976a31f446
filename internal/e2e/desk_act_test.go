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

// TestDeskApprovalInRealBrowser: a real Codex or OpenCode turn on the
// fake model asks to write a file; a person signed in to the desk of serve
// --http answers it by clicking the provider's first allowing option on
// the session page. The file is written, the receipt says the desk made
// the answer and shows its events, and the same form posted without its
// token from the page is refused with 403 and changes nothing.
func TestDeskApprovalInRealBrowser(t *testing.T) {
	for _, c := range []struct {
		provider string
		peer     realpeers.Program
		env      func(t *testing.T) (*fakemodel.Server, *realpeers.Env)
	}{
		{"codex", realpeers.Codex, codexDeskEnv},
		{"opencode", realpeers.OpenCode, openCodeDeskEnv},
	} {
		t.Run(c.provider, func(t *testing.T) {
			realpeers.Require(t, c.peer)
			chromium := browser.Require(t)
			fm, env := c.env(t)
			deskApproval(t, chromium, c.provider, fm, env)
		})
	}
}

// openCodeDeskEnv starts an OpenCode server on the fake model whose config
// asks before every edit, and returns the runtime's environment that
// reaches it.
func openCodeDeskEnv(t *testing.T) (*fakemodel.Server, *realpeers.Env) {
	t.Helper()
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	env := realpeers.NewEnv(t)
	env.Set("INTEROP_DB", filepath.Join(env.Root(), "interop.db"))
	program, err := realpeers.Find(realpeers.OpenCode)
	if err != nil {
		t.Fatal(err)
	}
	ocEnv := realpeers.NewEnv(t)
	cfg := realpeers.OpenCodeConfig(fm.BaseURL())
	cfg["permission"] = map[string]any{"edit": "ask"}
	if err := realpeers.SetOpenCode(ocEnv, cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	srv, err := realpeers.StartOpenCode(ctx, realpeers.OpenCodeOptions{Program: program, Env: ocEnv, Password: openCodePassword})
	cancel()
	if err != nil {
		t.Fatalf("starting opencode: %v", err)
	}
	t.Cleanup(srv.Close)
	env.Set("OPENCODE_SERVER_URL", srv.URL).Set("OPENCODE_SERVER_PASSWORD", openCodePassword).Set("OPENCODE_AUTO_START", "false")
	return fm, env
}

func deskApproval(t *testing.T, chromium, provider string, fm *fakemodel.Server, env *realpeers.Env) {
	shots := browser.ScreenshotDir(t)
	env.Set("AGENT_INTEROP_HTTP_TOKEN", "desk-act-token")
	r := startHTTP(t, nil, env.Environ())
	links := deskLoginLine.FindAllStringSubmatch(r.stderr.String(), -1)
	if len(links) == 0 {
		t.Fatalf("no desk login link: %s", r.stderr)
	}
	cs := r.connect(t)
	dir := t.TempDir()
	s := createSession(t, cs, provider, dir, "desk approval")
	tag := unique("DESKACT")
	fm.On(fakemodel.Contains(tag), fakemodel.WriteFile("desk.txt", "written after a click\n").WithFollowUp("Wrote it."))
	if rcpt := send(t, cs, provider, s.NativeID, tag+" write desk.txt", ""); !rcpt.Accepted {
		t.Fatalf("receipt %+v", rcpt)
	}
	req := awaitPermission(t, cs, provider, s.NativeID, turnTimeout)

	br := browser.Start(t, chromium, 1280, 900)
	ctx := br.Context()
	run(t, ctx, wait.Process, "open the login link", chromedp.Navigate(links[0][1]))
	waitFor(t, ctx, wait.Process, "the desk after login", `location.pathname === "/desk/"`)
	run(t, ctx, wait.Process, "open the session page", chromedp.Navigate(r.base+"/desk/sessions/"+provider+"/"+url.PathEscape(s.NativeID)))
	form := fmt.Sprintf(`document.querySelector('form.ask[data-request-id=%q]')`, req.RequestID)
	waitFor(t, ctx, wait.Process, "the pending request with its options", form+` !== null && `+form+`.querySelector("button.allow") !== null`)

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
	still := awaitPermission(t, cs, provider, s.NativeID, wait.Process)
	if still.RequestID != req.RequestID {
		t.Fatalf("the refused request changed the pending one: %+v", still)
	}

	allowLabel := eval[string](t, ctx, form+`.querySelector("button.allow").textContent`)
	browser.Screenshot(t, ctx, shots, "act-01-"+provider+"-pending")
	clicked := time.Now()
	eval[bool](t, ctx, form+`.querySelector("button.allow").click(), true`)
	landed := waitAcross(t, ctx, wait.Process, `location.pathname.startsWith("/desk/receipts/") || location.pathname.startsWith("/desk/act/")`,
		`location.pathname + " " + document.body.innerText.slice(0, 400)`)
	if !strings.HasPrefix(landed, "/desk/receipts/") {
		browser.Screenshot(t, ctx, shots, "act-02-"+provider+"-after-click")
		t.Fatalf("the click did not land on the receipt: %s", landed)
	}
	wait.For(t, "the provider's write of desk.txt", turnTimeout, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "desk.txt"))
		return err == nil && strings.Contains(string(b), "written after a click")
	})
	t.Logf("figure: %s: click on allow (%q) -> file written: %s", provider, allowLabel, time.Since(clicked).Round(time.Millisecond))

	waitFor(t, ctx, wait.Process, "the receipt of the answer", `location.pathname.startsWith("/desk/receipts/") && !!document.querySelector('[data-via="desk"]')`)
	waitFor(t, ctx, turnTimeout, "the answer settled, with its event", `document.querySelector("#receipt-detail").dataset.status === "completed" && document.querySelector(".timeline").innerText.includes("event #")`)
	browser.Screenshot(t, ctx, shots, "act-02-"+provider+"-receipt")
	for _, l := range br.Logged() {
		if !strings.Contains(l, "403 (Forbidden) "+r.base+"/desk/act/permission") { // the refused POST above
			t.Fatalf("the pages logged: %v", br.Logged())
		}
	}
}
