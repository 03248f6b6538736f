// Usage and cost from the usage the providers recorded (`ctxfold usage`).
#include "forensics/usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/error.hpp"

namespace ctxfold {

std::string_view embedded_prices();  // generated (cmake/embed.cmake): share/prices.json

namespace {

std::int64_t num(const Json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  return it->is_number_float() ? static_cast<std::int64_t>(it->get<double>()) : it->get<std::int64_t>();
}

}  // namespace

UsageTokens& UsageTokens::operator+=(const UsageTokens& o) {
  input += o.input;
  cache_write_5m += o.cache_write_5m;
  cache_write_1h += o.cache_write_1h;
  cache_read += o.cache_read;
  output += o.output;
  reasoning += o.reasoning;
  return *this;
}

// Besides the shapes usage.hpp names: Qwen Code's usageMetadata (promptTokenCount includes
// cachedContentTokenCount; candidatesTokenCount is the output) and pi's usage (disjoint parts).
UsageTokens normalize_usage(const std::string& format, const Json& u) {
  UsageTokens t;
  if (format == "gemini") {
    std::int64_t cached = num(u, "cached");
    t.input = std::max<std::int64_t>(0, num(u, "input") - cached) + num(u, "tool");
    t.cache_read = cached;
    t.reasoning = num(u, "thoughts");
    t.output = num(u, "output") + t.reasoning;
    return t;
  }
  if (format == "qwen") {
    // Qwen Code's usageMetadata (docs/formats/qwen-code.md "Usage"): promptTokenCount holds the
    // cached part; candidatesTokenCount is the output, thoughtsTokenCount its reasoning share.
    std::int64_t cached = num(u, "cachedContentTokenCount");
    t.input = std::max<std::int64_t>(0, num(u, "promptTokenCount") - cached);
    t.cache_read = cached;
    t.output = num(u, "candidatesTokenCount");
    t.reasoning = num(u, "thoughtsTokenCount");
    return t;
  }
  if (format == "pi") {
    // pi's usage (docs/formats/pi.md "Usage"): input, cacheRead, cacheWrite and output are
    // disjoint (pi subtracts the cached parts from the provider's prompt count itself).
    t.input = num(u, "input");
    t.cache_read = num(u, "cacheRead");
    t.cache_write_5m = num(u, "cacheWrite");
    t.output = num(u, "output");
    return t;
  }
  if (format == "copilot" || format == "cline") {
    // Copilot CLI's usage record and Cline's message metrics (docs/formats/copilot-cli.md "Usage",
    // cline.md "Usage"): inputTokens counts the cached and cache-written parts as well, as the
    // OpenAI prompt_tokens it is read from.
    t.cache_read = num(u, "cacheReadTokens");
    t.cache_write_5m = num(u, "cacheWriteTokens");
    t.input = std::max<std::int64_t>(0, num(u, "inputTokens") - t.cache_read - t.cache_write_5m);
    t.output = num(u, "outputTokens");
    t.reasoning = num(u, "reasoningTokens");
    return t;
  }
  if (format == "opencode" || format == "kilo") {
    // opencode's and Kilo's message tokens (docs/formats/opencode.md "Usage"): input without the
    // cache reads and writes, which cache.read / cache.write hold; reasoning apart from output.
    const Json cache = u.contains("cache") && u["cache"].is_object() ? u["cache"] : Json::object();
    t.input = num(u, "input");
    t.cache_read = num(cache, "read");
    t.cache_write_5m = num(cache, "write");
    t.reasoning = num(u, "reasoning");
    t.output = num(u, "output") + t.reasoning;
    return t;
  }
  if (u.contains("cached_input_tokens") || u.contains("reasoning_output_tokens")) {  // OpenAI / Codex
    std::int64_t cached = num(u, "cached_input_tokens");
    t.input = std::max<std::int64_t>(0, num(u, "input_tokens") - cached);
    t.cache_read = cached;
    t.output = num(u, "output_tokens");
    t.reasoning = num(u, "reasoning_output_tokens");
    return t;
  }
  if (!u.contains("input_tokens") && (u.contains("prompt_tokens") || u.contains("completion_tokens"))) {
    // OpenAI chat-completions usage (also what LiteLLM reports for other providers, as OpenHands
    // records it): prompt_tokens includes the cached part (prompt_tokens_details.cached_tokens, or
    // LiteLLM's cache_read_input_tokens) and LiteLLM's cache_creation_input_tokens.
    std::int64_t cached = num(u, "cache_read_input_tokens");
    if (cached == 0 && u.contains("prompt_tokens_details")) cached = num(u["prompt_tokens_details"], "cached_tokens");
    t.cache_read = cached;
    t.cache_write_5m = num(u, "cache_creation_input_tokens");
    t.input = std::max<std::int64_t>(0, num(u, "prompt_tokens") - cached - t.cache_write_5m);
    t.output = num(u, "completion_tokens");
    if (u.contains("completion_tokens_details")) t.reasoning = num(u["completion_tokens_details"], "reasoning_tokens");
    return t;
  }
  // Anthropic Messages usage.
  t.input = num(u, "input_tokens");
  t.cache_read = num(u, "cache_read_input_tokens");
  t.output = num(u, "output_tokens");
  std::int64_t creation = num(u, "cache_creation_input_tokens");
  if (u.contains("cache_creation") && u["cache_creation"].is_object()) {
    t.cache_write_1h = num(u["cache_creation"], "ephemeral_1h_input_tokens");
    t.cache_write_5m = std::max<std::int64_t>(0, creation - t.cache_write_1h);
  } else {
    t.cache_write_5m = creation;
  }
  return t;
}

namespace {

/// Codex names the model in turn_context records, written before every request.
std::map<std::string, std::vector<std::pair<std::int64_t, std::string>>> codex_turn_models(Db& db) {
  std::map<std::string, std::vector<std::pair<std::int64_t, std::string>>> turn_models;
  Stmt q = db.prepare(
      "SELECT session, line, json_extract(raw,'$.payload.model') FROM source_records "
      "WHERE type='turn_context' AND json_valid(raw) ORDER BY session, line");
  while (q.step())
    if (!q.is_null(2)) turn_models[q.text(0)].emplace_back(q.int64(1), q.text(2));
  return turn_models;
}

/// The node a replayed node stands for, followed up the lineage (bounded: lineage is loop-free
/// where shared prefixes are taken, the bound guards the rest).
std::string original_node(std::string id, const std::string& session,
                          const std::map<std::string, SessionLineage>& lineage,
                          const std::map<std::string, std::string>& node_session) {
  std::string s = session;
  for (int guard = 0; guard < 1000; ++guard) {
    auto l = lineage.find(s);
    if (l == lineage.end()) break;
    auto it = l->second.shared.find(id);
    if (it == l->second.shared.end()) break;
    id = it->second;
    auto ns = node_session.find(id);
    if (ns == node_session.end()) break;
    s = ns->second;
  }
  return id;
}

}  // namespace

std::vector<UsageMessage> usage_messages(Store& store) { return usage_messages(store, session_lineage(store)); }

std::vector<UsageMessage> usage_messages(Store& store, const std::map<std::string, SessionLineage>& lineage) {
  Db& db = store.db();
  const auto turn_models = codex_turn_models(db);
  std::map<std::string, std::size_t> rank;  // lineage order: the first holder counts a response
  {
    std::vector<std::string> order = lineage_order(store.sessions(), lineage);
    for (std::size_t i = 0; i < order.size(); ++i) rank[order[i]] = i;
  }
  std::map<std::string, std::string> node_session;  // the targets of shared prefixes
  for (const auto& [sid, l] : lineage)
    for (const auto& [node, orig] : l.shared) node_session.emplace(orig, "");
  for (auto& [id, sess] : node_session)
    if (auto n = store.node(id, false)) sess = n->session;
  struct Row {
    UsageMessage m;
    std::int64_t line = 0;
  };
  std::vector<Row> rows;
  std::map<std::string, std::size_t> by_key;  // response identity -> row
  Stmt q = db.prepare(
      "SELECT n.session, coalesce(s.format,''), json_extract(n.metadata,'$.message_id'), "
      "json_extract(n.metadata,'$.usage'), json_extract(n.metadata,'$.model'), "
      "json_extract(n.metadata,'$.timestamp'), "
      "coalesce((SELECT max(CAST(json_extract(p.value,'$.line') AS INTEGER)) FROM json_each(n.metadata,'$.source.parts') p), "
      "CAST(json_extract(n.metadata,'$.source.line') AS INTEGER), 0), n.id, json_extract(n.metadata,'$.response_id') "
      "FROM nodes n JOIN sessions s ON s.id = n.session "
      "WHERE n.role='assistant' AND json_type(n.metadata,'$.usage')='object' ORDER BY n.seq");
  while (q.step()) {
    Row r;
    r.m.session = q.text(0);
    std::string format = q.text(1);
    Json usage = parse_json(q.view(3));
    r.m.tokens = normalize_usage(format, usage);
    r.m.model = q.opt_text(4).value_or("");
    std::string ts = q.opt_text(5).value_or("");
    r.m.day = ts.size() >= 10 ? ts.substr(0, 10) : std::string();
    r.line = q.int64(6);
    if (r.m.model.empty()) {
      auto tm = turn_models.find(r.m.session);
      if (tm != turn_models.end())
        for (const auto& [line, model] : tm->second) {
          if (line > r.line) break;
          r.m.model = model;
        }
    }
    // The response's identity: the provider's id where the record has one, else its node (a
    // replayed node standing for the node it replays).
    std::string key = !q.is_null(2)   ? "m:" + q.text(2)
                      : !q.is_null(8) ? "r:" + q.text(8)
                                      : "n:" + original_node(q.text(7), r.m.session, lineage, node_session);
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      by_key.emplace(key, rows.size());
      rows.push_back(std::move(r));
      continue;
    }
    Row& have = rows[it->second];
    if (have.m.session == r.m.session) {
      // The same response again in one session (streamed lines split over nodes, a duplicated
      // exchange): keep the usage of its last source line.
      if (r.line >= have.line) {
        r.m.replayed_in = std::move(have.m.replayed_in);
        have = std::move(r);
      }
      continue;
    }
    auto rank_of = [&](const std::string& s) { auto k = rank.find(s); return k == rank.end() ? rank.size() : k->second; };
    if (rank_of(r.m.session) < rank_of(have.m.session)) {
      // Counted in the earlier session of the lineage order; the other holds a replay.
      r.m.replayed_in = std::move(have.m.replayed_in);
      r.m.replayed_in.push_back(have.m.session);
      have = std::move(r);
    } else if (std::find(have.m.replayed_in.begin(), have.m.replayed_in.end(), r.m.session) ==
               have.m.replayed_in.end()) {
      have.m.replayed_in.push_back(r.m.session);
    }
  }
  std::vector<UsageMessage> out;
  out.reserve(rows.size());
  for (auto& r : rows) out.push_back(std::move(r.m));
  return out;
}

const Price* PriceTable::find(const std::string& model) const {
  const Price* best = nullptr;
  for (const Price& p : prices) {
    if (p.model == model) return &p;
    if (model.size() > p.model.size() + 1 && model.compare(0, p.model.size(), p.model) == 0 &&
        model[p.model.size()] == '-' && (!best || p.model.size() > best->model.size()))
      best = &p;
  }
  return best;
}

PriceTable parse_price_table(const std::string& text, const std::string& label) {
  Json doc;
  try {
    doc = parse_json(text);
  } catch (const std::exception& e) {
    throw Error(Exit::bad_input, "prices.malformed", fmt::format("{}: not JSON: {}", label, e.what()));
  }
  if (!doc.is_object() || !doc.contains("models") || !doc["models"].is_array())
    throw Error(Exit::bad_input, "prices.malformed", fmt::format("{}: no \"models\" array", label));
  PriceTable t;
  if (doc.contains("currency") && doc["currency"].is_string()) t.currency = doc["currency"].get<std::string>();
  std::size_t i = 0;
  for (const auto& m : doc["models"]) {
    Price p;
    auto field = [&](const char* key) -> std::int64_t {
      if (!m.is_object() || !m.contains(key) || !m[key].is_number_integer() || m[key].get<std::int64_t>() < 0)
        throw Error(Exit::bad_input, "prices.malformed",
                    fmt::format("{}: models[{}]: \"{}\" must be a non-negative integer (micro-units per million tokens)",
                                label, i, key));
      return m[key].get<std::int64_t>();
    };
    auto str = [&](const char* key) {
      if (!m.is_object() || !m.contains(key) || !m[key].is_string() || m[key].get<std::string>().empty())
        throw Error(Exit::bad_input, "prices.malformed", fmt::format("{}: models[{}]: \"{}\" must be a string", label, i, key));
      return m[key].get<std::string>();
    };
    p.model = str("model");
    p.source = str("source");
    p.date = str("date");
    p.input = field("input");
    p.output = field("output");
    p.cache_read = field("cache_read");
    p.cache_write_5m = field("cache_write_5m");
    p.cache_write_1h = field("cache_write_1h");
    t.prices.push_back(std::move(p));
    ++i;
  }
  return t;
}

PriceTable builtin_price_table() { return parse_price_table(std::string(embedded_prices()), "share/prices.json"); }

std::int64_t cost_micro(const UsageTokens& t, const Price& p) {
  __int128 sum = static_cast<__int128>(t.input) * p.input + static_cast<__int128>(t.cache_write_5m) * p.cache_write_5m +
                 static_cast<__int128>(t.cache_write_1h) * p.cache_write_1h +
                 static_cast<__int128>(t.cache_read) * p.cache_read + static_cast<__int128>(t.output) * p.output;
  return static_cast<std::int64_t>((sum + 500000) / 1000000);
}

}  // namespace ctxfold
