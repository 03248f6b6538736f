#include "tool_scope.hpp"

#include "session/snapshot.hpp"

namespace ctxfold::cli {

void ToolScope::add_to(CLI::App& sub, const std::string& what) {
  sub.add_flag("--all-sessions", all_sessions, "read every session of the database");
  as_of.add_to(sub, "list the " + what + " as the database held them");
  sub.add_option("--offset", offset, "skip the first N " + what)->check(CLI::NonNegativeNumber);
  sub.add_option("--limit", limit, "print at most N " + what + " (counts stay totals)")->check(CLI::NonNegativeNumber);
}

std::vector<std::string> ToolScope::sessions(Context& ctx, std::int64_t* as_of_out) const {
  std::vector<std::string> out;
  if (all_sessions) {
    *as_of_out = as_of.for_database(ctx);  // as_of.out_of_range
    for (const SessionInfo& s : ctx.db().sessions())
      if (*as_of_out == kLatest || s.created_seq <= *as_of_out) out.push_back(s.id);
    return out;
  }
  std::string session = ctx.resolve_session();
  *as_of_out = as_of.for_session(ctx, session);
  out.push_back(session);
  return out;
}

Json ToolScope::summary_fields(const std::vector<std::string>& sessions, std::int64_t as_of_seq) const {
  return Json{{"session", all_sessions || sessions.empty() ? Json(nullptr) : Json(sessions.front())},
              {"sessions", sessions.size()},
              {"as_of", as_of_seq == kLatest ? Json(nullptr) : Json(as_of_seq)},
              {"offset", offset},
              {"limit", limit < 0 ? Json(nullptr) : Json(limit)}};
}

}  // namespace ctxfold::cli
