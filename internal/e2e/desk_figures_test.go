package e2e

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/browser"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func netListenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// pageFigures is what one page load cost, read from the page's own
// Resource Timing and Paint Timing entries.
type pageFigures struct {
	Requests   int      `json:"requests"`
	Bytes      int      `json:"bytes"`   // transferred, headers included
	Decoded    int      `json:"decoded"` // after decompression
	FirstPaint float64  `json:"fcp"`     // ms from navigation start to first contentful paint
	Loaded     float64  `json:"loaded"`  // ms to the load event
	Names      []string `json:"names"`   // the resources' paths
}

const figuresJS = `(() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const res = performance.getEntriesByType("resource");
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  let bytes = nav ? nav.transferSize : 0, decoded = nav ? nav.decodedBodySize : 0;
  for (const r of res) { bytes += r.transferSize; decoded += r.decodedBodySize; }
  return {requests: 1 + res.length, bytes, decoded, fcp: fcp ? fcp.startTime : -1, loaded: nav ? nav.loadEventEnd : -1,
    names: res.map(r => new URL(r.name).pathname)};
})()`

// deskFigures measures, in a new tab after the browser's cache is cleared:
// the sessions page as first opened, then a work item page with its graph;
// and the time from a store write (acquire_claim over MCP) to the claims
// page showing the new claim. They are logged as figures, never asserted.
func deskFigures(t *testing.T, br *browser.Browser, dk *deskProcess, cs *mcp.ClientSession, workID, holder string) {
	ctx := br.NewTab(t)
	run(t, ctx, wait.Process, "clear the cache", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCache, cdp.Empty{})
		return err
	}))
	run(t, ctx, wait.Process, "sign in", chromedp.Navigate(dk.loginLink(t)))
	run(t, ctx, wait.Process, "clear the cache again", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCache, cdp.Empty{})
		return err
	}))
	run(t, ctx, wait.Process, "open the sessions page", chromedp.Navigate(dk.base+"/desk/"))
	waitFor(t, ctx, wait.Process, "the sessions page painted", `document.readyState === "complete" && performance.getEntriesByType("navigation")[0].loadEventEnd > 0 && performance.getEntriesByName("first-contentful-paint").length > 0`)
	first := eval[pageFigures](t, ctx, figuresJS)
	t.Logf("desk figure: sessions page, first visit (cold cache): %d requests, %d bytes transferred (%d decoded), first contentful paint %.0f ms, load %.0f ms (besides the page: %v)",
		first.Requests, first.Bytes, first.Decoded, first.FirstPaint, first.Loaded, first.Names)

	run(t, ctx, wait.Process, "open the work item", chromedp.Navigate(dk.base+"/desk/work/"+workID))
	waitFor(t, ctx, wait.Process, "the graph drawn", `document.documentElement.dataset.graphs === "drawn"`)
	work := eval[pageFigures](t, ctx, figuresJS)
	t.Logf("desk figure: work item page with its graph (htmx and styles cached, Mermaid first load): %d requests, %d bytes transferred (%d decoded), first contentful paint %.0f ms, load %.0f ms",
		work.Requests, work.Bytes, work.Decoded, work.FirstPaint, work.Loaded)

	run(t, ctx, wait.Process, "open the receipts", chromedp.Navigate(dk.base+"/desk/receipts"))
	waitFor(t, ctx, wait.Process, "the receipts painted", `document.readyState === "complete" && performance.getEntriesByType("navigation")[0].loadEventEnd > 0 && performance.getEntriesByName("first-contentful-paint").length > 0`)
	warm := eval[pageFigures](t, ctx, figuresJS)
	t.Logf("desk figure: receipts page, assets cached: %d requests, %d bytes transferred, first contentful paint %.0f ms",
		warm.Requests, warm.Bytes, warm.FirstPaint)

	// Store write to page: the claims page records when each resource
	// first appears; the test notes the time just before acquire_claim
	// (whose answer means the row is committed) and just after.
	run(t, ctx, wait.Process, "open the claims", chromedp.Navigate(dk.base+"/desk/claims"))
	waitFor(t, ctx, wait.Process, "the claims stream open", `document.querySelector("#live-state").dataset.state === "open"`)
	eval[bool](t, ctx, `window.__seen = {};
new MutationObserver(() => { for (const c of document.querySelectorAll("#claims-live code")) { if (!window.__seen[c.textContent]) window.__seen[c.textContent] = Date.now(); } })
  .observe(document.body, {subtree: true, childList: true, characterData: true}); true`)
	var fromCall, fromCommit []float64
	for i := range 10 {
		// Writes that follow the previous update at once would all land
		// at the same phase of the desk's 100 ms poll; this offset (not a
		// wait for anything) spreads them over the period.
		time.Sleep(time.Duration(i%5) * 20 * time.Millisecond)
		res := "figures/" + unique("live") + ".go"
		start := time.Now()
		call(t, cs, "acquire_claim", map[string]any{"workId": workID, "sessionId": holder, "resource": res}, nil)
		committed := time.Now()
		c, cancel := context.WithTimeout(ctx, wait.Process)
		seen, err := chromedp.Run(c, chromedp.Poll[float64](`window.__seen[`+jsString(res)+`] || 0`, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(0)))
		cancel()
		if err != nil {
			t.Fatalf("claim %d never appeared on the page: %v", i, err)
		}
		fromCall = append(fromCall, seen-float64(start.UnixMilli()))
		fromCommit = append(fromCommit, seen-float64(committed.UnixMilli()))
	}
	t.Logf("desk figure: store write to live update (%d claims, change feed polling every 100 ms): from the acquire_claim call median %.0f ms (min %.0f, max %.0f); from its answer median %.0f ms (min %.0f, max %.0f)",
		len(fromCall), median(fromCall), slices.Min(fromCall), slices.Max(fromCall), median(fromCommit), slices.Min(fromCommit), slices.Max(fromCommit))
}
