#include "invariants/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "invariants/verify_compaction.hpp"
#include "invariants/verify_fork.hpp"
#include "invariants/verify_lcm.hpp"
#include "render/render.hpp"
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
void check_ledger(Store& store, const std::string& session, Check& c, bool digests = true) {
  auto st = store.db().prepare(
      "SELECT seq, id, predecessor, kind, role, content, metadata, covers_first, covers_last, covers_count, digest "
      "FROM nodes WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  auto covers = store.db().prepare(
      "SELECT c.node_id, EXISTS(SELECT 1 FROM nodes n WHERE n.id = c.node_id) FROM covers c "
      "WHERE c.summary_seq=?1 ORDER BY c.pos");
  std::int64_t prev = 0;
  while (st.step()) {
    Node n;
    n.seq = st.int64(0);
    n.id = st.text(1);
    n.session = session;
    n.predecessor = st.opt_text(2);
    n.kind = st.text(3);
    n.role = st.opt_text(4).value_or("");
    const std::string stored_digest = st.text(10);
    if (n.seq <= prev)
      add(c, session, {n.id}, fmt::format("node '{}' has seq {} after seq {}: seq must strictly increase", n.id, n.seq,
                                          prev));
    prev = n.seq;
    const bool view = n.is_view();
    Sha256 hash;
    if (digests) {
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
    if (view) {
      if (digests) hash.update("[");
      std::int64_t count = 0;
      std::string first, last;
      covers.reset();
      covers.bind(1, n.seq);
      while (covers.step()) {
        std::string id = covers.text(0);
        if (digests) {
          if (count > 0) hash.update(",");
          hash.update(dump_json(Json(id)));
        }
        if (covers.int64(1) == 0)
          add(c, session, {n.id, id}, fmt::format("node '{}', covered by view node '{}', no longer exists", id, n.id));
        if (count == 0) first = id;
        last = std::move(id);
        ++count;
      }
      if (digests) hash.update("]}");
      const bool columns = !st.is_null(7);
      if (count > 0 && columns) {
        if (st.text(7) != first || st.opt_text(8).value_or("") != last || st.opt_int64(9).value_or(-1) != count)
          add(c, session, {n.id},
              fmt::format("view node '{}' records coverage {}..{} ({}) but its covers list runs {}..{} ({})", n.id,
                          st.text(7), st.opt_text(8).value_or(""),
                          st.is_null(9) ? std::string("null") : std::to_string(st.int64(9)), first, last, count));
      } else if ((count == 0) != !columns) {
        add(c, session, {n.id},
            fmt::format("view node '{}' has coverage columns and covers rows that disagree (one is empty)", n.id));
      }
    }
    if (!digests) continue;
    std::string digest = hash.hex();
    if (digest != stored_digest)
      add(c, session, {n.id},
          fmt::format("node '{}' (seq {}) changed after it was written: its content digest is {} but {} was recorded "
                      "when it was appended",
                      n.id, n.seq, short_digest(digest), short_digest(stored_digest)));
  }
}

// ---------------------------------------------------------------- I2

void check_dag(Store& store, const std::string& session, Check& c) {
  std::vector<std::string> suspects;  // nodes whose predecessor is not older: where a cycle can close
  auto st = store.db().prepare(
      "SELECT n.id, n.seq, n.predecessor, p.session, p.seq, n.metadata FROM nodes n "
      "LEFT JOIN nodes p ON p.id = n.predecessor WHERE n.session=?1 ORDER BY n.seq");
  st.bind(1, session);
  while (st.step()) {
    std::string id = st.text(0);
    std::int64_t seq = st.int64(1);
    auto pred = st.opt_text(2);
    if (!pred) {
      std::string meta = st.text(5);
      if (meta.find("missing_predecessor") != std::string::npos) {
        try {
          Json m = parse_json(meta);
          std::string missing = json_str(m, "missing_predecessor");
          if (!missing.empty())
            warn(c, session, {id},
                 fmt::format("node '{}' is a root because its source names parent '{}', which the source never wrote",
                             id, missing));
        } catch (const std::exception&) {
          add(c, session, {id}, fmt::format("node '{}' has metadata that is not valid JSON", id));
        }
      }
      continue;
    }
    if (st.is_null(3)) {
      add(c, session, {id, *pred},
          fmt::format("node '{}' names predecessor '{}', which does not exist in the database", id, *pred));
      continue;
    }
    std::string psession = st.text(3);
    std::int64_t pseq = st.int64(4);
    if (psession != session)
      add(c, session, {id, *pred},
          fmt::format("node '{}' names predecessor '{}' from another session '{}'", id, *pred, psession));
    if (pseq >= seq) {
      if (psession == session) suspects.push_back(id);
      add(c, session, {id, *pred},
          fmt::format("predecessor '{}' (seq {}) is not older than its node '{}' (seq {})", *pred, pseq, id, seq));
    }
  }

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

/// HEAD's full spine, held as seqs (8 bytes a node) instead of ids.
struct Spine {
  std::vector<std::int64_t> seqs;       ///< every node on the spine, ascending
  std::vector<std::int64_t> uncovered;  ///< message nodes on the spine that are not in `raw`, ascending
  std::unordered_set<std::string> raw_on_spine;  ///< the ids of `raw` that lie on the spine
};

/// Walks HEAD's spine. In a well-formed chain every predecessor is older, so one scan of the
/// session in descending seq order meets the spine in walk order; a predecessor not met below its
/// node (a newer one, a cycle, or none in the session: I2 reports those) is followed by lookups
/// from there, stopping at a node seen before or outside the session. raw: the ids rendered raw.
Spine walk_spine(Store& store, const std::string& session, const std::string& head,
                 const std::unordered_set<std::string>& raw) {
  Spine sp;
  auto visit = [&](std::int64_t seq, const std::string& id, const std::string& kind) {
    sp.seqs.push_back(seq);
    if (raw.count(id)) sp.raw_on_spine.insert(id);
    else if (kind == kind::kMessage) sp.uncovered.push_back(seq);
  };
  std::optional<std::string> want = head;
  {
    auto st = store.db().prepare("SELECT seq, id, predecessor, kind FROM nodes WHERE session=?1 ORDER BY seq DESC");
    st.bind(1, session);
    while (want && st.step()) {
      if (st.text(1) != *want) continue;
      visit(st.int64(0), *want, st.text(3));
      want = st.opt_text(2);
    }
  }
  if (want) {
    std::unordered_set<std::int64_t> seen(sp.seqs.begin(), sp.seqs.end());
    auto st = store.db().prepare("SELECT seq, predecessor, kind, session FROM nodes WHERE id=?1");
    while (want) {
      st.reset();
      st.bind(1, *want);
      if (!st.step() || st.text(3) != session || !seen.insert(st.int64(0)).second) break;
      visit(st.int64(0), *want, st.text(2));
      want = st.opt_text(1);
    }
  }
  std::sort(sp.seqs.begin(), sp.seqs.end());
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

bool contains(const std::vector<std::int64_t>& sorted, std::int64_t v) {
  return std::binary_search(sorted.begin(), sorted.end(), v);
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
void check_render(Store& store, const std::string& session, Check& c, const std::string& strategy = "rolling") {
  auto head = store.head(session);
  if (!head) return;  // I6 reports a session with nodes and no HEAD
  const std::size_t v0 = c.violations.size(), w0 = c.warnings.size();
  Rendered r;
  try {
    RenderOptions ro;
    ro.strategy = strategy;
    r = render_context(store, session, ro);
  } catch (const Error& e) {
    add(c, session, {*head}, fmt::format("rendering HEAD '{}' failed: {}", *head, e.what()));
    return;
  }
  struct Label {
    Check& c;
    std::size_t v0, w0;
    bool on;
    ~Label() {
      if (!on) return;
      for (std::size_t i = v0; i < c.violations.size(); ++i) c.violations[i].message = "lcm render: " + c.violations[i].message;
      for (std::size_t i = w0; i < c.warnings.size(); ++i) c.warnings[i].message = "lcm render: " + c.warnings[i].message;
    }
  } label{c, v0, w0, strategy == "lcm"};
  // Render warnings (an unapplied summary or fold) are the rolling render's to report, once.
  if (strategy != "lcm")
    for (const auto& w : r.warnings) warn(c, session, {r.head}, w);

  // Ids a rolling recap quotes are read through the recap, not rendered raw: they must be covered
  // by the rendered summary (checked below) and are not counted as raw renders.
  std::unordered_set<std::string> quoted;
  for (const auto& sec : r.sections)
    if (sec.kind == "recap") quoted.insert(sec.ids.begin(), sec.ids.end());
  // Every view node the render substituted: the rolling summary and the lcm folds.
  std::vector<std::string> views;
  if (r.summary) views.push_back(*r.summary);
  for (const auto& f : r.folds) views.push_back(f.id);
  std::unordered_set<std::string> view_set(views.begin(), views.end());
  if (r.notes) view_set.insert(*r.notes);  // the notes cover nothing: they are read, not substituted
  std::unordered_set<std::string> raw;  // raw reads: what the render holds, small
  for (const auto& id : r.reads) {
    if (view_set.count(id)) continue;
    if (quoted.count(id)) continue;
    if (!raw.insert(id).second) add(c, session, {id}, fmt::format("node '{}' is rendered more than once", id));
  }
  Spine spine = walk_spine(store, session, *head, raw);
  {
    std::unordered_set<std::string> said;
    for (const auto& id : r.reads)
      if (raw.count(id) && !spine.raw_on_spine.count(id) && said.insert(id).second)
        add(c, session, {id}, fmt::format("node '{}' is rendered but is not on HEAD's spine", id));
  }
  // Seqs covered by the rendered view nodes (each with the view covering it), sorted below.
  std::vector<std::pair<std::int64_t, std::string>> covered_by;
  std::unordered_set<std::string> quoted_covered;
  for (const auto& view_id : views) {
    auto s = store.node(view_id, false);
    if (!s) continue;
    const bool is_summary = r.summary && *r.summary == view_id;
    for_each_covered(store, s->seq, session, [&](const std::string& id, std::optional<std::int64_t> seq) {
      if (!seq || !contains(spine.seqs, *seq))
        add(c, session, {s->id, id},
            fmt::format("summary '{}' was rendered but covers node '{}', which is not on HEAD's spine: its coverage "
                        "is not wholly on the spine, so it must not be applied",
                        s->id, id));
      if (raw.count(id))
        add(c, session, {s->id, id},
            fmt::format("node '{}' is rendered raw and also inside rendered summary '{}'", id, s->id));
      if (is_summary && quoted.count(id)) quoted_covered.insert(id);
      if (seq) covered_by.emplace_back(*seq, s->id);
    });
  }
  std::sort(covered_by.begin(), covered_by.end());
  std::vector<std::int64_t> covered;
  covered.reserve(covered_by.size());
  for (std::size_t i = 0; i < covered_by.size(); ++i) {
    if (i > 0 && covered_by[i].first == covered_by[i - 1].first) {
      if (i < 2 || covered_by[i - 2].first != covered_by[i].first) {
        std::string id = id_at(store, covered_by[i].first);
        const std::string& again = covered_by[i].second;
        add(c, session, {again, id},
            again == covered_by[i - 1].second
                ? fmt::format("summary '{}' covers node '{}' twice", again, id)
                : fmt::format("node '{}' is covered twice in the render (again by summary '{}')", id, again));
      }
      continue;
    }
    covered.push_back(covered_by[i].first);
  }
  for (const auto& id : quoted)
    if (!quoted_covered.count(id))
      add(c, session, {id}, fmt::format("the recap quotes node '{}', which the rendered summary does not cover", id));
  for (std::int64_t seq : spine.uncovered)
    if (!contains(covered, seq)) {
      std::string id = id_at(store, seq);
      add(c, session, {id},
          fmt::format("node '{}' on HEAD's spine is neither rendered nor inside the rendered summary", id));
    }
  if (strategy == "lcm") {
    check_pairing(render_request_body(r, RenderFormat::openai)["messages"],
                  render_request_body(r, RenderFormat::anthropic)["messages"], session, c);
    return;
  }
  // An active summary whose whole coverage is on the spine but that the render did not apply.
  if (auto active = store.active_summary(session); active && r.summary != std::optional<std::string>(active->id)) {
    bool any = false, all_on = true;
    for_each_covered(store, active->seq, session, [&](const std::string&, std::optional<std::int64_t> seq) {
      any = true;
      all_on = all_on && seq && contains(spine.seqs, *seq);
    });
    if (any && all_on)
      warn(c, session, {active->id},
           fmt::format("active summary '{}' covers a segment of HEAD's spine but was not applied (its predecessor is "
                       "not the segment's splice point); HEAD renders raw",
                       active->id));
  }
  for (const auto& rp : r.repairs) {
    if (rp.kind == "synthetic_result")
      warn(c, session, {rp.node},
           fmt::format("tool call '{}' in node '{}' has no result in the rendered context: the render adds a synthetic "
                       "error result",
                       rp.tool_use_id, rp.node));
    else
      warn(c, session, {rp.node},
           fmt::format("tool result for '{}' in node '{}' has no call in the rendered context: rendered as text",
                       rp.tool_use_id, rp.node));
  }
  check_pairing(render_request_body(r, RenderFormat::openai)["messages"],
                render_request_body(r, RenderFormat::anthropic)["messages"], session, c);
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

void check_determinism(Store& store, const std::string& session, Check& c) {
  auto head = store.head(session);
  if (!head) return;
  Rendered a, b;
  try {
    a = render_context(store, session, RenderOptions{});
    b = render_context(store, session, RenderOptions{});
  } catch (const Error&) {
    return;  // I5 reports a render that fails
  }
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const char* name = f == RenderFormat::openai ? "openai" : "anthropic";
    std::string x = dump_json(render_to_json(a, f)), y = dump_json(render_to_json(b, f));
    std::string z = dump_json(render_to_json(a, f));
    if (x != y || x != z)
      add(c, session, {*head}, fmt::format("rendering HEAD '{}' twice gave different bytes ({})", *head, name));
  }

  // Prompt-cache stability: the render from HEAD's predecessor is a prefix of HEAD's render.
  auto pred = store.predecessor_of(*head);
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
  if (p.summary != a.summary || fold_ids(p) != fold_ids(a)) return;
  // A result that arrives late (after other turns) replaces the synthetic result the earlier
  // render carried: the prefix changes by the repair policy, not by a defect in the ledger.
  bool late_result = false;
  for (const auto& rp : p.repairs)
    if (rp.kind == "synthetic_result" &&
        std::none_of(a.repairs.begin(), a.repairs.end(), [&](const Repair& x) {
          return x.kind == rp.kind && x.tool_use_id == rp.tool_use_id;
        }))
      late_result = true;
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const char* name = f == RenderFormat::openai ? "openai" : "anthropic";
    Json pm = render_request_body(p, f)["messages"];
    Json hm = render_request_body(a, f)["messages"];
    std::size_t n = stable_prefix(pm, f == RenderFormat::openai);
    for (std::size_t i = 0; i < n; ++i) {
      if (i >= hm.size() || dump_json(pm[i]) != dump_json(hm[i])) {
        if (late_result) {
          warn(c, session, {*head, *pred},
               fmt::format("HEAD '{}' answers a tool call that the render at '{}' had to answer synthetically; the "
                           "rendered prefix changes from {} message {} on (prompt caches miss once)",
                           *head, *pred, name, i));
          break;
        }
        add(c, session, {*head, *pred},
            fmt::format("appending HEAD '{}' changed the rendered prefix before it ({} message {} differs from the "
                        "render at '{}'): prompt caches would miss",
                        *head, name, i, *pred));
        break;
      }
    }
    if (f == RenderFormat::anthropic && render_request_body(p, f).value("system", "") !=
                                            render_request_body(a, f).value("system", ""))
      add(c, session, {*head, *pred},
          fmt::format("appending HEAD '{}' changed the rendered system prompt", *head));
  }
}

// ---------------------------------------------------------------- I4 (supersession chain)

/// One active rolling summary at a time (seed 000 §1; seed 001 "Blocking via a log-recorded
/// lock"): a rolling summary that names the summary it supersedes must name the one that was
/// active when it was appended. Two summaries superseding the same predecessor were made active
/// by two concurrent compactions, neither absorbing the other. Forks are skipped (their copied
/// metadata names the source's summaries).
void check_supersession(Store& store, const std::vector<std::string>& sessions, Check& c) {
  for (const auto& session : sessions) {
    auto info = store.session(session);
    if (!info || info->kind == "fork") continue;
    for (const auto& s : store.view_nodes(session, kind::kSummary)) {
      auto it = s.metadata.find("supersedes");
      if (it == s.metadata.end() || !it->is_string()) continue;
      auto strategy = s.metadata.find("strategy");
      if (strategy != s.metadata.end() && strategy->is_string() && strategy->get<std::string>() != "rolling") continue;
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

void check_sqlite(Store& store, Check& c, bool quick = false) {
  {
    const char* pragma = quick ? "quick_check" : "integrity_check";
    auto st = store.db().prepare(fmt::format("PRAGMA {}", pragma));
    while (st.step()) {
      std::string row = st.text(0);
      if (row != "ok") add(c, "", {}, fmt::format("sqlite {}: {}", pragma, row));
    }
  }
  auto st = store.db().prepare("PRAGMA foreign_key_check");
  while (st.step()) {
    add(c, "", {},
        fmt::format("table '{}' row {} references a row of '{}' that does not exist (foreign key {})", st.text(0),
                    st.is_null(1) ? std::string("?") : std::to_string(st.int64(1)), st.text(2), st.int64(3)));
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

/// CPU seconds spent per check, printed to stderr when on.
struct Profile {
  bool on = false;
  std::clock_t last = 0;
  std::map<std::string, double> seconds;
  void lap(const char* id) {
    if (!on) return;
    std::clock_t now = std::clock();
    if (std::string(id) != "-") seconds[id] += static_cast<double>(now - last) / CLOCKS_PER_SEC;
    last = now;
  }
  void print() const {
    if (!on) return;
    for (const auto& [id, sec] : seconds) fmt::print(stderr, "verify profile: {} {:.2f} s CPU\n", id, sec);
  }
};

}  // namespace

std::string invariant_source(const std::string& id) {
  static const std::map<std::string, std::string> sources = {
      {"I1", "PRODUCT.md §4.1; seed 000 §2, §7.1"},
      {"I2", "PRODUCT.md §4.2; seed 000 §2"},
      {"I3", "PRODUCT.md §4.3; seed 000 §2"},
      {"I4", "PRODUCT.md §4.4; seed 000 §1, §3"},
      {"I5", "PRODUCT.md §4.5; seed 000 §3"},
      {"I6", "PRODUCT.md §4.6; seed 000 §5"},
      {"I7", "PRODUCT.md §4.7; seed 001 \"Blocking via a log-recorded lock\""},
      {"I8", "PRODUCT.md §4.8; seed 002 \"lcm\""},
      {"I9", "PRODUCT.md §4.9; seed 002 \"source references\""},
      {"I10", "PRODUCT.md §4.10; seed 000 §3, §7"},
      {"I11", "PRODUCT.md §4.11; SQLite integrity_check and foreign_key_check"},
  };
  auto it = sources.find(id);
  return it == sources.end() ? std::string() : it->second;
}

VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions) {
  return verify_invariants(store, sessions, VerifyOptions{});
}

VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions, const VerifyOptions& opts) {
  VerifyReport report;
  report.sessions = sessions;
  report.quick = opts.quick;
  Check i1{"I1", "append-only ledger", true, {}, {}};
  Check i2{"I2", "well-formed DAG", true, {}, {}};
  Check i5{"I5", "render completeness", true, {}, {}};
  Check i6{"I6", "HEAD integrity", true, {}, {}};
  Check i10{"I10", "determinism", true, {}, {}};
  Check i11{"I11", "SQLite integrity", true, {}, {}};
  auto skip = [](const char* id, const char* name) {
    Check c{id, name, true, {}, {}};
    c.skipped = true;
    c.skipped_reason = "--quick: render-based check not run";
    return c;
  };

  // CTXFOLD_VERIFY_PROFILE=1: CPU seconds per check on stderr (bench/verify.sh, bench/README.md).
  Profile prof;
  prof.on = std::getenv("CTXFOLD_VERIFY_PROFILE") != nullptr;
  prof.lap("-");
  auto step = [&](const std::string& phase, std::int64_t done, std::int64_t total) {
    if (opts.progress) opts.progress(phase, done, total);
  };
  const std::int64_t n_sessions = static_cast<std::int64_t>(sessions.size());
  std::int64_t done_sessions = 0;
  step("sessions", 0, n_sessions);
  check_seq_continuity(store, i1);
  prof.lap("I1");
  for (const auto& s : sessions) {
    step("sessions", done_sessions++, n_sessions);
    if (!store.session(s)) {
      add(i6, s, {}, fmt::format("session '{}' does not exist", s));
      continue;
    }
    check_ledger(store, s, i1, !opts.quick);
    prof.lap("I1");
    check_dag(store, s, i2);
    prof.lap("I2");
    check_head(store, s, i6);
    prof.lap("I6");
    if (!opts.quick) {
      check_render(store, s, i5);
      if (!store.summary_ranges(s, "lcm").empty()) check_render(store, s, i5, "lcm");
      prof.lap("I5");
      check_determinism(store, s, i10);
      prof.lap("I10");
    }
  }
  step("I11 SQLite integrity", n_sessions, n_sessions);
  check_sqlite(store, i11, opts.quick);
  prof.lap("I11");
  step("I3 I4 I7 I8 I9", n_sessions, n_sessions);
  // Compaction invariants live next door (invariants/verify_compaction.hpp).
  Check i3 = check_summary_coverage(store, sessions);
  prof.lap("I3");
  Check i4 = opts.quick ? skip("I4", "one active rolling summary") : check_active_summary(store, sessions);
  if (!opts.quick) check_supersession(store, sessions, i4);
  prof.lap("I4");
  Check i7 = check_compaction_log(store, sessions);
  prof.lap("I7");
  Check i8 = check_lcm_tree(store, sessions);
  prof.lap("I8");
  Check i9 = opts.quick ? skip("I9", "fork closure") : check_fork_closure(store, sessions);
  prof.lap("I9");
  prof.print();
  if (opts.quick) {
    i5 = skip("I5", "render completeness");
    i10 = skip("I10", "determinism");
  }

  for (Check* c : {&i1, &i2, &i3, &i4, &i5, &i6, &i7, &i8, &i9, &i10, &i11}) {
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
