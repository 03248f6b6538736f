#include "invariants/verify_compaction.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "render/render.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

struct Brief {
  std::optional<std::string> predecessor;
  std::string kind;
  std::string role;
  std::int64_t tokens = 0;
  std::vector<std::string> calls;
  std::vector<std::string> results;
};

/// A compact index of one session's nodes, plus its summaries with covers.
struct SessionIndex {
  std::unordered_map<std::string, Brief> nodes;
  std::unordered_map<std::string, std::vector<std::string>> call_holders, result_holders;
  std::vector<Node> summaries;  // kind summary, with covers, oldest first
};

SessionIndex index_session(Store& store, const std::string& session) {
  SessionIndex ix;
  store.for_each_node(
      session,
      [&](const Node& n) {
        Brief b;
        b.predecessor = n.predecessor;
        b.kind = n.kind;
        b.role = n.role;
        b.tokens = n.tokens;
        if (n.kind == kind::kMessage) {
          b.calls = tool_use_ids(n);
          b.results = tool_result_ids(n);
          for (const auto& id : b.calls) ix.call_holders[id].push_back(n.id);
          for (const auto& id : b.results) ix.result_holders[id].push_back(n.id);
        }
        if (n.kind == kind::kSummary) ix.summaries.push_back(n);
        ix.nodes.emplace(n.id, std::move(b));
        return true;
      },
      kLatest, true);
  return ix;
}

bool is_rolling(const Node& s) {
  auto it = s.metadata.find("strategy");
  return it == s.metadata.end() || it->is_null() || (it->is_string() && it->get<std::string>() == "rolling");
}

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

}  // namespace

Check check_summary_coverage(Store& store, const std::vector<std::string>& sessions) {
  Check c{"I3", "summary coverage", true, {}, {}};
  for (const auto& session : sessions) {
    SessionIndex ix = index_session(store, session);
    for (const auto& s : ix.summaries) {
      const bool imported = origin_of(s) == "import";
      const auto& cov = s.covers_ids;
      if (cov.empty()) {
        add(c, false, session, {s.id}, fmt::format("summary '{}' covers nothing", s.id));
        continue;
      }
      bool structural = true;
      std::unordered_set<std::string> inside;
      for (std::size_t i = 0; i < cov.size(); ++i) {
        auto it = ix.nodes.find(cov[i]);
        if (it == ix.nodes.end()) {
          add(c, false, session, {s.id, cov[i]},
              fmt::format("summary '{}' covers '{}', which is not a node of session '{}'", s.id, cov[i], session));
          structural = false;
          continue;
        }
        if (!inside.insert(cov[i]).second) {
          add(c, false, session, {s.id, cov[i]}, fmt::format("summary '{}' covers '{}' twice", s.id, cov[i]));
          structural = false;
        }
        if (is_rolling(s) && (it->second.kind == kind::kSummary || it->second.kind == kind::kArchive ||
                              it->second.kind == kind::kNotes)) {
          add(c, false, session, {s.id, cov[i]},
              fmt::format("rolling summary '{}' covers view node '{}': coverage must name real turns", s.id, cov[i]));
          structural = false;
        }
        if (i > 0 && it->second.predecessor != cov[i - 1]) {
          add(c, false, session, {s.id, cov[i]},
              fmt::format("summary '{}' coverage is not a contiguous chain segment: the predecessor of '{}' is not '{}'",
                          s.id, cov[i], cov[i - 1]));
          structural = false;
        }
      }
      if (!structural) continue;
      const auto& first = ix.nodes.at(cov.front());
      if (s.predecessor != first.predecessor)
        add(c, false, session, {s.id, cov.front()},
            fmt::format("summary '{}' has predecessor '{}' but its splice point (the predecessor of '{}') is '{}'", s.id,
                        s.predecessor.value_or("null"), cov.front(), first.predecessor.value_or("null")));
      // Edges: tool-pairing balance and unit boundaries.
      for (const auto& id : cov) {
        const auto& b = ix.nodes.at(id);
        if (b.kind == kind::kEvent) continue;
        if (b.role == role::kTool)
          add(c, imported, session, {s.id, id},
              fmt::format("summary '{}' coverage starts with tool record '{}', not at a unit boundary", s.id, id));
        break;
      }
      std::set<std::string> left, right;
      for (const auto& id : cov) {
        const auto& b = ix.nodes.at(id);
        for (const auto& r : b.results) {
          auto ch = ix.call_holders.find(r);
          if (ch == ix.call_holders.end()) continue;
          bool in = false;
          for (const auto& h : ch->second) in = in || inside.count(h);
          if (!in) left.insert(r);
        }
        for (const auto& call : b.calls) {
          auto rh = ix.result_holders.find(call);
          if (rh == ix.result_holders.end()) continue;
          bool in = false;
          for (const auto& h : rh->second) in = in || inside.count(h);
          if (!in) right.insert(call);
        }
      }
      for (const auto& id : left)
        add(c, imported, session, {s.id},
            fmt::format("summary '{}' covers the result of tool call '{}' but not the call (unbalanced first edge)", s.id,
                        id));
      for (const auto& id : right)
        add(c, imported, session, {s.id},
            fmt::format("summary '{}' covers tool call '{}' but not its result (unbalanced last edge)", s.id, id));
    }
  }
  return c;
}

Check check_active_summary(Store& store, const std::vector<std::string>& sessions) {
  Check c{"I4", "one active rolling summary", true, {}, {}};
  for (const auto& session : sessions) {
    std::vector<Node> rolling;
    for (auto& s : store.view_nodes(session, kind::kSummary, kLatest, true))
      if (is_rolling(s) && !s.covers_ids.empty()) rolling.push_back(std::move(s));
    auto active = store.active_summary(session);
    if (!rolling.empty() && (!active || active->id != rolling.back().id))
      add(c, false, session, {rolling.back().id},
          fmt::format("the active rolling summary should be the newest one, '{}'", rolling.back().id));
    if (rolling.size() > 1) {
      const Node& act = rolling.back();
      std::unordered_set<std::string> act_cov(act.covers_ids.begin(), act.covers_ids.end());
      for (std::size_t i = 0; i + 1 < rolling.size(); ++i) {
        const Node& e = rolling[i];
        std::size_t shared = 0;
        for (const auto& id : e.covers_ids) shared += act_cov.count(id);
        if (shared > 0 && shared < e.covers_ids.size())
          add(c, true, session, {act.id, e.id},
              fmt::format("active summary '{}' does not extend superseded summary '{}' ({} of its {} covered nodes); "
                          "the superseded summary is not consulted and the rest renders raw",
                          act.id, e.id, shared, e.covers_ids.size()));
      }
    }
    // Rendering consults the active summary only.
    try {
      Rendered r = render_context(store, session, RenderOptions{});
      std::size_t n = 0;
      for (const auto& item : r.items)
        if (item.kind == kind::kSummary && is_rolling(item)) {
          ++n;
          if (!active || item.id != active->id)
            add(c, false, session, {item.id},
                fmt::format("the render of HEAD consults summary '{}', which is not the active one", item.id));
        }
      if (n > 1)
        add(c, false, session, {}, fmt::format("the render of HEAD holds {} rolling summaries, at most one is active", n));
    } catch (const Error&) {
      // no HEAD: nothing is rendered, nothing consulted
    }
  }
  return c;
}

Check check_compaction_log(Store& store, const std::vector<std::string>& sessions) {
  Check c{"I7", "compaction bookkeeping", true, {}, {}};
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
    SessionIndex ix = index_session(store, session);
    std::map<std::string, std::vector<std::string>> landed;  // compaction id -> summary ids
    for (const auto& s : ix.summaries)
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

    for (const auto& s : ix.summaries) {
      const std::string origin = origin_of(s);
      const bool imported = origin == "import";
      if (origin == "compact") {
        std::string ref = json_str(s.metadata, "compaction");
        auto it = brackets.find(ref);
        if (ref.empty() || it == brackets.end() || !it->second.summary_ids.count(s.id))
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
      std::int64_t covered = 0;
      for (const auto& id : s.covers_ids)
        if (auto it = ix.nodes.find(id); it != ix.nodes.end()) covered += it->second.tokens;
      if (!s.covers_ids.empty() && s.tokens >= covered)
        add(c, imported, session, {s.id},
            fmt::format("summary '{}' ({} estimated tokens) is not smaller than the {} tokens it covers", s.id, s.tokens,
                        covered));
    }
  }
  return c;
}

}  // namespace ctxfold
