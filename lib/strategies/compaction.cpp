#include "strategies/compaction.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "store/scan.hpp"
#include "util/digest.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

/// Resets every statement still stepping on the connection (cached statements keep their last
/// row, and with it a read snapshot): BEGIN IMMEDIATE on a stale snapshot fails with
/// SQLITE_BUSY_SNAPSHOT once another process has appended, without waiting.
void release_snapshot(Store& store) { release_read_snapshots(store.db()); }

std::int64_t last_event_seq(Store& store) {
  auto st = store.db().prepare("SELECT coalesce(max(seq),0) FROM events");
  st.step();
  return st.int64(0);
}

[[noreturn]] void bad_config(const std::string& section, const std::string& m) {
  throw Error(Exit::bad_input, "config.invalid", m,
              fmt::format(R"(expected {{"{}":{{"contextWindowTokens":N,"triggerPercent":N,"tailPercent":N}}}})", section));
}

}  // namespace

std::int64_t session_max_seq(Store& store, const std::string& session) {
  auto st = store.db().prepare("SELECT coalesce(max(seq),0) FROM nodes WHERE session=?1");
  st.bind(1, session);
  st.step();
  return st.int64(0);
}

std::string plan_head(Store& store, const std::string& session, std::int64_t boundary) {
  auto h = store.head(session, boundary);
  if (!h)
    throw Error(Exit::bad_input, "render.no_head", fmt::format("session '{}' has no HEAD", session),
                "import or append nodes first");
  return *h;
}

std::optional<std::int64_t> config_int(const Json& sec, const std::string& section, const char* key, std::int64_t lo,
                                       std::int64_t hi) {
  if (!sec.is_object()) return std::nullopt;
  auto f = sec.find(key);
  if (f == sec.end() || f->is_null()) return std::nullopt;
  auto out_of_range = [&] { bad_config(section, fmt::format("{}.{} must be between {} and {}", section, key, lo, hi)); };
  if (f->is_number_float()) {
    // Range first: converting a double outside int64 is undefined (found by fuzz/compact_config).
    const double d = f->get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) bad_config(section, fmt::format("{}.{} must be an integer", section, key));
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) out_of_range();
    return static_cast<std::int64_t>(d);
  }
  if (!f->is_number_integer()) bad_config(section, fmt::format("{}.{} must be an integer", section, key));
  if (f->is_number_unsigned() && f->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) out_of_range();
  const std::int64_t v = f->get<std::int64_t>();
  if (v < lo || v > hi) out_of_range();
  return v;
}

Json apply_compaction_config(const Json& config, const std::string& section, CompactionOptions& opts) {
  if (!config.is_object()) bad_config(section, "the config file is not a JSON object");
  auto it = config.find(section);
  if (it == config.end() || it->is_null()) return Json();
  if (!it->is_object()) bad_config(section, fmt::format("\"{}\" is not an object", section));
  if (auto v = config_int(*it, section, "contextWindowTokens", 1, std::int64_t(1) << 40)) opts.window = *v;
  if (auto v = config_int(*it, section, "triggerPercent", 1, 100)) opts.trigger_percent = static_cast<int>(*v);
  if (auto v = config_int(*it, section, "tailPercent", 1, 100)) opts.tail_percent = static_cast<int>(*v);
  if (auto v = config_int(*it, section, "maxCalls", 1, 1000000)) opts.max_calls = static_cast<int>(*v);
  return *it;
}

void validate_compaction_options(const CompactionOptions& o) {
  auto bad = [](const std::string& m) { throw Error(Exit::usage, "compact.options", m); };
  if (o.window && *o.window <= 0) bad("--window must be a positive number of tokens");
  if (o.trigger_percent < 1 || o.trigger_percent > 100) bad("--trigger-percent must be between 1 and 100");
  if (o.tail_percent < 1 || o.tail_percent > 100) bad("--tail-percent must be between 1 and 100");
  if (o.tail_percent >= o.trigger_percent)
    bad(fmt::format("--tail-percent ({}) must be below --trigger-percent ({})", o.tail_percent, o.trigger_percent));
  if (o.summarizer_window < 0) bad("--summarizer-window must not be negative");
  if (o.max_output_tokens < 0) bad("the summary output limit must not be negative");
  if (o.max_calls && *o.max_calls < 1) bad("--max-calls must be at least 1");
}

int summarizer_call_cap(const CompactionOptions& opts, const Summarizer& summarizer, int remote_default) {
  if (opts.max_calls) return *opts.max_calls;
  if (summarizer.kind() == "extractive") return std::numeric_limits<int>::max();
  return remote_default;
}

std::optional<Error> clean_summary_text(std::string& text) {
  std::size_t b = text.find_first_not_of(" \t\r\n");
  text = b == std::string::npos ? std::string() : text.substr(b, text.find_last_not_of(" \t\r\n") - b + 1);
  if (text.empty()) return Error(Exit::environment, "summarizer.empty", "the summarizer returned an empty summary");
  if (!utf8_valid(text) || text.find('\0') != std::string::npos)
    return Error(Exit::environment, "summarizer.malformed", "the summarizer returned bytes that are not UTF-8 text");
  return std::nullopt;
}

void fail_result(CompactResult& res, const Error& e) {
  res.status = "failed";
  res.error_code = e.code();
  res.reason = e.what();
}

Json compact_to_json(const CompactResult& r) {
  Json j = Json::object();
  j["schema"] = "ctxfold.compact/1";
  j["session"] = r.session;
  j["strategy"] = r.strategy;
  j["status"] = r.status;
  j["reason"] = r.reason.empty() ? Json(nullptr) : Json(r.reason);
  j["summary_id"] = r.summary_id ? Json(*r.summary_id) : Json(nullptr);
  j["covers"] = Json{{"count", r.covers_count},
                     {"first", r.covers_first ? Json(*r.covers_first) : Json(nullptr)},
                     {"last", r.covers_last ? Json(*r.covers_last) : Json(nullptr)}};
  j["estimated_tokens_before"] = r.estimated_tokens_before;
  j["estimated_tokens_after"] = r.estimated_tokens_after;
  j["tokens_before"] = r.tokens_before.to_json();
  j["tokens_after"] = r.tokens_after.to_json();
  j["summarizer"] = Json{{"kind", r.summarizer_kind}, {"model", r.summarizer_model}, {"calls", r.calls}};
  j["head"] = r.head;
  j["compaction"] = r.compaction ? Json(*r.compaction) : Json(nullptr);
  j["window"] = r.window ? Json(*r.window) : Json(nullptr);
  j["passes"] = r.passes;
  j["partial"] = r.partial;
  j["remaining"] = r.partial ? Json{{"units", r.remaining_units}, {"tokens", r.remaining_tokens}} : Json(nullptr);
  if (!r.error_code.empty()) j["error"] = r.error_code;
  if (r.status == "planned") j["plan"] = r.plan;
  for (auto it = r.details.begin(); it != r.details.end(); ++it) j[it.key()] = it.value();
  return j;
}

// ---------------------------------------------------------------- the bracket

namespace {

Environment& required_env(Environment* env) {
  if (env == nullptr)
    throw Error(Exit::internal, "compact.env", "a compaction that writes needs CompactionOptions::env");
  return *env;
}

}  // namespace

CompactionBracket::CompactionBracket(Store& store, std::string session, std::string head, std::int64_t session_max,
                                     Environment* env)
    : store_(store), env_(required_env(env)), session_(std::move(session)), head_(std::move(head)),
      session_max_(session_max) {
  hex_ = sha256_hex(fmt::format("{}\n{}\n{}", session_, head_, session_max_)).substr(0, 16);
  const std::string attempt = fmt::format("{}\n{}\n{}\n{}", session_, head_, session_max_, last_event_seq(store_));
  id_ = "cmp-" + sha256_hex(attempt).substr(0, 16);
}

void CompactionBracket::start(const Json& payload) {
  env_.crash_point("before_start");
  release_snapshot(store_);
  {
    Txn t(store_.db());
    Json p = payload;
    p["head"] = head_;
    p["session_seq"] = session_max_;
    p["started_at"] = rfc3339_utc(env_.unix_seconds());
    store_.log_event(session_, "compact/start", id_, p);
    t.commit();
  }
  env_.crash_point("after_start");
}

void CompactionBracket::fail(const Error& e, int calls, const Json& extra) {
  release_snapshot(store_);
  Txn t(store_.db());
  Json p{{"status", "failed"},
         {"summary_id", nullptr},
         {"error", {{"code", e.code()}, {"message", e.what()}}},
         {"calls", calls}};
  for (auto it = extra.begin(); it != extra.end(); ++it) p[it.key()] = it.value();
  p["ended_at"] = rfc3339_utc(env_.unix_seconds());
  store_.log_event(session_, "compact/end", id_, p);
  t.commit();
}

std::optional<Error> CompactionBracket::commit(const std::function<void()>& write, int calls, const Json& end_payload) {
  release_snapshot(store_);
  Txn t(store_.db());
  auto head_now = store_.head(session_);
  std::int64_t seq_now = session_max_seq(store_, session_);
  if (!head_now || *head_now != head_ || seq_now != session_max_) {
    Error e(Exit::environment, "compact.source_changed",
            fmt::format("source changed while the summarizer ran (HEAD {} -> {}, newest seq {} -> {}); nothing "
                        "committed",
                        head_, head_now.value_or("none"), session_max_, seq_now),
            "run compact again");
    store_.log_event(session_, "compact/end", id_,
                     Json{{"status", "failed"},
                          {"summary_id", nullptr},
                          {"error", {{"code", e.code()}, {"message", e.what()}}},
                          {"calls", calls},
                          {"ended_at", rfc3339_utc(env_.unix_seconds())}});
    t.commit();
    return e;
  }
  write();
  Json p{{"status", "compacted"}};
  for (auto it = end_payload.begin(); it != end_payload.end(); ++it) p[it.key()] = it.value();
  p["calls"] = calls;
  p["ended_at"] = rfc3339_utc(env_.unix_seconds());
  store_.log_event(session_, "compact/end", id_, p);
  t.commit();
  env_.crash_point("after_commit");
  return std::nullopt;
}

void CompactionBracket::append_summary(Node& s, const Json& record) {
  Json r{{"summary_id", s.id}};
  for (auto it = record.begin(); it != record.end(); ++it) r[it.key()] = it.value();
  store_.log_event(session_, "compact/summary", id_, r);
  if (store_.append(s) != AppendResult::added)
    throw Error(Exit::internal, "compact.summary_exists", fmt::format("summary id '{}' already exists", s.id));
  if (first_summary_) {
    first_summary_ = false;
    env_.crash_point("after_summary");
  }
}

TriggerCheck check_trigger(const std::optional<std::int64_t>& window, int trigger_percent, const TokenFigure& shown,
                           std::int64_t estimate, const std::string& section) {
  TriggerCheck t;
  t.window_eff = window ? *window : estimate;
  t.trigger = ceil_percent(t.window_eff, trigger_percent);
  if (!window) {
    t.reason = fmt::format("no context window is known, so nothing compacts automatically: pass --window or set "
                           "{}.contextWindowTokens, or --force",
                           section);
    return t;
  }
  t.due = shown.value >= t.trigger;
  if (!t.due)
    t.reason = fmt::format("{} {} tokens is below the trigger of {} tokens ({}% of {})", shown.kind, shown.value,
                           t.trigger, trigger_percent, t.window_eff);
  return t;
}

}  // namespace ctxfold
