#include <fmt/format.h>

#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "context.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {

std::string new_node_id() {
  std::random_device rd;
  std::uint64_t a = (static_cast<std::uint64_t>(rd()) << 32) | rd();
  return fmt::format("n-{:016x}", a);
}

// Records from stdin: one JSON array, or JSON Lines. Each with the line it started on.
std::vector<std::pair<std::int64_t, std::string>> read_records() {
  std::vector<std::pair<std::int64_t, std::string>> out;
  std::stringstream all;
  all << std::cin.rdbuf();
  std::string text = all.str();
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    Json arr = Json::parse(text, nullptr, false);
    if (arr.is_discarded()) throw Error(Exit::bad_input, "input.malformed", "stdin: the JSON array does not parse");
    std::int64_t i = 0;
    for (const auto& j : arr) out.emplace_back(++i, dump_json(j));
    return out;
  }
  std::istringstream in(text);
  std::string line;
  std::int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    out.emplace_back(n, line);
  }
  return out;
}

int run_append(Context& ctx) {
  Store& st = ctx.db();
  auto records = read_records();
  Txn txn(st.db());
  Json appended = Json::array(), skipped = Json::array();
  int rc = 0;
  std::optional<std::string> default_session = ctx.session;
  if (!default_session && !st.sessions().empty()) default_session = st.resolve_session(std::nullopt);
  std::set<std::string> sessions_touched;
  for (const auto& [line, raw] : records) {
    try {
      Json j = Json::parse(raw);
      Node n = node_from_json(j);
      if (n.session.empty()) {
        if (!default_session)
          throw Error(Exit::bad_input, "input.session", "no session given and the database has none; pass --session");
        n.session = *default_session;
      }
      if (!st.session(n.session)) {
        SessionInfo s;
        s.id = n.session;
        s.kind = "main";
        s.format = "append";
        st.create_session(s);
      }
      auto head = st.head(n.session);
      if (!j.contains("predecessor")) n.predecessor = head;  // no predecessor given: extend the chain
      if (n.id.empty()) n.id = new_node_id();
      if (n.predecessor) {
        auto p = st.node(*n.predecessor, false);
        if (!p) throw Error(Exit::bad_input, "input.predecessor", fmt::format("predecessor '{}' does not exist", *n.predecessor));
        if (p->session != n.session)
          throw Error(Exit::bad_input, "input.predecessor",
                      fmt::format("predecessor '{}' belongs to session '{}'", *n.predecessor, p->session));
      }
      if (n.kind != kind::kMessage && n.kind != kind::kEvent && !n.is_view())
        throw Error(Exit::bad_input, "input.kind", fmt::format("unknown node kind '{}'", n.kind));
      AppendResult r = st.append(n);
      if (r == AppendResult::conflict)
        throw Error(Exit::bad_input, "input.duplicate", fmt::format("node '{}' exists with a different payload", n.id));
      if (r == AppendResult::duplicate) {
        skipped.push_back(n.id);
        continue;
      }
      appended.push_back(n.id);
      sessions_touched.insert(n.session);
      // HEAD advances only when the node extends HEAD's chain (seed 000 §5).
      if (!n.is_view() && ((head && n.predecessor == head) || (!head && !n.predecessor)))
        st.move_head(n.session, n.id, "append");
    } catch (const Error& e) {
      fmt::print(stderr, "ctxfold: error: stdin:{}: {}\n", line, e.what());
      rc = static_cast<int>(Exit::bad_input);
    } catch (const nlohmann::json::exception& e) {
      fmt::print(stderr, "ctxfold: error: stdin:{}: invalid JSON: {}\n", line, e.what());
      rc = static_cast<int>(Exit::bad_input);
    }
  }
  txn.commit();
  Json heads = Json::object();
  for (const auto& s : sessions_touched) {
    auto h = st.head(s);
    heads[s] = h ? Json(*h) : Json(nullptr);
  }
  emit({{"schema", "ctxfold.append/1"}, {"appended", appended}, {"skipped", skipped}, {"heads", heads}});
  return rc;
}
}  // namespace

std::function<int(Context&)> setup_append(CLI::App&) {
  return [](Context& ctx) { return run_append(ctx); };
}

}  // namespace ctxfold::cli
