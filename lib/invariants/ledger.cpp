// I1 append-only ledger and I2 well-formed DAG: one scan of each session's rows, seq continuity.
#include "invariants/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "store/scan.hpp"
#include "util/digest.hpp"

namespace ctxfold::verify_detail {
namespace {

std::string short_digest(const std::string& d) { return d.size() > 12 ? d.substr(0, 12) : d; }

}  // namespace

// ---------------------------------------------------------------- I1

/// Database-wide: seq values are handed out 1, 2, 3, ... and never reused, so a gap or a
/// high-water mark above the largest seq means a node vanished.
void check_seq_continuity(Store& store, Check& c) {
  std::int64_t count = 0, max_seq = 0;
  {
    auto st = store.db().prepare("SELECT count(*), coalesce(max(seq), 0) FROM nodes");
    st.step();
    count = st.int64(0);
    max_seq = st.int64(1);
  }
  if (count != max_seq) {
    std::vector<std::int64_t> missing;
    auto st = store.db().prepare(
        "SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE seq=1) AND ?1 > 0 "
        "UNION ALL SELECT n.seq + 1 FROM nodes n WHERE n.seq < ?1 AND NOT EXISTS "
        "(SELECT 1 FROM nodes m WHERE m.seq = n.seq + 1) LIMIT 20");
    st.bind(1, max_seq);
    while (st.step()) missing.push_back(st.int64(0));
    std::string list;
    for (auto s : missing) list += (list.empty() ? "" : ", ") + std::to_string(s);
    add(c, "", {},
        fmt::format("the ledger holds {} nodes but seq runs to {}: {} node(s) vanished (missing seq starting at: {}); "
                    "restore the database from a backup",
                    count, max_seq, max_seq - count, list));
  }
  if (auto high = node_seq_high_water(store.db()); high && *high > max_seq)
    add(c, "", {},
        fmt::format("nodes up to seq {} were appended but the newest remaining node has seq {}: the newest node(s) "
                    "vanished; restore the database from a backup",
                    *high, max_seq));
}

namespace {

/// Remembers the (id, seq) of the nodes scanned last, in two generations of up to kGen each, so
/// that a predecessor (nearly always a recent node) resolves without an index seek.
struct RecentIds {
  static constexpr std::size_t kGen = 4096;
  std::unordered_map<std::string, std::int64_t> now, before;
  void add(const std::string& id, std::int64_t seq) {
    if (now.size() >= kGen) {
      before = std::move(now);
      now.clear();
    }
    now.emplace(id, seq);
  }
  std::optional<std::int64_t> find(const std::string& id) const {
    if (auto it = now.find(id); it != now.end()) return it->second;
    if (auto it = before.find(id); it != before.end()) return it->second;
    return std::nullopt;
  }
};

void check_cycles(Store& store, const std::string& session, const std::vector<std::string>& suspects, Check& c);

/// The state check_ledger's scan carries from row to row.
struct LedgerScan {
  const std::string& session;
  Check& c;      ///< I1
  Check& dag;    ///< I2
  Chain& chain;  ///< filled for I5's spine walk
  bool digests;
  Stmt& st;      ///< the session's rows in seq order
  Stmt& look;    ///< a node's session and seq by id
  Stmt& covers;  ///< a view node's covers rows, each with whether the covered node exists
  RecentIds recent;
  std::vector<std::string> suspects;  // nodes whose predecessor is not older: where a cycle can close
  std::int64_t prev = 0;              ///< the seq of the row before
  Sha256 hash;                        ///< one context for every node's digest, reset per node
};

/// Reserves chain's vectors for the session's node count.
void reserve_chain(Store& store, const std::string& session, Chain& chain) {
  auto n = store.db().prepare("SELECT count(*) FROM nodes WHERE session=?1");  // from the (session, seq) index
  n.bind(1, session);
  n.step();
  const auto count = static_cast<std::size_t>(n.int64(0));
  chain.seqs.reserve(count);
  chain.pred.reserve(count);
  chain.message.reserve(count);
}

/// I2 for a root: a parent its source names but never wrote is a warning.
void check_root(LedgerScan& s, const Node& n) {
  std::string_view meta = s.st.view(6);
  if (meta.find("missing_predecessor") != std::string_view::npos) {
    try {
      Json m = parse_json(std::string(meta));
      std::string missing = json_str(m, "missing_predecessor");
      if (!missing.empty())
        warn(s.dag, s.session, {n.id},
             fmt::format("node '{}' is a root because its source names parent '{}', which the source never wrote",
                         n.id, missing));
    } catch (const std::exception&) {
      add(s.dag, s.session, {n.id}, fmt::format("node '{}' has metadata that is not valid JSON", n.id));
    }
  }
}

/// I2 for a node with a predecessor; returns the predecessor's seq, or Chain::kOutside.
std::int64_t check_predecessor(LedgerScan& s, const Node& n) {
  const std::string& session = s.session;
  const std::string& pred = *n.predecessor;
  std::optional<std::string> psession;
  std::int64_t pseq = 0;
  if (auto hit = s.recent.find(pred)) {
    psession = session;
    pseq = *hit;
  } else {
    ResetOnExit reset(s.look);
    s.look.bind(1, pred);
    if (s.look.step()) {
      psession = s.look.text(0);
      pseq = s.look.int64(1);
    }
  }
  if (!psession) {
    add(s.dag, session, {n.id, pred},
        fmt::format("node '{}' names predecessor '{}', which does not exist in the database", n.id, pred));
    return Chain::kOutside;
  }
  if (*psession != session)
    add(s.dag, session, {n.id, pred},
        fmt::format("node '{}' names predecessor '{}' from another session '{}'", n.id, pred, *psession));
  if (pseq >= n.seq) {
    if (*psession == session) s.suspects.push_back(n.id);
    add(s.dag, session, {n.id, pred},
        fmt::format("predecessor '{}' (seq {}) is not older than its node '{}' (seq {})", pred, pseq, n.id,
                    n.seq));
  }
  return *psession == session ? pseq : Chain::kOutside;
}

/// Hashes the node's canonical form around its stored content and metadata (a view node's form
/// without its covers list, which check_view_covers streams in).
void hash_stored_node(const Stmt& st, const Node& n, bool view, Sha256& hash) {
  // The canonical form around the stored content and metadata, hashed piece by piece so the
  // (possibly large) content is never copied: \x01 and \x02 stand in for them (control bytes
  // never appear raw in dumped JSON). covers_ids is empty here, so a view node's form ends in
  // ,"covers_ids":[]} and the ids are hashed between the brackets as they stream in.
  std::string frame = canonical_node(n, "\x01", "\x02");
  std::size_t a = frame.find('\x01'), b = frame.find('\x02');
  if (view) frame.resize(frame.size() - 3);
  std::string_view f(frame);
  hash.update(f.substr(0, a));
  hash.update(st.view(5));
  hash.update(f.substr(a + 1, b - a - 1));
  hash.update(st.view(6));
  hash.update(f.substr(b + 1));
}

/// I1 for a view node: every covered node still exists and the coverage columns agree with the
/// covers rows; the covered ids are hashed into the digest (when digests are checked).
void check_view_covers(LedgerScan& s, const Node& n, Sha256& hash) {
  const std::string& session = s.session;
  const Stmt& st = s.st;
  Stmt& covers = s.covers;
  if (s.digests) hash.update("[");
  std::int64_t count = 0;
  std::string first, last;
  covers.reset();
  covers.bind(1, n.seq);
  while (covers.step()) {
    std::string id = covers.text(0);
    if (s.digests) {
      if (count > 0) hash.update(",");
      hash.update(dump_json(Json(id)));
    }
    if (covers.int64(1) == 0)
      add(s.c, session, {n.id, id},
          fmt::format("node '{}', covered by view node '{}', no longer exists", id, n.id));
    if (count == 0) first = id;
    last = std::move(id);
    ++count;
  }
  if (s.digests) hash.update("]}");
  const bool columns = !st.is_null(7);
  if (count > 0 && columns) {
    if (st.text(7) != first || st.opt_text(8).value_or("") != last || st.opt_int64(9).value_or(-1) != count)
      add(s.c, session, {n.id},
          fmt::format("view node '{}' records coverage {}..{} ({}) but its covers list runs {}..{} ({})", n.id,
                      st.text(7), st.opt_text(8).value_or(""),
                      st.is_null(9) ? std::string("null") : std::to_string(st.int64(9)), first, last, count));
  } else if ((count == 0) != !columns) {
    add(s.c, session, {n.id},
        fmt::format("view node '{}' has coverage columns and covers rows that disagree (one is empty)", n.id));
  }
}

/// I1 and I2 for the scan's current row.
void scan_ledger_row(LedgerScan& s) {
  const Stmt& st = s.st;
  Node n;
  n.seq = st.int64(0);
  n.id = st.text(1);
  n.session = s.session;
  n.predecessor = st.opt_text(2);
  n.kind = st.text(3);
  n.role = st.opt_text(4).value_or("");
  const std::string stored_digest = st.text(10);
  if (n.seq <= s.prev)
    add(s.c, s.session, {n.id},
        fmt::format("node '{}' has seq {} after seq {}: seq must strictly increase", n.id, n.seq, s.prev));
  s.prev = n.seq;
  // I2: the predecessor exists, lies in this session and is older.
  std::int64_t pred_seq = Chain::kRoot;
  if (!n.predecessor)
    check_root(s, n);
  else
    pred_seq = check_predecessor(s, n);
  s.recent.add(n.id, n.seq);
  s.chain.seqs.push_back(n.seq);
  s.chain.pred.push_back(pred_seq);
  s.chain.message.push_back(n.kind == kind::kMessage);
  const bool view = n.is_view();
  Sha256& hash = s.hash;
  if (s.digests) {
    hash.reset();
    hash_stored_node(st, n, view, hash);
  }
  if (view) check_view_covers(s, n, hash);
  if (!s.digests) return;
  std::string digest = hash.hex();
  if (digest != stored_digest)
    add(s.c, s.session, {n.id},
        fmt::format("node '{}' (seq {}) changed after it was written: its content digest is {} but {} was recorded "
                    "when it was appended",
                    n.id, n.seq, short_digest(digest), short_digest(stored_digest)));
}

}  // namespace

/// I1 (digests, seq order, coverage rows) and I2 (predecessor exists, same session, older; cycles)
/// in one scan of the session's rows in seq order; fills chain for I5's spine walk.
void check_ledger(Store& store, const std::string& session, Check& c, Check& dag, Chain& chain, bool digests) {
  chain = Chain{};
  reserve_chain(store, session, chain);
  auto st = store.db().prepare_scan(
      "SELECT seq, id, predecessor, kind, role, content, metadata, covers_first, covers_last, covers_count, digest "
      "FROM nodes WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  auto& look = store.db().cached("SELECT session, seq FROM nodes WHERE id=?1");
  auto covers = store.db().prepare_scan(
      "SELECT c.node_id, EXISTS(SELECT 1 FROM nodes n WHERE n.id = c.node_id) FROM covers c "
      "WHERE c.summary_seq=?1 ORDER BY c.pos");
  LedgerScan scan{session, c, dag, chain, digests, st, look, covers, RecentIds{}, {}, 0, {}};
  while (st.step()) scan_ledger_row(scan);
  check_cycles(store, session, scan.suspects, dag);
}

namespace {

// ---------------------------------------------------------------- I2

/// I2's cycle search from the nodes whose predecessor is not older (check_ledger collects them).
void check_cycles(Store& store, const std::string& session, const std::vector<std::string>& suspects, Check& c) {
  // Cycles. Along a cycle seq cannot fall at every link, so every cycle holds a link to a
  // predecessor that is not older: walking from those nodes only finds them all, and a healthy
  // session (no such link) costs nothing here.
  if (suspects.empty()) return;
  auto& look = store.db().cached("SELECT session, predecessor FROM nodes WHERE id=?1");
  std::unordered_set<std::string> done;
  std::set<std::string> reported;
  for (const auto& start : suspects) {
    std::vector<std::string> path;
    std::unordered_map<std::string, std::size_t> on_path;
    std::optional<std::string> cur = start;
    while (cur && !done.count(*cur)) {
      if (auto it = on_path.find(*cur); it != on_path.end()) {
        std::vector<std::string> cycle(path.begin() + static_cast<std::ptrdiff_t>(it->second), path.end());
        std::string key = *std::min_element(cycle.begin(), cycle.end());
        if (reported.insert(key).second) {
          std::string text;
          for (const auto& id : cycle) text += id + " -> ";
          text += *cur;
          add(c, session, cycle, fmt::format("predecessor cycle: {}", text));
        }
        break;
      }
      std::optional<std::string> next;
      {
        ResetOnExit reset(look);
        look.bind(1, *cur);
        if (!look.step() || look.text(0) != session) break;  // leaves the session: reported above
        next = look.opt_text(1);
      }
      on_path.emplace(*cur, path.size());
      path.push_back(*cur);
      cur = next;
    }
    done.insert(path.begin(), path.end());
  }
}

}  // namespace
}  // namespace ctxfold::verify_detail
