#include <fmt/format.h>

#include "context.hpp"

namespace ctxfold::cli {

namespace {
int run_sessions(Context& ctx) {
  Store& st = ctx.db();
  Json list = Json::array();
  std::string text;
  for (const SessionInfo& s : st.sessions()) {
    auto head = st.head(s.id);
    std::int64_t count = st.node_count(s.id);
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

std::function<int(Context&)> setup_sessions(CLI::App&) {
  return [](Context& ctx) { return run_sessions(ctx); };
}

}  // namespace ctxfold::cli
