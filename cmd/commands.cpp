#include <fmt/format.h>

#include "context.hpp"
#include "forensics/tool_events.hpp"
#include "stream.hpp"
#include "tool_scope.hpp"

namespace ctxfold::cli {

namespace {
struct CommandsCli {
  ToolScope scope;
};

std::string command_line(const CommandEvent& e) {
  const std::string exit = e.exit_code ? fmt::format("exit={}", *e.exit_code) : std::string("exit=?");
  const std::string took = e.duration_ms ? fmt::format("{:.0f}ms", *e.duration_ms) : std::string("-");
  const std::string bytes = e.output_bytes ? fmt::format("{}B", *e.output_bytes) : std::string("-");
  return fmt::format("{:<24} {:<8} {:<8} {:>8} {:>8}  $ {}  [{}]\n", e.call.timestamp.value_or("-"), e.call.result,
                     exit, took, bytes, e.command.value_or("(unreadable)"), e.call.node);
}

int run_commands(Context& ctx, const CommandsCli& o) {
  std::int64_t as_of = kLatest;
  const std::vector<std::string> sessions = o.scope.sessions(ctx, &as_of);
  JsonLines out;
  std::string text;
  std::int64_t total = 0, with_exit = 0, with_duration = 0;
  Json results = Json::object();
  for (const std::string& session : sessions) {
    std::vector<CommandEvent> events;
    session_tool_events(ctx.db(), session, as_of, nullptr, &events);
    for (const CommandEvent& e : events) {
      results[e.call.result] = results.value(e.call.result, 0) + 1;
      with_exit += e.exit_code.has_value();
      with_duration += e.duration_ms.has_value();
      if (!o.scope.on_page(total++)) continue;
      if (ctx.text) text += command_line(e);
      else out.record("command", command_event_record(e));
    }
  }
  if (ctx.text) {
    emit_text(text);
    return 0;
  }
  Json summary = o.scope.summary_fields(sessions, as_of);
  summary["count"] = out.records();
  summary["total"] = total;
  summary["results"] = results;
  summary["with_exit_code"] = with_exit;
  summary["with_duration"] = with_duration;
  out.summary("ctxfold.commands/1", summary);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_commands(CLI::App& sub) {
  auto o = std::make_shared<CommandsCli>();
  o->scope.add_to(sub, "commands");
  return [o](Context& ctx) { return run_commands(ctx, *o); };
}

}  // namespace ctxfold::cli
