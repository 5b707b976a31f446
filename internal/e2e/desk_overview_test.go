package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/browser"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// seedOverview creates n work items through the MCP tools: every third
// depends on the one before it (so it is blocked while that one is
// open). It returns the ids in creation order.
func seedOverview(t *testing.T, cs *mcp.ClientSession, n int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for i := range n {
		args := map[string]any{"objective": fmt.Sprintf("Overview item %03d", i), "acceptanceCriteria": []string{"done"}}
		if i%3 == 2 {
			args["dependsOn"] = []string{ids[i-1]}
		}
		var w struct {
			ID string `json:"id"`
		}
		call(t, cs, "create_work_item", args, &w)
		ids = append(ids, w.ID)
	}
	return ids
}

// TestDeskWorkPageFigures measures the work page of a store of 200 work
// items in Chromium, cold cache: its weight and its time to first
// render. It asserts nothing of the page (it also runs on older trees, for
// a before/after figure).
func TestDeskWorkPageFigures(t *testing.T) {
	chromium := browser.Require(t)
	env := isolatedEnv(t)
	cs := connectWith(t, []string{"serve"}, env, nil)
	dk := startDesk(t, env)
	seedOverview(t, cs, 200)
	br := browser.Start(t, chromium, 1280, 900)
	ctx := br.NewTab(t)
	clear := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCache, cdp.Empty{})
		return err
	})
	run(t, ctx, wait.Process, "sign in", clear, chromedp.Navigate(dk.loginLink(t)))
	for i := range 3 {
		run(t, ctx, wait.Process, "clear the cache", clear)
		run(t, ctx, wait.Process, "open the work page", chromedp.Navigate(dk.base+"/desk/work"))
		waitFor(t, ctx, wait.Process, "the work page painted", `document.readyState === "complete" && performance.getEntriesByType("navigation")[0].loadEventEnd > 0 && performance.getEntriesByName("first-contentful-paint").length > 0`)
		f := eval[pageFigures](t, ctx, figuresJS)
		t.Logf("desk figure: work page of 200 items, cold cache, run %d: %d requests, %d bytes transferred (%d decoded), first contentful paint %.0f ms, load %.0f ms",
			i+1, f.Requests, f.Bytes, f.Decoded, f.FirstPaint, f.Loaded)
	}
}

// TestDeskOverviewInRealBrowser: on a seeded store, the work page counts
// items per status and shows an item with an open dependency as blocked;
// a new item appears highlighted and the counts follow, without a reload;
// the search box jumps to an id and finds text; a session the runtime
// never discovered has a page; and five loads of a work item page draw its
// graph without an error in the console.
func TestDeskOverviewInRealBrowser(t *testing.T) {
	chromium := browser.Require(t)
	shots := browser.ScreenshotDir(t)
	env := isolatedEnv(t)
	cs := connectWith(t, []string{"serve"}, env, nil)
	dk := startDesk(t, env)
	ids := seedOverview(t, cs, 9) // 3 blocked: items 2, 5, 8
	call(t, cs, "acquire_claim", map[string]any{"workId": ids[0], "sessionId": "qwen:ghost-session-1", "resource": "src/ghost.go"}, nil)

	br := browser.Start(t, chromium, 1280, 900)
	ctx := br.Context()
	run(t, ctx, wait.Process, "sign in", chromedp.Navigate(dk.loginLink(t)))
	run(t, ctx, wait.Process, "open the work page", chromedp.Navigate(dk.base+"/desk/work"))
	waitFor(t, ctx, wait.Process, "the work stream open", `document.querySelector("#live-state").dataset.state === "open"`)
	count := func(status string) string {
		return fmt.Sprintf(`document.querySelector('#work-counts [data-count=%q]').textContent`, status)
	}
	if got := eval[string](t, ctx, count("blocked")); got != "3" {
		t.Fatalf("blocked count %q, want 3", got)
	}
	if got := eval[string](t, ctx, count("open")); got != "6" {
		t.Fatalf("open count %q, want 6", got)
	}
	blockedRow := fmt.Sprintf(`document.querySelector('tr[data-work-id=%q]')`, ids[2])
	if got := eval[string](t, ctx, blockedRow+`.dataset.status`); got != "blocked" {
		t.Fatalf("item with an open dependency shows %q", got)
	}
	if !evalBool(t, ctx, `(() => { const t = document.querySelector("#work-rows time"); return !!t && t.title.includes(t.dataset.exact) && t.textContent !== t.dataset.exact; })()`) {
		t.Fatal("times are not relative with the exact time on hover")
	}
	browser.Screenshot(t, ctx, shots, "overview-01-work")

	// A new item: highlighted, counted, without a reload.
	eval[string](t, ctx, `window.__deskMark = "not reloaded"`)
	var fresh struct {
		ID string `json:"id"`
	}
	call(t, cs, "create_work_item", map[string]any{"objective": "A fresh overview item", "acceptanceCriteria": []string{"done"}}, &fresh)
	freshRow := fmt.Sprintf(`document.querySelector('tr[data-work-id=%q]')`, fresh.ID)
	waitFor(t, ctx, wait.Process, "the new row highlighted", freshRow+` !== null && `+freshRow+`.hasAttribute("data-fresh")`)
	waitFor(t, ctx, wait.Process, "the counts updated", count("all")+` === "10" && `+count("open")+` === "7"`)
	browser.Screenshot(t, ctx, shots, "overview-02-highlight")
	if got := eval[string](t, ctx, `window.__deskMark`); got != "not reloaded" {
		t.Fatal("the page reloaded")
	}

	// The board.
	run(t, ctx, wait.Process, "open the board", chromedp.Navigate(dk.base+"/desk/work?view=board"))
	waitFor(t, ctx, wait.Process, "the blocked column", fmt.Sprintf(`!!document.querySelector('.column[data-status="blocked"] [data-work-id=%q]')`, ids[2]))
	waitFor(t, ctx, wait.Process, "the board stream open", `document.querySelector("#live-state").dataset.state === "open"`)
	// The board is live: a new item's card appears highlighted in its
	// column, and the column's count follows.
	eval[string](t, ctx, `window.__deskMark = "board not reloaded"`)
	var card struct {
		ID string `json:"id"`
	}
	call(t, cs, "create_work_item", map[string]any{"objective": "A card that arrives live", "acceptanceCriteria": []string{"done"}}, &card)
	newCard := fmt.Sprintf(`document.querySelector('.column[data-status="open"] [data-work-id=%q]')`, card.ID)
	waitFor(t, ctx, wait.Process, "the new card highlighted", newCard+` !== null && `+newCard+`.hasAttribute("data-fresh")`)
	waitFor(t, ctx, wait.Process, "the board's counts updated", count("all")+` === "11"`)
	browser.Screenshot(t, ctx, shots, "overview-03-board")
	if got := eval[string](t, ctx, `window.__deskMark`); got != "board not reloaded" {
		t.Fatal("the board reloaded")
	}

	// The dependency overview is live too: a new tie is drawn and its
	// line highlighted.
	run(t, ctx, wait.Process, "open the overview", chromedp.Navigate(dk.base+"/desk/graph"))
	waitFor(t, ctx, wait.Process, "the overview drawn and live", `document.documentElement.dataset.graphs === "drawn" && document.querySelector("#live-state").dataset.state === "open"`)
	var tie struct {
		ID string `json:"id"`
	}
	call(t, cs, "create_work_item", map[string]any{"objective": "A tie that arrives live", "acceptanceCriteria": []string{"done"}, "dependsOn": []string{ids[8]}}, &tie)
	newTie := fmt.Sprintf(`document.querySelector('#overview-graph li a[href="/desk/work/%s"]')`, tie.ID)
	waitFor(t, ctx, wait.Process, "the new tie highlighted", newTie+` !== null && `+newTie+`.closest("li").hasAttribute("data-fresh")`)
	waitFor(t, ctx, wait.Process, "the new overview drawn", `!!document.querySelector("#overview-graph svg") && document.querySelector("#overview-graph pre.mermaid").hasAttribute("data-processed")`)
	browser.Screenshot(t, ctx, shots, "overview-03b-overview-live")

	// Search: an id jumps to its page; text lists the hits.
	search := func(q string) {
		eval[bool](t, ctx, fmt.Sprintf(`(() => { const f = document.querySelector("form.search"); f.q.value = %q; f.submit(); return true; })()`, q))
	}
	search(ids[4])
	waitAcross(t, ctx, wait.Process, fmt.Sprintf(`location.pathname === "/desk/work/%s"`, ids[4]), `location.href`)
	search("Overview item 00")
	waitAcross(t, ctx, wait.Process, `location.pathname === "/desk/search" && document.querySelectorAll("#search-work [data-work-id]").length === 9`, `location.href`)
	browser.Screenshot(t, ctx, shots, "overview-04-search")

	// The claim's holder was never discovered: its link still lands.
	run(t, ctx, wait.Process, "open the claims", chromedp.Navigate(dk.base+"/desk/claims"))
	eval[bool](t, ctx, `document.querySelector('a[href="/desk/sessions/qwen/ghost-session-1"]').click(), true`)
	waitAcross(t, ctx, wait.Process, `location.pathname === "/desk/sessions/qwen/ghost-session-1" && !!document.querySelector("#undiscovered") && document.querySelector("#session-mentions").innerText.includes("src/ghost.go")`, `location.href + " " + document.body.innerText.slice(0, 400)`)
	browser.Screenshot(t, ctx, shots, "overview-05-undiscovered-session")

	// The graph draw race: five loads, no error logged.
	for i := range 5 {
		run(t, ctx, wait.Process, "open a work item", chromedp.Navigate(dk.base+"/desk/work/"+ids[8]))
		waitFor(t, ctx, wait.Process, fmt.Sprintf("the graph drawn (load %d)", i+1), `document.documentElement.dataset.graphs === "drawn"`)
	}
	if logged := br.Logged(); len(logged) > 0 {
		t.Fatalf("the pages logged: %v", logged)
	}

	// In the dark scheme the graph's nodes take the dark colours of their
	// status (desk.css), not Mermaid's light defaults.
	run(t, ctx, wait.Process, "prefer dark", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	}))
	run(t, ctx, wait.Process, "open the blocked item, dark", chromedp.Navigate(dk.base+"/desk/work/"+ids[8]))
	waitFor(t, ctx, wait.Process, "the graph drawn, dark", `document.documentElement.dataset.graphs === "drawn"`)
	fill := func(status string) string {
		return eval[string](t, ctx, fmt.Sprintf(`(() => { const n = document.querySelector("pre.mermaid .node.st_%s .label-container"); return n ? getComputedStyle(n).fill : "no %s node" })()`, status, status))
	}
	// desk.css's dark --bad-bg (#4a1512) and --info-bg (#172a52).
	if got := fill("blocked"); got != "rgb(74, 21, 18)" {
		t.Errorf("dark scheme: the blocked node's fill is %s, want rgb(74, 21, 18)", got)
	}
	if got := fill("open"); got != "rgb(23, 42, 82)" {
		t.Errorf("dark scheme: the open node's fill is %s, want rgb(23, 42, 82)", got)
	}
	browser.Screenshot(t, ctx, shots, "overview-06-graph-dark")
}

// waitAcross waits until the page's expression cond is true while the
// page may be navigating (an evaluation then fails, and is tried again),
// and returns the expression show evaluated last (for the failure).
func waitAcross(t *testing.T, ctx context.Context, within time.Duration, cond, show string) string {
	t.Helper()
	var lastErr error
	ok := wait.Until(within, func() bool {
		var ok bool
		ok, lastErr = evalIn[bool](ctx, cond)
		return lastErr == nil && ok
	})
	seen, _ := evalIn[string](ctx, show)
	if !ok {
		t.Fatalf("waiting for %s: %v; the page: %s", cond, lastErr, seen)
	}
	return seen
}
