package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/browser"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/syncbuf"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// deskProcess is a running `interop-runtime desk`.
type deskProcess struct {
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	base   string // http://127.0.0.1:<port>
	links  chan string
	token  string
}

var (
	deskLoginLine = regexp.MustCompile(`desk login link \(works once\): (\S+)`)
	deskOnLine    = regexp.MustCompile(`agent-interop-runtime desk on (http://\S+)/desk/`)
	deskTokenLine = regexp.MustCompile(`desk token written to (.+?) \(mode 0600`)
)

// startDesk runs `interop-runtime desk --port 0 args...` with env and
// waits for its address and first login link.
func startDesk(t *testing.T, env []string, args ...string) *deskProcess {
	t.Helper()
	d := &deskProcess{cmd: exec.Command(binary, append([]string{"desk", "--port", "0"}, args...)...), stderr: &syncbuf.Buffer{}, links: make(chan string, 8)}
	d.cmd.Env = env
	pr, pw := io.Pipe()
	d.cmd.Stderr = io.MultiWriter(d.stderr, pw)
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = d.cmd.Wait(); pw.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(wait.Process):
			_ = d.cmd.Process.Kill()
			<-exited
			t.Errorf("desk did not stop within %v of SIGTERM", wait.Process)
		}
	})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			if m := deskLoginLine.FindStringSubmatch(line); m != nil {
				d.links <- m[1]
			}
			select {
			case lines <- line:
			default:
			}
		}
		close(lines)
	}()
	deadline := time.After(wait.Process)
	for d.base == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("desk exited before listening: %s", d.stderr)
			}
			if m := deskTokenLine.FindStringSubmatch(line); m != nil {
				b, err := os.ReadFile(m[1])
				if err != nil {
					t.Fatal(err)
				}
				d.token = strings.TrimSpace(string(b))
			}
			if m := deskOnLine.FindStringSubmatch(line); m != nil {
				d.base = m[1]
			}
		case <-deadline:
			t.Fatalf("desk did not listen within %v: %s", wait.Process, d.stderr)
		}
	}
	return d
}

// loginLink returns the next one-time link the desk printed.
func (d *deskProcess) loginLink(t *testing.T) string {
	t.Helper()
	select {
	case l := <-d.links:
		return l
	case <-time.After(wait.Process):
		t.Fatalf("no login link printed within %v: %s", wait.Process, d.stderr)
		return ""
	}
}

// Payloads shaped like HTML: the desk must show them as text and never
// run them (each would set window.__xss).
const (
	xssImg    = `<img src=x onerror=window.__xss=1>`
	xssScript = `<script>window.__xss=2</script>`
)

// run runs chromedp actions within a bound.
func run(t *testing.T, ctx context.Context, within time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the page's expression is true.
func waitFor(t *testing.T, ctx context.Context, within time.Duration, what, expr string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		body, _ := evalIn[string](ctx, `document.querySelector("main") ? document.querySelector("main").innerText.slice(0, 3000) : ""`)
		t.Fatalf("waiting for %s (%s): %v\npage text:\n%s", what, expr, err, body)
	}
}

// evalIn evaluates a JavaScript expression in the page, bounded.
func evalIn[T any](ctx context.Context, expr string) (T, error) {
	c, cancel := context.WithTimeout(ctx, wait.Process)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[T](expr))
}

// eval evaluates an expression that must not fail.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := evalIn[T](ctx, expr)
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func evalBool(t *testing.T, ctx context.Context, expr string) bool {
	t.Helper()
	return eval[bool](t, ctx, expr)
}

// noXSS asserts that no payload ran on the current page.
func noXSS(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	if evalBool(t, ctx, `window.__xss !== undefined`) {
		t.Fatalf("%s: an HTML-shaped value was executed (window.__xss set)", page)
	}
}

// codexDeskEnv is an environment in which the runtime drives real Codex on
// the fake model, with a store of its own; every command asks for
// approval.
func codexDeskEnv(t *testing.T) (*fakemodel.Server, *realpeers.Env) {
	t.Helper()
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	env := realpeers.NewEnv(t)
	env.Set("INTEROP_DB", filepath.Join(env.Root(), "interop.db"))
	program, err := realpeers.Find(realpeers.Codex)
	if err != nil {
		t.Fatal(err)
	}
	codexHome := filepath.Join(env.Home(), ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(realpeers.CodexConfig(fm.BaseURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Set("CODEX_HOME", codexHome).
		Set("CODEX_APP_SERVER_COMMAND", program+" app-server --disable plugins").
		Set("CODEX_APPROVAL_POLICY", "untrusted").
		Set("CODEX_SANDBOX_MODE", "workspace-write")

	return fm, env
}

// TestDeskInRealBrowser seeds a store through the MCP tools, with a real
// Codex turn on the fake model, and checks the traffic desk in headless
// Chromium as a person would: the session is listed with its liveness,
// the turn's receipt moves from queued to completed without a reload, a
// refused claim shows as a conflict, the work graph is drawn, HTML-shaped
// text stays text, and nothing is served without the token or the cookie.
// It also reports the page weight, the time to first render and the time
// from a store write to the page showing it.
func TestDeskInRealBrowser(t *testing.T) {
	realpeers.Require(t, realpeers.Codex)
	chromium := browser.Require(t)
	shots := browser.ScreenshotDir(t)

	fm, env := codexDeskEnv(t)

	// Two processes on one store: `serve` over stdio, as a client runs it,
	// and the desk.
	cs := connectWith(t, []string{"serve"}, env.Environ(), nil)
	// Streams end every 2 s, so every page of the test also goes through
	// reconnections (and resumes) while it is checked.
	dk := startDesk(t, env.Environ(), "--stream-lifetime", "2s")

	// Seed: a Codex session, work items with dependencies (objectives
	// shaped like HTML), a claim and a refused, conflicting one.
	dir := t.TempDir()
	s := createSession(t, cs, "codex", dir, "desk "+xssImg)
	peer := createSession(t, cs, "codex", t.TempDir(), "desk peer")
	var a, b, c struct {
		ID string `json:"id"`
	}
	call(t, cs, "create_work_item", map[string]any{"objective": "Parse the config " + xssImg, "acceptanceCriteria": []string{"tests pass"}}, &a)
	call(t, cs, "create_work_item", map[string]any{"objective": "Serve the config " + xssScript, "acceptanceCriteria": []string{"served"}, "dependsOn": []string{a.ID}}, &b)
	call(t, cs, "create_work_item", map[string]any{"objective": "Document the config", "acceptanceCriteria": []string{"documented"}, "dependsOn": []string{b.ID}}, &c)
	resource := "src/" + xssImg + ".go"
	holder := "codex:" + s.NativeID
	var held struct {
		ID       string `json:"id"`
		Resource string `json:"resource"`
	}
	call(t, cs, "acquire_claim", map[string]any{"workId": a.ID, "sessionId": holder, "resource": resource}, &held)
	refusal := callFail(t, cs, "acquire_claim", map[string]any{"workId": b.ID, "sessionId": "claude-code:reviewer-1", "resource": resource})
	if !strings.Contains(refusal, "conflicts with active claim "+held.ID) {
		t.Fatalf("the second claim was not refused as a conflict: %s", refusal)
	}
	call(t, cs, "create_handoff", map[string]any{"workId": b.ID, "sourceSession": holder, "destinationSession": "claude-code:reviewer-1",
		"objective": "Finish serving " + xssImg, "acceptanceCriteria": []string{"served"}, "authorityBoundaries": []string{"src/ only"},
		"changedFiles": []string{"src/" + xssScript + ".go"}}, nil)
	call(t, cs, "record_review", map[string]any{"workId": b.ID, "subjectEvidenceIds": []string{}, "reviewerSessionId": "claude-code:reviewer-1",
		"independence": map[string]any{"differentSession": true, "differentProvider": true, "freshContext": true, "writeAccess": false},
		"findings":     []map[string]any{{"id": "f1", "severity": "blocking", "title": "No tests " + xssImg, "detail": "add them"}},
		"verdict":      "changes_requested"}, nil)
	var conv struct {
		ID string `json:"id"`
	}
	call(t, cs, "create_conversation", map[string]any{"title": "Talk " + xssScript}, &conv)
	call(t, cs, "join_conversation", map[string]any{"conversationId": conv.ID, "provider": "codex", "nativeId": s.NativeID, "role": "editor"}, nil)
	call(t, cs, "join_conversation", map[string]any{"conversationId": conv.ID, "provider": "codex", "nativeId": peer.NativeID, "role": "reviewer"}, nil)

	t.Run("refused without the token or cookie", func(t *testing.T) {
		deskRefusesEverything(t, dk, s.NativeID, a.ID, conv.ID)
	})

	br := browser.Start(t, chromium, 1280, 900)
	ctx := br.Context()
	run(t, ctx, wait.Process, "open the login link", chromedp.Navigate(dk.loginLink(t)))
	waitFor(t, ctx, wait.Process, "the sessions page after login", `location.pathname === "/desk/" && !!document.querySelector("#session-rows")`)
	sessionRow := fmt.Sprintf(`document.querySelector('tr[data-native-id=%q]')`, s.NativeID)
	waitFor(t, ctx, wait.Process, "the Codex session listed with a liveness", sessionRow+` && `+sessionRow+`.querySelector("[data-liveness]") !== null`)
	liveness := eval[string](t, ctx, sessionRow+`.querySelector("[data-liveness]").dataset.liveness`)
	if !slices.Contains([]string{"working", "waiting_on_approval", "idle", "dead", "unknown"}, liveness) {
		t.Fatalf("liveness %q is not one of the states", liveness)
	}
	// The desk is not the process that drives the session: it says its
	// liveness is inferred from the store.
	if src := eval[string](t, ctx, sessionRow+`.querySelector("[data-liveness]").dataset.livenessSource`); src != "store" {
		t.Fatalf("liveness source %q, want store", src)
	}
	if !evalBool(t, ctx, `document.body.innerText.includes("desk <img src=x onerror=")`) {
		t.Log("the session's title is not shown (codex may not report titles); the work and claim pages check the payloads")
	}
	noXSS(t, ctx, "sessions")
	browser.Screenshot(t, ctx, shots, "01-sessions")

	// A second tab follows the sessions page while the first one follows
	// the receipts; neither is reloaded.
	sessionsTab := br.NewTab(t)
	run(t, sessionsTab, wait.Process, "open the sessions page", chromedp.Navigate(dk.base+"/desk/sessions?provider=codex"))
	waitFor(t, sessionsTab, wait.Process, "the sessions stream open", `document.querySelector("#live-state") && document.querySelector("#live-state").dataset.state === "open"`)

	run(t, ctx, wait.Process, "open the receipts page", chromedp.Navigate(dk.base+"/desk/receipts"))
	waitFor(t, ctx, wait.Process, "the receipts stream open", `document.querySelector("#live-state").dataset.state === "open"`)
	eval[string](t, ctx, `window.__deskMark = "not reloaded"`)
	eval[string](t, sessionsTab, `window.__deskMark = "not reloaded"`)

	// The turn asks for approval before it runs a command, so its send
	// stays queued until the test answers: the page must show queued first.
	tag := unique("DESKRUN")
	fm.On(fakemodel.Contains(tag), fakemodel.RunCommand("echo desk > desk.txt").WithFollowUp("Ran it."))
	r := send(t, cs, "codex", s.NativeID, tag+" now "+xssScript, "")
	if !r.Accepted || r.Status != "queued" || r.OperationID == "" {
		t.Fatalf("receipt %+v", r)
	}
	receiptRow := fmt.Sprintf(`document.querySelector('tr.receipt[data-operation-id=%q]')`, r.OperationID)
	waitFor(t, ctx, turnTimeout, "the new receipt, queued, without a reload", receiptRow+` !== null && `+receiptRow+`.dataset.status === "queued"`)
	req := awaitPermission(t, cs, "codex", s.NativeID, turnTimeout)
	waitFor(t, sessionsTab, turnTimeout, "the session waiting on approval", sessionRow+` && `+sessionRow+`.querySelector("[data-liveness]").dataset.liveness === "waiting_on_approval"`)
	browser.Screenshot(t, sessionsTab, shots, "02-session-waiting-on-approval")
	browser.Screenshot(t, ctx, shots, "03-receipt-queued")

	var answer receipt
	call(t, cs, "respond_to_permission", map[string]any{"provider": "codex", "nativeId": s.NativeID, "requestId": req.RequestID, "decision": "accept"}, &answer)
	waitFor(t, ctx, turnTimeout, "the receipt completed without a reload", receiptRow+`.dataset.status === "completed"`)
	if !evalBool(t, ctx, `window.__deskMark === "not reloaded"`) {
		t.Fatal("the receipts page was reloaded")
	}
	waitFor(t, sessionsTab, turnTimeout, "the session idle again", sessionRow+`.querySelector("[data-liveness]").dataset.liveness === "idle"`)
	if !evalBool(t, sessionsTab, `window.__deskMark === "not reloaded"`) {
		t.Fatal("the sessions page was reloaded")
	}
	browser.Screenshot(t, ctx, shots, "04-receipt-completed")
	noXSS(t, ctx, "receipts")

	// The session's page: its event stream shows the turn, prompt text
	// (HTML-shaped) as text.
	run(t, ctx, wait.Process, "open the session page", chromedp.Navigate(dk.base+"/desk/sessions/codex/"+url.PathEscape(s.NativeID)))
	waitFor(t, ctx, wait.Process, "the session's events", `document.querySelectorAll("#event-rows tr").length > 0 && !!document.querySelector('#event-rows tr[data-type="turn/completed"]')`)
	noXSS(t, ctx, "session")
	browser.Screenshot(t, ctx, shots, "05-session-events")

	// The receipt's own page: its timeline names the events that moved it.
	run(t, ctx, wait.Process, "open the receipt page", chromedp.Navigate(dk.base+"/desk/receipts/"+r.OperationID))
	waitFor(t, ctx, wait.Process, "the receipt's timeline", `document.querySelector("#receipt-detail").dataset.status === "completed" && document.querySelectorAll(".timeline li").length >= 2`)
	browser.Screenshot(t, ctx, shots, "06-receipt-timeline")

	// Claims: the refused request is shown as a conflict on the claim.
	run(t, ctx, wait.Process, "open the claims page", chromedp.Navigate(dk.base+"/desk/claims"))
	claimRow := fmt.Sprintf(`document.querySelector('tr[data-claim-id=%q]')`, held.ID)
	waitFor(t, ctx, wait.Process, "the claim highlighted as in conflict", claimRow+` && `+claimRow+`.classList.contains("conflict") && `+claimRow+`.innerText.includes("claude-code:reviewer-1")`)
	if !evalBool(t, ctx, `document.querySelector("#conflict-list") !== null && document.querySelector("#conflict-list").innerText.includes("refused")`) {
		t.Fatal("the conflict list does not show the refusal")
	}
	if !evalBool(t, ctx, claimRow+`.innerText.includes(`+jsString(xssImg)+`)`) {
		t.Fatal("the HTML-shaped file name is not shown as text")
	}
	noXSS(t, ctx, "claims")
	browser.Screenshot(t, ctx, shots, "07-claims-conflict")

	// Work: the middle item's neighbourhood is drawn as an SVG.
	run(t, ctx, wait.Process, "open the work item", chromedp.Navigate(dk.base+"/desk/work/"+b.ID))
	waitFor(t, ctx, wait.Process, "the dependency graph drawn", `document.documentElement.dataset.graphs === "drawn" && document.querySelector("#work-graph svg") !== null`)
	nodes := eval[int](t, ctx, `document.querySelectorAll("#work-graph svg .node").length`)
	if nodes != 3 {
		t.Fatalf("the graph has %d nodes, want 3 (the item, its dependency and its dependent)", nodes)
	}
	if !evalBool(t, ctx, `document.querySelector("#work-graph svg").textContent.includes("<script>")`) {
		t.Fatal("the HTML-shaped objective is not drawn as text in the graph")
	}
	if !evalBool(t, ctx, `document.querySelector(".objective").textContent.includes("<script>window.__xss=2</script>")`) {
		t.Fatal("the HTML-shaped objective is not shown as text")
	}
	// Its records: the handoff with its lifecycle and packet size, the
	// review, and the review's evidence with its hash and trust.
	if !evalBool(t, ctx, `(() => { const r = document.querySelector("#work-records"); const t = r.innerText;
	  return r.querySelector('tr[id^="ho-"][data-status="created"]') !== null && /\d+ of \d+ tokens/.test(t) &&
	    t.includes("changes_requested") && t.includes("1 blocking") &&
	    [...r.querySelectorAll('tr[id^="ev-"] code[title]')].some(c => /^[0-9a-f]{64}$/.test(c.title)) && t.includes("agent claim"); })()`) {
		t.Fatal("the work item's handoff, review or evidence is not shown")
	}
	noXSS(t, ctx, "work item")
	browser.Screenshot(t, ctx, shots, "08-work-graph")

	run(t, ctx, wait.Process, "open the conversations page", chromedp.Navigate(dk.base+"/desk/conversations"))
	waitFor(t, ctx, wait.Process, "the conversation listed", `document.querySelector("#conversation-rows").innerText.includes("Talk <script>")`)
	noXSS(t, ctx, "conversations")
	deskConversation(t, ctx, dk, cs, fm, conv.ID, s, peer, shots)

	// A narrow window, and the dark scheme.
	run(t, ctx, wait.Process, "narrow window", chromedp.EmulateViewport(390, 844), chromedp.Navigate(dk.base+"/desk/work/"+b.ID))
	waitFor(t, ctx, wait.Process, "the graph drawn on a narrow window", `document.documentElement.dataset.graphs === "drawn"`)
	if evalBool(t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`) {
		t.Errorf("the page scrolls sideways on a 390 px window")
	}
	browser.Screenshot(t, ctx, shots, "09-work-narrow")

	// Keyboard: the first Tab reaches the skip link, and it leads to main.
	run(t, ctx, wait.Process, "back to a wide window", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(dk.base+"/desk/claims"))
	run(t, ctx, wait.Process, "press Tab", chromedp.KeyEvent("\t"))
	if got := eval[string](t, ctx, `document.activeElement ? document.activeElement.textContent : ""`); got != "Skip to content" {
		t.Errorf("the first Tab focuses %q, want the skip link", got)
	}
	if n := eval[int](t, ctx, `[...document.querySelectorAll("input:not([type=hidden]), select")].filter(e => !e.labels || e.labels.length === 0).length`); n != 0 {
		t.Errorf("%d form fields have no label", n)
	}
	if evalBool(t, ctx, `document.cookie.includes("interop_desk")`) {
		t.Error("the session cookie is readable by scripts (want HttpOnly)")
	}
	// The dark scheme follows the system setting.
	run(t, ctx, wait.Process, "prefer dark", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	}))
	if bg := eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(21, 24, 28)" {
		t.Errorf("dark scheme background %s, want rgb(21, 24, 28)", bg)
	}
	browser.Screenshot(t, ctx, shots, "10-claims-dark")
	run(t, ctx, wait.Process, "open the work item, dark", chromedp.Navigate(dk.base+"/desk/work/"+b.ID))
	waitFor(t, ctx, wait.Process, "the graph drawn, dark", `document.documentElement.dataset.graphs === "drawn"`)
	browser.Screenshot(t, ctx, shots, "11-work-graph-dark")

	// A page of another local origin cannot read the desk, even with the
	// browser's cookie.
	t.Run("another local page cannot read it", func(t *testing.T) {
		otherOriginCannotRead(t, br, dk)
	})

	t.Run("a dropped stream resumes without a reload", func(t *testing.T) {
		deskResumes(t, br, dk, cs, a.ID, holder)
	})

	t.Run("figures", func(t *testing.T) {
		// A desk with the default stream lifetime, as a person runs it.
		deskFigures(t, br, startDesk(t, env.Environ()), cs, a.ID, holder)
	})

	t.Run("a runtime that dies leaves its session's owner gone", func(t *testing.T) {
		deskOwnerGone(t, br, dk, env, fm, shots)
	})

	// The collector of console messages works (so an empty list below
	// means the pages logged no CSP violation and no exception).
	eval[bool](t, ctx, `console.error("desk-probe"), true`)
	probed := false
	for range 100 {
		if slices.ContainsFunc(br.Logged(), func(l string) bool { return strings.Contains(l, "desk-probe") }) {
			probed = true
			break
		}
		eval[bool](t, ctx, `true`) // a round trip to the browser, so its events are read
	}
	if !probed {
		t.Fatal("the console collector did not see a console.error")
	}
	for _, line := range br.Logged() {
		if strings.Contains(line, "Content Security Policy") || strings.Contains(line, "Content-Security-Policy") || strings.HasPrefix(line, "exception:") {
			t.Errorf("the page logged: %s", line)
		}
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// deskRefusesEverything checks every route without a credential, with a
// bad token or login code, from another origin or host, and as a
// cross-site fetch.
func deskRefusesEverything(t *testing.T, dk *deskProcess, nativeID, workID, convID string) {
	routes := []string{
		"/", "/desk", "/desk/", "/desk/sessions", "/desk/sessions/codex/" + url.PathEscape(nativeID),
		"/desk/receipts", "/desk/receipts/op_x", "/desk/work", "/desk/work/" + workID, "/desk/claims",
		"/desk/conversations", "/desk/conversations/" + convID, "/desk/live/receipts", "/desk/live/session?provider=codex&nativeId=" + url.QueryEscape(nativeID),
		"/desk/assets/desk.css", "/desk/assets/desk.js", "/desk/assets/vendor/htmx.min.js", "/desk/assets/vendor/mermaid.min.js",
		"/desk/login", "/desk/login?code=not-the-code", "/desk/nothing-here",
	}
	client := &http.Client{Timeout: wait.Process, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, header map[string]string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, dk.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return res.StatusCode, string(body)
	}
	for _, path := range routes {
		for name, header := range map[string]map[string]string{
			"no credential":    nil,
			"a wrong token":    {"Authorization": "Bearer " + dk.token + "x"},
			"a made-up cookie": {"Cookie": "interop_desk_" + portOf(dk.base) + "=forged"},
			"a browser":        {"Accept": "text/html"},
		} {
			code, body := get(path, header)
			if code != http.StatusUnauthorized {
				t.Errorf("GET %s with %s: %d, want 401 (%.200s)", path, name, code, body)
			}
			if strings.Contains(body, nativeID) || strings.Contains(body, workID) {
				t.Errorf("GET %s with %s: the refusal names a record: %.300s", path, name, body)
			}
		}
	}
	bearer := map[string]string{"Authorization": "Bearer " + dk.token}
	if code, _ := get("/desk/receipts", bearer); code != http.StatusOK {
		t.Fatalf("with the token: %d, want 200", code)
	}
	for name, header := range map[string]map[string]string{
		"another local origin": {"Authorization": "Bearer " + dk.token, "Origin": "http://localhost:3000"},
		"a rebinding host":     {"Authorization": "Bearer " + dk.token, "Host": "evil.example:" + portOf(dk.base)},
		"a cross-site fetch":   {"Authorization": "Bearer " + dk.token, "Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"},
	} {
		if code, body := get("/desk/receipts", header); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403 (%.200s)", name, code, body)
		}
	}
}

func portOf(base string) string {
	u, _ := url.Parse(base)
	return u.Port()
}

// otherOriginCannotRead serves a page on another loopback port that tries
// to fetch the desk with the browser's credentials.
func otherOriginCannotRead(t *testing.T, br *browser.Browser, dk *deskProcess) {
	// The fetch is a CORS request (the browser would not hand over the
	// answer anyway, and the desk refuses its Origin); the script tag is a
	// no-cors request that carries the SameSite=Strict cookie, because
	// another port of 127.0.0.1 is the same site: the desk refuses it by
	// its Fetch Metadata (checked over HTTP above) and the browser by the
	// desk's Cross-Origin-Resource-Policy.
	page := `<!DOCTYPE html><title>other</title><pre id="out">waiting</pre><pre id="script">waiting</pre>
<script>
fetch(` + jsString(dk.base+"/desk/receipts") + `, {credentials: "include"})
  .then(r => r.text()).then(t => { document.getElementById("out").textContent = "READ " + t.length; })
  .catch(e => { document.getElementById("out").textContent = "BLOCKED " + e; });
const s = document.createElement("script");
s.src = ` + jsString(dk.base+"/desk/assets/desk.js") + `;
s.onload = () => { document.getElementById("script").textContent = "LOADED"; };
s.onerror = () => { document.getElementById("script").textContent = "BLOCKED"; };
document.head.appendChild(s);
</script>`
	srv := httpServe(t, page)
	tab := br.NewTab(t)
	run(t, tab, wait.Process, "open the other page", chromedp.Navigate(srv))
	waitFor(t, tab, wait.Process, "the other page's requests to settle",
		`document.getElementById("out").textContent !== "waiting" && document.getElementById("script").textContent !== "waiting"`)
	if out := eval[string](t, tab, `document.getElementById("out").textContent`); !strings.HasPrefix(out, "BLOCKED") {
		t.Errorf("a page of another origin read the desk: %s", out)
	}
	if out := eval[string](t, tab, `document.getElementById("script").textContent`); out != "BLOCKED" {
		t.Errorf("a page of another origin loaded the desk's script with the browser's cookie: %s", out)
	}
}

// httpServe serves one HTML page on 127.0.0.1 and returns its URL.
func httpServe(t *testing.T, html string) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, html)
	}), ReadHeaderTimeout: 5 * time.Second}
	ln, err := netListenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// TestDeskOnServeHTTP: serve --http serves the desk at /desk over the same
// store and token, prints its login link, and keeps /mcp's rules.
func TestDeskOnServeHTTP(t *testing.T) {
	env := isolatedEnv(t, "AGENT_INTEROP_HTTP_TOKEN=desk-e2e-token")
	r := startHTTP(t, nil, env)
	// The link is printed before the listening line startHTTP waited for.
	links := deskLoginLine.FindAllStringSubmatch(r.stderr.String(), -1)
	if len(links) == 0 || !strings.HasPrefix(links[0][1], r.base+"/desk/login?code=") {
		t.Fatalf("no desk login link for %s: %s", r.base, r.stderr)
	}
	if strings.Contains(r.stderr.String(), "desk-e2e-token") {
		t.Fatal("the token reached the log")
	}
	if code, _ := r.get(t, "/desk/receipts", nil); code != http.StatusUnauthorized {
		t.Fatalf("/desk/receipts without the token: %d", code)
	}
	if code, body := r.get(t, "/desk/receipts", map[string]string{"Authorization": "Bearer desk-e2e-token"}); code != http.StatusOK || !strings.Contains(body, "<h1>Receipts</h1>") {
		t.Fatalf("/desk/receipts with the token: %d %.300s", code, body)
	}
	if code, _ := r.get(t, "/desk/receipts", map[string]string{"Authorization": "Bearer desk-e2e-token", "Origin": r.base}); code != http.StatusOK {
		t.Fatalf("/desk/receipts from the server's own origin: %d", code)
	}
	// The login link signs a client in with a cookie, once.
	client := &http.Client{Timeout: wait.Process, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(links[0][1])
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 || !res.Cookies()[0].HttpOnly {
		t.Fatalf("login: %d %v", res.StatusCode, res.Cookies())
	}
	// /mcp still answers MCP with the token only.
	cs := r.connect(t)
	if ok, text := callTool(t, cs, "get_runtime_status", map[string]any{}); !ok {
		t.Fatalf("get_runtime_status over HTTP: %s", text)
	}
}

// deskResumes waits for the claims page's stream to end (the desk under
// test ends each stream after 2 s, as --stream-lifetime allows) and come
// back, writes to the store while it is away, and checks that the page
// shows the write without reloading: the EventSource reconnects by itself
// and the stream resumes from its last event id.
func deskResumes(t *testing.T, br *browser.Browser, dk *deskProcess, cs *mcp.ClientSession, workID, holder string) {
	tab := br.NewTab(t)
	run(t, tab, wait.Process, "open the claims page", chromedp.Navigate(dk.base+"/desk/claims"))
	waitFor(t, tab, wait.Process, "the claims stream open", `document.querySelector("#live-state").dataset.state === "open"`)
	eval[string](t, tab, `window.__deskMark = "not reloaded"`)
	waitFor(t, tab, wait.Process, "the stream dropped", `document.querySelector("#live-state").dataset.state === "reconnecting"`)
	res := "resume/" + unique("while-away") + ".go"
	call(t, cs, "acquire_claim", map[string]any{"workId": workID, "sessionId": holder, "resource": res}, nil)
	waitFor(t, tab, wait.Process, "the write shown after reconnecting",
		`Number(document.documentElement.dataset.streamOpens) >= 2 && document.querySelector("#claims-live").innerText.includes(`+jsString(res)+`)`)
	if !evalBool(t, tab, `window.__deskMark === "not reloaded"`) {
		t.Fatal("the page was reloaded")
	}
}

// deskConversation sends a message from one Codex session to another
// through the conversation (a real turn of the recipient, which waits on
// an approval) and a reply, and checks the open conversation page as a
// person would: sender, recipient, the delivery queued and then completed,
// the reply linked to the message it answers, all without a reload.
func deskConversation(t *testing.T, ctx context.Context, dk *deskProcess, cs *mcp.ClientSession, fm *fakemodel.Server,
	convID string, from, to session, shots string) {
	run(t, ctx, wait.Process, "open the conversation", chromedp.Navigate(dk.base+"/desk/conversations/"+convID))
	waitFor(t, ctx, wait.Process, "the conversation's stream open", `document.querySelector("#live-state").dataset.state === "open"`)
	eval[string](t, ctx, `window.__deskMark = "not reloaded"`)
	if !evalBool(t, ctx, `document.querySelector("main").innerText.includes(`+jsString(from.NativeID[:12])+`)`) {
		t.Fatal("the participant is not listed")
	}
	tag := unique("DESKMSG")
	fm.On(fakemodel.Contains(tag), fakemodel.RunCommand("echo msg > msg.txt").WithFollowUp("Read it."))
	sender, recipient := "codex:"+from.NativeID, "codex:"+to.NativeID
	type sentMessage struct {
		Message struct {
			ID       string `json:"id"`
			Delivery string `json:"delivery"`
		} `json:"message"`
	}
	var first sentMessage
	call(t, cs, "send_conversation_message", map[string]any{"conversationId": convID, "sender": sender, "recipient": recipient,
		"text": tag + " review this " + xssImg}, &first)
	if first.Message.ID == "" || first.Message.Delivery != "queued" {
		t.Fatalf("send_conversation_message = %+v", first)
	}
	msg := fmt.Sprintf(`document.querySelector('li.message[data-message-id=%q]')`, first.Message.ID)
	// The recipient's turn asks for approval before it runs the command,
	// so the delivery stays queued until the test answers.
	waitFor(t, ctx, turnTimeout, "the message shown, delivery queued, without a reload", msg+` !== null && `+msg+`.dataset.delivery === "queued"`)
	if got := eval[string](t, ctx, msg+`.querySelector(".sender").textContent + " > " + `+msg+`.querySelector(".recipient").textContent`); got != sender+" > "+recipient {
		t.Fatalf("sender > recipient shown as %q, want %q", got, sender+" > "+recipient)
	}
	if !evalBool(t, ctx, msg+`.querySelector(".text").textContent.includes(`+jsString(xssImg)+`)`) {
		t.Fatal("the HTML-shaped message text is not shown as text")
	}
	browser.Screenshot(t, ctx, shots, "12-conversation-queued")
	req := awaitPermission(t, cs, "codex", to.NativeID, turnTimeout)
	call(t, cs, "respond_to_permission", map[string]any{"provider": "codex", "nativeId": to.NativeID, "requestId": req.RequestID, "decision": "accept"}, nil)
	waitFor(t, ctx, turnTimeout, "the delivery completed without a reload", msg+`.dataset.delivery === "completed"`)

	// The reply, linked to the message it answers.
	var reply sentMessage
	call(t, cs, "send_conversation_message", map[string]any{"conversationId": convID, "sender": recipient, "recipient": sender,
		"text": "Done: " + unique("DESKREPLY"), "replyTo": first.Message.ID}, &reply)
	re := fmt.Sprintf(`document.querySelector('li.message[data-message-id=%q]')`, reply.Message.ID)
	waitFor(t, ctx, turnTimeout, "the reply shown with its link, delivered, without a reload",
		re+` !== null && `+re+`.dataset.delivery === "completed" && `+re+`.querySelector('a[data-reply-to=`+jsString(first.Message.ID)+`]') !== null`)
	if href := eval[string](t, ctx, re+`.querySelector("a[data-reply-to]").getAttribute("href")`); href != "#"+eval[string](t, ctx, msg+`.id`) {
		t.Fatalf("the reply links to %q, not to the message it answers", href)
	}
	if got := eval[string](t, ctx, re+`.querySelector(".sender").textContent`); got != recipient {
		t.Fatalf("the reply's sender is shown as %q, want %q", got, recipient)
	}
	if !evalBool(t, ctx, `window.__deskMark === "not reloaded"`) {
		t.Fatal("the conversation page was reloaded")
	}
	noXSS(t, ctx, "conversation")
	browser.Screenshot(t, ctx, shots, "13-conversation-delivered")
}

// TestDeskOnServeHTTPShowsTheRuntimesLiveness: the desk that serve --http
// serves takes the liveness of the sessions that process drives from its
// registry (the adapters' memory), and says so; a real Codex turn there
// shows waiting_on_approval, then idle, each reported by the runtime.
func TestDeskOnServeHTTPShowsTheRuntimesLiveness(t *testing.T) {
	realpeers.Require(t, realpeers.Codex)
	fm, env := codexDeskEnv(t)
	env.Set("AGENT_INTEROP_HTTP_TOKEN", "desk-live-token")
	r := startHTTP(t, nil, env.Environ())
	cs := r.connect(t)
	s := createSession(t, cs, "codex", t.TempDir(), "desk over http")
	tag := unique("DESKHTTP")
	fm.On(fakemodel.Contains(tag), fakemodel.RunCommand("echo http > http.txt").WithFollowUp("Ran it."))
	rcpt := send(t, cs, "codex", s.NativeID, tag+" now", "")
	if !rcpt.Accepted || rcpt.OperationID == "" {
		t.Fatalf("receipt %+v", rcpt)
	}
	req := awaitPermission(t, cs, "codex", s.NativeID, turnTimeout)
	bearer := map[string]string{"Authorization": "Bearer desk-live-token"}
	row := func() string {
		code, body := r.get(t, "/desk/sessions?provider=codex", bearer)
		if code != http.StatusOK {
			t.Fatalf("/desk/sessions: %d %.300s", code, body)
		}
		i := strings.Index(body, `data-native-id="`+s.NativeID+`"`)
		if i < 0 {
			return ""
		}
		body = body[i:]
		return body[:strings.Index(body, "</tr>")]
	}
	var last string
	wait.For(t, "the runtime's waiting_on_approval on its desk", turnTimeout, func() bool {
		last = row()
		return strings.Contains(last, `data-liveness="waiting_on_approval" data-liveness-source="runtime"`)
	})
	if !strings.Contains(last, "from this runtime") || !strings.Contains(last, req.RequestID) {
		t.Fatalf("the row does not say where its liveness comes from, or which request waits: %s", last)
	}
	call(t, cs, "respond_to_permission", map[string]any{"provider": "codex", "nativeId": s.NativeID, "requestId": req.RequestID, "decision": "accept"}, nil)
	wait.For(t, "the runtime's idle on its desk", turnTimeout, func() bool {
		last = row()
		return strings.Contains(last, `data-liveness="idle" data-liveness-source="runtime"`)
	})
}
