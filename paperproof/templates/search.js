// Search runs in the browser on Pagefind's static index (see paperproof/build/search.py).
// The first shard's bundle serves the UI; the other shards are merged into every query.
(function () {
  "use strict";
  var element = document.getElementById("search");
  if (!element || typeof PagefindUI === "undefined") {
    return;
  }
  var merge = JSON.parse(element.getAttribute("data-merge") || "[]").map(function (path) {
    return { bundlePath: path };
  });
  var ui = new PagefindUI({
    element: "#search",
    bundlePath: element.getAttribute("data-bundle"),
    baseUrl: element.getAttribute("data-base") || "/",
    mergeIndex: merge,
    showImages: false,
    showSubResults: false,
    resetStyles: false,
    autofocus: true
  });
  var query = new URLSearchParams(window.location.search).get("q");
  if (query) {
    ui.triggerSearch(query);
  }
})();
