// sync: copies the ledger rows one database lacks from another, SQLite or PostgreSQL on either
// side (docs/backends.md "sync"). Rows keep their bytes and ids; only seqs are the destination's.
#include "store/sync.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {

namespace {

/// The rows of one table of one session that identify it for the watermark check: what both
/// sides must agree on, in the table's own order.
using Keys = std::vector<std::string>;

Keys node_keys(Store& s, const std::string& session, std::vector<std::int64_t>* seqs) {
  Keys out;
  auto st = s.db().prepare("SELECT seq, id, digest FROM nodes WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  while (st.step()) {
    if (seqs) seqs->push_back(st.int64(0));
    out.push_back(st.text(1) + '\0' + st.text(2));
  }
  return out;
}

struct MoveRow {
  std::int64_t seq = 0, boundary = 0;
  HeadMove move;
};
Keys head_move_keys(Store& s, const std::string& session, std::vector<MoveRow>* rows) {
  Keys out;
  auto st = s.db().prepare(
      "SELECT seq, node_id, previous, cause, boundary_seq FROM head_moves WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  while (st.step()) {
    HeadMove m;
    m.session = session;
    m.node_id = st.text(1);
    m.previous = st.opt_text(2);
    m.cause = st.text(3);
    out.push_back(m.node_id + '\0' + m.previous.value_or("") + '\0' + m.cause);
    if (rows) rows->push_back(MoveRow{st.int64(0), st.int64(4), std::move(m)});
  }
  return out;
}

struct EventRow {
  std::int64_t seq = 0, boundary = 0;
  std::string type;
  std::optional<std::string> ref;
  std::string payload;  // as stored
};
// Events are compared by type and ref: a payload may hold a seq, translated on the way.
Keys event_keys(Store& s, const std::string& session, std::vector<EventRow>* rows) {
  Keys out;
  auto st = s.db().prepare("SELECT seq, type, ref, payload, boundary_seq FROM events WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  while (st.step()) {
    EventRow e{st.int64(0), st.int64(4), st.text(1), st.opt_text(2), {}};
    out.push_back(e.type + '\0' + e.ref.value_or(""));
    if (rows) {
      e.payload = st.text(3);
      rows->push_back(std::move(e));
    }
  }
  return out;
}

struct RecordRow {
  std::int64_t seq = 0;
  std::string source, type, digest;
  std::int64_t line = 0;
};
Keys record_keys(Store& s, const std::string& session, std::vector<RecordRow>* rows) {
  Keys out;
  auto st = s.db().prepare("SELECT seq, source, line, type, digest FROM source_records WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  while (st.step()) {
    RecordRow r{st.int64(0), st.text(1), st.text(3), st.text(4), st.int64(2)};
    out.push_back(std::to_string(r.line) + '\0' + r.digest);
    if (rows) rows->push_back(std::move(r));
  }
  return out;
}

/// How the destination's rows of one table stand against the source's.
enum class Standing { prefix, ahead, diverged };
Standing compare(const Keys& src, const Keys& dst, std::size_t* first_difference) {
  const std::size_t n = std::min(src.size(), dst.size());
  std::size_t i = 0;
  while (i < n && src[i] == dst[i]) ++i;
  *first_difference = i;
  if (i == dst.size()) return Standing::prefix;
  if (i == src.size()) return Standing::ahead;
  return Standing::diverged;
}

/// The fields of a session row both sides must agree on (created_seq is each database's own;
/// a fork's source_boundary_seq is a seq, translated).
std::string session_identity(const SessionInfo& s) {
  Json meta = s.metadata;
  if (meta.is_object()) meta.erase("source_boundary_seq");
  return dump_json(Json{{"kind", s.kind},
                        {"parent_session", s.parent_session ? Json(*s.parent_session) : Json(nullptr)},
                        {"parent_node", s.parent_node ? Json(*s.parent_node) : Json(nullptr)},
                        {"source", s.source ? Json(*s.source) : Json(nullptr)},
                        {"format", s.format ? Json(*s.format) : Json(nullptr)},
                        {"metadata", meta}});
}

/// One row to write, in the order the source wrote it: `pos` is a node's seq, or the boundary
/// a session, HEAD move or event was written at; rank orders rows of one boundary (the node of
/// that seq, then a session created at it, then HEAD moves, then events); own is the row's seq in
/// its table. Source records carry no boundary and come last. `created` marks a session created
/// at pos and its own HEAD moves and events written at pos (a fork's session/strategy): the
/// transaction that created it began after every other row of that boundary, so they come last.
struct Item {
  std::int64_t pos = 0;
  int rank = 0;
  std::int64_t own = 0;
  std::size_t session = 0;  // index into the plan's sessions
  std::size_t index = 0;    // into that session's rows of the kind
  bool created = false;
  bool operator<(const Item& o) const {
    return std::tie(pos, created, rank, own) < std::tie(o.pos, o.created, o.rank, o.own);
  }
};
enum Rank { kNode = 0, kSession = 1, kMove = 2, kEvent = 3, kRecord = 4 };

/// Rows of one session read from the source per statement: few enough that a session of large
/// nodes stays small in memory (each session being copied holds at most this many).
constexpr int kSyncReadAhead = 64;

struct SessionPlan {
  SessionInfo info;
  bool create = false;   // the destination lacks the session row
  bool created = false;  // ... and this sync wrote it
  SyncedSession out;
  std::vector<std::int64_t> node_seqs;  // source seqs of the nodes to copy
  std::vector<MoveRow> moves;
  std::vector<EventRow> events;
  std::vector<RecordRow> records;
  std::deque<StoredNode> read_ahead;  // the source's next rows of the session (Copier::read_node)
  // What the destination holds of the session before each batch: checked at its start.
  std::int64_t dst_nodes = 0, dst_moves = 0, dst_events = 0;
};

[[noreturn]] void diverged(const Store& to, const std::string& session, const std::string& what) {
  throw Error(Exit::environment, "sync.diverged",
              fmt::format("session '{}' in '{}' is not a copy of the source's: {}; nothing written", session,
                          to.path(), what),
              "sync copies a session only when one side holds the other's rows and more (docs/backends.md \"sync\")");
}

/// Plans one session: what the destination lacks of it, or why it cannot be synced.
SessionPlan plan_session(Store& from, Store& to, const SessionInfo& info) {
  SessionPlan p;
  p.info = info;
  p.out.id = info.id;
  auto dst = to.session(info.id);
  p.create = !dst;
  if (dst && session_identity(*dst) != session_identity(info))
    diverged(to, info.id, fmt::format("its session row differs ({} there, {} in the source)", session_identity(*dst),
                                      session_identity(info)));
  std::vector<std::int64_t> all_seqs;
  std::vector<MoveRow> all_moves;
  std::vector<EventRow> all_events;
  std::vector<RecordRow> all_records;
  struct Table {
    const char* name;
    Keys src, dst;
  };
  Table tables[] = {{"nodes", node_keys(from, info.id, &all_seqs), dst ? node_keys(to, info.id, nullptr) : Keys{}},
                    {"HEAD moves", head_move_keys(from, info.id, &all_moves),
                     dst ? head_move_keys(to, info.id, nullptr) : Keys{}},
                    {"events", event_keys(from, info.id, &all_events), dst ? event_keys(to, info.id, nullptr) : Keys{}},
                    {"source records", record_keys(from, info.id, &all_records),
                     dst ? record_keys(to, info.id, nullptr) : Keys{}}};
  bool ahead = false, behind = false;
  std::size_t have[4] = {};
  for (int t = 0; t < 4; ++t) {
    std::size_t i = 0;
    Standing s = compare(tables[t].src, tables[t].dst, &i);
    if (s == Standing::diverged)
      diverged(to, info.id,
               fmt::format("its {} part at row {} (of {} there, {} in the source)", tables[t].name, i + 1,
                           tables[t].dst.size(), tables[t].src.size()));
    if (s == Standing::ahead) ahead = true;
    if (s == Standing::prefix && tables[t].dst.size() < tables[t].src.size()) behind = true;
    have[t] = tables[t].dst.size();
  }
  if (ahead && behind)
    diverged(to, info.id, "each side holds rows the other lacks");
  p.dst_nodes = static_cast<std::int64_t>(have[0]);
  p.dst_moves = static_cast<std::int64_t>(have[1]);
  p.dst_events = static_cast<std::int64_t>(have[2]);
  if (ahead) {
    p.out.state = "destination_ahead";
    return p;
  }
  p.out.state = p.create ? "new" : behind ? "extended" : "unchanged";
  p.node_seqs.assign(all_seqs.begin() + static_cast<std::ptrdiff_t>(have[0]), all_seqs.end());
  p.moves.assign(all_moves.begin() + static_cast<std::ptrdiff_t>(have[1]), all_moves.end());
  p.events.assign(all_events.begin() + static_cast<std::ptrdiff_t>(have[2]), all_events.end());
  p.records.assign(all_records.begin() + static_cast<std::ptrdiff_t>(have[3]), all_records.end());
  return p;
}

/// The sessions to copy: the requested ones and their ancestors, in the source's order.
std::vector<std::pair<SessionInfo, bool>> choose_sessions(Store& from, const std::vector<std::string>& requested) {
  std::vector<SessionInfo> all = from.sessions();
  std::vector<std::pair<SessionInfo, bool>> out;
  if (requested.empty()) {
    for (auto& s : all) out.emplace_back(std::move(s), false);
    return out;
  }
  std::map<std::string, const SessionInfo*> by_id;
  for (const auto& s : all) by_id[s.id] = &s;
  std::set<std::string> wanted(requested.begin(), requested.end()), ancestors;
  for (const auto& id : requested) {
    auto it = by_id.find(id);
    if (it == by_id.end())
      throw Error(Exit::bad_input, "session.unknown", fmt::format("no session '{}' in '{}'", id, from.path()),
                  "list them with 'ctxfold sessions'");
    for (const SessionInfo* s = it->second; s->parent_session;) {
      auto p = by_id.find(*s->parent_session);
      if (p == by_id.end() || wanted.count(p->first) || !ancestors.insert(p->first).second) break;
      s = p->second;
    }
  }
  for (auto& s : all) {
    const bool w = wanted.count(s.id) > 0, a = ancestors.count(s.id) > 0;
    if (w || a) out.emplace_back(std::move(s), !w);
  }
  return out;
}

/// Translates seqs of the source into the destination's (docs/backends.md "sync"): both sides
/// hold the session's rows up to the point asked about, in the same order.
class SeqMap {
 public:
  SeqMap(Store& from, Store& to) : from_(from), to_(to) {}

  /// The destination's boundary that shows `session` as the source's boundary `b` showed it.
  /// `candidate` (the destination's append boundary where the row holding b is being written) is
  /// kept when it does: the session's rows at or before b are at or before it in the destination
  /// and its later rows after it, which is always so when every session is synced into a new
  /// database (there it is b itself). Otherwise the least boundary that does: the largest of the
  /// destination's seq of the session's newest node at or before b and the boundaries of its
  /// HEAD moves and events written at or before b.
  std::int64_t boundary(const std::string& session, std::int64_t b, std::int64_t candidate) {
    std::int64_t least = node(session, b), next = std::numeric_limits<std::int64_t>::max();
    {
      auto s = from_.db().prepare("SELECT id FROM nodes WHERE session=?1 AND seq>?2 ORDER BY seq LIMIT 1");
      s.bind(1, session).bind(2, b);
      if (s.step())
        if (auto link = to_.link(s.text(0))) next = link->seq;
    }
    for (const char* table : {"head_moves", "events"}) {
      auto n = from_.db().prepare(
          fmt::format("SELECT count(*) FROM {} WHERE session=?1 AND boundary_seq<=?2", table));
      n.bind(1, session).bind(2, b);
      n.step();
      const std::int64_t count = n.int64(0);
      // The destination's rows number count-1 and count of the table: the last at or before b,
      // the first after it (either may not be there yet: the row being copied itself).
      auto d = to_.db().prepare(
          fmt::format("SELECT boundary_seq FROM {} WHERE session=?1 ORDER BY seq LIMIT 2 OFFSET ?2", table));
      d.bind(1, session).bind(2, std::max<std::int64_t>(count - 1, 0));
      if (count > 0) {
        if (!d.step()) continue;
        least = std::max(least, d.int64(0));
      }
      if (d.step()) next = std::min(next, d.int64(0));
    }
    return candidate >= least && candidate < next ? candidate : least;
  }

  /// The destination's seq of the session's newest node at or before the source's seq b (0 when
  /// it has none).
  std::int64_t node(const std::string& session, std::int64_t b) {
    auto s = from_.db().prepare("SELECT id FROM nodes WHERE session=?1 AND seq<=?2 ORDER BY seq DESC LIMIT 1");
    s.bind(1, session).bind(2, b);
    if (!s.step()) return 0;
    auto link = to_.link(s.text(0));
    return link ? link->seq : 0;
  }

 private:
  Store& from_;
  Store& to_;
};

/// A JSON object's integer field translated by fn; the text as it was when the field is absent.
std::string translate_fields(const std::string& json_text, std::initializer_list<const char*> keys,
                             const std::function<std::int64_t(const char*, std::int64_t)>& fn) {
  Json j = parse_json(json_text);
  bool changed = false;
  for (const char* key : keys) {
    if (!j.is_object()) break;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) continue;
    *it = fn(key, it->get<std::int64_t>());
    changed = true;
  }
  return changed ? dump_json(j) : json_text;
}

class Copier {
 public:
  Copier(Store& from, Store& to, const SyncOptions& opts, std::vector<SessionPlan>& plans, SyncResult& r)
      : from_(from), to_(to), opts_(opts), plans_(plans), r_(r), map_(from, to) {}

  void run(const std::vector<Item>& items) {
    const std::vector<bool> inside = inside_source_transaction(items);
    std::size_t i = 0;
    while (i < items.size()) {
      Txn t(to_.db());
      std::set<std::size_t> checked;
      std::int64_t nodes = 0;
      for (; i < items.size(); ++i) {
        const Item& it = items[i];
        if (checked.insert(it.session).second) check_unchanged(plans_[it.session]);
        write(it);
        if (it.rank == kNode) ++nodes;
        // After a HEAD move or event, once the rest of its boundary is written, or just before a
        // session created at that boundary (a transaction of its own); not inside a transaction.
        const bool commit_point =
            (it.rank == kMove || it.rank == kEvent) && !inside[i] &&
            (i + 1 == items.size() || items[i + 1].pos > it.pos || items[i + 1].rank == kSession);
        if (commit_point && nodes >= opts_.batch_nodes) {
          ++i;
          break;
        }
      }
      t.commit();
      ++r_.commits;
      if (opts_.after_commit && i < items.size()) opts_.after_commit();
    }
  }

 private:
  /// For each item, whether the source wrote the items after it in the same transaction as it, so
  /// that a batch must not end just after it, although a HEAD move or event ends it:
  /// - a session is created in the transaction that writes its first rows (a fork's session row,
  ///   session/strategy event, nodes and HEAD move): no batch ends at its own HEAD moves and
  ///   events of the boundary it was created at;
  /// - a compaction's summary nodes, its compact/summary events and its compact/end are one
  ///   transaction (CompactionBracket::commit), its compact/start an earlier one: no batch ends
  ///   between a compact/start (or, when it was copied before, the first item) and its compact/end.
  std::vector<bool> inside_source_transaction(const std::vector<Item>& items) const {
    std::vector<bool> inside(items.size(), false);
    std::map<std::pair<std::size_t, std::string>, std::size_t> started;  // (session, ref) -> item
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Item& it = items[i];
      if (it.created) inside[i] = true;
      if (it.rank != kEvent) continue;
      const EventRow& e = plans_[it.session].events[it.index];
      if (!e.ref) continue;
      const auto key = std::make_pair(it.session, *e.ref);
      if (e.type == "compact/start") started.emplace(key, i);
      if (e.type != "compact/end") continue;
      auto s = started.find(key);
      for (std::size_t k = s == started.end() ? 0 : s->second; k < i; ++k) inside[k] = true;
    }
    return inside;
  }

  /// The destination still holds what the plan (and the batches before) left of the session.
  void check_unchanged(SessionPlan& p) {
    if (p.create && !p.created) {
      if (to_.session(p.info.id)) raced(p, "another writer created it");
      return;
    }
    auto count = [&](const char* table) {
      auto st = to_.db().prepare(fmt::format("SELECT count(*) FROM {} WHERE session=?1", table));
      st.bind(1, p.info.id);
      st.step();
      return st.int64(0);
    };
    if (count("nodes") != p.dst_nodes || count("head_moves") != p.dst_moves || count("events") != p.dst_events)
      raced(p, "another writer added to it");
  }

  [[noreturn]] void raced(const SessionPlan& p, const char* what) {
    throw Error(Exit::environment, "sync.raced",
                fmt::format("session '{}' in '{}' changed during the sync ({}); the batches committed before stay",
                            p.info.id, to_.path(), what),
                "run sync again");
  }

  void write(const Item& it) {
    SessionPlan& p = plans_[it.session];
    switch (it.rank) {
      case kSession: create_session(p); break;
      case kNode: copy_node(p, p.node_seqs[it.index]); break;
      case kMove:
        to_.copy_head_move(p.moves[it.index].move);
        ++p.out.head_moves;
        ++p.dst_moves;
        break;
      case kEvent: copy_event(p, p.events[it.index]); break;
      default: copy_record(p, p.records[it.index]); break;
    }
  }

  void create_session(SessionPlan& p) {
    SessionInfo s = p.info;
    if (s.parent_session && s.metadata.is_object()) {
      auto it = s.metadata.find("source_boundary_seq");
      if (it != s.metadata.end() && it->is_number_integer())
        *it = map_.boundary(*s.parent_session, it->get<std::int64_t>(), to_.max_seq());
    }
    to_.create_session(s);
    p.created = true;
  }

  /// The source's row of node `seq` of the plan's session: read ahead kSyncReadAhead rows of the
  /// session at a time (a statement per row is a round trip per node on a server).
  std::optional<StoredNode> read_node(SessionPlan& p, std::int64_t seq) {
    auto& ahead = p.read_ahead;
    while (!ahead.empty() && ahead.front().seq < seq) ahead.pop_front();
    if (ahead.empty() || ahead.front().seq != seq) {
      ahead.clear();
      for (auto& n : from_.stored_nodes(p.info.id, seq, kSyncReadAhead)) ahead.push_back(std::move(n));
    }
    if (ahead.empty() || ahead.front().seq != seq) return std::nullopt;
    StoredNode n = std::move(ahead.front());
    ahead.pop_front();
    return n;
  }

  void copy_node(SessionPlan& p, std::int64_t seq) {
    auto n = read_node(p, seq);
    if (!n) throw Error(Exit::internal, "sync.vanished", fmt::format("node seq {} left the source's snapshot", seq));
    ++r_.digests_checked;
    if (Store::stored_digest(*n) != n->digest)
      throw Error(Exit::bad_input, "sync.digest",
                  fmt::format("node '{}' (seq {}) of '{}' does not match its recorded digest {}: it changed after it "
                              "was written; nothing of this batch written",
                              n->id, seq, from_.path(), n->digest.substr(0, 12)),
                  "`ctxfold verify-invariants` on the source reports what is wrong");
    const std::string id = n->id;
    switch (to_.append_stored(*n)) {
      case AppendResult::added: break;
      case AppendResult::duplicate:  // the same node under the same id: another writer copied it
        raced(p, fmt::format("node '{}' arrived from another writer", id).c_str());
      case AppendResult::conflict:
        throw Error(Exit::environment, "sync.conflict",
                    fmt::format("node id '{}' of session '{}' exists in '{}' with other content; nothing of this "
                                "batch written",
                                id, p.info.id, to_.path()));
    }
    ++p.out.nodes;
    ++p.dst_nodes;
  }

  void copy_event(SessionPlan& p, const EventRow& e) {
    std::string payload = e.payload;
    if (e.type == "compact/start")
      payload = translate_fields(payload, {"boundary_seq", "session_seq"}, [&](const char* key, std::int64_t v) {
        return std::string_view(key) == "session_seq" ? map_.node(p.info.id, v)
                                                           : map_.boundary(p.info.id, v, to_.max_seq());
      });
    to_.copy_event(p.info.id, e.type, e.ref, payload);
    ++p.out.events;
    ++p.dst_events;
  }

  void copy_record(SessionPlan& p, const RecordRow& rec) {
    auto st = from_.db().prepare("SELECT raw FROM source_records WHERE seq=?1");
    st.bind(1, rec.seq);
    if (!st.step()) throw Error(Exit::internal, "sync.vanished", "a source record left the source's snapshot");
    const std::string raw = st.text(0);
    ++r_.digests_checked;
    if (sha256_hex(raw) != rec.digest)
      throw Error(Exit::bad_input, "sync.digest",
                  fmt::format("source record {} (line {} of '{}') of session '{}' in '{}' does not match its recorded "
                              "digest; nothing of this batch written",
                              rec.seq, rec.line, rec.source, p.info.id, from_.path()));
    if (to_.add_source_record(p.info.id, rec.source, rec.line, rec.type, raw)) ++p.out.source_records;
  }

  Store& from_;
  Store& to_;
  const SyncOptions& opts_;
  std::vector<SessionPlan>& plans_;
  SyncResult& r_;
  SeqMap map_;
};

}  // namespace

SyncResult sync_stores(Store& from, Store& to, const SyncOptions& opts) {
  SyncResult r;
  std::vector<SessionPlan> plans;
  // Every session is planned before anything is written; each batch then checks that no other
  // writer changed the sessions it writes since (check_unchanged).
  for (auto& [info, ancestor] : choose_sessions(from, opts.sessions)) {
    SessionPlan p = plan_session(from, to, info);
    p.out.ancestor = ancestor;
    plans.push_back(std::move(p));
  }
  std::vector<Item> items;
  for (std::size_t s = 0; s < plans.size(); ++s) {
    const SessionPlan& p = plans[s];
    const std::int64_t at = p.info.created_seq;
    if (p.create) items.push_back(Item{at, kSession, 0, s, 0, true});
    for (std::size_t i = 0; i < p.node_seqs.size(); ++i) items.push_back(Item{p.node_seqs[i], kNode, p.node_seqs[i], s, i});
    for (std::size_t i = 0; i < p.moves.size(); ++i)
      items.push_back(Item{p.moves[i].boundary, kMove, p.moves[i].seq, s, i, p.moves[i].boundary == at});
    for (std::size_t i = 0; i < p.events.size(); ++i)
      items.push_back(Item{p.events[i].boundary, kEvent, p.events[i].seq, s, i, p.events[i].boundary == at});
    for (std::size_t i = 0; i < p.records.size(); ++i)
      items.push_back(Item{std::numeric_limits<std::int64_t>::max(), kRecord, p.records[i].seq, s, i});
  }
  std::sort(items.begin(), items.end());
  Copier(from, to, opts, plans, r).run(items);
  for (auto& p : plans) {
    r.nodes += p.out.nodes;
    r.head_moves += p.out.head_moves;
    r.events += p.out.events;
    r.source_records += p.out.source_records;
    r.sessions.push_back(std::move(p.out));
  }
  return r;
}

bool same_database(const std::string& a, const std::string& b) {
  if (is_server_url(a) || is_server_url(b)) return a == b;
  std::error_code ec;
  const bool equivalent = std::filesystem::equivalent(a, b, ec);
  return ec ? a == b : equivalent;
}

bool is_new_database_file(const std::string& path) {
  std::error_code ec;
  return !is_server_url(path) && !std::filesystem::exists(path, ec);
}

}  // namespace ctxfold
