#include <fmt/format.h>

#include "context.hpp"
#include "forensics/tool_events.hpp"
#include "model/identifiers.hpp"
#include "stream.hpp"
#include "tool_scope.hpp"
#include "util/lines.hpp"

namespace ctxfold::cli {

namespace {
struct FilesCli {
  ToolScope scope;
  std::optional<std::string> path;
};

/// Up to `max` lines of s, each prefixed with `mark`, then how many more there were.
std::string marked_lines(std::string_view s, const char* mark, int max) {
  std::string out;
  int n = 0;
  for_each_line(s, [&](std::string_view l) {
    if (n++ < max) out += fmt::format("      {}{}\n", mark, l);
  });
  if (n > max) out += fmt::format("      {} ... {} more lines\n", mark, n - max);
  return out;
}

/// The edit of one event, as -/+ lines (the blame view of --path).
std::string edit_text(const Json& edit) {
  if (!edit.is_object()) return {};
  std::string out;
  auto strings = [&](const Json& e) {
    if (e.contains("old_string") && e["old_string"].is_string()) out += marked_lines(e["old_string"].get<std::string>(), "-", 20);
    if (e.contains("new_string") && e["new_string"].is_string()) out += marked_lines(e["new_string"].get<std::string>(), "+", 20);
    if (e.contains("old_string_found") && e["old_string_found"] == false)
      out += "      ! old string not in the file's known content\n";
  };
  if (edit.contains("edits")) {
    for (const auto& e : edit["edits"]) strings(e);
  } else if (edit.contains("hunks")) {
    for (const auto& h : edit["hunks"]) out += marked_lines(h.get<std::string>(), "", 40);
  } else if (edit.contains("sha256")) {
    out += fmt::format("      {} bytes, {} lines, sha256 {}\n", edit["bytes"].get<std::int64_t>(),
                       edit["lines"].get<std::int64_t>(), edit["sha256"].get<std::string>().substr(0, 16));
  } else if (edit.contains("patch_bytes")) {
    out += fmt::format("      a patch of {} bytes that does not parse\n", edit["patch_bytes"].get<std::int64_t>());
  } else {
    strings(edit);
  }
  return out;
}

std::string event_line(const FileEvent& e) {
  const std::string where = e.path ? (e.relative_path ? *e.relative_path : *e.path) : std::string("(unknown file)");
  std::string line = fmt::format("{:<24} {:<7} {:<8} {:<12} {}  [{}]", e.call.timestamp.value_or("-"), e.action,
                                 e.call.result, e.call.tool, where, e.call.node);
  if (e.call.error) line += "  " + *e.call.error;
  return line + "\n";
}

int run_files(Context& ctx, const FilesCli& o) {
  std::int64_t as_of = kLatest;
  const std::vector<std::string> sessions = o.scope.sessions(ctx, &as_of);
  JsonLines out;
  std::string text;
  std::int64_t total = 0;
  Json actions = Json::object(), results = Json::object();
  for (const std::string& session : sessions) {
    std::vector<FileEvent> events;
    session_tool_events(ctx.db(), session, as_of, &events, nullptr);
    for (const FileEvent& e : events) {
      if (o.path && !path_matches(e, *o.path)) continue;
      actions[e.action] = actions.value(e.action, 0) + 1;
      results[e.call.result] = results.value(e.call.result, 0) + 1;
      if (!o.scope.on_page(total++)) continue;
      if (!ctx.text) {
        out.record("file", file_event_record(e));
        continue;
      }
      text += event_line(e);
      if (o.path) text += edit_text(e.edit);
    }
  }
  if (ctx.text) {
    emit_text(text);
    return 0;
  }
  Json summary = o.scope.summary_fields(sessions, as_of);
  summary["path"] = o.path ? Json(*o.path) : Json(nullptr);
  summary["count"] = out.records();
  summary["total"] = total;
  summary["actions"] = actions;
  summary["results"] = results;
  out.summary("ctxfold.files/1", summary);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_files(CLI::App& sub) {
  auto o = std::make_shared<FilesCli>();
  sub.add_option("--path", o->path,
                 "one file's history, in order: its path as written, normalized, relative to the working "
                 "directory, or a trailing part of it");
  o->scope.add_to(sub, "file events");
  return [o](Context& ctx) { return run_files(ctx, *o); };
}

}  // namespace ctxfold::cli
