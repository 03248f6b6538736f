// The conversation part of the HTML report: nodes, their blocks, tool calls with their results,
// and summaries as capsules over their covered turns (docs/report.md "The conversation").
#include <fmt/format.h>

#include <map>
#include <set>

#include "report/escape.hpp"
#include "report/page.hpp"

namespace ctxfold::report_detail {

namespace {

/// Where each tool_use id of a sequence is answered, and which results were shown with their call.
struct Pairing {
  std::map<std::string, std::pair<std::size_t, std::size_t>> results;  ///< tool_use id → (node, block)
  std::set<std::pair<std::size_t, std::size_t>> shown;
};

Pairing pair_results(const std::vector<Node>& nodes) {
  Pairing p;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].content.is_array()) continue;
    for (std::size_t b = 0; b < nodes[i].content.size(); ++b) {
      const Json& blk = nodes[i].content[b];
      if (json_str(blk, "type") == "tool_result") p.results.emplace(json_str(blk, "tool_use_id"), std::make_pair(i, b));
    }
  }
  return p;
}

/// True when every block of node i was shown with its call.
bool all_shown(const Pairing& p, const Node& n, std::size_t i) {
  if (!n.content.is_array() || n.content.empty()) return false;
  for (std::size_t b = 0; b < n.content.size(); ++b)
    if (!p.shown.count({i, b})) return false;
  return true;
}

struct Writer {
  Page& page;
  const std::vector<Node>& nodes;
  Budget budget;
  int depth;
  Pairing pairing;

  void write(std::size_t i);
  void node_head(const Node& n, const char* role);
  void blocks(const Node& n, std::size_t i);
  void block(const Node& n, std::size_t i, const Json& b);
  void text_block(const Node& n, std::string_view s, bool md);
  void pre(const Node& n, std::string_view s, const char* cls);
  void tool_use(const Node& n, std::size_t i, const Json& b);
  void tool_result(const Node& n, const Json& b, bool with_call);
  void result_content(const Node& n, const Json& content);
  void image(const Node& n, const Json& b);
  void stub(const Node& n);
  void launched(const Node& n);
  void capsule(const Node& n, bool over_bound);
  void capsule_head(const Node& n, const std::vector<std::string>& covers);
  void dropped(const CompactionEntry& c);
  void covered(const Node& n, const std::vector<std::string>& covers);
};

const char* role_of(const Node& n) {
  if (n.is_view()) return n.kind.c_str();
  return n.role.empty() ? "event" : n.role.c_str();
}

void Writer::node_head(const Node& n, const char* role) {
  std::string a = node_anchor(n.id);
  page.raw("<div class=\"head\"><span class=\"role\">");
  page.label(role);
  page.raw("</span> <a class=\"id\" href=\"#");
  page.label(a);
  page.raw("\">");
  page.label(visible_text(n.id));
  page.raw("</a>");
  if (auto ts = json_str(n.metadata, "timestamp"); !ts.empty()) {
    page.raw(" <span class=\"time\">");
    page.text(ts);
    page.raw("</span>");
  }
  if (auto m = json_str(n.metadata, "model"); !m.empty()) {
    page.raw(" <span class=\"model\">");
    page.text(m);
    page.raw("</span>");
  }
  page.raw("</div>\n");
}

void Writer::write(std::size_t i) {
  const Node& n = nodes[i];
  if (n.kind == kind::kEvent) return;  // transparent records: not model input
  if (all_shown(pairing, n, i)) return;  // each result already sits under its call
  std::size_t start = page.out.size();
  std::int64_t inner_before = page.used(Budget::covered);  // covered turns inside count once, there
  if (n.is_view()) {
    capsule(n, !page.room(budget));  // over the bound: its head only, its covered nodes still listed
  } else if (!page.room(budget)) {
    stub(n);
  } else {
    page.stats.nodes++;
    page.raw(fmt::format("<article class=\"node role-{}\"", role_of(n)));
    page.anchor(node_anchor(n.id));
    page.raw(">\n");
    node_head(n, role_of(n));
    blocks(n, i);
    launched(n);
    page.raw("</article>\n");
  }
  page.spend(budget, static_cast<std::int64_t>(page.out.size() - start) - (page.used(Budget::covered) - inner_before));
}

void Writer::stub(const Node& n) {
  page.stats.stubs++;
  page.raw("<article class=\"node stub\"");
  page.anchor(node_anchor(n.id));
  page.raw(">");
  node_head(n, role_of(n));
  page.raw("<p class=\"cut\">");
  page.label(fmt::format("[not shown: the report's size bound was reached; the node: ctxfold show {}]", n.id));
  page.raw("</p></article>\n");
}

void Writer::blocks(const Node& n, std::size_t i) {
  if (!n.content.is_array()) return pre(n, dump_json(n.content), "raw");
  for (std::size_t b = 0; b < n.content.size(); ++b)
    if (!pairing.shown.count({i, b})) block(n, i, n.content[b]);
}

void Writer::block(const Node& n, std::size_t i, const Json& b) {
  std::string type = json_str(b, "type");
  if (type == "text") return text_block(n, json_str(b, "text"), true);
  if (type == "tool_use") return tool_use(n, i, b);
  if (type == "tool_result") return tool_result(n, b, false);
  if (type == "image") return image(n, b);
  if (type == "thinking") {
    std::string t = json_str(b, "thinking");
    page.raw(fmt::format("<details class=\"thinking\"><summary>thinking ({} bytes)</summary>\n", t.size()));
    text_block(n, t, true);
    return page.raw("</details>\n");
  }
  if (type == "opaque") {
    page.raw("<p class=\"opaque\">");
    page.label(fmt::format("[opaque block from {}: {} bytes no one can read]", json_str(b, "provider", "?"),
                           dump_json(b.value("data", Json())).size()));
    return page.raw("</p>\n");
  }
  pre(n, dump_json(b), "raw");
}

void Writer::text_block(const Node& n, std::string_view s, bool md) {
  if (!md) return pre(n, s, "text");
  bool cut = false;
  std::string_view shown = page.bounded(s, cut);
  page.raw("<div class=\"md\">");
  page.markdown(shown);
  page.raw("</div>\n");
  if (cut) page.cut_marker(s, n.id);
}

void Writer::pre(const Node& n, std::string_view s, const char* cls) {
  bool cut = false;
  std::string_view shown = page.bounded(s, cut);
  page.raw(fmt::format("<pre class=\"{}\">", cls));
  page.text(shown);
  page.raw("</pre>\n");
  if (cut) page.cut_marker(s, n.id);
}

/// A one-line view of a tool call's input: its command, path, pattern or description, else the JSON.
std::string input_preview(const Json& input) {
  if (input.is_object())
    for (const char* k : {"command", "file_path", "path", "pattern", "url", "query", "description", "prompt"})
      if (auto v = json_str(input, k); !v.empty()) return v.substr(0, 200);
  std::string j = dump_json(input);
  return j.substr(0, 200);
}

void Writer::tool_use(const Node& n, std::size_t i, const Json& b) {
  const Json input = b.value("input", Json::object());
  page.raw("<details class=\"tool\"><summary><span class=\"tool-name\">");
  page.text(json_str(b, "name", "tool"));
  page.raw("</span> <code>");
  page.text(input_preview(input).substr(0, 200));
  page.raw("</code></summary>\n");
  pre(n, input.dump(2), "input");
  auto r = pairing.results.find(json_str(b, "id"));
  if (r != pairing.results.end() && r->second.first > i) {
    const Node& rn = nodes[r->second.first];
    pairing.shown.insert(r->second);
    page.raw("<div class=\"paired\"");
    if (all_shown(pairing, rn, r->second.first) || rn.content.size() == 1) page.anchor(node_anchor(rn.id));
    page.raw(">");
    tool_result(rn, rn.content[r->second.second], true);
    page.raw("</div>\n");
  } else {
    page.raw("<p class=\"note\">no result recorded in this part of the history</p>\n");
  }
  page.raw("</details>\n");
}

void Writer::tool_result(const Node& n, const Json& b, bool with_call) {
  bool error = b.value("is_error", false) == true;
  page.raw(fmt::format("<div class=\"result{}\">", error ? " error" : ""));
  page.raw("<div class=\"result-head\">");
  if (with_call) {
    page.label(error ? "result (error) · " : "result · ");
    page.raw("<a href=\"#");
    page.label(node_anchor(n.id));
    page.raw("\">");
    page.label(visible_text(n.id));
    page.raw("</a>");
  } else {
    page.label(fmt::format("result for call {} (the call is not in this part of the history)",
                           visible_text(json_str(b, "tool_use_id"))));
  }
  page.raw("</div>\n");
  result_content(n, b.value("content", Json()));
  page.raw("</div>\n");
}

void Writer::result_content(const Node& n, const Json& content) {
  if (content.is_string()) return pre(n, content.get<std::string>(), "output");
  if (!content.is_array()) return pre(n, dump_json(content), "output");
  for (const Json& c : content) {
    std::string type = json_str(c, "type");
    if (type == "text") pre(n, json_str(c, "text"), "output");
    else if (type == "image") image(n, c);
    else pre(n, dump_json(c), "output");
  }
}

bool base64_only(std::string_view s) {
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '='))
      return false;
  return !s.empty();
}

void Writer::image(const Node& n, const Json& b) {
  const Json& src = b.contains("source") && b["source"].is_object() ? b["source"] : b;
  std::string type = json_str(src, "media_type");
  std::string data = json_str(src, "data");
  static const std::set<std::string> kTypes = {"image/png", "image/jpeg", "image/gif", "image/webp"};
  const auto& lim = page.req.limits;
  auto size = static_cast<std::int64_t>(data.size());
  std::string what = fmt::format("image {}", type.empty() ? "?" : visible_text(type));
  if (b.contains("width") && b.contains("height")) what += fmt::format(" {}x{}", dump_json(b["width"]), dump_json(b["height"]));
  if (kTypes.count(type) && base64_only(data) && size <= lim.image_bytes && page.images_used + size <= lim.images_bytes) {
    page.images_used += size;
    page.stats.images++;
    page.raw("<img class=\"image\" alt=\"");
    page.label(what);
    page.raw(fmt::format("\" src=\"data:{};base64,", type));
    page.raw(data);
    return page.raw("\">\n");
  }
  page.stats.images_omitted++;
  page.raw("<p class=\"cut\">");
  page.label(fmt::format("[{}, {} base64 bytes: not embedded ({}); the node: ctxfold show {}]", what, size,
                         data.empty() ? "no data stored" : kTypes.count(type) && base64_only(data) ? "over the image bound" : "not an embeddable image",
                         n.id));
  page.raw("</p>\n");
}

void Writer::launched(const Node& n) {
  if (!page.session) return;
  auto it = page.session->launched.find(n.id);
  if (it == page.session->launched.end()) return;
  for (const SessionIndexEntry* e : it->second) {
    page.raw("<p class=\"subagent\">sub-agent: <a href=\"#");
    page.label(session_anchor(e->info.id));
    page.raw("\">");
    page.text(e->title.value_or(e->info.id));
    page.raw("</a></p>\n");
  }
}

const CompactionEntry* compaction_of(const Page& page, const std::string& id) {
  if (!page.session) return nullptr;
  for (const CompactionEntry& c : page.session->compactions)
    if (c.summary_id == id) return &c;
  return nullptr;
}

void Writer::capsule(const Node& n, bool over_bound) {
  page.stats.capsules++;
  if (over_bound) page.stats.stubs++;
  std::vector<std::string> covers = n.covers_ids;
  if (covers.empty() && n.seq > 0) covers = page.store.covers_of(n.seq);
  page.raw(fmt::format("<section class=\"node capsule kind-{}\"", n.kind == kind::kSummary ? "summary" : n.kind == kind::kArchive ? "archive" : "notes"));
  page.anchor(node_anchor(n.id));
  page.raw(">\n");
  capsule_head(n, covers);
  if (over_bound) {
    page.raw("<p class=\"cut\">");
    page.label(fmt::format("[not shown: the report's size bound was reached; the node: ctxfold show {}]", n.id));
    page.raw("</p>\n");
  } else {
    page.raw("<div class=\"capsule-body\">\n");
    blocks(n, nodes.size());  // a view node's own content: its summary text, frames or notes
    page.raw("</div>\n");
    if (const CompactionEntry* c = compaction_of(page, n.id)) dropped(*c);
  }
  if (!covers.empty()) covered(n, covers);
  page.raw("</section>\n");
}

std::string figure(const std::optional<CompactionTokens>& f) {
  return f ? fmt::format("{} ({})", f->value, f->label) : std::string("?");
}

void Writer::capsule_head(const Node& n, const std::vector<std::string>& covers) {
  node_head(n, role_of(n));
  page.raw("<p class=\"capsule-facts\">");
  std::string facts = fmt::format("{} of {} covered nodes", n.kind, covers.size());
  if (!covers.empty()) facts += fmt::format(" ({} … {})", visible_text(covers.front()), visible_text(covers.back()));
  if (const CompactionEntry* c = compaction_of(page, n.id)) {
    facts += fmt::format("; {} {}", c->origin, c->strategy);
    if (c->trigger) facts += fmt::format(", trigger {}", visible_text(*c->trigger));
    if (c->tokens_before || c->tokens_after)
      facts += fmt::format("; tokens {} → {}", figure(c->tokens_before), figure(c->tokens_after));
    facts += fmt::format("; summary {} bytes of {} covered", c->summary_bytes, c->covered_bytes);
  }
  page.label(facts);
  page.raw("</p>\n");
}

void Writer::dropped(const CompactionEntry& c) {
  std::int64_t found = 0;
  for (const auto& [k, v] : c.found) found += v;
  page.raw(fmt::format("<details class=\"dropped\"><summary>dropped by this summary: {} of {} identifiers found in "
                       "the covered history</summary>\n<ul>\n", c.dropped.size(), found));
  std::size_t shown = 0;
  for (const DroppedItem& d : c.dropped) {
    if (++shown > 200) break;
    page.raw("<li><span class=\"kind\">");
    page.label(d.kind);
    page.raw("</span> <code>");
    page.text(d.value);
    page.raw("</code> first in <a href=\"#");
    page.label(node_anchor(d.node));
    page.raw("\">");
    page.label(visible_text(d.node));
    page.raw("</a></li>\n");
  }
  page.raw("</ul>\n");
  if (c.dropped.size() > 200)
    page.raw(fmt::format("<p class=\"cut\">{} more: ctxfold compactions</p>\n", c.dropped.size() - 200));
  page.raw("</details>\n");
}

void Writer::covered(const Node& n, const std::vector<std::string>& covers) {
  page.raw(fmt::format("<details class=\"covered\"><summary>the {} covered nodes</summary>\n", covers.size()));
  const auto& lim = page.req.limits;
  if (depth + 1 > lim.capsule_depth) {
    page.raw("<p class=\"cut\">");
    page.label(fmt::format("[nested deeper than {} capsules: ctxfold expand {}]", lim.capsule_depth, n.id));
    return page.raw("</p></details>\n");
  }
  std::vector<Node> inner;
  std::size_t take = std::min(covers.size(), static_cast<std::size_t>(std::max<std::int64_t>(lim.capsule_nodes, 0)));
  inner.reserve(take);
  for (std::size_t k = 0; k < take; ++k)
    if (auto c = page.store.node(covers[k])) inner.push_back(std::move(*c));
  write_nodes(page, inner, Budget::covered, depth + 1);
  if (covers.size() > take) {
    page.stats.capsule_omitted += static_cast<std::int64_t>(covers.size() - take);
    page.raw("<p class=\"cut\">");
    page.label(fmt::format("[{} more covered nodes past the capsule bound: ctxfold expand {}]", covers.size() - take, n.id));
    page.raw("</p>\n");
  }
  page.raw("</details>\n");
}

}  // namespace

void write_nodes(Page& page, const std::vector<Node>& nodes, Budget budget, int depth) {
  Writer w{page, nodes, budget, depth, pair_results(nodes)};
  for (std::size_t i = 0; i < nodes.size(); ++i) w.write(i);
}

}  // namespace ctxfold::report_detail
