// crossdev report: inlined into index.html; progressive enhancement (the page reads without it, except the
// large sections stored compressed in the page, which this script opens on demand).
(function () {
  "use strict";
  // Case filter: hides rows of the per-suite tables that do not contain every typed word.
  function bindFilter(input) {
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      document.querySelectorAll("table.cases tbody tr").forEach(function (row) {
        var text = row.textContent.toLowerCase();
        var show = words.every(function (w) { return text.indexOf(w) >= 0; });
        row.classList.toggle("hidden", !show);
      });
    });
  }
  // Click a header to sort its table (numbers numerically, the rest as text).
  function bindSort(th, column) {
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
  }
  function enhance(root) {
    root.querySelectorAll("input.filter").forEach(bindFilter);
    root.querySelectorAll("table.grid thead tr").forEach(function (tr) {
      Array.prototype.forEach.call(tr.cells, bindSort);
    });
  }
  // A large section is stored gzip-compressed and base64-encoded in data-gz: inflated into place on demand.
  var pending = 0;
  function inflate(box) {
    if (!box.dataset.gz) return Promise.resolve();
    var text = atob(box.dataset.gz);
    box.removeAttribute("data-gz");
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    pending++;
    document.documentElement.setAttribute("data-lazy-pending", String(pending));
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (html) {
      box.innerHTML = html;
      box.classList.add("open");
      enhance(box);
    }).catch(function (err) {
      box.textContent = "This section could not be decompressed: " + err;
    }).then(function () {
      pending--;
      document.documentElement.setAttribute("data-lazy-pending", String(pending));
    });
  }
  function inflateAll() {
    return Promise.all(Array.prototype.map.call(document.querySelectorAll("div.lazy[data-gz]"), inflate));
  }
  // A link to a compressed section, or to an id inside one (not in the page until inflated), opens it.
  function follow() {
    var id;
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { id = location.hash.slice(1); }
    if (!id) return;
    var target = document.getElementById(id);
    var box = target && target.querySelector("div.lazy[data-gz]");
    var done = target ? (box ? inflate(box) : null) : inflateAll();
    if (done) done.then(function () {
      var t = document.getElementById(id);
      if (t) t.scrollIntoView();
    });
  }
  document.querySelectorAll("button.lazy-open").forEach(function (button) {
    button.addEventListener("click", function () { inflate(button.closest("div.lazy")); });
  });
  enhance(document);
  window.addEventListener("hashchange", follow);
  follow();
  // Marks the page as scripted, so a headless check can tell the script ran without errors.
  document.documentElement.setAttribute("data-js", "ready");
})();
