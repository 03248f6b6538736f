#include <fmt/format.h>

#include "context.hpp"
#include "session/snapshot.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
int run_sessions(Context& ctx, std::int64_t as_of) {
  Store& st = ctx.db();
  if (as_of != kLatest && (as_of < 0 || as_of > st.max_seq()))
    throw Error(Exit::bad_input, "as_of.out_of_range",
                fmt::format("--as-of {} is outside the append boundary 0..{}", as_of, st.max_seq()));
  Json list = Json::array();
  std::string text;
  for (const SessionInfo& s : st.sessions()) {
    if (as_of != kLatest) {
      auto span = session_span(st, s.id);
      if (!span || span->first_seq > as_of) continue;  // not begun at that boundary
    }
    auto head = st.head(s.id, as_of);
    std::int64_t count = st.node_count(s.id, as_of);
    list.push_back({{"id", s.id},
                    {"kind", s.kind},
                    {"parent_session", s.parent_session ? Json(*s.parent_session) : Json(nullptr)},
                    {"parent_node", s.parent_node ? Json(*s.parent_node) : Json(nullptr)},
                    {"source", s.source ? Json(*s.source) : Json(nullptr)},
                    {"format", s.format ? Json(*s.format) : Json(nullptr)},
                    {"head", head ? Json(*head) : Json(nullptr)},
                    {"node_count", count},
                    {"created_seq", s.created_seq}});
    text += fmt::format("{:<48} {:<9} {:>7} nodes  {}\n", s.id, s.kind, count, s.format.value_or(""));
  }
  if (ctx.text)
    emit_text(text);
  else
    emit({{"schema", "ctxfold.sessions/1"}, {"sessions", list}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_sessions(CLI::App& sub) {
  auto as_of = std::make_shared<std::int64_t>(kLatest);
  sub.add_option("--as-of", *as_of, "list the sessions as they were at this append boundary");
  return [as_of](Context& ctx) { return run_sessions(ctx, *as_of); };
}

}  // namespace ctxfold::cli
