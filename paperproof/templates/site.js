// Progressive enhancement only: every page works without this script.
// Adds a "Copy" button to BibTeX blocks.
(function () {
  "use strict";
  var blocks = document.querySelectorAll("pre.bibtex");
  Array.prototype.forEach.call(blocks, function (pre) {
    if (!navigator.clipboard) {
      return;
    }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy BibTeX";
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(pre.textContent).then(function () {
        button.textContent = "Copied";
      }, function () {
        button.textContent = "Select the text to copy";
      });
    });
    pre.parentNode.insertBefore(button, pre.nextSibling);
  });
})();
