// crossdev report: inlined into index.html; progressive enhancement only (the page reads fully without it).
(function () {
  "use strict";
  // Case filter: hides rows of the per-suite tables that do not contain every typed word.
  document.querySelectorAll("input.filter").forEach(function (input) {
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      document.querySelectorAll("table.cases tbody tr").forEach(function (row) {
        var text = row.textContent.toLowerCase();
        var show = words.every(function (w) { return text.indexOf(w) >= 0; });
        row.classList.toggle("hidden", !show);
      });
    });
  });
  // Click a header to sort its table (numbers numerically, the rest as text).
  document.querySelectorAll("table.grid thead th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = th.closest("table").tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var dir = th.dataset.sorted === "asc" ? -1 : 1;
      th.dataset.sorted = dir === 1 ? "asc" : "desc";
      rows.sort(function (a, b) {
        var x = a.cells[column] ? a.cells[column].textContent : "";
        var y = b.cells[column] ? b.cells[column].textContent : "";
        var nx = parseFloat(x), ny = parseFloat(y);
        if (!isNaN(nx) && !isNaN(ny)) return dir * (nx - ny);
        return dir * x.localeCompare(y);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  // Marks the page as scripted, so a headless check can tell the script ran without errors.
  document.documentElement.setAttribute("data-js", "ready");
})();
