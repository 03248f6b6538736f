// `report --markdown`: a bounded digest for pasting into an issue (docs/report.md "Markdown").
// Transcript text only ever appears inside code spans and fenced blocks whose fences are longer
// than any backtick run of the text, or backslash-escaped, so it never becomes markup.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "report/escape.hpp"
#include "report/report.hpp"
#include "report/session_view.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace report_detail {
namespace {

/// Bytes of one message's text shown in the digest; the rest is named by a marker.
constexpr std::size_t kMarkdownBlockBytes = 2000;

std::size_t longest_backticks(std::string_view s) {
  std::size_t best = 0, run = 0;
  for (char c : s) best = std::max(best, run = (c == '`' ? run + 1 : 0));
  return best;
}

struct Md {
  const ReportRequest& req;
  ReportStats& stats;
  std::string out;

  std::string clean(std::string_view s) const {
    return visible_text(req.redactor ? req.redactor->redact(std::string(s)) : std::string(s));
  }
  /// Text on one line with every character Markdown or HTML could read as markup
  /// (\ ` * _ [ ] < > | ~ & #) backslash-escaped.
  void inline_text(std::string_view s) {
    for (char c : clean(s)) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
      if (std::string_view("\\`*_[]<>|~&#").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  /// A code span (one line).
  void code(std::string_view s, bool transcript = true) {
    std::string t = transcript ? clean(s) : std::string(s);
    std::replace_if(t.begin(), t.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    std::string fence(longest_backticks(t) + 1, '`');
    out += fence + " " + t + " " + fence;
  }
  /// A fenced block of text, cut at kMarkdownBlockBytes.
  void fenced(std::string_view s, const std::string& id) {
    std::string t = clean(s);
    std::size_t keep = utf8_safe_prefix(t, kMarkdownBlockBytes);
    std::string fence(std::max<std::size_t>(3, longest_backticks(t) + 1), '`');
    out += fence + "text\n" + t.substr(0, keep) + (keep < t.size() ? "\n" : "");
    if (!t.empty() && t.back() != '\n' && keep == t.size()) out += "\n";
    out += fence + "\n";
    if (keep < t.size()) {
      stats.truncated_blocks++;
      out += fmt::format("*[cut: {} of {} bytes shown; the whole node: `ctxfold show {}`]*\n", keep, t.size(), id);
    }
  }
};

void md_overview(Md& m, const SessionView& v) {
  const SessionIndexEntry& e = v.entry;
  m.out += "## ";
  m.inline_text(e.title.value_or(e.info.id));
  m.out += "\n\n- session: ";
  m.code(e.info.id, false);
  m.out += fmt::format(" ({}, {} nodes)\n- agent: ", e.info.kind, e.node_count);
  m.inline_text(e.agent);
  if (e.project) m.out += "\n- project: ", m.code(*e.project);
  if (!e.models.empty()) {
    m.out += "\n- models:";
    for (const auto& x : e.models) m.out += " ", m.code(x);
  }
  if (e.first_timestamp) m.out += "\n- time: ", m.inline_text(*e.first_timestamp + " … " + e.last_timestamp.value_or("?"));
  const Rendered& r = v.rendered;
  m.out += fmt::format("\n- rendered (strategy {}): {} nodes read, {} tokens ({})\n\n", r.strategy, r.reads.size(),
                       r.tokens.value, r.tokens.kind);
}

void md_usage(Md& m, const SessionView& v) {
  if (v.usage.empty()) return;
  m.out += "### Usage and cost\n\n| model | responses | input | cache write | cache read | output | cost (USD, estimated) |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const UsageRow& u : v.usage) {
    m.out += "| ";
    m.inline_text(u.model.empty() ? "(no model recorded)" : u.model);
    m.out += fmt::format(" | {} | {} | {} | {} | {} | {} |\n", u.messages, u.tokens.input,
                         u.tokens.cache_write_5m + u.tokens.cache_write_1h, u.tokens.cache_read, u.tokens.output,
                         u.cost_micro ? format_micro(*u.cost_micro) : "unknown");
  }
  m.out += "\n";
}

void md_compactions(Md& m, const SessionView& v) {
  if (v.compactions.empty()) return;
  m.out += "### Compactions\n\n";
  for (const CompactionEntry& c : v.compactions) {
    std::int64_t found = 0;
    for (const auto& [k, n] : c.found) found += n;
    m.out += "- ";
    m.code(c.summary_id, false);
    m.out += " ";
    m.inline_text(fmt::format("{} {}, trigger {}, {}: covers {} nodes, summary {} of {} bytes, dropped {} of {} identifiers",
                              c.origin, c.strategy, c.trigger.value_or("-"), c.timestamp.value_or("-"), c.covers_count,
                              c.summary_bytes, c.covered_bytes, c.dropped.size(), found));
    m.out += "\n";
    std::size_t k = 0;
    for (const DroppedItem& d : c.dropped) {
      if (++k > 30) {
        m.out += fmt::format("  - … {} more: `ctxfold compactions`\n", c.dropped.size() - 30);
        break;
      }
      m.out += "  - " + d.kind + " ";
      m.code(d.value);
      m.out += " first in ";
      m.code(d.node, false);
      m.out += "\n";
    }
  }
  m.out += "\n";
}

void md_node(Md& m, const Node& n) {
  m.out += fmt::format("**{}** ", n.is_view() ? n.kind : n.role.empty() ? "event" : n.role);
  m.code(n.id, false);
  if (n.is_view()) m.out += fmt::format(" — stands for earlier turns; `ctxfold expand {}` reads them", n.id);
  m.out += "\n\n";
  if (!n.content.is_array()) return;
  for (const Json& b : n.content) {
    std::string type = json_str(b, "type");
    if (type == "text") m.fenced(json_str(b, "text"), n.id);
    else if (type == "thinking") m.out += fmt::format("*(thinking, {} bytes)*\n", json_str(b, "thinking").size());
    else if (type == "tool_use") {
      m.out += "- tool ";
      m.code(json_str(b, "name"));
      m.out += " ";
      m.code(dump_json(b.value("input", Json::object())).substr(0, 300));
      m.out += "\n";
    } else if (type == "tool_result") {
      const Json& c = b.value("content", Json());
      std::string t = c.is_string() ? c.get<std::string>() : dump_json(c);
      m.out += b.value("is_error", false) == true ? "- result (error): " : "- result: ";
      m.code(t.substr(0, utf8_safe_prefix(t, 300)));
      m.out += fmt::format(" ({} bytes)\n", t.size());
    } else {
      m.out += fmt::format("*({} block)*\n", type.empty() ? "unknown" : type);
    }
  }
  m.out += "\n";
}

void md_conversation(Md& m, const SessionView& v) {
  m.out += "### Conversation (what the model reads)\n\n";
  const auto& items = v.rendered.items;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (static_cast<std::int64_t>(m.out.size()) >= m.req.limits.markdown_bytes) {
      m.stats.stubs += static_cast<std::int64_t>(items.size() - i);
      m.out += fmt::format("*[{} more nodes past the digest's size bound: `ctxfold report --html`]*\n\n", items.size() - i);
      return;
    }
    if (items[i].kind == kind::kEvent) continue;
    // Each node is written apart and kept only when it fits, so the digest stays within its bound.
    Md one{m.req, m.stats, {}};
    md_node(one, items[i]);
    if (static_cast<std::int64_t>(m.out.size() + one.out.size()) > m.req.limits.markdown_bytes) {
      m.stats.stubs += static_cast<std::int64_t>(items.size() - i);
      m.out += fmt::format("*[{} more nodes past the digest's size bound: `ctxfold report --html`]*\n\n", items.size() - i);
      return;
    }
    m.stats.nodes++;
    m.out += one.out;
  }
}
// Counts only: the digest stays short; `ctxfold files` / `ctxfold commands` list the events.
void md_files_commands(Md& m, const SessionView& v) {
  if (v.files.empty() && v.commands.empty()) return;
  std::map<std::string, std::int64_t> actions, results;
  for (const FileEvent& e : v.files) ++actions[e.action];
  for (const CommandEvent& e : v.commands) ++results[e.call.result];
  m.out += fmt::format("### Files and commands\n\n- {} file events:", v.files.size());
  for (const auto& [a, n] : actions) m.out += fmt::format(" {} {}", a, n);
  m.out += fmt::format("\n- {} shell commands:", v.commands.size());
  for (const auto& [r, n] : results) m.out += fmt::format(" {} {}", r, n);
  m.out += "\n\n";
}
}  // namespace
}  // namespace report_detail

std::string markdown_report(Store& store, const ReportRequest& req, ReportStats& stats) {
  using namespace report_detail;
  ArchiveView archive = load_archive(store, req);
  Md m{req, stats, "# ctxfold report\n\n"};
  for (std::size_t i = 0; i < archive.sessions.size(); ++i) {
    SessionView v = load_session(store, req, archive, i);
    for (const std::string& w : v.rendered.warnings) stats.warnings.push_back(v.entry.info.id + ": " + w);
    md_overview(m, v);
    md_usage(m, v);
    md_compactions(m, v);
    md_files_commands(m, v);
    md_conversation(m, v);
    stats.sessions.push_back(v.entry.info.id);
  }
  stats.bytes = static_cast<std::int64_t>(m.out.size());
  return std::move(m.out);
}

}  // namespace ctxfold
