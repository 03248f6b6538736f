#include <fmt/format.h>

#include <iostream>
#include <random>
#include <sstream>

#include "context.hpp"
#include "recall/text_packs.hpp"
#include "session/append.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {

/// Unpacked nodes an append leaves for grep to read from their JSON before it packs them.
constexpr std::int64_t kAppendPackTail = 2048;

std::string new_node_id() {
  std::random_device rd;
  std::uint64_t a = (static_cast<std::uint64_t>(rd()) << 32) | rd();
  return fmt::format("n-{:016x}", a);
}

int run_append(Context& ctx) {
  Store& st = ctx.db();
  std::stringstream all;
  all << std::cin.rdbuf();
  auto records = split_append_records(all.str());
  Txn txn(st.db());
  std::optional<std::string> default_session = ctx.session;
  if (!default_session && !st.sessions().empty()) default_session = st.resolve_session(std::nullopt);
  AppendOutcome out = append_records(st, records, default_session, new_node_id);
  txn.commit();
  // Pack the searchable text for grep once the unpacked tail is long enough; a shorter tail is
  // scanned from the nodes themselves.
  update_text_packs(st, kAppendPackTail);
  for (const auto& e : out.errors) fmt::print(stderr, "ctxfold: error: stdin:{}: {}\n", e.line, e.message);
  Json heads = Json::object();
  for (const auto& s : out.sessions) {
    auto h = st.head(s);
    heads[s] = h ? Json(*h) : Json(nullptr);
  }
  emit({{"schema", "ctxfold.append/1"}, {"appended", out.appended}, {"skipped", out.skipped}, {"heads", heads}});
  return out.errors.empty() ? 0 : static_cast<int>(Exit::bad_input);
}
}  // namespace

std::function<int(Context&)> setup_append(CLI::App&) {
  return [](Context& ctx) { return run_append(ctx); };
}

}  // namespace ctxfold::cli
