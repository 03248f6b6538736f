#pragma once
// Recorded summarizer calls, answered again offline (docs/strategies.md "Replay"): the canonical
// JSON of a SummaryRequest, its digest, and the `replay:DIR` summarizer that answers from files.
// Pure over requests and files: no database.
#include <memory>
#include <string>

#include "summarize/summarizer.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Log event of one summarizer call: {"compaction" (ref of the session's newest compact/start
/// when the call was made), "index", "summarizer":{"kind","model"}, "request" (request_to_json),
/// "request_digest", "response":{"text","model","usage"} or "failure":{"code","message"}}.
inline constexpr const char* kSummarizerCallEvent = "summarizer/call";

/// {"previous_summary","transcript","instructions","max_output_tokens","input_tokens","prompt_version"}.
Json request_to_json(const SummaryRequest& req);
/// The inverse of request_to_json; missing keys stay default.
SummaryRequest request_from_json(const Json& j);
/// sha256 hex of the canonical request_to_json (the summarizer's kind and model are not part of
/// it, so a recorded answer replays under replay:DIR).
std::string request_digest(const SummaryRequest& req);

/// `--summarizer replay:DIR`: answers a request with DIR/<request_digest>.json, a file holding
/// {"request_digest","response":{"text","model","usage"}} (as `ctxfold replay --export DIR`
/// writes). No network. A request with no recorded answer throws
/// Error(environment,"summarizer.replay_missing") naming the digest. kind() is "replay".
std::unique_ptr<Summarizer> make_replay_summarizer(std::string dir);

}  // namespace ctxfold
