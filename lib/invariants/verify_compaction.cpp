#include "invariants/verify_compaction.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <functional>
#include <algorithm>
#include <utility>

#include "invariants/catalog.hpp"
#include "invariants/checks.hpp"
#include "model/strategy_label.hpp"
#include "render/render.hpp"
#include "util/error.hpp"
#include "util/json_sax.hpp"

namespace ctxfold {
namespace {

/// Reads the tool_use ids and tool_result ids of a content array from its SAX events
/// (sax_parse_json: simdjson, nlohmann's events): only the top-level blocks' "type", "id" and
/// "tool_use_id" strings are kept, no tree is built (a covered segment can hold a million nodes and
/// their tool outputs).
class ToolIdHandler : public JsonEvents {
 public:
  ToolIdHandler(std::vector<std::string>& calls, std::vector<std::string>& results)
      : calls_(calls), results_(results) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(std::int64_t) override { return true; }
  bool number_unsigned(std::uint64_t) override { return true; }
  bool number_float(double) override { return true; }
  bool string(std::string_view v) override {
    if (depth_ == 2 && in_array_) {
      if (key_ == "type") type_ = v;
      else if (key_ == "id") id_ = v;
      else if (key_ == "tool_use_id") use_id_ = v;
    }
    return true;
  }
  bool start_object() override {
    ++depth_;
    if (depth_ == 2 && in_array_) {
      type_.clear();
      id_.clear();
      use_id_.clear();
    }
    return true;
  }
  bool end_object() override {
    if (depth_ == 2 && in_array_) {
      if (type_ == "tool_use") calls_.push_back(id_);
      else if (type_ == "tool_result") results_.push_back(use_id_);
    }
    --depth_;
    return true;
  }
  bool start_array() override {
    if (++depth_ == 1) in_array_ = true;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(std::string_view k) override {
    if (depth_ == 2) key_ = k;
    return true;
  }

 private:
  std::vector<std::string>& calls_;
  std::vector<std::string>& results_;
  int depth_ = 0;
  bool in_array_ = false;  // the root is an array (content of a node)
  std::string key_, type_, id_, use_id_;
};

/// The tool_use ids a stored content array calls and the tool_result ids it answers (as
/// tool_use_ids/tool_result_ids of the parsed node give them), read only when the text can hold
/// either (most nodes are plain text). Malformed content gives none (I1 reports a changed node).
void tool_ids(std::string_view content_json, std::vector<std::string>& calls, std::vector<std::string>& results) {
  calls.clear();
  results.clear();
  if (content_json.find("\"tool_") == std::string_view::npos) return;
  ToolIdHandler h(calls, results);
  if (!sax_parse_json(content_json, h)) {
    calls.clear();
    results.clear();
  }
}

/// The session's summaries (without their covers lists), oldest first.
std::vector<Node> summaries_of(Store& store, const std::string& session) {
  return store.view_nodes(session, kind::kSummary, kLatest, false);
}

std::int64_t covers_count(const Node& s) {
  auto it = s.metadata.find("covers");
  if (it == s.metadata.end() || !it->is_object()) return 0;
  auto c = it->find("count");
  return c != it->end() && c->is_number_integer() ? c->get<std::int64_t>() : 0;
}

std::uint64_t id_hash(const std::string& id) { return std::hash<std::string>{}(id); }


std::string origin_of(const Node& s) { return json_str(s.metadata, "origin"); }

void add(Check& c, bool warning, const std::string& session, std::vector<std::string> nodes, std::string message) {
  Violation v{session, std::move(nodes), std::move(message)};
  if (warning) {
    c.warnings.push_back(std::move(v));
  } else {
    c.violations.push_back(std::move(v));
    c.ok = false;
  }
}

/// One summary's unbalanced edge candidates: a result inside whose call is not inside, a call
/// inside whose result is not inside.
struct Edges {
  std::string summary;
  bool imported = false;
  std::set<std::string> left, right;
};

/// What I3 gathers from one summary's covers list.
struct CoverWalk {
  std::size_t rows = 0;  ///< covers rows read
  bool structural = true;
  std::string first;                  ///< the first covered id
  std::optional<std::string> splice;  ///< the predecessor of the first covered node
  std::vector<std::int64_t> seqs;     ///< of the covered nodes of the session, in covers order
  std::unordered_set<std::string> open_calls, pending_results;
  std::vector<std::uint64_t> calls_inside, results_inside;
  std::int64_t tokens = 0;  ///< estimated tokens of the covered nodes of the session (I7)
};

/// Streams summary s's covers list (st: check_summary_coverage's statement) with what I3 needs of
/// each covered node: a node of another session, a view node under a rolling or region summary, a
/// break in the chain and a start at a tool record are reported as they come.
CoverWalk walk_covers(Stmt& st, const std::string& session, const Node& s, Check& c) {
  const bool imported = origin_of(s) == "import";
  const bool rolling = is_rolling_summary(s);
  const bool region = has_label(s.metadata, StrategyLabel::region);
  st.reset();
  st.bind(1, s.seq);
  CoverWalk w;
  std::size_t& i = w.rows;
  bool started = false;
  std::string prev;
  std::vector<std::string> calls, results;
  for (; st.step(); ++i) {
    std::string id = st.text(0);
    std::string before = std::exchange(prev, id);
    if (i == 0) w.first = id;
    if (st.is_null(1) || st.text(1) != session) {
      add(c, false, session, {s.id, id},
          fmt::format("summary '{}' covers '{}', which is not a node of session '{}'", s.id, id, session));
      w.structural = false;
      continue;
    }
    auto pred = st.opt_text(2);
    std::string kind = st.text(3);
    std::string role = st.opt_text(4).value_or("");
    w.seqs.push_back(st.int64(6));
    w.tokens += st.int64(7);
    if (i == 0) w.splice = pred;
    if ((rolling || region) && (kind == kind::kSummary || kind == kind::kArchive || kind == kind::kNotes)) {
      add(c, false, session, {s.id, id},
          fmt::format("{} summary '{}' covers view node '{}': coverage must name real turns",
                      label_name(region ? StrategyLabel::region : StrategyLabel::rolling), s.id, id));
      w.structural = false;
    }
    if (i > 0 && pred != before) {
      add(c, false, session, {s.id, id},
          fmt::format("summary '{}' coverage is not a contiguous chain segment: the predecessor of '{}' is not '{}'",
                      s.id, id, before));
      w.structural = false;
    }
    if (!started && kind != kind::kEvent) {
      started = true;
      if (role == role::kTool)
        add(c, imported, session, {s.id, id},
            fmt::format("summary '{}' coverage starts with tool record '{}', not at a unit boundary", s.id, id));
    }
    if (kind != kind::kMessage) continue;
    tool_ids(st.view(5), calls, results);
    for (auto& r : results) {
      w.results_inside.push_back(id_hash(r));
      if (!w.open_calls.erase(r)) w.pending_results.insert(std::move(r));
    }
    for (auto& call : calls) {
      w.calls_inside.push_back(id_hash(call));
      if (!w.pending_results.erase(call)) w.open_calls.insert(std::move(call));
    }
  }
  return w;
}

/// Reports each node summary s covers more than once (seqs: the walk's, sorted here); false when any is.
bool check_covered_once(Store& store, const std::string& session, const Node& s,
                        std::vector<std::int64_t>& seqs, Check& c) {
  bool structural = true;
  std::sort(seqs.begin(), seqs.end());
  for (std::size_t k = 1; k < seqs.size(); ++k)
    if (seqs[k] == seqs[k - 1] && (k < 2 || seqs[k - 2] != seqs[k])) {
      auto& look = store.db().cached("SELECT id FROM nodes WHERE seq=?1");
      ResetOnExit reset(look);
      look.bind(1, seqs[k]);
      std::string id = look.step() ? look.text(0) : std::to_string(seqs[k]);
      add(c, false, session, {s.id, id}, fmt::format("summary '{}' covers '{}' twice", s.id, id));
      structural = false;
    }
  return structural;
}

/// The edge candidates of a structurally sound walk: the calls and results left unmatched inside.
Edges edge_candidates(const Node& s, CoverWalk& w) {
  // A duplicated call or result (the same exchange twice in one source) leaves its second copy
  // unmatched above; the hashes of everything inside settle those.
  std::sort(w.calls_inside.begin(), w.calls_inside.end());
  std::sort(w.results_inside.begin(), w.results_inside.end());
  auto inside = [](const std::vector<std::uint64_t>& v, const std::string& id) {
    return std::binary_search(v.begin(), v.end(), id_hash(id));
  };
  Edges e{s.id, origin_of(s) == "import", {}, {}};
  for (const auto& r : w.pending_results)
    if (!inside(w.calls_inside, r)) e.left.insert(r);
  for (const auto& call : w.open_calls)
    if (!inside(w.results_inside, call)) e.right.insert(call);
  return e;
}

/// Reports the edge candidates whose other half exists in the session at all (one scan of its
/// message nodes settles that).
void check_edges(Store& store, const std::string& session, const std::vector<Edges>& edges, Check& c) {
  // Which of the candidates' other halves exist in the session at all.
  std::unordered_set<std::string> want_calls, want_results, have_calls, have_results;
  for (const auto& e : edges) {
    want_calls.insert(e.left.begin(), e.left.end());
    want_results.insert(e.right.begin(), e.right.end());
  }
  {
    auto scan = store.db().prepare_scan("SELECT content FROM nodes WHERE session=?1 AND kind=?2 ORDER BY seq");
    scan.bind(1, session).bind(2, kind::kMessage);
    std::vector<std::string> calls, results;
    while (scan.step()) {
      tool_ids(scan.view(0), calls, results);
      for (const auto& x : calls)
        if (want_calls.count(x)) have_calls.insert(x);
      for (const auto& x : results)
        if (want_results.count(x)) have_results.insert(x);
    }
  }
  for (const auto& e : edges) {
    for (const auto& id : e.left)
      if (have_calls.count(id))
        add(c, e.imported, session, {e.summary},
            fmt::format("summary '{}' covers the result of tool call '{}' but not the call (unbalanced first edge)",
                        e.summary, id));
    for (const auto& id : e.right)
      if (have_results.count(id))
        add(c, e.imported, session, {e.summary},
            fmt::format("summary '{}' covers tool call '{}' but not its result (unbalanced last edge)", e.summary, id));
  }
}

}  // namespace

Check check_summary_coverage(Store& store, const std::vector<std::string>& sessions, CoveredTokensBySummary* covered) {
  Check c = make_check("I3");
  // One summary's covers list streamed with what I3 needs of each covered node: memory is O(1)
  // per covered node (its seq, and 8-byte hashes of the tool ids inside) whatever the coverage.
  auto st = store.db().prepare_scan(
      "SELECT c.node_id, n.session, n.predecessor, n.kind, n.role, n.content, n.seq, n.tokens FROM covers c "
      "LEFT JOIN nodes n ON n.id = c.node_id WHERE c.summary_seq = ?1 ORDER BY c.pos");
  for (const auto& session : sessions) {
    // Edge candidates of every summary: a result inside whose call is not inside, a call inside
    // whose result is not inside. They count only when the other half exists in the session,
    // which one scan settles afterwards (and only when there is a candidate at all).
    std::vector<Edges> edges;
    for (const auto& s : summaries_of(store, session)) {
      CoverWalk w = walk_covers(st, session, s, c);
      if (covered) (*covered)[s.seq] = CoveredTokens{w.tokens, static_cast<std::int64_t>(w.rows)};
      if (w.rows == 0) {
        add(c, false, session, {s.id}, fmt::format("summary '{}' covers nothing", s.id));
        continue;
      }
      if (!check_covered_once(store, session, s, w.seqs, c)) w.structural = false;
      if (!w.structural) continue;
      if (s.predecessor != w.splice)
        add(c, false, session, {s.id, w.first},
            fmt::format("summary '{}' has predecessor '{}' but its splice point (the predecessor of '{}') is '{}'", s.id,
                        s.predecessor.value_or("null"), w.first, w.splice.value_or("null")));
      Edges e = edge_candidates(s, w);
      if (!e.left.empty() || !e.right.empty()) edges.push_back(std::move(e));
    }
    if (edges.empty()) continue;
    check_edges(store, session, edges, c);
  }
  return c;
}

Check check_active_summary(Store& store, const std::vector<std::string>& sessions) {
  Check c = make_check("I4");
  for (const auto& session : sessions) check_active_summary(store, session, c, nullptr);
  return c;
}

void check_active_summary(Store& store, const std::string& session, Check& c, const Rendered* head_render) {
  {
    // Region summaries: two may not partly overlap (one containing another whole is a nesting).
    {
      auto regions = store.summary_ranges(session, StrategyLabel::region);
      std::vector<std::unordered_set<std::string>> sets;
      for (const auto& f : regions) {
        auto v = store.covers_of(f.seq);
        sets.emplace_back(v.begin(), v.end());
      }
      for (std::size_t i = 0; i < regions.size(); ++i)
        for (std::size_t j = i + 1; j < regions.size(); ++j) {
          std::size_t shared = 0;
          for (const auto& id : sets[i]) shared += sets[j].count(id);
          if (shared > 0 && shared < sets[i].size() && shared < sets[j].size())
            add(c, false, session, {regions[i].id, regions[j].id},
                fmt::format("region summaries '{}' and '{}' partly overlap ({} shared nodes)", regions[i].id,
                            regions[j].id, shared));
        }
    }
    std::vector<Node> rolling;
    for (auto& s : summaries_of(store, session))
      if (is_rolling_summary(s) && covers_count(s) > 0) rolling.push_back(std::move(s));
    auto active = store.active_summary(session);
    if (!rolling.empty() && (!active || active->id != rolling.back().id))
      add(c, false, session, {rolling.back().id},
          fmt::format("the active rolling summary should be the newest one, '{}'", rolling.back().id));
    if (rolling.size() > 1) {
      const Node& act = rolling.back();
      auto st = store.db().prepare(
          "SELECT count(*) FROM covers a WHERE a.summary_seq = ?1 AND EXISTS "
          "(SELECT 1 FROM covers b WHERE b.node_id = a.node_id AND b.summary_seq = ?2)");
      for (std::size_t i = 0; i + 1 < rolling.size(); ++i) {
        const Node& e = rolling[i];
        st.reset();
        st.bind(1, e.seq).bind(2, act.seq);
        st.step();
        std::int64_t shared = st.int64(0), total = covers_count(e);
        if (shared > 0 && shared < total)
          add(c, true, session, {act.id, e.id},
              fmt::format("active summary '{}' does not extend superseded summary '{}' ({} of its {} covered nodes); "
                          "the superseded summary is not consulted and the rest renders raw",
                          act.id, e.id, shared, total));
      }
    }
    // Rendering consults the active summary only.
    try {
      Rendered own;
      if (!head_render) own = render_context(store, session, RenderOptions{});
      const Rendered& r = head_render ? *head_render : own;
      std::size_t n = 0;
      for (const auto& item : r.items)
        if (item.kind == kind::kSummary && is_rolling_summary(item)) {
          ++n;
          if (!active || item.id != active->id)
            add(c, false, session, {item.id},
                fmt::format("the render of HEAD consults summary '{}', which is not the active one", item.id));
        }
      if (n > 1)
        add(c, false, session, {}, fmt::format("the render of HEAD holds {} rolling summaries, at most one is active", n));
      // Region summaries (docs/strategies.md "region summaries") may be active together: the ones the
      // render substitutes stand for pairwise disjoint segments, none inside the rolling one's.
      // Pairwise in SQL (covers_node index), so a 10^6-node coverage is never held in memory.
      std::vector<const decltype(r.items)::value_type*> subs;
      for (const auto& item : r.items)
        if (item.kind == kind::kSummary) subs.push_back(&item);
      if (subs.size() > 1) {
        auto q = store.db().prepare(
            "SELECT a.node_id FROM covers a JOIN covers b ON b.node_id = a.node_id AND b.summary_seq = ?2 "
            "WHERE a.summary_seq = ?1 ORDER BY a.pos");
        for (std::size_t i = 0; i < subs.size(); ++i)
          for (std::size_t j = i + 1; j < subs.size(); ++j) {
            q.reset();
            q.bind(1, subs[i]->seq).bind(2, subs[j]->seq);
            while (q.step())
              add(c, false, session, {subs[i]->id, subs[j]->id},
                  fmt::format("the render of HEAD substitutes both '{}' and '{}' for node '{}': active segments must "
                              "be disjoint",
                              subs[i]->id, subs[j]->id, q.text(0)));
          }
      }
    } catch (const Error&) {
      // no HEAD: nothing is rendered, nothing consulted
    }
  }
}

/// One active rolling summary at a time (docs/invariants.md "I4"): a rolling summary that names
/// the summary it supersedes must name the one that was active when it was appended (checks.hpp).
void verify_detail::check_supersession(Store& store, const std::vector<std::string>& sessions, Check& c) {
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

Check check_compaction_log(Store& store, const std::vector<std::string>& sessions,
                           const CoveredTokensBySummary* covered) {
  Check c = make_check("I7");
  for (const auto& session : sessions) {
    struct Bracket {
      int starts = 0, summaries = 0, ends = 0;
      std::set<std::string> summary_ids;  // from compact/summary and compact/end
    };
    std::map<std::string, Bracket> brackets;
    for (const auto& e : store.events(session, "compact/")) {
      std::string ref = e.ref.value_or("");
      Bracket& b = brackets[ref];
      if (e.type == "compact/start") ++b.starts;
      else if (e.type == "compact/summary") {
        ++b.summaries;
        if (auto id = json_str(e.payload, "summary_id"); !id.empty()) b.summary_ids.insert(id);
      } else if (e.type == "compact/end") ++b.ends;
    }
    std::vector<Node> summaries = summaries_of(store, session);
    std::map<std::string, std::vector<std::string>> landed;  // compaction id -> summary ids
    for (const auto& s : summaries)
      if (auto ref = json_str(s.metadata, "compaction"); !ref.empty()) landed[ref].push_back(s.id);

    for (const auto& [ref, b] : brackets) {
      if (b.starts == 0) {
        add(c, false, session, {}, fmt::format("compaction '{}' has compact/end or compact/summary but no compact/start", ref));
        continue;
      }
      if (b.starts > 1)
        add(c, false, session, {}, fmt::format("compaction '{}' has {} compact/start records", ref, b.starts));
      if (b.ends > 1) add(c, false, session, {}, fmt::format("compaction '{}' has {} compact/end records", ref, b.ends));
      if (b.ends == 0) {
        if (landed.count(ref) || b.summaries > 0)
          add(c, false, session, landed.count(ref) ? landed[ref] : std::vector<std::string>{},
              fmt::format("compaction '{}' landed a summary but has no compact/end", ref));
        else
          add(c, true, session, {},
              fmt::format("compact/start '{}' has no compact/end: an inert orphan of an interrupted attempt", ref));
      }
    }

    auto& sum = store.db().cached(
        "SELECT coalesce(sum(n.tokens), 0), count(*) FROM covers c LEFT JOIN nodes n ON n.id = c.node_id "
        "AND n.session = ?2 WHERE c.summary_seq = ?1");
    ResetOnExit sum_reset(sum);
    for (const auto& s : summaries) {
      const std::string origin = origin_of(s);
      const bool imported = origin == "import";
      if (origin == "compact") {
        std::string ref = json_str(s.metadata, "compaction");
        auto it = brackets.find(ref);
        // A fork's copy keeps its compaction id, whose bracket lives in the source session.
        const bool fork_copy = s.metadata.contains("forked_from");
        if (!fork_copy && (ref.empty() || it == brackets.end() || !it->second.summary_ids.count(s.id)))
          add(c, false, session, {s.id},
              fmt::format("summary '{}' has no compact/summary provenance record for compaction '{}'", s.id, ref));
        const Json prov = s.metadata.contains("provenance") ? s.metadata["provenance"] : Json();
        bool ok = prov.is_object() && prov.contains("summarizer") && prov["summarizer"].is_object() &&
                  !json_str(prov["summarizer"], "kind").empty() && prov["summarizer"].contains("model") &&
                  !json_str(prov, "prompt_version").empty() && !json_str(prov, "input_digest").empty();
        if (!ok)
          add(c, false, session, {s.id},
              fmt::format("summary '{}' lacks its provenance (summarizer kind and model, prompt_version, input_digest)",
                          s.id));
      } else if (!imported && !s.metadata.contains("provenance") && !s.metadata.contains("source")) {
        add(c, true, session, {s.id}, fmt::format("summary '{}' records no provenance or source", s.id));
      }
      CoveredTokens sums;
      if (auto it = covered ? covered->find(s.seq) : CoveredTokensBySummary::const_iterator();
          covered && it != covered->end()) {
        sums = it->second;
      } else {
        sum.reset();
        sum.bind(1, s.seq).bind(2, session);
        sum.step();
        sums = CoveredTokens{sum.int64(0), sum.int64(1)};
      }
      if (sums.rows > 0 && s.tokens >= sums.tokens)
        add(c, imported, session, {s.id},
            fmt::format("summary '{}' ({} estimated tokens) is not smaller than the {} tokens it covers", s.id, s.tokens,
                        sums.tokens));
    }
  }
  return c;
}

}  // namespace ctxfold
