// The HTML report's page and its per-session sections (docs/report.md). Each section is one
// function in kSections; a new section is one more function and one more row.
#include <fmt/format.h>

#include <functional>

#include "report/escape.hpp"
#include "report/page.hpp"
#include "report/report.hpp"

namespace ctxfold {

namespace report_detail {
namespace {

void fact(Page& page, const char* name, const std::string& value, bool transcript = true) {
  page.raw("<tr><th>");
  page.label(name);
  page.raw("</th><td>");
  transcript ? page.text(value) : page.label(value);
  page.raw("</td></tr>\n");
}

void session_link(Page& page, const std::string& id, const std::string& text) {
  page.raw("<a href=\"#");
  page.label(session_anchor(id));
  page.raw("\">");
  page.text(text);
  page.raw("</a>");
}

void write_overview(Page& page, const SessionView& v) {
  const SessionIndexEntry& e = v.entry;
  page.raw("<table class=\"facts\">\n");
  fact(page, "session", e.info.id, false);
  fact(page, "agent", e.agent);
  fact(page, "kind", e.info.kind, false);
  if (e.info.parent_session) {
    page.raw("<tr><th>parent</th><td>");
    session_link(page, *e.info.parent_session, *e.info.parent_session);
    page.raw("</td></tr>\n");
  }
  if (e.project) fact(page, "project", *e.project);
  std::string models;
  for (const auto& m : e.models) models += (models.empty() ? "" : ", ") + m;
  if (!models.empty()) fact(page, "models", models);
  if (e.first_timestamp) fact(page, "time", *e.first_timestamp + " … " + e.last_timestamp.value_or("?"));
  fact(page, "nodes", std::to_string(e.node_count), false);
  fact(page, "compactions", fmt::format("{} by the agent, {} by ctxfold", e.compactions_imported, e.compactions_ctxfold), false);
  const Rendered& r = v.rendered;
  fact(page, "HEAD", r.head, false);
  fact(page, "rendered", fmt::format("strategy {}: {} nodes read, {} tokens ({})", r.strategy, r.reads.size(),
                                     r.tokens.value, r.tokens.kind), false);
  page.raw("</table>\n");
  for (const std::string& w : r.warnings) {
    page.raw("<p class=\"warning\">");
    page.text(w);
    page.raw("</p>\n");
  }
}

void write_usage(Page& page, const SessionView& v) {
  if (v.usage.empty()) return page.raw("<p class=\"note\">no usage recorded by the provider</p>\n");
  page.raw("<table class=\"usage\"><thead><tr><th>model</th><th>responses</th><th>input</th><th>cache write</th>"
           "<th>cache read</th><th>output</th><th>total</th><th>cost (USD, estimated)</th></tr></thead><tbody>\n");
  std::int64_t total_cost = 0;
  bool unknown = false;
  for (const UsageRow& u : v.usage) {
    const UsageTokens& t = u.tokens;
    page.raw("<tr><td>");
    page.text(u.model.empty() ? "(no model recorded)" : u.model);
    page.raw(fmt::format("</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         u.messages, t.input, t.cache_write_5m + t.cache_write_1h, t.cache_read, t.output, t.total(),
                         u.cost_micro ? format_micro(*u.cost_micro) : "unknown"));
    if (u.cost_micro) total_cost += *u.cost_micro;
    else unknown = true;
  }
  page.raw("</tbody></table>\n<p>");
  page.label(unknown ? fmt::format("cost: {} USD for the priced models; a model without a price leaves the total unknown",
                                   format_micro(total_cost))
                     : fmt::format("cost: {} USD (estimated from share/prices.json; tokens measured by the provider)",
                                   format_micro(total_cost)));
  page.raw("</p>\n");
}

void write_compactions(Page& page, const SessionView& v) {
  if (v.compactions.empty()) return page.raw("<p class=\"note\">no compaction</p>\n");
  page.raw("<table class=\"compactions\"><thead><tr><th>summary</th><th>time</th><th>origin</th><th>trigger</th>"
           "<th>covers</th><th>summary bytes</th><th>covered bytes</th><th>dropped identifiers</th></tr></thead><tbody>\n");
  for (const CompactionEntry& c : v.compactions) {
    std::int64_t found = 0;
    for (const auto& [k, n] : c.found) found += n;
    page.raw("<tr><td><a href=\"#");
    page.label(node_anchor(c.summary_id));
    page.raw("\">");
    page.label(visible_text(c.summary_id));
    page.raw("</a></td><td>");
    page.text(c.timestamp.value_or("-"));
    page.raw("</td><td>");
    page.text(c.origin + " " + c.strategy);
    page.raw("</td><td>");
    page.text(c.trigger.value_or("-"));
    page.raw(fmt::format("</td><td>{}</td><td>{}</td><td>{}</td><td>{} of {}</td></tr>\n", c.covers_count,
                         c.summary_bytes, c.covered_bytes, c.dropped.size(), found));
  }
  page.raw("</tbody></table>\n");
}

void write_subagents(Page& page, const SessionView& v) {
  if (v.children.empty()) return page.raw("<p class=\"note\">none</p>\n");
  page.raw("<ul>\n");
  for (const SessionIndexEntry* e : v.children) {
    page.raw("<li>");
    session_link(page, e->info.id, e->title.value_or(e->info.id));
    page.raw(" <span class=\"note\">");
    page.label(fmt::format("{} · {} nodes", e->info.kind, e->node_count));
    if (e->info.parent_node) {
      page.raw(" · launched by </span><a href=\"#");
      page.label(node_anchor(*e->info.parent_node));
      page.raw("\">");
      page.label(visible_text(*e->info.parent_node));
      page.raw("</a></li>\n");
    } else {
      page.raw("</span></li>\n");
    }
  }
  page.raw("</ul>\n");
}

// At most this many rows per table of the files-and-commands section; `ctxfold files` and
// `ctxfold commands` list every one.
constexpr std::size_t kMaxToolRows = 500;

// One row of a tool table: the transcript's value (in <code> for a command), a label, the call
// linked to its node, the call's result.
void tool_row(Page& page, const std::string& value, bool code, const std::string& label, const ToolCallSite& c) {
  page.raw(code ? "<tr><td><code>" : "<tr><td>");
  page.text(value);
  page.raw(code ? "</code></td><td>" : "</td><td>");
  page.label(label);
  page.raw("</td><td><a href=\"#");
  page.label(node_anchor(c.node));
  page.raw("\">");
  page.text(c.tool);
  page.raw("</a></td><td>");
  page.label(c.result);
  page.raw("</td></tr>\n");
}

// A table of at most kMaxToolRows events (row(i) writes the i-th), then how many it left out.
void tool_table(Page& page, const char* cls, const char* head, std::size_t n, const std::function<void(std::size_t)>& row,
                const std::string& more) {
  if (n == 0) return;
  page.raw(fmt::format("<table class=\"{}\"><thead><tr>{}<th>call</th><th>result</th></tr></thead><tbody>\n", cls, head));
  for (std::size_t i = 0; i < n && i < kMaxToolRows; ++i) row(i);
  page.raw("</tbody></table>\n");
  if (n > kMaxToolRows) page.label(fmt::format("{} more: {}", n - kMaxToolRows, more));
}

void write_files_commands(Page& page, const SessionView& v) {
  if (v.files.empty() && v.commands.empty())
    return page.raw("<p class=\"note\">no file tool call and no shell command</p>\n");
  const std::string& s = v.entry.info.id;
  tool_table(page, "files", "<th>file</th><th>action</th>", v.files.size(), [&](std::size_t i) {
    const FileEvent& e = v.files[i];
    tool_row(page, e.path.value_or("(unknown)"), false, e.action, e.call);
  }, "ctxfold files --session " + s);
  tool_table(page, "commands", "<th>command</th><th>exit</th>", v.commands.size(), [&](std::size_t i) {
    const CommandEvent& e = v.commands[i];
    tool_row(page, e.command.value_or("(unreadable)"), true, e.exit_code ? std::to_string(*e.exit_code) : "unknown",
             e.call);
  }, "ctxfold commands --session " + s);
}

void write_conversation(Page& page, const SessionView& v) {
  page.raw("<p class=\"note\">what the model reads from HEAD, in request order; a summary is a capsule whose "
           "covered nodes open below it</p>\n");
  write_nodes(page, v.rendered.items, Budget::read, 0);
}

/// The sections of a session, in page order: anchor suffix, heading, writer.
struct SectionDef {
  const char* id;
  const char* title;
  void (*write)(Page&, const SessionView&);
};
constexpr SectionDef kSections[] = {
    {"overview", "Overview", write_overview},
    {"usage", "Usage and cost", write_usage},
    {"compactions", "Compactions", write_compactions},
    {"subagents", "Sub-agents", write_subagents},
    {"files", "Files and commands", write_files_commands},
    {"conversation", "Conversation", write_conversation},
};

void write_session(Page& page, const SessionView& v) {
  const std::string a = session_anchor(v.entry.info.id);
  page.raw("<section class=\"session\"");
  page.anchor(a);
  page.raw(">\n<h2>");
  page.text(v.entry.title.value_or(v.entry.info.id));
  page.raw("</h2>\n<nav class=\"parts\">");
  for (const SectionDef& s : kSections) page.raw(fmt::format("<a href=\"#{}--{}\">{}</a> ", a, s.id, s.title));
  page.raw("</nav>\n");
  for (const SectionDef& s : kSections) {
    page.raw(fmt::format("<section class=\"part part-{}\"", s.id));
    page.anchor(a + "--" + s.id);
    page.raw(fmt::format("><h3>{}</h3>\n", s.title));
    s.write(page, v);
    page.raw("</section>\n");
  }
  page.raw("</section>\n");
}

void write_head(Page& page, const ArchiveView& a) {
  page.raw("<!DOCTYPE html>\n<html lang=\"en\"><head>\n<meta charset=\"utf-8\">\n");
  page.raw("<meta http-equiv=\"Content-Security-Policy\" content=\"");
  page.raw(page_csp());  // the page's own text: no '"', '<' or '&' in it
  page.raw("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ctxfold report");
  if (a.sessions.size() == 1) {
    page.raw(": ");
    page.text(a.sessions[0].title.value_or(a.sessions[0].info.id));
  }
  page.raw("</title>\n<style>");
  page.raw(page_style());
  page.raw("</style>\n</head>\n<body>\n<header>\n<h1>ctxfold report</h1>\n"
           "<div id=\"search\" hidden><input id=\"q\" type=\"search\" placeholder=\"search the report\" "
           "aria-label=\"search the report\" autocomplete=\"off\"> <span id=\"hits\"></span></div>\n"
           "<noscript><p class=\"note\">search needs JavaScript; everything else reads without it</p></noscript>\n"
           "</header>\n");
}

void write_index(Page& page, const ArchiveView& a) {
  page.raw("<nav class=\"sessions\"><h2>Sessions</h2>\n<ul>\n");
  for (const SessionIndexEntry& e : a.sessions) {
    page.raw(fmt::format("<li class=\"depth-{}\">", std::min(e.depth, 6)));
    session_link(page, e.info.id, e.title.value_or(e.info.id));
    page.raw(" <span class=\"note\">");
    page.label(fmt::format("{} · {} · {} nodes", e.info.id, e.agent, e.node_count));
    page.raw("</span></li>\n");
  }
  page.raw("</ul>\n</nav>\n");
}

}  // namespace
}  // namespace report_detail

std::string html_report(Store& store, const ReportRequest& req, ReportStats& stats) {
  using namespace report_detail;
  ArchiveView archive = load_archive(store, req);
  Page page(store, req, stats);
  write_head(page, archive);
  page.raw("<main>\n");
  write_index(page, archive);
  for (std::size_t i = 0; i < archive.sessions.size(); ++i) {
    SessionView v = load_session(store, req, archive, i);
    for (const std::string& w : v.rendered.warnings) stats.warnings.push_back(v.entry.info.id + ": " + w);
    page.session = &v;
    write_session(page, v);
    page.session = nullptr;
    stats.sessions.push_back(v.entry.info.id);
  }
  page.raw("</main>\n<script>");
  page.raw(page_script());
  page.raw("</script>\n</body></html>\n");
  stats.bytes = static_cast<std::int64_t>(page.out.size());
  return std::move(page.out);
}

}  // namespace ctxfold
