#include "session/snapshot.hpp"

#include <fmt/format.h>

#include <cctype>

#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {

std::optional<SessionSpan> session_span(Store& store, const std::string& session) {
  auto& st = store.db().cached("SELECT min(seq), max(seq) FROM nodes WHERE session=?1");
  st.bind(1, session);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return SessionSpan{st.int64(0), st.int64(1)};
}

std::int64_t resolve_as_of(Store& store, const std::optional<std::string>& session, std::int64_t as_of) {
  const std::int64_t boundary = store.max_seq();
  if (as_of == kLatest) return boundary;
  std::optional<SessionSpan> span;
  if (session) span = session_span(store, *session);
  const bool has_range = !session || span;
  const std::int64_t first = session ? (span ? span->first_seq : 0) : 0;
  if (has_range && as_of >= first && as_of <= boundary) return as_of;
  throw Error(Exit::bad_input, "as_of.out_of_range",
              fmt::format("--as-of {} is outside the append boundaries of {}: {}", as_of,
                          session ? fmt::format("session '{}'", *session) : std::string("the database"),
                          has_range ? fmt::format("{}..{}", first, boundary) : std::string("none (it has no node)")),
              "take the boundary from 'ctxfold snapshot' (boundary_seq)");
}

Snapshot take_snapshot(Store& store, const std::string& session, std::int64_t as_of) {
  Snapshot s;
  s.session = session;
  s.boundary_seq = resolve_as_of(store, session, as_of);
  s.head = store.head(session, s.boundary_seq);
  if (auto a = store.active_summary(session, s.boundary_seq)) s.active_summaries.push_back(a->id);
  {
    auto st = store.db().prepare("SELECT count(*) FROM head_moves WHERE session=?1 AND boundary_seq<=?2");
    st.bind(1, session).bind(2, s.boundary_seq);
    st.step();
    s.head_moves = st.int64(0);
  }
  Sha256 h;
  h.update("ctxfold.snapshot/1\n");
  h.update(session);
  h.update("\nhead\t");
  h.update(s.head.value_or(""));
  h.update("\nactive");
  for (const auto& a : s.active_summaries) {
    h.update("\t");
    h.update(a);
  }
  h.update("\n");
  auto st = store.db().prepare(
      "SELECT id, digest, kind FROM nodes WHERE session=?1 AND seq<=?2 ORDER BY seq");
  st.bind(1, session).bind(2, s.boundary_seq);
  while (st.step()) {
    std::string id = st.text(0), digest = st.text(1), k = st.text(2);
    h.update(id);
    h.update("\t");
    h.update(digest);
    h.update("\n");
    ++s.node_count;
    if (k == kind::kSummary || k == kind::kArchive || k == kind::kNotes) ++s.view_count;
  }
  s.digest = h.hex();
  return s;
}

Json snapshot_to_json(const Snapshot& s) {
  return Json{{"schema", "ctxfold.snapshot/1"},
              {"session", s.session},
              {"boundary_seq", s.boundary_seq},
              {"head", s.head ? Json(*s.head) : Json(nullptr)},
              {"active_summaries", s.active_summaries},
              {"node_count", s.node_count},
              {"view_count", s.view_count},
              {"head_moves", s.head_moves},
              {"digest", s.digest}};
}

SnapshotRef snapshot_ref_from_json(const Json& j) {
  if (!j.is_object() || !j.contains("boundary_seq") || !j["boundary_seq"].is_number_integer())
    throw Error(Exit::bad_input, "input.snapshot", "expected a snapshot JSON object with an integer \"boundary_seq\"",
                "pipe the output of 'ctxfold snapshot'");
  SnapshotRef r;
  r.boundary_seq = j["boundary_seq"].get<std::int64_t>();
  if (j.contains("session") && j["session"].is_string()) r.session = j["session"].get<std::string>();
  if (j.contains("head") && j["head"].is_string()) r.head = j["head"].get<std::string>();
  return r;
}

SnapshotRef parse_as_of_arg(const std::string& arg, const std::string& stdin_text) {
  if (arg == "-") {
    Json j;
    try {
      j = parse_json(stdin_text);
    } catch (const nlohmann::json::exception&) {
      throw Error(Exit::bad_input, "input.snapshot", "stdin is not a snapshot JSON document",
                  "pipe the output of 'ctxfold snapshot'");
    }
    return snapshot_ref_from_json(j);
  }
  bool digits = !arg.empty() && arg.size() <= 18;
  for (char c : arg) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits)
    throw Error(Exit::usage, "usage.as_of", fmt::format("--as-of takes a seq or '-', not '{}'", arg),
                "use a snapshot's boundary_seq, or pipe a snapshot with --as-of -");
  SnapshotRef r;
  r.boundary_seq = std::stoll(arg);
  return r;
}

}  // namespace ctxfold
