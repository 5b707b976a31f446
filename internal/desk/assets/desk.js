// desk.js: the traffic desk's own script. It shows the live stream's
// state, and draws dependency graphs with Mermaid (loaded only on pages
// that have one, from the desk's own assets) after the page loads and
// after a live update replaces a graph.
(function () {
  "use strict";
  var mermaidLoading = null;

  function setLive(state, text) {
    var el = document.getElementById("live-state");
    if (el) { el.dataset.state = state; el.textContent = text; }
  }

  function loadMermaid() {
    if (window.mermaid) { return Promise.resolve(window.mermaid); }
    if (!mermaidLoading) {
      mermaidLoading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = "/desk/assets/vendor/mermaid.min.js";
        s.onload = function () {
          var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
          window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default",
            flowchart: { htmlLabels: false }, fontFamily: "system-ui, sans-serif" });
          resolve(window.mermaid);
        };
        s.onerror = reject;
        document.head.appendChild(s);
      });
    }
    return mermaidLoading;
  }

  // drawGraphs draws the graphs not drawn yet. Draws are serialized: the
  // page load and a live update could otherwise both hand the same <pre>
  // to Mermaid (it marks a node processed only once its draw starts), or
  // hand it one a live update has since replaced, which Mermaid then
  // reads after it left the document. Each draw takes the nodes still in
  // the document when its turn comes, and marks them before it starts.
  var drawing = Promise.resolve();

  function drawGraphs() {
    drawing = drawing.then(drawPending, drawPending);
    return drawing;
  }

  function drawPending() {
    var nodes = Array.prototype.filter.call(
      document.querySelectorAll("pre.mermaid:not([data-processed]):not([data-drawing])"),
      function (n) { return n.isConnected; });
    if (!nodes.length) { return null; }
    nodes.forEach(function (n) { n.setAttribute("data-drawing", ""); });
    return loadMermaid().then(function (m) {
      nodes = nodes.filter(function (n) { return n.isConnected; });
      if (!nodes.length) { return null; }
      return m.run({ nodes: nodes });
    }).then(function () {
      document.documentElement.dataset.graphs = "drawn";
    }).catch(function (err) {
      document.documentElement.dataset.graphs = "failed";
      if (window.console) { console.error("desk: graph not drawn", err); }
    });
  }

  // Relative times: each <time datetime> says "3 min ago", with the exact
  // time (UTC, as the server wrote it, and local) on hover.
  var units = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
  var rtf = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, { numeric: "auto" }) : null;

  function relative(el) {
    var at = Date.parse(el.getAttribute("datetime"));
    if (isNaN(at) || !rtf) { return; }
    if (!el.dataset.exact) {
      el.dataset.exact = el.textContent;
      el.title = el.textContent + " · " + new Date(at).toLocaleString();
    }
    var secs = (at - Date.now()) / 1000;
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(secs) >= units[i][1] || i === units.length - 1) {
        el.textContent = rtf.format(Math.round(secs / units[i][1]), units[i][0]);
        return;
      }
    }
  }

  function relativeTimes(root) {
    Array.prototype.forEach.call((root || document).querySelectorAll("main time[datetime]"), relative);
  }

  // Live highlight: a row (or the counts) that a live update adds or
  // changes is marked data-fresh for a moment. Rows are compared by their
  // markup without the times' text, remembered per element id.
  var seen = {};
  var watched = "main tr[id], main li[id], #work-counts, #receipt-counts, #session-counts, #session-summary, #session-actions, #overview-summary";

  function signature(el) {
    return el.outerHTML.replace(/(<time[^>]*>)[^<]*(<\/time>)/g, "$1$2").replace(/ (data-fresh|data-exact|title)="[^"]*"/g, "");
  }

  function markFresh(initial) {
    Array.prototype.forEach.call(document.querySelectorAll(watched), function (el) {
      var sig = signature(el);
      if (!initial && seen[el.id] !== sig) {
        el.setAttribute("data-fresh", "");
        document.documentElement.dataset.highlights = String(Number(document.documentElement.dataset.highlights || 0) + 1);
        setTimeout(function () { el.removeAttribute("data-fresh"); }, 4000);
      }
      seen[el.id] = sig;
    });
  }

  var pending = false;
  function afterUpdate() {
    if (pending) { return; }
    pending = true;
    setTimeout(function () {
      pending = false;
      relativeTimes();
      markFresh(false);
    }, 0);
  }

  document.addEventListener("DOMContentLoaded", function () {
    relativeTimes();
    markFresh(true);
    setInterval(relativeTimes, 30000);
  });
  document.addEventListener("htmx:oobAfterSwap", afterUpdate);
  document.addEventListener("htmx:afterSwap", afterUpdate);
  document.addEventListener("DOMContentLoaded", drawGraphs);
  document.addEventListener("htmx:sseOpen", function () {
    setLive("open", "live");
    document.documentElement.dataset.streamOpens = String(Number(document.documentElement.dataset.streamOpens || 0) + 1);
  });
  document.addEventListener("htmx:sseError", function () { setLive("reconnecting", "reconnecting…"); });
  document.addEventListener("htmx:sseMessage", function () {
    setLive("open", "live");
    document.documentElement.dataset.updates = String(Number(document.documentElement.dataset.updates || 0) + 1);
    drawGraphs();
    afterUpdate();
  });
})();
