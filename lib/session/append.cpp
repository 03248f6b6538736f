#include "session/append.hpp"

#include <fmt/format.h>

#include <set>

#include "util/error.hpp"
#include "util/lines.hpp"

namespace ctxfold {

std::vector<AppendRecord> split_append_records(std::string_view text) {
  std::vector<AppendRecord> out;
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {
    Json arr = Json::parse(text, nullptr, false);
    if (arr.is_discarded()) throw Error(Exit::bad_input, "input.malformed", "stdin: the JSON array does not parse");
    std::int64_t i = 0;
    for (const auto& j : arr) out.push_back(AppendRecord{++i, dump_json(j)});
    return out;
  }
  std::int64_t n = 0;
  for_each_line(text, [&](std::string_view line) {
    ++n;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) out.push_back(AppendRecord{n, std::string(line)});
  });
  return out;
}

AppendOutcome append_records(Store& st, const std::vector<AppendRecord>& records,
                             const std::optional<std::string>& default_session,
                             const std::function<std::string()>& new_id) {
  AppendOutcome out;
  std::set<std::string> touched;
  for (const auto& rec : records) {
    try {
      Json j = parse_json(rec.text);
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
      if (n.id.empty()) n.id = new_id();
      if (n.predecessor) {
        auto p = st.node(*n.predecessor, false);
        if (!p)
          throw Error(Exit::bad_input, "input.predecessor", fmt::format("predecessor '{}' does not exist", *n.predecessor));
        if (p->session != n.session)
          throw Error(Exit::bad_input, "input.predecessor",
                      fmt::format("predecessor '{}' belongs to session '{}'", *n.predecessor, p->session));
      }
      if (n.kind != kind::kMessage && n.kind != kind::kEvent && !n.is_view())
        throw Error(Exit::bad_input, "input.kind", fmt::format("unknown node kind '{}'", n.kind));
      if (n.is_view())
        if (auto problem = st.coverage_problem(n)) throw Error(Exit::bad_input, "input.covers", *problem);
      AppendResult r = st.append(n);
      if (r == AppendResult::conflict)
        throw Error(Exit::bad_input, "input.duplicate", fmt::format("node '{}' exists with a different payload", n.id));
      if (r == AppendResult::duplicate) {
        out.skipped.push_back(n.id);
        continue;
      }
      out.appended.push_back(n.id);
      touched.insert(n.session);
      // HEAD advances only when the node extends HEAD's chain (docs/model.md "Chains, branches
      // and HEAD").
      if (!n.is_view() && ((head && n.predecessor == head) || (!head && !n.predecessor)))
        st.move_head(n.session, n.id, "append");
    } catch (const Error& e) {
      // Only bad input is the record's fault; an environment failure (libnettle cannot be
      // loaded, a disk error) or a bug ends the whole call with its own exit code.
      if (e.exit() != Exit::bad_input) throw;
      out.errors.push_back(AppendError{rec.line, e.what()});
    } catch (const nlohmann::json::exception& e) {
      out.errors.push_back(AppendError{rec.line, fmt::format("invalid JSON: {}", e.what())});
    }
  }
  out.sessions.assign(touched.begin(), touched.end());
  return out;
}

}  // namespace ctxfold
