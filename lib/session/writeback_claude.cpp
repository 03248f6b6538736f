// Write-back for Claude Code (docs/formats/writeback.md "Claude Code"): the inverse of the
// importer's reading of a session file (docs/formats/claude-code.md "Compactions").
#include <fmt/format.h>

#include "model/node.hpp"
#include "session/writeback_detail.hpp"
#include "util/digest.hpp"

namespace ctxfold::writeback_detail {

namespace {

class ClaudeWriter {
 public:
  ClaudeWriter(const WritebackOptions& opts, Writeback& w) : opts_(opts), w_(w) {}

  void run(const Rendered& r) {
    w_.client = "claude-code";
    w_.id = opts_.id.empty() ? uuid_from_hex(random_hex(16), '4') : opts_.id;
    w_.relative_path = fmt::format("projects/{}/{}.jsonl", claude_project_slug(w_.cwd), w_.id);
    ts_ = timestamp_ms(opts_.now);
    model_ = model_of(r);
    const Json body = render_request_body(r, RenderFormat::anthropic);
    const Json& messages = body["messages"];
    const bool boundary_first = r.messages.front().kind == kind::kSummary;
    if (boundary_first) boundary(r);
    for (std::size_t i = 0; i < messages.size(); ++i) message(messages[i], boundary_first && i == 0);
  }

 private:
  /// The model the source's newest assistant node names, else "ctxfold" (never "<synthetic>",
  /// which the client leaves out of its requests).
  static std::string model_of(const Rendered& r) {
    for (auto it = r.items.rbegin(); it != r.items.rend(); ++it)
      if (it->role == role::kAssistant && it->metadata.is_object())
        if (std::string m = json_str(it->metadata, "model"); !m.empty() && m != "<synthetic>") return m;
    return "ctxfold";
  }

  Json record(const char* type) {
    const std::string uuid = record_uuid(w_.id, index_++);
    Json j{{"parentUuid", parent_.empty() ? Json(nullptr) : Json(parent_)},
           {"isSidechain", false},
           {"userType", "external"},
           {"cwd", w_.cwd},
           {"sessionId", w_.id},
           {"type", type},
           {"uuid", uuid},
           {"timestamp", ts_}};
    if (index_ == 1) j["ctxfold"] = w_.provenance;  // where the session came from, on its first record
    parent_ = uuid;
    return j;
  }

  void boundary(const Rendered& r) {
    Json j = record("system");
    j["subtype"] = "compact_boundary";
    j["content"] = "Conversation compacted";
    j["isMeta"] = false;
    j["level"] = "info";
    j["logicalParentUuid"] = nullptr;
    j["compactMetadata"] = Json{{"trigger", "manual"}, {"preTokens", r.estimated_tokens}, {"postTokens", r.estimated_tokens}};
    w_.lines.push_back(dump_json(j));
  }

  void message(const Json& m, bool summary) {
    const bool assistant = json_str(m, "role") == "assistant";
    Json j = record(assistant ? "assistant" : "user");
    if (assistant) {
      bool calls = false;
      for (const auto& b : m["content"]) calls = calls || json_str(b, "type") == "tool_use";
      j["message"] = Json{{"id", "msg_ctxfold_" + sha256_hex(j["uuid"].get<std::string>()).substr(0, 24)},
                          {"type", "message"},
                          {"role", "assistant"},
                          {"model", model_},
                          {"content", m["content"]},
                          {"stop_reason", calls ? "tool_use" : "end_turn"},
                          {"stop_sequence", nullptr},
                          {"usage", Json{{"input_tokens", 0}, {"output_tokens", 0}}}};
      last_assistant_ = j["uuid"].get<std::string>();
    } else {
      j["message"] = Json{{"role", "user"}, {"content", m["content"]}};
      bool results = false;
      for (const auto& b : m["content"]) results = results || json_str(b, "type") == "tool_result";
      if (results && !last_assistant_.empty()) j["sourceToolAssistantUUID"] = last_assistant_;
      if (summary) {
        j["isCompactSummary"] = true;
        j["isVisibleInTranscriptOnly"] = true;
      }
    }
    w_.lines.push_back(dump_json(j));
    ++w_.messages;
  }

  const WritebackOptions& opts_;
  Writeback& w_;
  std::string ts_, model_, parent_, last_assistant_;
  std::int64_t index_ = 0;
};

}  // namespace

void write_claude_code(const Rendered& r, const WritebackOptions& opts, Writeback& w) { ClaudeWriter(opts, w).run(r); }

}  // namespace ctxfold::writeback_detail
