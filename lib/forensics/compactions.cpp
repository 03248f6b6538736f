#include "forensics/compactions.hpp"

#include <set>

#include "forensics/tool_events.hpp"
#include "model/identifiers.hpp"
#include "model/node.hpp"
#include "model/strategy_label.hpp"

namespace ctxfold {
namespace {

std::optional<std::int64_t> int_at(const Json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it != j.end() && it->is_number_integer()) return it->get<std::int64_t>();
  return std::nullopt;
}

/// The files and commands of the covered history (tool events of the covered nodes) that the
/// summary does not keep.
void drop_tool_events(CompactionEntry& c, const std::string& summary, ToolEventCollector col) {
  std::vector<FileEvent> files;
  std::vector<CommandEvent> commands;
  col.finish(&files, &commands);
  std::map<std::string, std::size_t> file_at;  // path -> index in dropped_files, or npos when kept
  for (const FileEvent& e : files) {
    const auto& p = e.path ? e.path : e.path_as_written;
    if (!p) continue;
    auto [it, fresh] = file_at.emplace(*p, std::string::npos);
    if (fresh) {
      ++c.files_found;
      if (summary_keeps(summary, ident::kPath, *p)) continue;
      it->second = c.dropped_files.size();
      c.dropped_files.push_back(DroppedFile{*p, {}, {}, e.call.node});
    }
    if (it->second == std::string::npos) continue;
    DroppedFile& d = c.dropped_files[it->second];
    ++d.actions[e.action];
    d.last_result = e.call.result;
  }
  std::map<std::string, std::size_t> command_at;
  for (const CommandEvent& e : commands) {
    if (!e.command || e.command->empty()) continue;
    auto [it, fresh] = command_at.emplace(*e.command, std::string::npos);
    if (fresh) {
      ++c.commands_found;
      if (summary_keeps(summary, ident::kCommand, *e.command)) continue;
      it->second = c.dropped_commands.size();
      c.dropped_commands.push_back(DroppedCommand{*e.command, {}, {}, e.call.node});
    }
    if (it->second == std::string::npos) continue;
    DroppedCommand& d = c.dropped_commands[it->second];
    d.exit_code = e.exit_code;
    d.result = e.call.result;
  }
}

}  // namespace

std::vector<CompactionEntry> session_compactions(Store& store, const std::string& session) {
  std::vector<CompactionEntry> out;
  // compact/summary events of ctxfold's own compactions, by summary id.
  std::map<std::string, Json> summary_events;
  std::map<std::string, Json> start_events;
  for (const Event& e : store.events(session, "compact/")) {
    if (e.type == "compact/start" && e.ref) start_events[*e.ref] = e.payload;
    if (e.type == "compact/summary" && e.payload.contains("summary_id") && e.payload["summary_id"].is_string())
      summary_events[e.payload["summary_id"].get<std::string>()] = e.payload;
  }
  for (const Node& v : store.view_nodes(session, kind::kSummary)) {
    CompactionEntry c;
    c.summary_id = v.id;
    c.seq = v.seq;
    const Json& m = v.metadata;
    c.strategy = m.value("strategy", std::string(label_name(StrategyLabel::rolling)));
    bool imported = m.value("origin", "") == "import";
    c.origin = imported ? m.value("format", "import") : "ctxfold";
    if (m.contains("timestamp") && m["timestamp"].is_string()) c.timestamp = m["timestamp"].get<std::string>();
    if (imported) {
      if (m.contains("trigger") && m["trigger"].is_string()) c.trigger = m["trigger"].get<std::string>();
      if (m.contains("boundary") && m["boundary"].is_string()) c.boundary = m["boundary"].get<std::string>();
      const Json cm = m.contains("compact_metadata") ? m["compact_metadata"] : Json::object();
      if (auto pre = int_at(cm, "preTokens")) c.tokens_before = CompactionTokens{*pre, "measured"};
      if (auto post = int_at(cm, "postTokens")) c.tokens_after = CompactionTokens{*post, "measured"};
      // Qwen Code's compression info: the client says which of its two counts it estimated.
      auto label = [&](const char* flag) { return cm.value(flag, false) ? "estimated" : "measured"; };
      if (auto pre = int_at(cm, "originalTokenCount"))
        c.tokens_before = CompactionTokens{*pre, label("originalTokenCountIsEstimated")};
      if (auto post = int_at(cm, "newTokenCount")) c.tokens_after = CompactionTokens{*post, label("newTokenCountIsEstimated")};
      // pi's tokensBefore (docs/formats/pi.md "Compaction"): measured when it is the usage of the reply before it.
      if (auto pre = int_at(cm, "tokensBefore")) c.tokens_before = CompactionTokens{*pre, label("tokensBeforeIsEstimated")};
      // Copilot CLI's compaction_complete: its tokenAccountingBasis says how it counted.
      const char* basis = json_str(cm, "tokenAccountingBasis").find("estimate") != std::string::npos ? "estimated" : "measured";
      if (auto pre = int_at(cm, "preCompactionTokens")) c.tokens_before = CompactionTokens{*pre, basis};
      if (auto post = int_at(cm, "postCompactionTokens")) c.tokens_after = CompactionTokens{*post, basis};
    } else {
      const Json prov = m.contains("provenance") ? m["provenance"] : Json::object();
      if (prov.contains("parameters") && prov["parameters"].is_object())
        c.trigger = prov["parameters"].value("force", false) ? "forced" : "threshold";
      if (m.contains("compaction") && m["compaction"].is_string()) {
        auto st = start_events.find(m["compaction"].get<std::string>());
        if (st != start_events.end())
          if (auto b = int_at(st->second, "estimated_tokens_before")) c.tokens_before = CompactionTokens{*b, "estimated"};
      }
    }
    std::vector<std::string> covers = store.covers_of(v.seq);
    c.covers_count = static_cast<std::int64_t>(covers.size());
    if (!covers.empty()) {
      c.covers_first = covers.front();
      c.covers_last = covers.back();
    }
    const std::string summary = node_text(v);
    c.summary_bytes = static_cast<std::int64_t>(summary.size());
    std::int64_t covered_tokens = 0;
    std::set<std::pair<std::string, std::string>> seen;
    ToolEventCollector tools = session_collector(store, session);
    for (const std::string& id : covers) {
      auto n = store.node(id, false);
      if (!n) continue;
      tools.add(*n);
      covered_tokens += n->tokens;
      c.covered_bytes += static_cast<std::int64_t>(node_text(*n).size());
      node_identifiers(*n, [&](const char* kind, std::string value) {
        if (!seen.emplace(kind, value).second) return;
        ++c.found[kind];
        if (!summary_keeps(summary, kind, value)) c.dropped.push_back(DroppedItem{kind, std::move(value), n->id});
      });
    }
    drop_tool_events(c, summary, std::move(tools));
    if (!c.tokens_before) c.tokens_before = CompactionTokens{covered_tokens, "estimated"};
    if (!c.tokens_after) c.tokens_after = CompactionTokens{v.tokens, "estimated"};
    if (auto se = summary_events.find(v.id); se != summary_events.end() && !imported)
      if (auto t = int_at(se->second, "estimated_tokens")) c.tokens_after = CompactionTokens{*t, "estimated"};
    out.push_back(std::move(c));
  }
  return out;
}

namespace {
Json figure(const std::optional<CompactionTokens>& f) {
  if (!f) return nullptr;
  return Json{{"tokens", f->value}, {"label", f->label}};
}
}  // namespace

Json compaction_record(const std::string& session, const CompactionEntry& c, std::int64_t offset, std::int64_t limit) {
  Json found = Json::object(), dropped_count = Json::object();
  for (const auto& [k, n] : c.found) {
    found[k] = n;
    dropped_count[k] = 0;
  }
  Json dropped = Json::array();
  std::int64_t index = 0, shown = 0;
  for (const auto& d : c.dropped) {
    dropped_count[d.kind] = dropped_count[d.kind].get<std::int64_t>() + 1;
    if (index++ < offset || (limit >= 0 && shown >= limit)) continue;
    ++shown;
    dropped.push_back({{"kind", d.kind}, {"value", d.value}, {"node", d.node}});
  }
  auto page = [&](std::int64_t i) { return i >= offset && (limit < 0 || i < offset + limit); };
  Json files = Json::array(), commands = Json::array();
  for (std::size_t i = 0; i < c.dropped_files.size(); ++i)
    if (page(static_cast<std::int64_t>(i))) {
      const DroppedFile& d = c.dropped_files[i];
      files.push_back({{"path", d.path}, {"actions", d.actions}, {"result", d.last_result}, {"node", d.node}});
    }
  for (std::size_t i = 0; i < c.dropped_commands.size(); ++i)
    if (page(static_cast<std::int64_t>(i))) {
      const DroppedCommand& d = c.dropped_commands[i];
      commands.push_back({{"command", d.command},
                          {"exit_code", d.exit_code ? Json(*d.exit_code) : Json(nullptr)},
                          {"result", d.result},
                          {"node", d.node}});
    }
  auto opt = [](const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); };
  return {{"session", session},
          {"summary_id", c.summary_id},
          {"seq", c.seq},
          {"origin", c.origin},
          {"strategy", c.strategy},
          {"trigger", opt(c.trigger)},
          {"timestamp", opt(c.timestamp)},
          {"boundary", opt(c.boundary)},
          {"tokens_before", figure(c.tokens_before)},
          {"tokens_after", figure(c.tokens_after)},
          {"covers", {{"first", c.covers_first}, {"last", c.covers_last}, {"count", c.covers_count}}},
          {"summary_bytes", c.summary_bytes},
          {"covered_bytes", c.covered_bytes},
          {"found", found},
          {"dropped_count", dropped_count},
          {"dropped", dropped},
          {"files", {{"found", c.files_found}, {"dropped_count", c.dropped_files.size()}, {"dropped", files}}},
          {"commands",
           {{"found", c.commands_found}, {"dropped_count", c.dropped_commands.size()}, {"dropped", commands}}}};
}

}  // namespace ctxfold
