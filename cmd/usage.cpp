#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "context.hpp"
#include "forensics/index.hpp"
#include "forensics/lineage.hpp"
#include "forensics/usage.hpp"
#include "stream.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct UsageCli {
  std::string by = "session";
  std::string prices;
  SessionFilter filter;
};

/// Tokens per model: what a row adds up, so cost is computed once per model.
using PerModel = std::map<std::string, UsageTokens>;

Json tokens_json(const UsageTokens& t) {
  return Json{{"input", t.input},
              {"cache_write_5m", t.cache_write_5m},
              {"cache_write_1h", t.cache_write_1h},
              {"cache_read", t.cache_read},
              {"output", t.output},
              {"reasoning", t.reasoning},
              {"total", t.total()}};
}

Json cost_json(const PerModel& pm, const PriceTable& table) {
  std::int64_t micro = 0;
  Json unknown = Json::array();
  Json sources = Json::array();
  for (const auto& [model, t] : pm) {
    if (t.total() == 0) continue;
    const Price* p = table.find(model);
    if (!p) {
      unknown.push_back(model.empty() ? Json("(no model recorded)") : Json(model));
      continue;
    }
    micro += cost_micro(t, *p);
    sources.push_back({{"model", model}, {"price", p->model}, {"source", p->source}, {"date", p->date}});
  }
  Json c = {{"currency", table.currency}, {"prices", sources}};
  if (unknown.empty()) {
    c["micro_units"] = micro;
    c["label"] = "estimated";
  } else {
    c["micro_units"] = nullptr;  // never 0: part of it has no price
    c["label"] = "unknown";
    c["unknown_models"] = unknown;
    c["priced_part_micro_units"] = micro;
  }
  return c;
}

UsageTokens sum(const PerModel& pm) {
  UsageTokens t;
  for (const auto& [m, x] : pm) t += x;
  return t;
}

Json row_json(const std::string& by, const std::string& key, const PerModel& pm, std::int64_t messages,
              const PriceTable& table) {
  Json models = Json::array();
  for (const auto& [m, t] : pm) models.push_back(m);
  return Json{{"by", by},
              {"key", key},
              {"messages", messages},
              {"models", models},
              {"tokens", tokens_json(sum(pm))},
              {"tokens_label", "measured"},
              {"cost", cost_json(pm, table)}};
}

std::string money(const Json& cost) {
  if (cost["micro_units"].is_null()) return "unknown";
  return fmt::format("{:.4f}", static_cast<double>(cost["micro_units"].get<std::int64_t>()) / 1e6);
}

/// The shipped price table, or the --prices file.
PriceTable price_table(const std::string& path) {
  if (path.empty()) return builtin_price_table();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Exit::environment, "io.open", fmt::format("cannot read price table '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_price_table(ss.str(), path);
}

int run_usage(Context& ctx, const UsageCli& o) {
  Store& st = ctx.db();
  const PriceTable table = price_table(o.prices);
  std::vector<SessionIndexEntry> index = session_index(st, o.filter);
  std::map<std::string, const SessionIndexEntry*> entry;
  for (const auto& e : index) entry[e.info.id] = &e;
  const std::map<std::string, SessionLineage> lineage = session_lineage(st);
  // Unfiltered lineage parents (sub-agents, forks, resumed copies), for the subtree columns.
  std::map<std::string, std::string> parent;
  for (const auto& [id, l] : lineage)
    if (l.parent && l.parent_state == "stored") parent[id] = *l.parent;
  // What each session holds in its shared prefix and is counted in another session.
  std::map<std::string, std::int64_t> replayed_counts;
  std::map<std::string, UsageTokens> replayed_tokens;

  std::map<std::string, PerModel> rows;
  std::map<std::string, std::int64_t> counts;
  std::map<std::string, PerModel> subtree;  // session view: own + every descendant's
  std::map<std::string, std::int64_t> subtree_counts;
  std::vector<std::string> order;
  for (const UsageMessage& m : usage_messages(st, lineage)) {
    for (const std::string& r : m.replayed_in) {
      ++replayed_counts[r];
      replayed_tokens[r] += m.tokens;
    }
    auto e = entry.find(m.session);
    if (e == entry.end()) continue;  // filtered out
    std::string key;
    if (o.by == "session") key = m.session;
    else if (o.by == "day") key = m.day.empty() ? "(no timestamp)" : m.day;
    else if (o.by == "model") key = m.model.empty() ? "(no model recorded)" : m.model;
    else key = e->second->project.value_or("(no project)");
    if (!rows.count(key)) order.push_back(key);
    rows[key][m.model] += m.tokens;
    ++counts[key];
    if (o.by == "session") {
      // A sub-agent's usage counts for itself and for every ancestor session too.
      std::set<std::string> seen;
      for (std::string s = m.session; seen.insert(s).second;) {
        subtree[s][m.model] += m.tokens;
        ++subtree_counts[s];
        auto p = parent.find(s);
        if (p == parent.end()) break;
        s = p->second;
      }
    }
  }
  std::string text;
  JsonLines out;
  if (o.by == "session") {
    text = fmt::format("{:<58} {:>10} {:>12} {:>12} {:>14} {:>15} {}\n", "SESSION", "MESSAGES", "OWN TOKENS", "OWN COST",
                       "+SUBAGENTS", "+SUBAGENTS COST", "REPLAYED");
    for (const auto& e : index) {
      const std::string& id = e.info.id;
      bool own = rows.count(id) > 0, sub = subtree.count(id) > 0;
      Json j = row_json("session", id, rows[id], counts[id], table);
      j["agent"] = e.agent;
      j["project"] = e.project ? Json(*e.project) : Json(nullptr);
      j["parent_session"] = e.info.parent_session ? Json(*e.info.parent_session) : Json(nullptr);
      if (!own) j["tokens_label"] = "none recorded";
      Json with = row_json("session", id, subtree[id], subtree_counts[id], table);
      j["with_subagents"] = {{"messages", with["messages"]}, {"tokens", with["tokens"]}, {"cost", with["cost"]}};
      j["lineage"] = lineage_json(e.lineage);
      j["replayed"] = {{"messages", replayed_counts[id]}, {"tokens", tokens_json(replayed_tokens[id])}};
      if (!own && !sub && !replayed_counts[id]) continue;
      if (ctx.text) {
        std::string name = std::string(static_cast<std::size_t>(e.depth) * 2, ' ') + id;
        text += fmt::format("{:<58} {:>10} {:>12} {:>12} {:>14} {:>15} {}\n", name, counts[id], sum(rows[id]).total(),
                            money(j["cost"]), sum(subtree[id]).total(), money(with["cost"]),
                            replayed_counts[id] ? fmt::format("{} of the parent's", replayed_counts[id]) : std::string("-"));
      } else {
        out.record("usage", j);
      }
    }
  } else {
    std::sort(order.begin(), order.end());
    text = fmt::format("{:<40} {:>10} {:>14} {:>12} {:>12} {:>14}\n", o.by == "day" ? "DAY" : o.by == "model" ? "MODEL" : "PROJECT",
                       "MESSAGES", "INPUT+CACHE", "OUTPUT", "TOTAL", "COST");
    for (const auto& key : order) {
      Json j = row_json(o.by, key, rows[key], counts[key], table);
      if (ctx.text) {
        UsageTokens t = sum(rows[key]);
        text += fmt::format("{:<40} {:>10} {:>14} {:>12} {:>12} {:>14}\n", key, counts[key],
                            t.input + t.cache_read + t.cache_write_5m + t.cache_write_1h, t.output, t.total(),
                            money(j["cost"]));
      } else {
        out.record("usage", j);
      }
    }
  }
  if (ctx.text) emit_text(text);
  else out.summary("ctxfold.usage/1", {{"by", o.by}, {"count", out.records()}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_usage(CLI::App& sub) {
  auto o = std::make_shared<UsageCli>();
  sub.add_option("--by", o->by, "group by session (own and with sub-agents), day, model or project")
      ->check(CLI::IsMember({"session", "day", "model", "project"}))
      ->default_val("session");
  sub.add_option("--prices", o->prices, "a price table file in share/prices.json's shape instead of the shipped one");
  sub.add_option("--since", o->filter.since, "only sessions whose last record is at or after this ISO-8601 time or date");
  sub.add_option("--until", o->filter.until, "only sessions whose first record is at or before this time or date");
  sub.add_option("--project", o->filter.project, "only sessions whose project or working directory contains this text");
  sub.add_option("--agent", o->filter.agent, "only sessions of this agent (claude-code, codex, gemini, ...)");
  return [o](Context& ctx) { return run_usage(ctx, *o); };
}

}  // namespace ctxfold::cli
