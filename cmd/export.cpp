#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "context.hpp"
#include "render_warnings.hpp"
#include "forensics/redact.hpp"
#include "model/node.hpp"
#include "session/export.hpp"
#include "stream.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ExportOptions {
  std::string format = "ctxfold";
  bool all_sessions = false;
  bool redact = false;
  std::string report;
};

/// --redact: the report (never a secret) to --report FILE and a one-line count on stderr.
void finish_redaction(const Redactor& r, const ExportOptions& o) {
  Json rep = {{"schema", "ctxfold.redaction/1"}, {"replacements", Json::array()}};
  Json counts = Json::object();
  for (const auto& x : r.report()) {
    rep["replacements"].push_back({{"kind", x.kind}, {"placeholder", x.placeholder}, {"length", x.length}, {"count", x.count}});
    counts[x.kind] = counts.value(x.kind, 0) + x.count;
  }
  rep["counts"] = counts;
  if (!o.report.empty()) {
    std::ofstream f(o.report, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(Exit::environment, "io.write", fmt::format("cannot write the report '{}'", o.report));
    f << dump_json(rep) << "\n";
  }
  std::string line;
  for (auto it = counts.begin(); it != counts.end(); ++it)
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", it.value().get<std::int64_t>(), it.key());
  std::fprintf(stderr, "ctxfold: redacted %s\n", line.empty() ? "nothing" : line.c_str());
}

int run_export(Context& ctx, const ExportOptions& o) {
  Store& st = ctx.db();
  if (o.format == "openai" || o.format == "anthropic") {
    if (o.all_sessions)
      throw Error(Exit::usage, "usage.export", "--all-sessions needs --format ctxfold (one messages document per session)");
    const std::string session = ctx.resolve_session();
    std::vector<std::string> warnings;
    Json doc = export_messages(st, session, parse_render_format(o.format), &warnings);
    Redactor redactor;
    if (o.redact) redactor.redact_json(doc);
    emit(doc);
    if (o.redact) finish_redaction(redactor, o);
    return print_render_warnings(warnings, session);
  }
  if (o.format != "ctxfold")
    throw Error(Exit::usage, "usage.export", fmt::format("unknown export format '{}' (ctxfold | openai | anthropic)", o.format));
  std::vector<std::string> ids;
  if (o.all_sessions)
    for (const SessionInfo& s : st.sessions()) ids.push_back(s.id);
  else
    ids.push_back(ctx.resolve_session());
  Json sessions = Json::array();
  std::int64_t nodes = 0, views = 0;
  Redactor redactor;
  JsonLines out;
  for (const std::string& id : ids) {
    ExportCounts c = export_ctxfold(st, id, [&](const Json& j) {
      // {"schema":"ctxfold.session/1",...} declares a session, every other record is a node.
      const char* type = json_str(j, "schema") == kSessionSchema ? "session" : "node";
      if (!o.redact) return out.record(type, j);
      Json r = j;
      redactor.redact_json(r);
      out.record(type, r);
    });
    sessions.push_back({{"id", c.session}, {"nodes", c.nodes}, {"views", c.views}});
    nodes += c.nodes;
    views += c.views;
  }
  out.summary(kExportSchema, {{"sessions", sessions}, {"nodes", nodes}, {"views", views}});
  if (o.redact) finish_redaction(redactor, o);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_export(CLI::App& sub) {
  auto o = std::make_shared<ExportOptions>();
  sub.add_option("--format", o->format, "ctxfold | openai | anthropic")->default_val("ctxfold");
  sub.add_flag("--all-sessions", o->all_sessions, "every session of the database (ctxfold format)");
  sub.add_flag("--redact", o->redact,
               "replace API keys, tokens, private keys, e-mail addresses and home-folder user names with stable "
               "placeholders; a count on stderr");
  sub.add_option("--report", o->report, "with --redact: write the replacement report (JSON, no secrets) to this file");
  return [o](Context& ctx) { return run_export(ctx, *o); };
}

}  // namespace ctxfold::cli
