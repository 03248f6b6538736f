#include "invariants/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "invariants/verify_compaction.hpp"
#include "invariants/verify_fork.hpp"
#include "invariants/verify_lcm.hpp"
#include "render/render.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

/// The chain shape of one session, loaded once: what I2 and I5 walk.
struct ChainRow {
  std::int64_t seq = 0;
  std::optional<std::string> predecessor;
  std::string kind;
};

struct Chain {
  std::unordered_map<std::string, ChainRow> rows;
  std::vector<std::string> order;  ///< ids in seq order
};

Chain load_chain(Store& store, const std::string& session) {
  Chain c;
  auto st = store.db().prepare("SELECT id, seq, predecessor, kind FROM nodes WHERE session=?1 ORDER BY seq");
  st.bind(1, session);
  while (st.step()) {
    std::string id = st.text(0);
    c.rows[id] = ChainRow{st.int64(1), st.opt_text(2), st.text(3)};
    c.order.push_back(std::move(id));
  }
  return c;
}

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

void check_ledger(Store& store, const std::string& session, Check& c, bool digests = true) {
  std::int64_t prev = 0;
  store.for_each_node(session, [&](const Node& stored) {
    if (stored.seq <= prev)
      add(c, session, {stored.id}, fmt::format("node '{}' has seq {} after seq {}: seq must strictly increase", stored.id,
                                               stored.seq, prev));
    prev = stored.seq;
    Node n = stored;
    n.metadata.erase("covers");  // derived by the store from its covers columns, not part of the digest
    std::string digest = digests ? node_digest(n) : stored.digest;
    if (digest != stored.digest)
      add(c, session, {stored.id},
          fmt::format("node '{}' (seq {}) changed after it was written: its content digest is {} but {} was recorded "
                      "when it was appended",
                      stored.id, stored.seq, short_digest(digest), short_digest(stored.digest)));
    if (stored.is_view()) {
      auto it = stored.metadata.find("covers");
      if (!stored.covers_ids.empty() && it != stored.metadata.end()) {
        if (json_str(*it, "first") != stored.covers_ids.front() || json_str(*it, "last") != stored.covers_ids.back() ||
            (*it)["count"] != static_cast<std::int64_t>(stored.covers_ids.size()))
          add(c, session, {stored.id},
              fmt::format("view node '{}' records coverage {}..{} ({}) but its covers list runs {}..{} ({})", stored.id,
                          json_str(*it, "first"), json_str(*it, "last"), dump_json((*it)["count"]),
                          stored.covers_ids.front(), stored.covers_ids.back(), stored.covers_ids.size()));
      } else if (stored.covers_ids.empty() != (it == stored.metadata.end())) {
        add(c, session, {stored.id},
            fmt::format("view node '{}' has coverage columns and covers rows that disagree (one is empty)", stored.id));
      }
      for (const auto& id : stored.covers_ids)
        if (!store.has_node(id))
          add(c, session, {stored.id, id},
              fmt::format("node '{}', covered by view node '{}', no longer exists", id, stored.id));
    }
    return true;
  });
}

// ---------------------------------------------------------------- I2

void check_dag(Store& store, const std::string& session, const Chain& chain, Check& c) {
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
    if (pseq >= seq)
      add(c, session, {id, *pred},
          fmt::format("predecessor '{}' (seq {}) is not older than its node '{}' (seq {})", *pred, pseq, id, seq));
  }

  // Cycles: colour walk over the session's predecessor links (0 new, 1 on the current path, 2 done).
  std::unordered_map<std::string, int> colour;
  std::set<std::string> reported;
  for (const auto& start : chain.order) {
    if (colour[start] != 0) continue;
    std::vector<std::string> path;
    std::optional<std::string> cur = start;
    while (cur) {
      auto it = chain.rows.find(*cur);
      if (it == chain.rows.end()) break;  // leaves the session: reported above
      int& col = colour[*cur];
      if (col == 2) break;
      if (col == 1) {
        auto from = std::find(path.begin(), path.end(), *cur);
        std::vector<std::string> cycle(from, path.end());
        std::string key = *std::min_element(cycle.begin(), cycle.end());
        if (reported.insert(key).second) {
          std::string text;
          for (const auto& id : cycle) text += id + " -> ";
          text += *cur;
          add(c, session, cycle, fmt::format("predecessor cycle: {}", text));
        }
        break;
      }
      col = 1;
      path.push_back(*cur);
      cur = it->second.predecessor;
    }
    for (const auto& id : path) colour[id] = 2;
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

/// HEAD's full spine (every node, root first), walked in memory; stops at a cycle or a missing
/// predecessor (I2 reports those).
std::vector<std::string> full_spine(const Chain& chain, const std::string& head) {
  std::vector<std::string> spine;
  std::unordered_set<std::string> seen;
  std::optional<std::string> cur = head;
  while (cur && seen.insert(*cur).second) {
    auto it = chain.rows.find(*cur);
    if (it == chain.rows.end()) break;
    spine.push_back(*cur);
    cur = it->second.predecessor;
  }
  std::reverse(spine.begin(), spine.end());
  return spine;
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
void check_render(Store& store, const std::string& session, const Chain& chain, Check& c,
                  const std::string& strategy = "rolling") {
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

  std::vector<std::string> spine = full_spine(chain, *head);
  std::unordered_set<std::string> on_spine(spine.begin(), spine.end());

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
  std::map<std::string, int> rendered;  // raw reads
  for (const auto& id : r.reads) {
    if (view_set.count(id)) continue;
    if (quoted.count(id)) continue;
    if (++rendered[id] == 2) add(c, session, {id}, fmt::format("node '{}' is rendered more than once", id));
    if (!on_spine.count(id))
      add(c, session, {id}, fmt::format("node '{}' is rendered but is not on HEAD's spine", id));
  }
  std::unordered_set<std::string> covered;
  for (const auto& view_id : views) {
    auto s = store.node(view_id, true);
    if (s) {
      for (const auto& id : s->covers_ids) {
        if (!covered.insert(id).second)
          add(c, session, {s->id, id},
              fmt::format("node '{}' is covered twice in the render (again by summary '{}')", id, s->id));
        if (!on_spine.count(id))
          add(c, session, {s->id, id},
              fmt::format("summary '{}' was rendered but covers node '{}', which is not on HEAD's spine: its coverage "
                          "is not wholly on the spine, so it must not be applied",
                          s->id, id));
        if (rendered.count(id))
          add(c, session, {s->id, id},
              fmt::format("node '{}' is rendered raw and also inside rendered summary '{}'", id, s->id));
      }
    }
  }
  std::unordered_set<std::string> recap_source;
  if (r.summary)
    if (auto s = store.node(*r.summary, true)) recap_source.insert(s->covers_ids.begin(), s->covers_ids.end());
  for (const auto& id : quoted)
    if (!recap_source.count(id))
      add(c, session, {id}, fmt::format("the recap quotes node '{}', which the rendered summary does not cover", id));
  for (const auto& id : spine) {
    auto it = chain.rows.find(id);
    if (it == chain.rows.end() || it->second.kind != kind::kMessage) continue;
    if (!rendered.count(id) && !covered.count(id))
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
    auto cov = store.covers_of(active->seq);
    bool all_on = !cov.empty() && std::all_of(cov.begin(), cov.end(), [&](const std::string& id) { return on_spine.count(id) > 0; });
    if (all_on)
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

  check_seq_continuity(store, i1);
  for (const auto& s : sessions) {
    if (!store.session(s)) {
      add(i6, s, {}, fmt::format("session '{}' does not exist", s));
      continue;
    }
    Chain chain = load_chain(store, s);
    check_ledger(store, s, i1, !opts.quick);
    check_dag(store, s, chain, i2);
    check_head(store, s, i6);
    if (!opts.quick) {
      check_render(store, s, chain, i5);
      if (!store.summary_ranges(s, "lcm").empty()) check_render(store, s, chain, i5, "lcm");
      check_determinism(store, s, i10);
    }
  }
  check_sqlite(store, i11, opts.quick);
  // Compaction invariants live next door (invariants/verify_compaction.hpp).
  Check i3 = check_summary_coverage(store, sessions);
  Check i4 = opts.quick ? skip("I4", "one active rolling summary") : check_active_summary(store, sessions);
  if (!opts.quick) check_supersession(store, sessions, i4);
  Check i7 = check_compaction_log(store, sessions);
  Check i8 = check_lcm_tree(store, sessions);
  Check i9 = opts.quick ? skip("I9", "fork closure") : check_fork_closure(store, sessions);
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
