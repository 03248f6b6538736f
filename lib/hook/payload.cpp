#include "hook/payload.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {
namespace {

constexpr std::size_t kMaxPayload = 16u << 20;

/// The 1-based line and column of byte offset `at` (0-based) in text.
std::pair<std::size_t, std::size_t> line_col(std::string_view text, std::size_t at) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < std::min(at, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

std::string required(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
    throw Error(Exit::bad_input, "hook.field",
                fmt::format("hook payload: \"{}\" is missing or not a non-empty string", key),
                "a hook command reads the JSON object the agent writes on stdin");
  return it->get<std::string>();
}

}  // namespace

const std::vector<std::string>& hook_events() {
  static const std::vector<std::string> events = {"PreCompact", "PostCompact", "SessionStart",
                                                  "SessionEnd", "Stop",        "SubagentStop"};
  return events;
}

HookPayload parse_hook_payload(std::string_view text) {
  if (text.size() > kMaxPayload)
    throw Error(Exit::bad_input, "hook.payload", fmt::format("hook payload: {} bytes, more than 16 MiB", text.size()));
  Json j;
  try {
    j = parse_json(text);
  } catch (const nlohmann::json::parse_error& e) {
    auto [line, col] = line_col(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    if (auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
    throw Error(Exit::bad_input, "hook.payload", fmt::format("stdin:{}:{}: hook payload is not JSON: {}", line, col, what));
  }
  if (!j.is_object()) throw Error(Exit::bad_input, "hook.payload", "stdin:1:1: hook payload is not a JSON object");
  HookPayload p;
  p.event = required(j, "hook_event_name");
  const auto& known = hook_events();
  if (std::find(known.begin(), known.end(), p.event) == known.end())
    throw Error(Exit::bad_input, "hook.event", fmt::format("hook payload: unknown event '{}'", p.event),
                fmt::format("ctxfold acts on {}", fmt::join(known, ", ")));
  p.session_id = required(j, "session_id");
  p.transcript_path = required(j, "transcript_path");
  p.cwd = json_str(j, "cwd");
  if (p.event == "SessionStart") p.source = json_str(j, "source");
  if (p.event == "PreCompact" || p.event == "PostCompact") p.source = json_str(j, "trigger");
  if (p.event == "SessionEnd") p.source = json_str(j, "reason");
  return p;
}

bool transcript_optional(const HookPayload& p) {
  return (p.event == "SessionStart" && (p.source == "startup" || p.source == "clear" || p.source.empty())) ||
         p.event == "SessionEnd";
}

}  // namespace ctxfold
