#include "session/prepare.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "strategies/replay.hpp"
#include "tokens/estimate.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {

std::string session_strategy(Store& store, const std::string& session, std::int64_t as_of) {
  if (as_of == kLatest) {
    if (auto e = store.last_event(session, kSessionStrategyEvent)) {
      std::string s = json_str(e->payload, "strategy");
      if (find_strategy(s)) return s;
    }
  } else {
    auto made = store.events(session, kSessionStrategyEvent);
    for (auto it = made.rbegin(); it != made.rend(); ++it) {
      if (it->boundary_seq > as_of || it->type != kSessionStrategyEvent) continue;
      std::string s = json_str(it->payload, "strategy");
      if (find_strategy(s)) return s;
    }
  }
  // A database from before session/strategy events: the newest successful compaction's strategy.
  auto ends = store.events(session, "compact/end");
  for (auto it = ends.rbegin(); it != ends.rend(); ++it) {
    if (it->boundary_seq > as_of || json_str(it->payload, "status") != "compacted") continue;
    std::string s = json_str(it->payload, "strategy");
    if (find_strategy(s)) return s;
  }
  return "rolling";
}

bool record_session_strategy(Store& store, const std::string& session, const std::string& strategy) {
  strategy_named(strategy);  // an unknown name is a usage error
  if (session_strategy(store, session) == strategy) return false;  // already its own (or the default)
  store.log_event(session, kSessionStrategyEvent, std::nullopt, Json{{"strategy", strategy}});
  return true;
}

CompactResult compact_session(Store& store, const std::string& session, const std::string& strategy,
                              Summarizer& summarizer, const StrategyOptions& options) {
  return strategy_named(strategy).compact(store, session, summarizer, options);
}

namespace {

/// The prompt the model knows the session by (newest prepare/known), with its notes.
struct Known {
  bool present = false;
  std::string system_digest, system, tools_digest;
  std::vector<CapabilityNote> notes;
};

Known read_known(Store& store, const std::string& session) {
  Known k;
  auto e = store.last_event(session, kPrepareKnownEvent);
  if (!e) return k;
  k.present = true;
  k.system_digest = json_str(e->payload, "system_digest");
  k.system = json_str(e->payload, "system");
  k.tools_digest = json_str(e->payload, "tools_digest");
  if (e->payload.contains("notes") && e->payload["notes"].is_array())
    for (const auto& n : e->payload["notes"])
      k.notes.push_back(CapabilityNote{json_str(n, "after"), json_str(n, "digest"), json_str(n, "text")});
  return k;
}

void write_known(Store& store, const std::string& session, const Known& k) {
  Json notes = Json::array();
  for (const auto& n : k.notes) notes.push_back(Json{{"after", n.after}, {"digest", n.digest}, {"text", n.text}});
  store.log_event(session, kPrepareKnownEvent, std::nullopt,
                  Json{{"system_digest", k.system_digest},
                       {"system", k.system},
                       {"tools_digest", k.tools_digest},
                       {"notes", std::move(notes)}});
}

std::string note_text(const std::string& prompt) {
  return "[ctxfold: capabilities changed] The system prompt changed here. The earlier prompt stays in "
         "place until the next compaction (so the cached request prefix stays valid); from now on the "
         "current system prompt is:\n\n" +
         prompt;
}

std::int64_t text_tokens(const std::string& s) { return estimate_text_tokens(s) + kMessageOverhead + kBlockOverhead; }

/// Replaces the leading system messages with `prompt`; returns the estimate of what it removed.
std::int64_t replace_system(Rendered& r, const std::string& prompt) {
  std::size_t n = 0;
  while (n < r.messages.size() && r.messages[n].role == role::kSystem) ++n;
  r.messages.erase(r.messages.begin(), r.messages.begin() + static_cast<std::ptrdiff_t>(n));
  RenderedMessage m{role::kSystem, kind::kMessage, {}, Json::array({Json{{"type", "text"}, {"text", prompt}}})};
  r.messages.insert(r.messages.begin(), std::move(m));
  std::int64_t removed = 0;
  for (const auto& s : r.sections)
    if (s.kind == "system") removed += s.estimated_tokens;
  return removed;
}

/// Inserts a note after the message holding `after` (past its tool results), else at the end.
void insert_note(Rendered& r, const CapabilityNote& note) {
  std::size_t at = r.messages.size();
  for (std::size_t i = 0; i < r.messages.size(); ++i)
    if (std::find(r.messages[i].ids.begin(), r.messages[i].ids.end(), note.after) != r.messages[i].ids.end()) {
      at = i + 1;
      if (at < r.messages.size() && r.messages[at].role == role::kTool) ++at;
      break;
    }
  RenderedMessage m{role::kSystem, "note", {}, Json::array({Json{{"type", "text"}, {"text", note_text(note.text)}}})};
  r.messages.insert(r.messages.begin() + static_cast<std::ptrdiff_t>(at), std::move(m));
}

Rendered project(Store& store, const std::string& session, const std::string& strategy, const PrepareOptions& o) {
  RenderOptions ro;
  ro.strategy = strategy;
  ro.max_row_bytes = o.max_row_bytes;
  ro.model = o.snapcompact.model;
  return render_context(store, session, ro);
}

}  // namespace

PrepareResult prepare_request(Store& store, const std::string& session, const PrepareOptions& o,
                              Environment& env) {
  PrepareResult p;
  p.strategy = o.strategy ? *o.strategy : session_strategy(store, session);
  const StrategyInfo& info = strategy_named(p.strategy);
  StrategyOptions own = o;
  const CompactionOptions shared = info.shared(own);
  p.window = shared.window;
  const bool harness = o.system.has_value() || o.tools.has_value();
  Known known = harness ? read_known(store, session) : Known{};
  const std::string tools_digest = o.tools ? sha256_hex(dump_json(*o.tools)) : known.tools_digest;
  const std::string system_digest = o.system ? sha256_hex(*o.system) : std::string();

  // What the request adds to / removes from the projection, for the trigger figure.
  auto adjustments = [&](const Rendered& r, const std::vector<CapabilityNote>& notes) {
    std::int64_t add = 0;
    if (o.system) {
      for (const auto& s : r.sections)
        if (s.kind == "system") add -= s.estimated_tokens;
      add += text_tokens(known.present && !known.system.empty() ? known.system : *o.system);
    }
    for (const auto& n : notes) add += text_tokens(note_text(n.text));
    if (o.tools) add += estimate_text_tokens(dump_json(*o.tools));
    return add;
  };

  Rendered r = project(store, session, p.strategy, o);
  p.tokens_before = r.tokens.value + adjustments(r, known.notes);
  const std::int64_t trigger = shared.window ? ceil_percent(*shared.window, shared.trigger_percent) : 0;
  p.due = o.force || (shared.window && p.tokens_before >= trigger);
  if (p.due) {
    std::unique_ptr<Summarizer> summarizer = make_recording_summarizer(store, session, make_summarizer(o.summarizer, env));
    CompactionOptions& run = info.shared(own);
    run.force = true;  // due by prepare's figure, which sees the prompt and tools
    run.dry_run = false;
    run.env = &env;
    p.compaction = info.compact(store, session, *summarizer, own);
    if (p.compaction->status == "compacted" || p.compaction->summary_id) r = project(store, session, p.strategy, o);
  }
  const bool compacted = p.compaction && p.compaction->summary_id.has_value();

  // The prompt the model knows the session by (docs/strategies.md "prepare").
  if (o.system) {
    const std::optional<Event> last_sent = store.last_event(session, kPrepareSentEvent);
    Known next = known;
    if (!known.present || compacted || (o.tools && known.tools_digest != tools_digest)) {
      next = Known{true, system_digest, *o.system, tools_digest, {}};
    } else {
      const std::string& effective = known.notes.empty() ? known.system_digest : known.notes.back().digest;
      if (effective != system_digest) {
        std::string after = last_sent ? json_str(last_sent->payload, "head") : r.head;
        next.notes.push_back(CapabilityNote{after, system_digest, *o.system});
      }
    }
    const bool changed = !known.present || next.system_digest != known.system_digest ||
                         next.tools_digest != known.tools_digest || next.notes.size() != known.notes.size();
    if (changed) write_known(store, session, next);
    known = next;
    p.system_sent = known.system_digest == system_digest ? "current" : "pinned";
    replace_system(r, known.system);
    for (const auto& n : known.notes) insert_note(r, n);
    p.notes = known.notes;
  } else if (o.tools && (!known.present || known.tools_digest != tools_digest)) {
    known = Known{true, {}, {}, tools_digest, {}};
    write_known(store, session, known);
  }
  p.tools = o.tools;

  std::int64_t adj = 0;
  if (o.system) {
    for (const auto& s : r.sections)
      if (s.kind == "system") adj -= s.estimated_tokens;
    adj += text_tokens(known.system);
  }
  for (const auto& n : p.notes) adj += text_tokens(note_text(n.text));
  if (o.tools) adj += estimate_text_tokens(dump_json(*o.tools));
  if (o.budget) {
    BudgetOptions bo = *o.budget;
    bo.extra_tokens = adj;
    bo.tools_tokens = o.tools ? estimate_text_tokens(dump_json(*o.tools)) : 0;
    std::unique_ptr<Summarizer> summarizer = make_summarizer(o.summarizer, env);
    BudgetCache cache;
    p.budget = apply_budget(r, *summarizer, bo, cache);
  }
  p.estimated_tokens = r.estimated_tokens + adj;
  p.request_tokens = r.tokens.value + adj;
  p.still_due = shared.window && p.request_tokens >= trigger;
  if (harness) {
    Json sent{{"head", r.head},
              {"strategy", p.strategy},
              {"system_digest", o.system ? Json(system_digest) : Json(nullptr)},
              {"tools_digest", o.tools ? Json(tools_digest) : Json(nullptr)},
              {"compaction", p.compaction && p.compaction->summary_id ? Json(*p.compaction->summary_id) : Json(nullptr)},
              {"estimated_tokens", p.estimated_tokens}};
    store.log_event(session, kPrepareSentEvent, std::nullopt, sent);
  }
  p.rendered = std::move(r);
  return p;
}

Json prepare_request_body(const PrepareResult& p, RenderFormat format) {
  Json body = render_request_body(p.rendered, format);
  if (p.tools) body["tools"] = *p.tools;
  return body;
}

Json prepare_to_json(const PrepareResult& p, RenderFormat format) {
  Json j = render_to_json(p.rendered, format);
  if (p.tools) j["tools"] = *p.tools;
  Json notes = Json::array();
  for (const auto& n : p.notes) notes.push_back(Json{{"after", n.after}, {"digest", n.digest}});
  j["prepare"] = Json{{"strategy", p.strategy},
                      {"due", p.due},
                      {"still_due", p.still_due},
                      {"window", p.window ? Json(*p.window) : Json(nullptr)},
                      {"tokens_before", p.tokens_before},
                      {"estimated_tokens", p.estimated_tokens},
                      {"request_tokens", p.request_tokens},
                      {"system", p.system_sent},
                      {"notes", std::move(notes)},
                      {"compaction", p.compaction ? compact_to_json(*p.compaction) : Json(nullptr)},
                      {"budget", p.budget ? p.budget->to_json() : Json(nullptr)}};
  return j;
}

}  // namespace ctxfold
