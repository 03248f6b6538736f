// The HTML report's inline style and script, and the Content-Security-Policy that admits exactly
// them (docs/report.md "No request leaves the file").
#include <fmt/format.h>

#include "report/page.hpp"
#include "snapcompact/frames.hpp"
#include "util/digest.hpp"

namespace ctxfold::report_detail {

const std::string& page_style() {
  static const std::string s = R"css(
:root{color-scheme:light;--fg:#1b1f24;--mute:#59636e;--line:#d0d7de;--user:#eef6ff;--assistant:#ffffff;--tool:#f6f8fa;--sum:#fff8e5}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:#f6f7f9}
header{position:sticky;top:0;z-index:2;display:flex;gap:1em;align-items:center;padding:.5em 1em;background:#24292f;color:#fff}
header h1{font-size:1.1em;margin:0}
#q{width:22em;max-width:60vw;padding:.3em .5em;font:inherit;border-radius:4px;border:1px solid #888}
#hits{font-size:.9em}
main{max-width:64em;margin:0 auto;padding:1em}
h2{margin:1.2em 0 .4em;overflow-wrap:anywhere}
h3{margin:1em 0 .4em;border-bottom:1px solid var(--line)}
nav.parts a{margin-right:.8em}
nav.sessions li{list-style:none}
nav.sessions .depth-1{margin-left:1.5em}nav.sessions .depth-2{margin-left:3em}nav.sessions .depth-3{margin-left:4.5em}
table{border-collapse:collapse;margin:.4em 0}
th,td{border:1px solid var(--line);padding:.2em .5em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
.node{display:block;margin:.6em 0;padding:.4em .8em;border:1px solid var(--line);border-radius:6px;background:var(--assistant);unicode-bidi:isolate}
.role-user{background:var(--user)}.role-tool{background:var(--tool)}.role-system{background:#f3f0ff}
.capsule{background:var(--sum);border-color:#d4a72c}
.stub{background:#f0f0f0;color:var(--mute)}
.head{font-size:.85em;color:var(--mute)}
.head .role{font-weight:600;text-transform:uppercase;color:var(--fg)}
.head a.id{color:inherit}
.md{overflow-wrap:anywhere;unicode-bidi:isolate}
.md pre,pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--tool);padding:.4em;border-radius:4px;font:13px/1.4 ui-monospace,monospace;max-height:40em;overflow:auto;unicode-bidi:isolate}
code{font:13px ui-monospace,monospace;overflow-wrap:anywhere}
details>summary{cursor:pointer}
details.tool{border-left:3px solid #8c959f;padding-left:.6em;margin:.4em 0}
details.thinking{color:var(--mute);margin:.4em 0}
details.covered{margin-top:.5em;border-top:1px dashed #d4a72c;padding-top:.3em}
.result.error pre{background:#ffebe9}
.result-head,.note,.cut,.capsule-facts{font-size:.85em;color:var(--mute)}
.warning{color:#a40e26}
img.image{max-width:100%;height:auto;border:1px solid var(--line)}
.miss{display:none}
[id]{scroll-margin-top:4em}
::highlight(hit){background:#ffd33d;color:#000}
[hidden]{display:none}
)css";
  return s;
}

const std::string& page_script() {
  static const std::string s = R"js(
(function () {
  "use strict";
  var box = document.getElementById("search"), q = document.getElementById("q"), info = document.getElementById("hits");
  if (!box || !q) return;
  box.hidden = false;
  var nodes = Array.prototype.slice.call(document.querySelectorAll(".node"));
  var own = null, hl = null, hits = [], at = -1, timer = 0, last = null;
  if (window.CSS && CSS.highlights && typeof Highlight === "function") { hl = new Highlight(); CSS.highlights.set("hit", hl); }
  function skipNested(root) {
    return function (n) {
      return n !== root && n.nodeType === 1 && n.classList.contains("node") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
    };
  }
  function texts(root) {
    var w = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, skipNested(root)), out = [], t;
    while ((t = w.nextNode())) if (t.nodeType === 3) out.push(t);
    return out;
  }
  function ownText(n) { return texts(n).map(function (t) { return t.data; }).join("").toLowerCase(); }
  function openUp(el) { for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true; }
  function mark(n, s) {
    texts(n).forEach(function (t) {
      var v = t.data.toLowerCase(), i = v.indexOf(s), any = false;
      while (i >= 0) {
        any = true;
        if (hl && hl.size < 20000) { var r = new Range(); r.setStart(t, i); r.setEnd(t, i + s.length); hl.add(r); }
        i = v.indexOf(s, i + s.length);
      }
      if (any) openUp(t.parentElement);
    });
  }
  function run() {
    var s = q.value.trim().toLowerCase();
    last = s;
    if (hl) hl.clear();
    hits = []; at = -1;
    if (!s) { nodes.forEach(function (n) { n.classList.remove("miss"); }); info.textContent = ""; return; }
    if (!own) own = nodes.map(ownText);
    var keep = new Set();
    nodes.forEach(function (n, k) {
      if (own[k].indexOf(s) < 0) return;
      hits.push(n);
      for (var p = n; p; p = p.parentElement ? p.parentElement.closest(".node") : null) keep.add(p);
    });
    nodes.forEach(function (n) { n.classList.toggle("miss", !keep.has(n)); });
    hits.forEach(function (n) { mark(n, s); });
    info.textContent = hits.length + (hits.length === 1 ? " node matches" : " nodes match") + (hits.length ? " (Enter: next)" : "");
  }
  q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 150); });
  q.addEventListener("keydown", function (e) {
    if (e.key !== "Enter") return;
    clearTimeout(timer);
    if (q.value.trim().toLowerCase() !== last) run();
    if (!hits.length) return;
    at = (at + 1) % hits.length;
    hits[at].scrollIntoView({ block: "center" });
  });
})();
)js";
  return s;
}

namespace {
/// 'sha256-BASE64' of text, the CSP source expression that admits exactly this inline element.
std::string csp_hash(const std::string& text) {
  std::string hex = sha256_hex(text), raw;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return "'sha256-" + base64_encode(raw) + "'";
}
}  // namespace

std::string page_csp() {
  return fmt::format(
      "default-src 'none'; img-src data:; style-src {}; script-src {}; base-uri 'none'; form-action 'none'",
      csp_hash(page_style()), csp_hash(page_script()));
}

}  // namespace ctxfold::report_detail
