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

  function drawGraphs() {
    var nodes = document.querySelectorAll("pre.mermaid:not([data-processed])");
    if (!nodes.length) { return; }
    loadMermaid().then(function (m) {
      return m.run({ nodes: Array.prototype.slice.call(nodes) });
    }).then(function () {
      document.documentElement.dataset.graphs = "drawn";
    }).catch(function (err) {
      document.documentElement.dataset.graphs = "failed";
      if (window.console) { console.error("desk: graph not drawn", err); }
    });
  }

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
  });
})();
