#include "invariants/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "invariants/catalog.hpp"
#include "invariants/verify_compaction.hpp"
#include "invariants/verify_fork.hpp"
#include "invariants/verify_lcm.hpp"
#include "model/strategy_label.hpp"
#include "render/render.hpp"
#include "store/node_cache.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

void add(Check& c, const std::string& session, std::vector<std::string> nodes, std::string message) {
  c.violations.push_back(Violation{session, std::move(nodes), std::move(message)});
}
void warn(Check& c, const std::string& session, std::vector<std::string> nodes, std::string message) {
  c.warnings.push_back(Violation{session, std::move(nodes), std::move(message)});
}

std::string short_digest(const std::string& d) { return d.size() > 12 ? d.substr(0, 12) : d; }

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
  auto st = store.db().prepare("SELECT seq FROM sqlite_sequence WHERE name='nodes'");
  if (st.step() && st.int64(0) > max_seq)
    add(c, "", {},
        fmt::format("nodes up to seq {} were appended but the newest remaining node has seq {}: the newest node(s) "
                    "vanished; restore the database from a backup",
                    st.int64(0), max_seq));
}

/// Streams the session's nodes in seq order straight from their stored columns (no JSON parse):
/// the digest is recomputed over the bytes append hashed (canonical_node of the stored content and
/// metadata; a view node's covers_ids streamed from its covers rows), so memory stays O(1) in the
/// session's size and any byte changed after the append is caught.
/// One session's predecessor links as seqs, gathered by the I1/I2 scan (ascending seq) so that
/// I2's cycle walk and I5's spine walk need no second pass over the session's rows: 17 bytes a
/// node instead of a re-read of every row (at 10^6 nodes each pass reads the whole file).
struct Chain {
  static constexpr std::int64_t kRoot = 0;      ///< no predecessor
  static constexpr std::int64_t kOutside = -1;  ///< a predecessor missing or in another session
  std::vector<std::int64_t> seqs;  ///< ascending
  std::vector<std::int64_t> pred;  ///< the predecessor's seq, or kRoot / kOutside
  std::vector<bool> message;       ///< kind == message
  /// Index of seq in seqs, or npos.
  std::size_t find(std::int64_t seq) const {
    auto it = std::lower_bound(seqs.begin(), seqs.end(), seq);
    return it != seqs.end() && *it == seq ? static_cast<std::size_t>(it - seqs.begin()) : std::string::npos;
  }
};

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
  Sha256 hash;
  if (s.digests) hash_stored_node(st, n, view, hash);
  if (view) check_view_covers(s, n, hash);
  if (!s.digests) return;
  std::string digest = hash.hex();
  if (digest != stored_digest)
    add(s.c, s.session, {n.id},
        fmt::format("node '{}' (seq {}) changed after it was written: its content digest is {} but {} was recorded "
                    "when it was appended",
                    n.id, n.seq, short_digest(digest), short_digest(stored_digest)));
}

/// I1 (digests, seq order, coverage rows) and I2 (predecessor exists, same session, older; cycles)
/// in one scan of the session's rows in seq order; fills chain for I5's spine walk.
void check_ledger(Store& store, const std::string& session, Check& c, Check& dag, Chain& chain, bool digests = true) {
  chain = Chain{};
  reserve_chain(store, session, chain);
  auto st = store.db().prepare(
      "SELECT seq, id, predecessor, kind, role, content, metadata, covers_first, covers_last, covers_count, digest "
      "FROM nodes WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  auto& look = store.db().cached("SELECT session, seq FROM nodes WHERE id=?1");
  auto covers = store.db().prepare(
      "SELECT c.node_id, EXISTS(SELECT 1 FROM nodes n WHERE n.id = c.node_id) FROM covers c "
      "WHERE c.summary_seq=?1 ORDER BY c.pos");
  LedgerScan scan{session, c, dag, chain, digests, st, look, covers, RecentIds{}, {}, 0};
  while (st.step()) scan_ledger_row(scan);
  check_cycles(store, session, scan.suspects, dag);
}

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

// ---------------------------------------------------------------- I6

bool allowed_cause(const std::string& cause) {
  return cause == "import" || cause == "append" || cause == "checkout" || cause == "rewind" || cause == "fork";
}

void check_head(Store& store, const std::string& session, Check& c) {
  std::int64_t max_seq = store.max_seq();
  auto moves = store.head_moves(session);
  std::int64_t last_boundary = 0;
  for (std::size_t k = 0; k < moves.size(); ++k) {
    const HeadMove& m = moves[k];
    if (!allowed_cause(m.cause))
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} to '{}' has cause '{}': only import, append, checkout, rewind and fork may move "
                      "HEAD (never a compaction, a load or a read)",
                      m.seq, m.node_id, m.cause));
    auto n = store.node(m.node_id, false);
    if (!n) {
      add(c, session, {m.node_id}, fmt::format("HEAD move #{} points at node '{}', which does not exist", m.seq, m.node_id));
    } else {
      if (n->session != session)
        add(c, session, {m.node_id},
            fmt::format("HEAD move #{} points at node '{}' of another session '{}'", m.seq, m.node_id, n->session));
      if (n->seq > m.boundary_seq)
        add(c, session, {m.node_id},
            fmt::format("HEAD move #{} points at node '{}' (seq {}) that was appended after the move (boundary {})",
                        m.seq, m.node_id, n->seq, m.boundary_seq));
    }
    if (m.boundary_seq > max_seq)
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} records boundary seq {} beyond the database's last seq {}", m.seq, m.boundary_seq,
                      max_seq));
    if (m.boundary_seq < last_boundary)
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} records boundary seq {}, older than the previous move's {}", m.seq, m.boundary_seq,
                      last_boundary));
    last_boundary = std::max(last_boundary, m.boundary_seq);
    if (k > 0 && m.previous != std::optional<std::string>(moves[k - 1].node_id))
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} says HEAD was '{}' but the previous move had set it to '{}': a HEAD move is missing",
                      m.seq, m.previous.value_or("(none)"), moves[k - 1].node_id));
  }
  if (moves.empty()) {
    std::int64_t count = store.node_count(session);
    if (count > 0)
      add(c, session, {}, fmt::format("session '{}' has {} nodes but no HEAD", session, count));
  }
}

// ---------------------------------------------------------------- I5

/// HEAD's full spine over a session's Chain: one bit per node of the session.
struct Spine {
  std::vector<bool> on;                 ///< by Chain index: the node is on HEAD's spine
  std::vector<std::int64_t> uncovered;  ///< message nodes on the spine that are not in `raw`, ascending seq
  std::unordered_set<std::string> raw_on_spine;  ///< the ids of `raw` that lie on the spine
  bool has(const Chain& chain, std::int64_t seq) const {
    std::size_t i = chain.find(seq);
    return i != std::string::npos && on[i];
  }
};

/// Walks HEAD's spine over the session's links gathered by check_ledger, stopping at a root, at a
/// node seen before (a cycle: I2 reports it) or at a predecessor outside the session. raw: the ids
/// rendered raw.
Spine walk_spine(Store& store, const Chain& chain, const std::string& session, const std::string& head,
                 const std::unordered_set<std::string>& raw) {
  Spine sp;
  auto& look = store.db().cached("SELECT seq, session FROM nodes WHERE id=?1");
  auto seq_of = [&](const std::string& id) -> std::optional<std::int64_t> {
    ResetOnExit reset(look);
    look.bind(1, id);
    if (!look.step() || look.text(1) != session) return std::nullopt;
    return look.int64(0);
  };
  std::unordered_map<std::int64_t, const std::string*> raw_at;  // raw ids of this session by seq
  for (const auto& id : raw)
    if (auto q = seq_of(id)) raw_at.emplace(*q, &id);
  sp.on.assign(chain.seqs.size(), false);
  auto h = seq_of(head);
  std::size_t i = h ? chain.find(*h) : std::string::npos;
  while (i != std::string::npos && !sp.on[i]) {
    sp.on[i] = true;
    const std::int64_t seq = chain.seqs[i];
    if (auto it = raw_at.find(seq); it != raw_at.end())
      sp.raw_on_spine.insert(*it->second);
    else if (chain.message[i])
      sp.uncovered.push_back(seq);
    i = chain.pred[i] > 0 ? chain.find(chain.pred[i]) : std::string::npos;
  }
  std::sort(sp.uncovered.begin(), sp.uncovered.end());
  return sp;
}

/// Calls fn(id, seq) for each id a view node covers, in order; seq is empty when the id is not a
/// node of `session`. Streams: nothing is held.
void for_each_covered(Store& store, std::int64_t view_seq, const std::string& session,
                      const std::function<void(const std::string&, std::optional<std::int64_t>)>& fn) {
  auto st = store.db().prepare(
      "SELECT c.node_id, n.seq FROM covers c LEFT JOIN nodes n ON n.id = c.node_id AND n.session = ?2 "
      "WHERE c.summary_seq = ?1 ORDER BY c.pos");
  st.bind(1, view_seq).bind(2, session);
  while (st.step()) fn(st.text(0), st.opt_int64(1));
}

std::string id_at(Store& store, std::int64_t seq) {
  auto& st = store.db().cached("SELECT id FROM nodes WHERE seq=?1");
  ResetOnExit reset(st);
  st.bind(1, seq);
  return st.step() ? st.text(0) : std::to_string(seq);
}


/// Every tool call answered right after its turn and every result answering the turn before it.
void check_pairing(const Json& openai, const Json& anthropic, const std::string& session, Check& c) {
  for (std::size_t i = 0; i < openai.size(); ++i) {
    const Json& m = openai[i];
    if (m["role"] == "assistant" && m.contains("tool_calls")) {
      std::size_t k = i + 1;
      std::set<std::string> answered;
      for (; k < openai.size() && openai[k]["role"] == "tool"; ++k) answered.insert(json_str(openai[k], "tool_call_id"));
      for (const auto& call : m["tool_calls"])
        if (!answered.count(json_str(call, "id")))
          add(c, session, {}, fmt::format("openai render: tool call '{}' has no tool message after it", json_str(call, "id")));
    }
    if (m["role"] == "tool") {
      std::size_t k = i;
      while (k > 0 && openai[k - 1]["role"] == "tool") --k;
      bool ok = false;
      if (k > 0 && openai[k - 1].contains("tool_calls"))
        for (const auto& call : openai[k - 1]["tool_calls"])
          if (json_str(call, "id") == json_str(m, "tool_call_id")) ok = true;
      if (!ok)
        add(c, session, {},
            fmt::format("openai render: tool message for '{}' does not follow its call", json_str(m, "tool_call_id")));
    }
  }
  for (std::size_t i = 0; i < anthropic.size(); ++i) {
    const Json& m = anthropic[i];
    std::set<std::string> uses, results;
    auto ids_of = [](const Json& msg, const char* type, const char* key) {
      std::set<std::string> out;
      for (const auto& b : msg["content"])
        if (json_str(b, "type") == type) out.insert(json_str(b, key));
      return out;
    };
    if (m["role"] == "assistant") {
      uses = ids_of(m, "tool_use", "id");
      std::set<std::string> next;
      if (i + 1 < anthropic.size()) next = ids_of(anthropic[i + 1], "tool_result", "tool_use_id");
      for (const auto& u : uses)
        if (!next.count(u))
          add(c, session, {}, fmt::format("anthropic render: tool_use '{}' has no tool_result in the next message", u));
    } else {
      results = ids_of(m, "tool_result", "tool_use_id");
      std::set<std::string> prev;
      if (i > 0) prev = ids_of(anthropic[i - 1], "tool_use", "id");
      for (const auto& r : results)
        if (!prev.count(r))
          add(c, session, {}, fmt::format("anthropic render: tool_result '{}' does not answer the message before it", r));
    }
  }
}

/// I5 for one strategy's render of HEAD: "rolling" (the default render, which also reads lcm
/// folds) or "lcm" (checked when the session holds lcm summaries). Findings of the lcm render say so.
/// The default render of HEAD and its two request bodies, made once per session and read by I5
/// and I10.
struct HeadRender {
  Rendered r;
  Json openai, anthropic;  ///< render_request_body in each format
};

/// Renders HEAD with the given strategy; nullopt (and a violation in c) when rendering fails.
std::optional<HeadRender> render_head(Store& store, const std::string& session, const std::string& head, Check& c,
                                      StrategyLabel strategy) {
  HeadRender h;
  try {
    RenderOptions ro;
    ro.strategy = label_name(strategy);
    h.r = render_context(store, session, ro);
  } catch (const Error& e) {
    add(c, session, {head}, fmt::format("rendering HEAD '{}' failed: {}", head, e.what()));
    return std::nullopt;
  }
  h.openai = render_request_body(h.r, RenderFormat::openai);
  h.anthropic = render_request_body(h.r, RenderFormat::anthropic);
  return h;
}

/// Prefixes "lcm render: " to the findings added to c after v0 and w0, when on, as it goes out of scope.
struct LcmLabel {
  Check& c;
  std::size_t v0, w0;
  bool on;
  ~LcmLabel() {
    if (!on) return;
    for (std::size_t i = v0; i < c.violations.size(); ++i) c.violations[i].message = "lcm render: " + c.violations[i].message;
    for (std::size_t i = w0; i < c.warnings.size(); ++i) c.warnings[i].message = "lcm render: " + c.warnings[i].message;
  }
};

/// What check_render's parts share.
struct RenderCheck {
  Store& store;
  const std::string& session;
  const Chain& chain;
  Check& c;
  const Rendered& r;
};

/// A render's reads sorted for I5.
struct RenderReads {
  std::unordered_set<std::string> quoted;  ///< ids a rolling recap quotes
  std::vector<std::string> views;          ///< the view nodes the render substituted
  std::unordered_set<std::string> raw;     ///< raw reads: what the render holds, small
};

/// Sorts the render's reads into quoted ids, substituted views and raw reads; a raw read twice is
/// a violation.
RenderReads sort_reads(const RenderCheck& k) {
  const Rendered& r = k.r;
  RenderReads rr;
  // Ids a rolling recap quotes are read through the recap, not rendered raw: they must be covered
  // by the rendered summary (checked below) and are not counted as raw renders.
  for (const auto& sec : r.sections)
    if (sec.kind == "recap") rr.quoted.insert(sec.ids.begin(), sec.ids.end());
  // Every view node the render substituted: the rolling summary and the lcm folds.
  if (r.summary) rr.views.push_back(*r.summary);
  for (const auto& f : r.folds) rr.views.push_back(f.id);
  std::unordered_set<std::string> view_set(rr.views.begin(), rr.views.end());
  if (r.notes) view_set.insert(*r.notes);  // the notes cover nothing: they are read, not substituted
  if (r.system.node) view_set.insert(*r.system.node);  // a recorded system prompt: read, off the spine
  for (const auto& id : r.reads) {
    if (view_set.count(id)) continue;
    if (rr.quoted.count(id)) continue;
    if (!rr.raw.insert(id).second)
      add(k.c, k.session, {id}, fmt::format("node '{}' is rendered more than once", id));
  }
  return rr;
}

/// Each raw read off HEAD's spine, reported once.
void check_raw_on_spine(const RenderCheck& k, const RenderReads& reads, const Spine& spine) {
  std::unordered_set<std::string> said;
  for (const auto& id : k.r.reads)
    if (reads.raw.count(id) && !spine.raw_on_spine.count(id) && said.insert(id).second)
      add(k.c, k.session, {id}, fmt::format("node '{}' is rendered but is not on HEAD's spine", id));
}

/// Every rendered view node covers spine nodes only, none rendered raw, none covered twice, and
/// the rendered summary covers what the recap quotes. Returns covered_by (below).
std::vector<std::uint32_t> check_view_coverage(const RenderCheck& k, const RenderReads& reads,
                                               const Spine& spine) {
  const Rendered& r = k.r;
  const Chain& chain = k.chain;
  const std::string& session = k.session;
  Check& c = k.c;
  // For each node of the session (by Chain index): 1 + the index in views of the first rendered view
  // node covering it, 0 for none. 4 bytes a node; a second coverer is reported once per node.
  std::vector<std::uint32_t> covered_by(chain.seqs.size(), 0);
  std::vector<bool> twice(chain.seqs.size(), false);
  std::unordered_set<std::string> quoted_covered;
  for (std::uint32_t vi = 0; vi < reads.views.size(); ++vi) {
    const std::string& view_id = reads.views[vi];
    auto s = k.store.node(view_id, false);
    if (!s) continue;
    const bool is_summary = r.summary && *r.summary == view_id;
    for_each_covered(k.store, s->seq, session, [&](const std::string& id, std::optional<std::int64_t> seq) {
      if (!seq || !spine.has(chain, *seq))
        add(c, session, {s->id, id},
            fmt::format("summary '{}' was rendered but covers node '{}', which is not on HEAD's spine: its coverage "
                        "is not wholly on the spine, so it must not be applied",
                        s->id, id));
      if (reads.raw.count(id))
        add(c, session, {s->id, id},
            fmt::format("node '{}' is rendered raw and also inside rendered summary '{}'", id, s->id));
      if (is_summary && reads.quoted.count(id)) quoted_covered.insert(id);
      const std::size_t i = seq ? chain.find(*seq) : std::string::npos;
      if (i == std::string::npos) return;
      if (covered_by[i] == 0) {
        covered_by[i] = vi + 1;
      } else if (!twice[i]) {
        twice[i] = true;
        add(c, session, {view_id, id},
            covered_by[i] == vi + 1
                ? fmt::format("summary '{}' covers node '{}' twice", view_id, id)
                : fmt::format("node '{}' is covered twice in the render (again by summary '{}')", id, view_id));
      }
    });
  }
  for (const auto& id : reads.quoted)
    if (!quoted_covered.count(id))
      add(c, session, {id}, fmt::format("the recap quotes node '{}', which the rendered summary does not cover", id));
  return covered_by;
}

/// Every message node on HEAD's spine is rendered raw or inside a rendered view node.
void check_spine_covered(const RenderCheck& k, const Spine& spine,
                         const std::vector<std::uint32_t>& covered_by) {
  for (std::int64_t seq : spine.uncovered)
    if (covered_by[k.chain.find(seq)] == 0) {
      std::string id = id_at(k.store, seq);
      add(k.c, k.session, {id},
          fmt::format("node '{}' on HEAD's spine is neither rendered nor inside the rendered summary", id));
    }
}

/// Warns of an active summary whose whole coverage is on the spine but that the render did not apply.
void check_unapplied_summary(const RenderCheck& k, const Spine& spine) {
  const std::string& session = k.session;
  auto active = k.store.active_summary(session);
  if (active && k.r.summary != std::optional<std::string>(active->id)) {
    bool any = false, all_on = true;
    for_each_covered(k.store, active->seq, session, [&](const std::string&, std::optional<std::int64_t> seq) {
      any = true;
      all_on = all_on && seq && spine.has(k.chain, *seq);
    });
    if (any && all_on)
      warn(k.c, session, {active->id},
           fmt::format("active summary '{}' covers a segment of HEAD's spine but was not applied (its predecessor is "
                       "not the segment's splice point); HEAD renders raw",
                       active->id));
  }
}

/// Warns of each tool-pairing repair the render made.
void warn_repairs(const RenderCheck& k) {
  for (const auto& rp : k.r.repairs) {
    if (rp.kind == "synthetic_result")
      warn(k.c, k.session, {rp.node},
           fmt::format("tool call '{}' in node '{}' has no result in the rendered context: the render adds a synthetic "
                       "error result",
                       rp.tool_use_id, rp.node));
    else
      warn(k.c, k.session, {rp.node},
           fmt::format("tool result for '{}' in node '{}' has no call in the rendered context: rendered as text",
                       rp.tool_use_id, rp.node));
  }
}

/// I5 for the render in hr (made by render_head with the same strategy).
void check_render(Store& store, const std::string& session, const Chain& chain, Check& c, const HeadRender& hr,
                  StrategyLabel strategy = StrategyLabel::rolling) {
  const std::size_t v0 = c.violations.size(), w0 = c.warnings.size();
  const Rendered& r = hr.r;
  LcmLabel label{c, v0, w0, strategy == StrategyLabel::lcm};
  // Render warnings (an unapplied summary or fold) are the rolling render's to report, once.
  if (strategy != StrategyLabel::lcm)
    for (const auto& w : r.warnings) warn(c, session, {r.head}, w);

  const RenderCheck k{store, session, chain, c, r};
  const RenderReads reads = sort_reads(k);
  Spine spine = walk_spine(store, chain, session, r.head, reads.raw);
  check_raw_on_spine(k, reads, spine);
  const std::vector<std::uint32_t> covered_by = check_view_coverage(k, reads, spine);
  check_spine_covered(k, spine, covered_by);
  if (strategy == StrategyLabel::lcm) {
    check_pairing(hr.openai["messages"], hr.anthropic["messages"], session, c);
    return;
  }
  // An active summary whose whole coverage is on the spine but that the render did not apply.
  check_unapplied_summary(k, spine);
  warn_repairs(k);
  check_pairing(hr.openai["messages"], hr.anthropic["messages"], session, c);
}

// ---------------------------------------------------------------- I10

/// The messages of a render that a later append cannot change: everything except the last
/// message, and except a trailing assistant turn whose tool answers may still arrive.
std::size_t stable_prefix(const Json& msgs, bool openai) {
  std::size_t n = msgs.empty() ? 0 : msgs.size() - 1;
  auto open_turn = [&](const Json& m) {
    if (openai) return m["role"] == "tool" || (m["role"] == "assistant" && m.contains("tool_calls"));
    if (m["role"] != "assistant") return false;
    for (const auto& b : m["content"])
      if (json_str(b, "type") == "tool_use") return true;
    return false;
  };
  while (n > 0 && open_turn(msgs[n - 1])) --n;
  return n;
}

/// I10 for HEAD's render a (render_head, strategy rolling): a second render gives the same bytes,
/// and the render from HEAD's predecessor is a prefix of a's (prompt-cache stability).
void check_determinism(Store& store, const std::string& session, const std::string& head, const HeadRender& a,
                       Check& c) {
  Rendered b;
  try {
    b = render_context(store, session, RenderOptions{});
  } catch (const Error&) {
    add(c, session, {head}, fmt::format("rendering HEAD '{}' failed the second time only", head));
    return;
  }
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const char* name = f == RenderFormat::openai ? "openai" : "anthropic";
    // Equal ordered JSON values (same keys, same order, equal values) serialize to equal bytes.
    if (render_to_json(a.r, f) != render_to_json(b, f))
      add(c, session, {head}, fmt::format("rendering HEAD '{}' twice gave different bytes ({})", head, name));
  }

  // Prompt-cache stability: the render from HEAD's predecessor is a prefix of HEAD's render.
  auto pred = store.predecessor_of(head);
  if (!pred) return;
  Rendered p;
  try {
    RenderOptions o;
    o.head = *pred;
    p = render_context(store, session, o);
  } catch (const Error&) {
    return;  // a predecessor outside the session: I2
  }
  auto fold_ids = [](const Rendered& x) {
    std::vector<std::string> ids;
    for (const auto& f : x.folds) ids.push_back(f.id);
    return ids;
  };
  // A different summary state is a different prefix by design.
  if (p.summary != a.r.summary || fold_ids(p) != fold_ids(a.r)) return;
  // A result that arrives late (after other turns) replaces the synthetic result the earlier
  // render carried: the prefix changes by the repair policy, not by a defect in the ledger. The
  // call is named by its node and counted: a tool_use id given to several calls (found by
  // fuzz/import_codex) can leave another call, even of the same node, answered synthetically in
  // both renders.
  std::map<std::pair<std::string, std::string>, int> synthetic;  // (node, tool_use id) -> p's count - a's
  for (const auto& rp : p.repairs)
    if (rp.kind == "synthetic_result") ++synthetic[{rp.node, rp.tool_use_id}];
  for (const auto& rp : a.r.repairs)
    if (rp.kind == "synthetic_result") --synthetic[{rp.node, rp.tool_use_id}];
  const bool late_result =
      std::any_of(synthetic.begin(), synthetic.end(), [](const auto& kv) { return kv.second > 0; });
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const char* name = f == RenderFormat::openai ? "openai" : "anthropic";
    const Json pb = render_request_body(p, f);
    const Json& hb = f == RenderFormat::openai ? a.openai : a.anthropic;
    const Json& pm = pb["messages"];
    const Json& hm = hb["messages"];
    std::size_t n = stable_prefix(pm, f == RenderFormat::openai);
    for (std::size_t i = 0; i < n; ++i) {
      // Json equality of the ordered form: the same keys in the same order with equal values,
      // which is what equal serialized bytes need.
      if (i >= hm.size() || pm[i] != hm[i]) {
        if (late_result) {
          warn(c, session, {head, *pred},
               fmt::format("HEAD '{}' answers a tool call that the render at '{}' had to answer synthetically; the "
                           "rendered prefix changes from {} message {} on (prompt caches miss once)",
                           head, *pred, name, i));
          break;
        }
        add(c, session, {head, *pred},
            fmt::format("appending HEAD '{}' changed the rendered prefix before it ({} message {} differs from the "
                        "render at '{}'): prompt caches would miss",
                        head, name, i, *pred));
        break;
      }
    }
    // Before the first user or assistant message the leading run of system messages is still
    // open (no request was sendable, so no cache holds it): a system message joins it.
    if (f == RenderFormat::anthropic && !pm.empty() && pb.value("system", "") != hb.value("system", ""))
      add(c, session, {head, *pred}, fmt::format("appending HEAD '{}' changed the rendered system prompt", head));
  }
}

// ---------------------------------------------------------------- I4 (supersession chain)

/// One active rolling summary at a time (docs/invariants.md "I4"): a rolling summary that names
/// the summary it supersedes must name the one that was active when it was appended. Two summaries superseding the same predecessor were made active
/// by two concurrent compactions, neither absorbing the other. Forks are skipped (their copied
/// metadata names the source's summaries).
void check_supersession(Store& store, const std::vector<std::string>& sessions, Check& c) {
  for (const auto& session : sessions) {
    auto info = store.session(session);
    if (!info || info->kind == "fork") continue;
    for (const auto& s : store.view_nodes(session, kind::kSummary)) {
      auto it = s.metadata.find("supersedes");
      if (it == s.metadata.end() || !it->is_string()) continue;
      if (!is_rolling_summary(s)) continue;
      auto before = store.active_summary(session, s.seq - 1);
      std::string claimed = it->get<std::string>();
      if (!before || before->id != claimed)
        add(c, session, {s.id, claimed},
            fmt::format("rolling summary '{}' supersedes '{}', but the active summary when it was written was {}: two "
                        "rolling summaries were active at once (concurrent compactions); only the newest is consulted",
                        s.id, claimed, before ? "'" + before->id + "'" : std::string("none")));
    }
  }
}

// ---------------------------------------------------------------- I11

/// Stored bytes of parsed nodes verify keeps per session for its repeated renders (Store node
/// cache): 8 MiB of JSON text, some tens of MB parsed, under the 64 MB peak-RSS target (issue 6).
constexpr std::size_t kVerifyNodeCacheBytes = 8u << 20;

void check_sqlite(Store& store, Check& c, bool quick = false) {
  {
    const char* pragma = quick ? "quick_check" : "integrity_check";
    auto st = store.db().prepare(fmt::format("PRAGMA {}", pragma));
    while (st.step()) {
      std::string row = st.text(0);
      if (row != "ok") add(c, "", {}, fmt::format("sqlite {}: {}", pragma, row));
    }
  }
  // Foreign keys. PRAGMA foreign_key_check over the whole file reads every row of nodes again (a
  // full pass at 10^6 nodes, 3-4 s); nodes' two keys are checked through their indexes instead,
  // and every other table with PRAGMA foreign_key_check(table).
  std::vector<std::string> tables;
  {
    auto t = store.db().prepare(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name <> 'nodes' "
        "ORDER BY name");
    while (t.step()) tables.push_back(t.text(0));
  }
  for (const auto& table : tables) {
    auto st = store.db().prepare(fmt::format("PRAGMA foreign_key_check(\"{}\")", table));
    while (st.step())
      add(c, "", {},
          fmt::format("table '{}' row {} references a row of '{}' that does not exist (foreign key {})", st.text(0),
                      st.is_null(1) ? std::string("?") : std::to_string(st.int64(1)), st.text(2), st.int64(3)));
  }
  // nodes.session -> sessions(id) and nodes.predecessor -> nodes(id) (share/schema/001_init.sql),
  // each read through its index.
  struct NodeKey {
    const char* sql;
    const char* target;
    const char* key;
  };
  for (const NodeKey& k :
       {NodeKey{"SELECT n.seq FROM nodes n INDEXED BY nodes_session_seq "
                "WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = n.session)",
                "sessions", "session"},
        NodeKey{"SELECT p.seq FROM nodes p INDEXED BY nodes_predecessor WHERE p.predecessor IS NOT NULL "
                "AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = p.predecessor)",
                "nodes", "predecessor"}}) {
    auto st = store.db().prepare(k.sql);
    while (st.step())
      add(c, "", {},
          fmt::format("table 'nodes' row {} references a row of '{}' that does not exist (foreign key {})",
                      st.int64(0), k.target, k.key));
  }
}

Json violations_json(const std::vector<Violation>& vs) {
  Json out = Json::array();
  for (const auto& v : vs)
    out.push_back(Json{{"session", v.session.empty() ? Json(nullptr) : Json(v.session)},
                       {"nodes", v.nodes},
                       {"message", v.message}});
  return out;
}

/// CPU seconds of the calling thread spent per check, printed to stderr when on. I11 on its own
/// thread is timed there (the "I11" lap in the main thread is the wait for it).
struct Profile {
  Environment* env = nullptr;  ///< where the figures go (diagnostics); null: no profile
  bool on = false;
  bool rss = false;
  double last = 0;
  std::map<std::string, double> seconds;
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  void lap(const char* id) {
    if (!on) return;
    double t = now();
    if (std::string(id) != "-") seconds[id] += t - last;
    last = t;
    if (rss) {
      std::FILE* f = std::fopen("/proc/self/status", "r");
      char line[256];
      while (f && std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmHWM:", 6) == 0) {
          std::string_view text(line);
          while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
          env->diagnostic(fmt::format("after {}: {}", id, text));
        }
      if (f) std::fclose(f);
    }
  }
  void print() const {
    if (!on) return;
    for (const auto& [id, sec] : seconds) env->diagnostic(fmt::format("verify profile: {} {:.2f} s CPU", id, sec));
  }
};

/// A check --quick leaves out (needs_render in kInvariants), reported as skipped.
Check skipped_check(const char* id) {
  Check c = make_check(id);
  c.skipped = true;
  c.skipped_reason = "--quick: render-based check not run";
  return c;
}

/// The checks verify_invariants fills; the database-wide ones (I3, I7, I8, I11) may be filled by
/// the second thread.
struct Checks {
  Check i1 = make_check("I1");
  Check i2 = make_check("I2");
  Check i4 = make_check("I4");  // per session in the loop, then the chain
  Check i5 = make_check("I5");
  Check i6 = make_check("I6");
  Check i10 = make_check("I10");
  Check i11 = make_check("I11");
  Check i3, i7, i8, i9;
};

/// The database-wide checks that read through their own statements (I11, I3, I7, I8) over st;
/// cpu receives the CPU seconds of each.
void check_db_wide(Store& st, const std::vector<std::string>& sessions, bool quick, bool profile, Checks& k,
                   std::map<std::string, double>& cpu) {
  Profile p;
  p.on = profile;
  p.lap("-");
  check_sqlite(st, k.i11, quick);
  p.lap("I11");
  k.i3 = check_summary_coverage(st, sessions);
  p.lap("I3");
  k.i7 = check_compaction_log(st, sessions);
  p.lap("I7");
  k.i8 = check_lcm_tree(st, sessions);
  p.lap("I8");
  cpu = p.seconds;
}

/// The per-session checks of session s: I1, I2, I6 and, unless quick, I5, I10 and I4's
/// per-session part. An unknown session is an I6 violation.
void check_session(Store& store, const std::string& s, bool quick, Checks& k, Profile& prof,
                   std::optional<NodeCacheScope>& node_cache) {
  if (!store.session(s)) {
    add(k.i6, s, {}, fmt::format("session '{}' does not exist", s));
    return;
  }
  Chain chain;
  check_ledger(store, s, k.i1, k.i2, chain, !quick);
  prof.lap("I1 I2");
  check_head(store, s, k.i6);
  prof.lap("I6");
  if (quick) return;
  // One render of HEAD serves I5 and I10; the node cache lets I10's second render and its
  // predecessor's render reuse the parsed nodes (bounded: kVerifyNodeCacheBytes).
  node_cache->clear();
  std::optional<HeadRender> hr;
  if (auto head = store.head(s)) {  // no HEAD: I6 reports a session with nodes and none
    hr = render_head(store, s, *head, k.i5, StrategyLabel::rolling);
    if (hr) check_render(store, s, chain, k.i5, *hr);
    if (!store.summary_ranges(s, StrategyLabel::lcm).empty())
      if (auto lr = render_head(store, s, *head, k.i5, StrategyLabel::lcm))
        check_render(store, s, chain, k.i5, *lr, StrategyLabel::lcm);
    prof.lap("I5");
    if (hr) check_determinism(store, s, *head, *hr, k.i10);
    prof.lap("I10");
  }
  check_active_summary(store, s, k.i4, hr ? &hr->r : nullptr);  // renders HEAD itself when that failed
  prof.lap("I4");
}

}  // namespace

VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions) {
  return verify_invariants(store, sessions, VerifyOptions{});
}

VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions, const VerifyOptions& opts) {
  VerifyReport report;
  report.sessions = sessions;
  report.quick = opts.quick;
  Checks k;

  // CTXFOLD_VERIFY_PROFILE=1: CPU seconds per check on stderr (bench/verify.sh, bench/README.md).
  Profile prof;
  prof.env = opts.env;
  prof.on = opts.env && opts.env->variable("CTXFOLD_VERIFY_PROFILE");
  prof.rss = prof.on && opts.env->variable("CTXFOLD_VERIFY_PROFILE_RSS");
  prof.lap("-");
  auto step = [&](const std::string& phase, std::int64_t done, std::int64_t total) {
    if (opts.progress) opts.progress(phase, done, total);
  };
  const std::int64_t n_sessions = static_cast<std::int64_t>(sessions.size());
  std::int64_t done_sessions = 0;
  step("sessions", 0, n_sessions);
  // The database-wide checks that read through their own statements (I11 reads every page of the
  // file; I3, I7 and I8 stream the covers rows and the event log) share nothing with the
  // per-session checks: on a database file they run on a second read-only connection in a second
  // thread, beside the per-session checks (2 cores: verify's time is then about the longer of the
  // two, bench/verify.sh). Each thread records its own CPU seconds per check.
  std::map<std::string, double> wide_cpu;
  auto db_wide = [&](Store& st) { check_db_wide(st, sessions, opts.quick, prof.on, k, wide_cpu); };
  std::thread wide_thread;
  std::exception_ptr wide_error;
  const bool apart = store.path() != ":memory:" && !store.path().empty();
  if (apart)
    wide_thread = std::thread([&] {
      try {
        Store own = Store::open(store.path(), Store::Mode::read_only, store.token_measure());
        db_wide(own);
      } catch (...) {
        wide_error = std::current_exception();
      }
    });
  struct JoinOnExit {
    std::thread& t;
    ~JoinOnExit() {
      if (t.joinable()) t.join();
    }
  } join_wide{wide_thread};
  std::optional<NodeCacheScope> node_cache;
  if (!opts.quick) node_cache.emplace(store, kVerifyNodeCacheBytes);
  check_seq_continuity(store, k.i1);
  prof.lap("I1");
  for (const auto& s : sessions) {
    step("sessions", done_sessions++, n_sessions);
    check_session(store, s, opts.quick, k, prof, node_cache);
  }
  node_cache.reset();
  step("I3 I4 I7 I8 I9 I11", n_sessions, n_sessions);
  if (opts.quick)
    k.i4 = skipped_check("I4");
  else
    check_supersession(store, sessions, k.i4);
  prof.lap("I4");
  k.i9 = opts.quick ? skipped_check("I9") : check_fork_closure(store, sessions);
  prof.lap("I9");
  if (apart) {
    wide_thread.join();
    if (wide_error) std::rethrow_exception(wide_error);
    prof.lap("wait for the second thread");
  } else {
    db_wide(store);
  }
  for (const auto& [id, sec] : wide_cpu) prof.seconds[apart ? id + " (second thread)" : id] += sec;
  prof.print();
  if (opts.quick) {
    k.i5 = skipped_check("I5");
    k.i10 = skipped_check("I10");
  }

  for (Check* c : {&k.i1, &k.i2, &k.i3, &k.i4, &k.i5, &k.i6, &k.i7, &k.i8, &k.i9, &k.i10, &k.i11}) {
    c->ok = c->violations.empty();
    if (c->source.empty()) c->source = invariant_source(c->id);
    report.ok = report.ok && c->ok;
    report.checks.push_back(std::move(*c));
  }
  return report;
}

Json verify_to_json(const VerifyReport& r) {
  Json checks = Json::array();
  for (const auto& c : r.checks)
    checks.push_back(Json{{"id", c.id},
                          {"name", c.name},
                          {"ok", c.ok},
                          {"violations", violations_json(c.violations)},
                          {"warnings", violations_json(c.warnings)},
                          {"source", c.source}});
  for (std::size_t k = 0; k < r.checks.size(); ++k)
    if (r.checks[k].skipped) {
      checks[k]["skipped"] = true;
      checks[k]["skipped_reason"] = r.checks[k].skipped_reason;
    }
  Json out{{"schema", "ctxfold.verify/1"}, {"ok", r.ok}, {"sessions", r.sessions}, {"checks", std::move(checks)}};
  if (r.quick) out["quick"] = true;
  return out;
}

}  // namespace ctxfold
