#include "summarize/recorded.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "summarize/extractive.hpp"
#include "summarize/transcript.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {

Json request_to_json(const SummaryRequest& req) {
  return Json{{"previous_summary", req.previous_summary},
              {"transcript", req.transcript},
              {"instructions", req.instructions},
              {"max_output_tokens", req.max_output_tokens},
              {"input_tokens", req.input_tokens},
              {"prompt_version", req.prompt_version}};
}

SummaryRequest request_from_json(const Json& j) {
  SummaryRequest r;
  r.previous_summary = json_str(j, "previous_summary");
  r.transcript = json_str(j, "transcript");
  r.instructions = json_str(j, "instructions");
  if (j.contains("max_output_tokens") && j["max_output_tokens"].is_number_integer())
    r.max_output_tokens = j["max_output_tokens"].get<std::int64_t>();
  if (j.contains("input_tokens") && j["input_tokens"].is_number_integer())
    r.input_tokens = j["input_tokens"].get<std::int64_t>();
  r.prompt_version = json_str(j, "prompt_version");
  return r;
}

std::string request_digest(const SummaryRequest& req) { return sha256_hex(dump_json(request_to_json(req))); }

namespace {

class ReplaySummarizer : public Summarizer {
 public:
  explicit ReplaySummarizer(std::string dir) : dir_(std::move(dir)) {
    if (!std::filesystem::is_directory(dir_))
      throw Error(Exit::usage, "summarizer.spec", fmt::format("replay: '{}' is not a directory", dir_),
                  "write one with `ctxfold replay SUMMARY_ID --export DIR`");
    // The recorded requests' transcripts were rendered with the recorded summarizer's options
    // (the extractive one reads longer tool results): render them the same way to match.
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (!files.empty()) {
      std::ifstream in(files.front(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      try {
        Json j = parse_json(ss.str());
        if (j.contains("summarizer") && json_str(j["summarizer"], "kind") == "extractive")
          topts_ = ExtractiveSummarizer::extractive_transcript_options();
      } catch (const std::exception&) {
        // a malformed answer file is reported when it is looked up
      }
    }
  }
  TranscriptOptions transcript_options() const override { return topts_; }
  std::string kind() const override { return "replay"; }
  std::string model() const override { return "replay:" + dir_; }
  std::int64_t window_tokens() const override { return 128000; }
  SummaryResult summarize(const SummaryRequest& req) override {
    const std::string digest = request_digest(req);
    const std::string path = (std::filesystem::path(dir_) / (digest + ".json")).string();
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw Error(Exit::environment, "summarizer.replay_missing",
                  fmt::format("replay: no recorded answer for request {} in '{}'", digest, dir_));
    std::stringstream ss;
    ss << in.rdbuf();
    Json j;
    try {
      j = parse_json(ss.str());
    } catch (const nlohmann::json::exception& e) {
      throw Error(Exit::environment, "summarizer.malformed", fmt::format("replay: '{}' is not valid JSON: {}", path, e.what()));
    }
    if (json_str(j, "request_digest") != digest || !j.contains("response") || !j["response"].is_object())
      throw Error(Exit::environment, "summarizer.malformed",
                  fmt::format("replay: '{}' does not hold the answer to request {}", path, digest));
    SummaryResult out;
    out.text = json_str(j["response"], "text");
    out.model = json_str(j["response"], "model");
    if (j["response"].contains("usage") && j["response"]["usage"].is_object()) out.usage = j["response"]["usage"];
    return out;
  }

 private:
  std::string dir_;
  TranscriptOptions topts_;
};

/// Answers a re-planned compaction's requests with the calls recorded for it, by request digest:
/// the recorded response, or the recorded failure thrown again; a request never recorded throws
/// Error(environment,"replay.unrecorded") naming its position and digest.
}  // namespace

std::unique_ptr<Summarizer> make_replay_summarizer(std::string dir) { return std::make_unique<ReplaySummarizer>(std::move(dir)); }


}  // namespace ctxfold
