// pi coding agent session files (`~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`) →
// nodes (docs/formats/pi.md).
//
// The first line is the header ({type: "session", version, id, cwd, parentSession?}); every other
// line is an entry {type, id, parentId, timestamp, ...} of one tree (parentId null for a root):
//   message          message.role user | assistant | toolResult | bashExecution | custom
//                    → user, assistant, tool, user, user message node
//   custom_message   an extension's message that enters the context     → user message node
//   branch_summary   the summary of a branch left behind (/tree)         → user message node
//   compaction       summary + firstKeptEntryId                          → summary view node
//   anything else    model_change, thinking_level_change, label, session_info, custom
//                    → source record, passing its place in the tree on
// Entry ids are 8 hex digits unique only inside one file (a fork copies them), so node ids are
// "<session>:<entry id>".
#include "import/pi.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "import/formats_common.hpp"
#include "import/jsonl_reader.hpp"
#include "model/node.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::file_name;
using import_detail::file_stem;
using import_detail::opaque_block;
using import_detail::source_meta;
using import_detail::text_block;

constexpr const char* kPiFormat = "pi";

// The text pi wraps around a summary when it sends it as a user message (the package's
// dist/core/messages.js: COMPACTION_SUMMARY_PREFIX/SUFFIX, BRANCH_SUMMARY_PREFIX/SUFFIX).
constexpr const char* kCompactionPrefix =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
constexpr const char* kCompactionSuffix = "\n</summary>";
constexpr const char* kBranchPrefix =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
constexpr const char* kBranchSuffix = "</summary>";

const std::set<std::string>& entry_types() {
  static const std::set<std::string> t = {"message", "model_change", "thinking_level_change", "compaction",
                                          "branch_summary", "custom", "custom_message", "label", "session_info"};
  return t;
}
const std::set<std::string>& message_roles() {
  static const std::set<std::string> r = {"user", "assistant", "toolResult", "bashExecution", "custom",
                                          "branchSummary", "compactionSummary"};
  return r;
}
const std::set<std::string>& block_types() {
  static const std::set<std::string> b = {"text", "image", "thinking", "toolCall"};
  return b;
}

/// pi content (a string, or text / image / thinking / toolCall blocks) as ctxfold blocks.
Json convert_blocks(const Json& content) {
  Json out = Json::array();
  if (content.is_string()) {
    out.push_back(text_block(content.get<std::string>()));
    return out;
  }
  if (!content.is_array()) {
    if (!content.is_null()) out.push_back(opaque_block(kPiFormat, content));
    return out;
  }
  for (const auto& b : content) {
    const std::string type = json_str(b, "type");
    if (type == "text") {
      out.push_back(text_block(json_str(b, "text")));
    } else if (type == "thinking") {
      Json t = {{"type", "thinking"}, {"thinking", json_str(b, "thinking")}};
      if (b.contains("thinkingSignature") && b["thinkingSignature"].is_string()) t["signature"] = b["thinkingSignature"];
      out.push_back(std::move(t));
    } else if (type == "toolCall") {
      out.push_back(Json{{"type", "tool_use"},
                         {"id", json_str(b, "id")},
                         {"name", json_str(b, "name")},
                         {"input", b.contains("arguments") ? b["arguments"] : Json::object()}});
    } else if (type == "image") {
      out.push_back(Json{{"type", "image"}, {"media_type", json_str(b, "mimeType")}, {"data", json_str(b, "data")}});
    } else {
      out.push_back(opaque_block(kPiFormat, b));
    }
  }
  return out;
}

/// A bashExecution message as pi sends it to the model (bashExecutionToText in the package).
std::string bash_text(const Json& m) {
  std::string text = fmt::format("Ran `{}`\n", json_str(m, "command"));
  const std::string output = json_str(m, "output");
  text += output.empty() ? std::string("(no output)") : fmt::format("```\n{}\n```", output);
  const Json code = m.contains("exitCode") ? m["exitCode"] : Json();
  if (m.value("cancelled", false) == true) text += "\n\n(command cancelled)";
  else if (code.is_number_integer() && code.get<std::int64_t>() != 0)
    text += fmt::format("\n\nCommand exited with code {}", code.get<std::int64_t>());
  if (m.value("truncated", false) == true && m.contains("fullOutputPath") && m["fullOutputPath"].is_string())
    text += fmt::format("\n\n[Output truncated. Full output: {}]", m["fullOutputPath"].get<std::string>());
  return text;
}

class PiImporter {
 public:
  PiImporter(const std::string& path, ImportSink& sink)
      : path_(path), file_(file_name(path)), sink_(sink), bad_(sink) {}

  void run() {
    JsonlReader reader(path_, bad_.warn(), bad_.keep(), sink_.max_record_bytes());
    JsonlRecord rec;
    while (reader.next(rec)) {
      if (!rec.value.is_object()) continue;
      if (session_.empty()) begin(rec.value, rec.line);
      if (json_str(rec.value, "type") == "session" && !rec.value.contains("parentId")) continue;
      handle(rec);
    }
    if (session_.empty()) {
      if (!bad_.holding()) {
        sink_.warn(0, "document.empty", "no records in the pi session file");
        return;
      }
      begin(Json::object(), 0);
    }
    // pi's leaf is the last entry of the file (SessionManager reloads it so): HEAD is its node.
    if (auto it = at_.find(last_entry_); it != at_.end() && it->second) {
      sink_.follow_file(session_, *it->second);
    } else if (!newest_node_.empty()) {
      // The leaf stands before every message (a damaged file): a session with nodes keeps a HEAD.
      sink_.warn(0, "head.leaf_empty",
                 fmt::format("pi's last entry '{}' has no message before it; HEAD is the newest message node", last_entry_));
      sink_.propose_head(session_, newest_node_);
    }
  }

 private:
  void begin(const Json& first, std::int64_t line) {
    const bool header = json_str(first, "type") == "session";
    session_ = header ? json_str(first, "id", file_stem(path_)) : file_stem(path_);
    if (session_.empty()) session_ = file_stem(path_);
    SessionInfo info;
    info.id = session_;
    info.source = path_;
    info.format = kPiFormat;
    if (header) {
      for (const char* k : {"cwd", "version", "parentSession", "timestamp"})
        if (first.contains(k)) info.metadata[k] = first[k];
      // /fork, /clone: parentSession is the parent's file, "<timestamp>_<session id>.jsonl".
      const std::string parent = file_stem(json_str(first, "parentSession"));
      if (auto cut = parent.rfind('_'); cut != std::string::npos && cut + 1 < parent.size())
        info.metadata["forked_from_id"] = parent.substr(cut + 1);
    }
    sink_.begin_session(std::move(info));
    if (header) sink_.keep_record(session_, line, "session", dump_json(first));
    else sink_.warn(line, "record.no_header", "the pi session file does not start with its session header");
    bad_.begin(session_);
  }

  std::string qualified(const std::string& entry) const { return session_ + ":" + entry; }

  /// The node an entry's parentId leads to: the parent's node, or the node a parent that is no
  /// node passed on; an id never seen stays as written (the sink reports it as missing).
  std::optional<std::string> chain_at(const Json& v) const {
    if (!v.contains("parentId") || !v["parentId"].is_string()) return std::nullopt;
    const std::string parent = v["parentId"].get<std::string>();
    auto it = at_.find(parent);
    return it == at_.end() ? std::optional<std::string>(qualified(parent)) : it->second;
  }

  void handle(const JsonlRecord& rec) {
    const Json& v = rec.value;
    const std::string type = json_str(v, "type");
    const std::string id = json_str(v, "id");
    if (id.empty()) {
      sink_.warn(rec.line, "record.no_id", "a pi entry without an id; kept as a source record");
      sink_.keep_record(session_, rec.line, type.empty() ? "record" : type, dump_json(v));
      return;
    }
    if (v.contains("parentId") && v["parentId"].is_string()) parent_of_[id] = v["parentId"].get<std::string>();
    last_entry_ = id;
    std::optional<std::string> pred = chain_at(v);
    std::optional<std::string> here = pred;
    if (auto n = node_of(rec, type)) {
      here = add(std::move(*n), rec, id, pred);
    } else if (type == "compaction") {
      compaction(rec, id, pred);
    } else {
      if (!entry_types().count(type))
        sink_.warn(rec.line, "record.unknown_type", fmt::format("unknown pi entry type '{}'; kept as a source record", type));
      sink_.keep_record(session_, rec.line, type.empty() ? "entry" : type, dump_json(v));
    }
    at_[id] = here;
  }

  /// The message node an entry stands for in the model's context, or nullopt for an entry that is
  /// no message the model reads (the caller keeps it as a record).
  std::optional<Node> node_of(const JsonlRecord& rec, const std::string& type) {
    const Json& v = rec.value;
    Node n;
    n.kind = kind::kMessage;
    if (type == "custom_message") {
      n.role = role::kUser;
      n.content = convert_blocks(v.contains("content") ? v["content"] : Json());
      n.metadata["pi_type"] = type;
      n.metadata["custom_type"] = json_str(v, "customType");
      return n;
    }
    if (type == "branch_summary") {
      const std::string summary = json_str(v, "summary");
      if (summary.empty()) return std::nullopt;  // pi sends no message for an empty summary
      n.role = role::kUser;
      n.content = Json::array({text_block(kBranchPrefix + summary + kBranchSuffix)});
      n.metadata["pi_type"] = type;
      n.metadata["from_id"] = json_str(v, "fromId");
      return n;
    }
    if (type != "message" || !v.contains("message") || !v["message"].is_object()) return std::nullopt;
    const Json& m = v["message"];
    const std::string r = json_str(m, "role");
    const Json content = m.contains("content") ? m["content"] : Json();
    if (r == "user" || r == "custom") {
      n.role = role::kUser;
      n.content = convert_blocks(content);
    } else if (r == "assistant") {
      n.role = role::kAssistant;
      n.content = convert_blocks(content);
      if (m.contains("usage") && m["usage"].is_object()) n.metadata["usage"] = m["usage"];
      if (m.contains("model") && m["model"].is_string()) n.metadata["model"] = m["model"];
    } else if (r == "toolResult") {
      n.role = role::kTool;
      n.content = Json::array({Json{{"type", "tool_result"},
                                    {"tool_use_id", json_str(m, "toolCallId")},
                                    {"content", convert_blocks(content)},
                                    {"is_error", m.value("isError", false) == true}}});
      n.metadata["tool_name"] = json_str(m, "toolName");
    } else if (r == "bashExecution") {
      if (m.value("excludeFromContext", false) == true) return std::nullopt;  // a `!!` command: never sent
      n.role = role::kUser;
      n.content = Json::array({text_block(bash_text(m))});
    } else {
      if (!message_roles().count(r))
        sink_.warn(rec.line, "record.unknown_type", fmt::format("unknown pi message role '{}'; kept as a source record", r));
      return std::nullopt;
    }
    n.metadata["pi_role"] = r;
    Json extra = extra_keys(m, {"role", "content", "usage", "model", "timestamp"});
    if (!extra.empty()) n.metadata["pi_extra"] = std::move(extra);
    return n;
  }

  std::string add(Node n, const JsonlRecord& rec, const std::string& entry, const std::optional<std::string>& pred) {
    n.id = qualified(entry);
    n.session = session_;
    n.predecessor = pred;
    if (rec.value.contains("timestamp")) n.metadata["timestamp"] = rec.value["timestamp"];
    n.metadata["source"] = source_meta(kPiFormat, file_, rec.line);
    const Json usage = n.metadata.contains("usage") ? n.metadata["usage"] : Json();
    std::string id = sink_.add(std::move(n), rec.line);
    pred_of_[id] = pred;
    node_of_[entry] = id;
    newest_node_ = id;
    if (usage.is_object() && usage.contains("totalTokens") && usage["totalTokens"].is_number_integer())
      usage_total_[id] = usage["totalTokens"].get<std::int64_t>();
    return id;
  }

  /// The entries from the root to `entry` along parentId, root first (stops at a cycle).
  std::vector<std::string> entry_path(const std::string& entry) const {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::string at = entry; !at.empty() && seen.insert(at).second;) {
      out.push_back(at);
      auto it = parent_of_.find(at);
      if (it == parent_of_.end()) break;
      at = it->second;
    }
    return {out.rbegin(), out.rend()};
  }

  /// A compaction entry: pi sends its summary first, then the path from firstKeptEntryId on
  /// (docs/formats/pi.md "Compaction"). So it becomes a summary view node covering the nodes of the
  /// path before firstKeptEntryId; the chain goes on from the compaction's parent (a summary is a
  /// view). tokensBefore is measured when it is the usage of the assistant reply just before.
  void compaction(const JsonlRecord& rec, const std::string& entry, const std::optional<std::string>& pred) {
    const Json& v = rec.value;
    sink_.keep_record(session_, rec.line, "compaction", dump_json(v));
    const std::string first_kept = json_str(v, "firstKeptEntryId");
    std::vector<std::string> covers;
    std::vector<std::string> path = v.contains("parentId") && v["parentId"].is_string()
                                        ? entry_path(v["parentId"].get<std::string>())
                                        : std::vector<std::string>{};
    for (const std::string& e : path) {
      if (e == first_kept) break;
      if (auto it = node_of_.find(e); it != node_of_.end()) covers.push_back(it->second);
    }
    const std::string summary = json_str(v, "summary");
    if (covers.empty() || summary.empty()) {
      sink_.warn(rec.line, "compaction.empty",
                 covers.empty() ? "a pi compaction that keeps every message before it (nothing covered); kept as a record only"
                                : "a pi compaction without a summary; kept as a record only");
      return;
    }
    Node n;
    n.id = qualified(entry);
    n.session = session_;
    n.kind = kind::kSummary;
    n.role = role::kUser;
    if (auto it = pred_of_.find(covers.front()); it != pred_of_.end()) n.predecessor = it->second;
    n.covers_ids = std::move(covers);
    n.content = Json::array({text_block(kCompactionPrefix + summary + kCompactionSuffix)});
    n.metadata["strategy"] = "rolling";
    n.metadata["origin"] = "import";
    n.metadata["format"] = kPiFormat;
    n.metadata["recap"] = false;
    // pi records no trigger (manual /compact or automatic), only whether an extension wrote it.
    if (v.value("fromHook", false) == true) n.metadata["trigger"] = "extension";
    n.metadata["first_kept_entry"] = first_kept;
    if (v.contains("tokensBefore") && v["tokensBefore"].is_number_integer()) {
      const std::int64_t before = v["tokensBefore"].get<std::int64_t>();
      auto u = pred ? usage_total_.find(*pred) : usage_total_.end();
      const bool measured = u != usage_total_.end() && u->second == before;
      n.metadata["compact_metadata"] = Json{{"tokensBefore", before}, {"tokensBeforeIsEstimated", !measured}};
    }
    if (v.contains("details")) n.metadata["details"] = v["details"];
    if (v.contains("timestamp")) n.metadata["timestamp"] = v["timestamp"];
    n.metadata["source"] = source_meta(kPiFormat, file_, rec.line);
    sink_.add(std::move(n), rec.line);
  }

  std::string path_, file_;
  ImportSink& sink_;
  std::string session_;
  import_detail::BadLines bad_;
  std::map<std::string, std::string> parent_of_;                // entry id -> parentId
  std::map<std::string, std::optional<std::string>> at_;        // entry id -> the chain node there
  std::map<std::string, std::string> node_of_;                  // entry id -> its node
  std::map<std::string, std::optional<std::string>> pred_of_;   // node id -> its predecessor
  std::map<std::string, std::int64_t> usage_total_;             // node id -> usage.totalTokens
  std::string last_entry_;
  std::string newest_node_;  // the message node added last, in file order
};

}  // namespace

void import_pi(const std::string& path, ImportSink& sink) { PiImporter(path, sink).run(); }

std::string pi_misfit(const Json& r) {
  const std::string type = json_str(r, "type");
  if (type == "session" && !r.contains("parentId")) return "";
  if (!r.contains("id") || !r.contains("parentId")) return "a record without pi's entry id and parentId";
  if (!entry_types().count(type)) return fmt::format("entry type '{}' is not one pi writes", type);
  if (type != "message") return "";
  if (!r.contains("message") || !r["message"].is_object()) return "a message entry without a message object";
  const Json& m = r["message"];
  const std::string role = json_str(m, "role");
  if (!message_roles().count(role)) return fmt::format("message role '{}' is not one pi writes", role);
  if (m.contains("content") && m["content"].is_array())
    for (const auto& b : m["content"])
      if (!block_types().count(json_str(b, "type")))
        return fmt::format("content block type '{}' is not one pi writes", json_str(b, "type"));
  return "";
}

}  // namespace ctxfold
