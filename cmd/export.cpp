#include <fmt/format.h>

#include "context.hpp"
#include "session/export.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ExportOptions {
  std::string format = "ctxfold";
  bool all_sessions = false;
};

int run_export(Context& ctx, const ExportOptions& o) {
  Store& st = ctx.db();
  if (o.format == "openai" || o.format == "anthropic") {
    if (o.all_sessions)
      throw Error(Exit::usage, "usage.export", "--all-sessions needs --format ctxfold (one messages document per session)");
    emit(export_messages(st, ctx.resolve_session(), parse_render_format(o.format)));
    return 0;
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
  for (const std::string& id : ids) {
    ExportCounts c = export_ctxfold(st, id, [](const Json& j) { emit(j); });
    sessions.push_back({{"id", c.session}, {"nodes", c.nodes}, {"views", c.views}});
    nodes += c.nodes;
    views += c.views;
  }
  emit({{"type", "summary"}, {"schema", kExportSchema}, {"sessions", sessions}, {"nodes", nodes}, {"views", views}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_export(CLI::App& sub) {
  auto o = std::make_shared<ExportOptions>();
  sub.add_option("--format", o->format, "ctxfold | openai | anthropic")->default_val("ctxfold");
  sub.add_flag("--all-sessions", o->all_sessions, "every session of the database (ctxfold format)");
  return [o](Context& ctx) { return run_export(ctx, *o); };
}

}  // namespace ctxfold::cli
