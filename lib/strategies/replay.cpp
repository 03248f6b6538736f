#include "strategies/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/strategy_label.hpp"
#include "strategies/compaction.hpp"
#include "strategies/region.hpp"
#include "strategies/rolling.hpp"
#include "summarize/extractive.hpp"
#include "summarize/transcript.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {

class RecordingSummarizer : public Summarizer {
 public:
  RecordingSummarizer(Store& store, std::string session, std::unique_ptr<Summarizer> inner)
      : store_(store), session_(std::move(session)), inner_(std::move(inner)) {}
  std::string kind() const override { return inner_->kind(); }
  std::string model() const override { return inner_->model(); }
  std::int64_t window_tokens() const override { return inner_->window_tokens(); }
  TranscriptOptions transcript_options() const override { return inner_->transcript_options(); }
  SummaryResult summarize(const SummaryRequest& req) override {
    Json rec{{"compaction", nullptr},
             {"index", index_++},
             {"summarizer", {{"kind", inner_->kind()}, {"model", inner_->model()}}},
             {"request", request_to_json(req)},
             {"request_digest", request_digest(req)}};
    if (auto start = store_.last_event(session_, "compact/start"); start && start->ref) rec["compaction"] = *start->ref;
    try {
      SummaryResult out = inner_->summarize(req);
      rec["response"] = Json{{"text", out.text}, {"model", out.model}, {"usage", out.usage}};
      store_.log_event(session_, kSummarizerCallEvent, rec["compaction"].is_string() ? std::optional<std::string>(rec["compaction"].get<std::string>()) : std::nullopt, rec);
      return out;
    } catch (const Error& e) {
      rec["failure"] = Json{{"code", e.code()}, {"message", e.what()}};
      store_.log_event(session_, kSummarizerCallEvent, rec["compaction"].is_string() ? std::optional<std::string>(rec["compaction"].get<std::string>()) : std::nullopt, rec);
      throw;
    }
  }

 private:
  Store& store_;
  std::string session_;
  std::unique_ptr<Summarizer> inner_;
  int index_ = 0;
};

class RecordedAnswers : public Summarizer {
 public:
  RecordedAnswers(const std::vector<Json>& calls, std::string kind, std::string model)
      : kind_(std::move(kind)), model_(std::move(model)) {
    for (const auto& c : calls) by_digest_.emplace(json_str(c, "request_digest"), c);
  }
  std::string kind() const override { return kind_; }
  std::string model() const override { return model_; }
  std::int64_t window_tokens() const override { return 128000; }
  /// The recorded summarizer's: its requests were rendered that way.
  TranscriptOptions transcript_options() const override {
    return kind_ == "extractive" ? ExtractiveSummarizer::extractive_transcript_options() : TranscriptOptions{};
  }
  SummaryResult summarize(const SummaryRequest& req) override {
    ++issued_;
    const std::string d = request_digest(req);
    auto it = by_digest_.find(d);
    if (it == by_digest_.end())
      throw Error(Exit::environment, "replay.unrecorded",
                  fmt::format("the re-planned request #{} (digest {}) is not among the recorded calls", issued_, d));
    const Json& c = it->second;
    if (!c.contains("response")) {
      const Json f = c.contains("failure") ? c["failure"] : Json::object();
      throw Error(Exit::environment, json_str(f, "code", "summarizer.failed"), json_str(f, "message"));
    }
    SummaryResult out;
    out.text = json_str(c["response"], "text");
    out.model = json_str(c["response"], "model");
    return out;
  }

 private:
  std::string kind_, model_;
  std::map<std::string, Json> by_digest_;
  int issued_ = 0;
};

void feed(Sha256& d, const std::string& s) {
  d.update(s);
  d.update(std::string_view("\0", 1));
}

/// The summarizer calls recorded for the summary's compaction, each request checked against its
/// recorded digest.
std::vector<Json> recorded_calls(Store& store, const Node& n, const std::string& summary_id, const ReplayResult& r) {
  std::vector<Json> all;
  for (const auto& e : store.events(n.session, kSummarizerCallEvent))
    if (json_str(e.payload, "compaction") == r.compaction) all.push_back(e.payload);
  if (all.empty())
    throw Error(Exit::bad_input, "replay.no_calls",
                fmt::format("no recorded summarizer calls for summary '{}' (compaction {}): it was made before calls "
                            "were recorded",
                            summary_id, r.compaction));
  for (const auto& c : all) {
    SummaryRequest req = request_from_json(c.contains("request") ? c["request"] : Json::object());
    if (request_digest(req) != json_str(c, "request_digest"))
      throw Error(Exit::bad_input, "replay.digest_mismatch",
                  fmt::format("recorded call {} of compaction {}: the request no longer hashes to its recorded digest {}",
                              c.value("index", 0), r.compaction, json_str(c, "request_digest")));
  }
  return all;
}

/// An lcm node is made by the one call whose request hashes to its input digest.
void match_lcm_calls(const Node& n, const std::string& summary_id, const std::vector<Json>& all,
                     const std::string& input_digest, ReplayResult& r) {
  for (const auto& c : all) {
    Sha256 d;
    d.update(json_str(c["request"], "prompt_version"));
    d.update(std::string_view("\0", 1));
    d.update(json_str(c["request"], "transcript"));
    d.update(std::string_view("\0", 1));
    d.update(json_str(c["request"], "instructions"));
    if (d.hex() == input_digest) r.calls.push_back(c);
  }
  if (r.calls.empty()) {
    if (n.metadata.contains("lcm") && n.metadata["lcm"].is_object() && n.metadata["lcm"].value("pointer", false))
      throw Error(Exit::bad_input, "replay.pointer",
                  fmt::format("lcm summary '{}' is a source pointer: no summarizer call made it", summary_id));
    throw Error(Exit::bad_input, "replay.digest_mismatch",
                fmt::format("no recorded request of compaction {} hashes to the summary's input digest {}", r.compaction,
                            input_digest));
  }
}

/// A chunked summary is made by all the calls of its compaction, whose requests together hash to
/// its input digest.
void match_chained_calls(const std::vector<Json>& all, const std::string& input_digest, ReplayResult& r) {
  Sha256 d;
  for (const auto& c : all) {
    feed(d, json_str(c["request"], "previous_summary"));
    feed(d, json_str(c["request"], "transcript"));
    feed(d, json_str(c["request"], "instructions"));
  }
  if (d.hex() != input_digest)
    throw Error(Exit::bad_input, "replay.digest_mismatch",
                fmt::format("the recorded requests of compaction {} no longer hash to the summary's input digest {}",
                            r.compaction, input_digest));
  r.calls = all;
}

/// The append boundary the compaction's compact/start recorded.
std::int64_t compaction_boundary(Store& store, const std::string& session, const std::string& compaction) {
  std::optional<std::int64_t> boundary;
  for (const auto& e : store.events(session, "compact/start"))
    if (e.ref && *e.ref == compaction && e.payload.contains("boundary_seq") && e.payload["boundary_seq"].is_number_integer())
      boundary = e.payload["boundary_seq"].get<std::int64_t>();
  if (!boundary)
    throw Error(Exit::bad_input, "replay.no_start",
                fmt::format("compaction {} has no compact/start event with its boundary: it cannot be re-planned",
                            compaction));
  return *boundary;
}

/// Re-plans a rolling or region summary at its compaction's boundary, the recorded responses
/// answering, and checks the plan covers the same nodes with the same requests.
void replay_replan(Store& store, const Node& n, const Json& prov, const std::string& input_digest, bool region,
                   ReplayResult& r) {
  const std::int64_t boundary = compaction_boundary(store, n.session, r.compaction);
  Node stored = n;
  stored.covers_ids = store.covers_of(n.seq);
  const Json who = prov.contains("summarizer") ? prov["summarizer"] : Json::object();
  RecordedAnswers answers(r.calls, json_str(who, "kind"), json_str(who, "model"));
  std::string why;
  auto plan = region ? replan_region(store, stored, boundary, answers, why)
                     : replan_rolling(store, stored, boundary, answers, why);
  if (!plan)
    throw Error(Exit::bad_input, "replay.replan_mismatch",
                fmt::format("re-planning compaction {} from the ledger at boundary {} does not reproduce its recorded "
                            "requests: {}",
                            r.compaction, boundary, why));
  if (plan->covers_ids != stored.covers_ids)
    throw Error(Exit::bad_input, "replay.replan_mismatch",
                fmt::format("re-planning compaction {} covers {} nodes ({} … {}), the summary covers {} ({} … {})",
                            r.compaction, plan->covers_ids.size(), plan->covers_ids.front(), plan->covers_ids.back(),
                            stored.covers_ids.size(), stored.covers_ids.empty() ? "" : stored.covers_ids.front(),
                            stored.covers_ids.empty() ? "" : stored.covers_ids.back()));
  if (plan->input_digest != input_digest)
    throw Error(Exit::bad_input, "replay.digest_mismatch",
                fmt::format("the re-planned requests of compaction {} hash to {}, the summary's input digest is {}",
                            r.compaction, plan->input_digest, input_digest));
  r.replanned = true;
  r.replan_pass = region ? "region" : plan->reconsolidate ? "recompaction" : "first";
  r.replan_calls = plan->calls;
  r.reproduced = plan->text;
  r.identical = r.reproduced == r.stored;
}

/// Replays the last answered call's response as the summary text.
void replay_answer(ReplayResult& r) {
  const Json* found = nullptr;  // a partial compaction keeps the summary of its last answered call
  for (const auto& c : r.calls)
    if (c.contains("response")) found = &c;
  if (!found)
    throw Error(Exit::bad_input, "replay.no_answer",
                fmt::format("no recorded call of compaction {} has an answer to replay", r.compaction));
  // The answer goes through a replay of the call (the recorded response as the summarizer's
  // output), then the same cleaning and framing as at compaction time.
  std::string text = json_str((*found)["response"], "text");
  if (auto bad = clean_summary_text(text))
    throw Error(Exit::bad_input, "replay.no_answer", fmt::format("the recorded answer is rejected: {}", bad->what()));
  r.reproduced = parse_label(r.strategy) == StrategyLabel::lcm ? text : frame_summary(text);
  r.identical = r.reproduced == r.stored;
}

}  // namespace

std::unique_ptr<Summarizer> make_recording_summarizer(Store& store, std::string session, std::unique_ptr<Summarizer> inner) {
  return std::make_unique<RecordingSummarizer>(store, std::move(session), std::move(inner));
}

ReplayResult replay_summary(Store& store, const std::string& summary_id) {
  auto n = store.node(summary_id, false);
  if (!n || n->kind != kind::kSummary)
    throw Error(Exit::bad_input, "replay.not_summary", fmt::format("no summary '{}'", summary_id));
  ReplayResult r;
  r.summary_id = summary_id;
  r.strategy = json_str(n->metadata, "strategy", std::string(label_name(StrategyLabel::rolling)));
  r.compaction = json_str(n->metadata, "compaction");
  const Json prov = n->metadata.contains("provenance") ? n->metadata["provenance"] : Json::object();
  const std::string input_digest = json_str(prov, "input_digest");
  if (r.compaction.empty() || input_digest.empty())
    throw Error(Exit::bad_input, "replay.no_calls",
                fmt::format("summary '{}' was not written by ctxfold compact (no compaction or input digest)", summary_id));
  if (n->content.is_array() && !n->content.empty()) r.stored = json_str(n->content[0], "text");
  const std::vector<Json> all = recorded_calls(store, *n, summary_id, r);
  // Which calls made this node, checked against the node's input digest.
  const std::optional<StrategyLabel> label = strategy_label(n->metadata);
  if (label == StrategyLabel::lcm) {
    match_lcm_calls(*n, summary_id, all, input_digest, r);
  } else {
    match_chained_calls(all, input_digest, r);
  }
  // Rolling summaries are re-planned from the ledger state before them: the same covered range
  // selected again and the same requests issued again, answered by the recorded responses.
  const bool region = label == StrategyLabel::region;
  if ((label == StrategyLabel::rolling || region) && json_str(n->metadata, "origin") == "compact") {
    replay_replan(store, *n, prov, input_digest, region, r);
    return r;
  }
  replay_answer(r);
  return r;
}

}  // namespace ctxfold
