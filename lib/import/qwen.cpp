// Qwen Code chat recordings (`~/.qwen/projects/<cwd>/chats/<sessionId>.jsonl`) → nodes
// (docs/formats/qwen-code.md).
//
// Each line is a record in Claude Code's envelope (uuid, parentUuid, sessionId, timestamp, type)
// whose message holds Gemini API Content ({role: "user" | "model", parts: [...]}):
//   user         the prompt's parts                              → user node
//   assistant    the model's parts (text, functionCall, thought)  → assistant node, usageMetadata
//                as metadata.usage, model as metadata.model
//   tool_result  functionResponse parts                           → tool node
//   system       chat_compression: systemPayload.compressedHistory is the new context
//                → summary view node; any other subtype (ui_telemetry, attribution_snapshot,
//                slash_command, custom_title, ...) → source record
// parentUuid links every record; a record that is not a node passes its place in the chain on.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "import/formats_common.hpp"
#include "import/gemini/messages.hpp"
#include "import/jsonl_reader.hpp"
#include "import/qwen.hpp"
#include "model/node.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::file_name;
using import_detail::file_stem;
using import_detail::source_meta;

constexpr const char* kQwenFormat = "qwen";

/// Envelope keys every record carries; the rest of a message record is kept as metadata.qwen_extra.
constexpr std::initializer_list<const char*> kEnvelope = {"uuid",     "parentUuid", "sessionId", "timestamp", "type",
                                                          "message",  "usageMetadata", "model", "cwd",     "version",
                                                          "gitBranch", "provenance"};

/// A Qwen Content ({role, parts}) as the Gemini CLI message convert_message reads.
Json as_gemini_message(const Json& content) {
  const std::string role = json_str(content, "role");
  return Json{{"type", role == "model" ? "gemini" : "user"},
              {"content", content.contains("parts") ? content["parts"] : Json::array()}};
}

class QwenImporter {
 public:
  QwenImporter(const std::string& path, ImportSink& sink)
      : path_(path), file_(file_name(path)), sink_(sink), bad_(sink) {}

  void run() {
    JsonlReader reader(path_, bad_.warn(), bad_.keep(), sink_.max_record_bytes());
    JsonlRecord rec;
    while (reader.next(rec)) {
      if (!rec.value.is_object()) continue;
      if (session_.empty()) begin(rec.value);
      handle(rec);
    }
    if (session_.empty()) {
      if (!bad_.holding()) {
        sink_.warn(0, "document.empty", "no records in the Qwen Code chat recording");
        return;
      }
      begin(Json::object());
    }
    if (last_) sink_.propose_head(session_, *last_);
  }

 private:
  void begin(const Json& first) {
    session_ = json_str(first, "sessionId", file_stem(path_));
    SessionInfo info;
    info.id = session_;
    info.source = path_;
    info.format = kQwenFormat;
    for (const char* k : {"cwd", "version", "gitBranch"})
      if (first.contains(k) && first[k].is_string()) info.metadata[k] = first[k];
    sink_.begin_session(std::move(info));
    bad_.begin(session_);
  }

  /// The node a record's parentUuid leads to: the parent's node, or the node the parent (a
  /// record that is not a node) passed on; an id never seen stays as written (the sink reports it).
  std::optional<std::string> chain_at(const Json& v) const {
    if (!v.contains("parentUuid") || !v["parentUuid"].is_string()) return std::nullopt;
    const std::string parent = v["parentUuid"].get<std::string>();
    auto it = at_.find(parent);
    return it == at_.end() ? std::optional<std::string>(parent) : it->second;
  }

  void handle(const JsonlRecord& rec) {
    const Json& v = rec.value;
    const std::string type = json_str(v, "type");
    const std::string uuid = json_str(v, "uuid");
    std::optional<std::string> pred = chain_at(v);
    std::optional<std::string> here = pred;
    if (uuid.empty()) {
      sink_.warn(rec.line, "record.no_id", "a Qwen Code record without a uuid; kept as a source record");
      sink_.keep_record(session_, rec.line, type.empty() ? "record" : type, dump_json(v));
      return;
    }
    if ((type == "user" || type == "assistant" || type == "tool_result") && v.contains("message") &&
        v["message"].is_object()) {
      here = message_node(rec, uuid, pred);
    } else if (type == "system" && json_str(v, "subtype") == "chat_compression") {
      compression(rec, uuid, pred);
    } else {
      if (type != "system")
        sink_.warn(rec.line, "record.unknown_type", fmt::format("unknown Qwen Code record type '{}'; kept as a source record", type));
      std::string subtype = json_str(v, "subtype");
      sink_.keep_record(session_, rec.line, subtype.empty() ? type : type + "/" + subtype, dump_json(v));
    }
    at_[uuid] = here;
  }

  std::string message_node(const JsonlRecord& rec, const std::string& uuid, const std::optional<std::string>& pred) {
    const Json& v = rec.value;
    gemini_detail::Converted c = gemini_detail::convert_message(as_gemini_message(v["message"]), nullptr);
    Node n;
    n.id = uuid;
    n.session = session_;
    n.predecessor = pred;
    n.kind = kind::kMessage;
    n.role = c.role;
    n.content = std::move(c.content);
    n.metadata = std::move(c.metadata);
    // convert_message gives an empty user message one empty text block: the record held nothing.
    if (n.content.size() == 1 && json_str(n.content[0], "type") == "text" && json_str(n.content[0], "text").empty() &&
        (!v["message"].contains("parts") || v["message"]["parts"].empty()))
      n.content = Json::array();
    if (v.contains("timestamp")) n.metadata["timestamp"] = v["timestamp"];
    if (v.contains("usageMetadata") && v["usageMetadata"].is_object()) n.metadata["usage"] = v["usageMetadata"];
    if (v.contains("model") && v["model"].is_string()) n.metadata["model"] = v["model"];
    Json extra = extra_keys(v, kEnvelope);
    if (!extra.empty()) n.metadata["qwen_extra"] = std::move(extra);
    n.metadata["source"] = source_meta(kQwenFormat, file_, rec.line);
    std::string id = sink_.add(std::move(n), rec.line);
    pred_of_[id] = pred;
    last_ = id;
    return id;
  }

  /// The nodes from the root to `tip` along predecessors, root first.
  std::vector<std::string> spine_to(const std::optional<std::string>& tip) const {
    std::vector<std::string> out;
    // Only this file's nodes: a parentUuid naming a record never stored (a damaged line) ends it.
    std::set<std::string> seen;  // uuids repeat in a damaged file: a link back ends the walk
    for (std::optional<std::string> at = tip; at && seen.insert(*at).second;) {
      auto it = pred_of_.find(*at);
      if (it == pred_of_.end()) break;
      out.push_back(*at);
      at = it->second;
    }
    return {out.rbegin(), out.rend()};
  }

  /// A chat_compression record: compressedHistory (Content[]) is the whole context the client
  /// sends from now on, so it becomes a summary view node covering every node before it; the
  /// chain goes on from the last covered node (a summary is a view). metadata.replacement_history
  /// tells its messages apart (role, block count) so a render sends them as the client does.
  void compression(const JsonlRecord& rec, const std::string& uuid, const std::optional<std::string>& pred) {
    const Json& v = rec.value;
    const Json payload = v.contains("systemPayload") && v["systemPayload"].is_object() ? v["systemPayload"] : Json();
    sink_.keep_record(session_, rec.line, "system/chat_compression", dump_json(v));
    std::vector<std::string> covers = spine_to(pred);
    if (!payload.contains("compressedHistory") || !payload["compressedHistory"].is_array() || covers.empty()) {
      sink_.warn(rec.line, "compaction.empty",
                 "a Qwen Code chat compression without a compressed history or anything before it; kept as a record only");
      return;
    }
    Node n;
    n.id = uuid;
    n.session = session_;
    n.kind = kind::kSummary;
    n.role = role::kUser;
    n.covers_ids = std::move(covers);
    Json described = Json::array();
    for (const auto& content : payload["compressedHistory"]) {
      gemini_detail::Converted c = gemini_detail::convert_message(as_gemini_message(content), nullptr);
      described.push_back(Json{{"type", "message"},
                               {"role", json_str(content, "role") == "model" ? "assistant" : "user"},
                               {"blocks", c.content.size()}});
      for (auto& b : c.content) n.content.push_back(std::move(b));
    }
    n.metadata["strategy"] = "rolling";
    n.metadata["origin"] = "import";
    n.metadata["format"] = kQwenFormat;
    n.metadata["recap"] = false;
    n.metadata["replacement_history"] = std::move(described);
    if (payload.contains("info") && payload["info"].is_object()) {
      n.metadata["compact_metadata"] = payload["info"];
      if (payload["info"].contains("triggerReason")) n.metadata["trigger"] = payload["info"]["triggerReason"];
    }
    if (v.contains("timestamp")) n.metadata["timestamp"] = v["timestamp"];
    n.metadata["source"] = source_meta(kQwenFormat, file_, rec.line);
    sink_.add(std::move(n), rec.line);
  }

  std::string path_, file_;
  ImportSink& sink_;
  std::string session_;
  import_detail::BadLines bad_;
  std::map<std::string, std::optional<std::string>> at_;       // record uuid -> the chain node there
  std::map<std::string, std::optional<std::string>> pred_of_;  // node id -> its predecessor
  std::optional<std::string> last_;
};

}  // namespace

void import_qwen(const std::string& path, ImportSink& sink) { QwenImporter(path, sink).run(); }

}  // namespace ctxfold
