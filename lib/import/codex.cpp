// Codex CLI rollout JSONL importer (docs/import.md "Codex CLI", docs/formats/codex.md).
//
// Mapping, in file order (the rollout has no parent links; the file order is the chain):
//   session_meta            session row (payload without instructions; the system prompt text in
//                           session metadata.system_prompt) + kept record; the instructions /
//                           base_instructions text also becomes the root system node
//                           (metadata.codex_role "instructions"), since the model reads it on
//                           every request; metadata.codex_delivery says how Codex sends it:
//                           "developer_message" (base_instructions with a provenance, 0.171: the
//                           first input item) or "instructions" (the request's instructions field)
//   response_item message   user → user node; developer → system node (metadata.codex_role
//                           "developer"); assistant → part of the current assistant node
//   reasoning               opaque{provider:"openai", data:item} (encrypted_content and summary
//                           kept); thinking when there is no encrypted_content but summary text
//   function_call, custom_tool_call, local_shell_call
//                           tool_use{id:call_id}; arguments parsed when they are a JSON object,
//                           else {"raw": string} (one aggregated warning for the file)
//   web_search_call         opaque{provider:"openai"}: the search runs server side and has no
//                           output item, so a tool_use would stay unanswered forever and block
//                           compaction of its step
//   *_output                one role "tool" node each, tool_result{tool_use_id: call_id}
//   token_usage_record      the measured usage of one model response: metadata.usage of the
//                           assistant node of that response (usage_source "token_usage_record",
//                           response_id) + kept record
//   ghost_snapshot, turn_context, world_state, event_msg, unknown types
//                           kept records (event_msg mirrors are never messages; token_count's
//                           last_token_usage becomes metadata.usage of the assistant node it
//                           follows when no token_usage_record gave one; world_state is the
//                           client's state from which it writes its context messages, which are
//                           response_items of their own)
// Every node's metadata.source carries the record's top-level "ordinal" when it has one.
//   compacted               a summary view node (see add_compaction) + kept record
// Consecutive assistant-side items form ONE assistant node; a user/developer message, a tool
// output, a turn_context (written before every model request) or a compaction closes it.
#include <map>
#include <set>

#include "import/formats_common.hpp"
#include "import/import.hpp"
#include "import/jsonl_reader.hpp"

namespace ctxfold {
namespace {

using import_detail::file_stem;
using import_detail::image_from_url;
using import_detail::opaque_block;
using import_detail::parse_arguments;
using import_detail::source_meta;
using import_detail::text_block;

constexpr const char* kCodexFormat = "codex";

/// Responses API content parts → neutral blocks.
Json convert_parts(const Json& content) {
  Json blocks = Json::array();
  if (content.is_string()) {
    blocks.push_back(text_block(content.get<std::string>()));
    return blocks;
  }
  if (!content.is_array()) return blocks;
  for (const auto& part : content) {
    std::string type = json_str(part, "type");
    if (type == "input_text" || type == "output_text" || type == "text" || type == "summary_text") {
      blocks.push_back(text_block(json_str(part, "text")));
    } else if (type == "input_image" && part.contains("image_url") && part["image_url"].is_string()) {
      Json img = image_from_url(part["image_url"].get<std::string>());
      if (part.contains("detail")) img["detail"] = part["detail"];  // sent again as given
      blocks.push_back(std::move(img));
    } else {
      blocks.push_back(opaque_block("openai", part));
    }
  }
  return blocks;
}

class CodexImporter {
 public:
  CodexImporter(const std::string& path, ImportSink& sink) : path_(path), sink_(sink) {}

  void run() {
    JsonlReader reader(
        path_, [&](std::int64_t line, const std::string& code, const std::string& msg) { sink_.warn(line, code, msg); },
        [&](std::int64_t line, const std::string& raw) {
          if (begun_) sink_.keep_record(session_, line, "line.bad", raw);
          else early_bad_.emplace_back(line, raw);
        },
        sink_.max_record_bytes());
    JsonlRecord rec;
    while (reader.next(rec)) {
      if (!begun_) begin(rec);
      handle(rec);
    }
    if (!begun_) {
      if (early_bad_.empty()) {
        sink_.warn(0, "document.empty", "no records in codex rollout");
        return;
      }
      begin_with(file_stem(path_), Json::object());
    }
    flush();
    if (raw_arguments_ > 0)
      sink_.warn(first_raw_line_, "tool.arguments_raw",
                 std::to_string(raw_arguments_) +
                     " function call argument string(s) are not JSON objects; kept as {\"raw\": string}");
    if (last_) sink_.propose_head(session_, *last_);
  }

 private:
  void begin(const JsonlRecord& rec) {
    const Json& v = rec.value;
    if (json_str(v, "type") == "session_meta" && v.contains("payload") && v["payload"].is_object()) {
      std::string id = json_str(v["payload"], "id");
      Json meta = import_detail::extra_keys(v["payload"], {"instructions", "base_instructions"});
      auto [text, source] = instructions_text(v["payload"]);
      if (!text.empty()) {
        meta["system_prompt"] = text;
        meta["system_prompt_source"] = source;
      }
      begin_with(id.empty() ? file_stem(path_) : id, meta);
    } else {
      begin_with(file_stem(path_), Json::object());
    }
  }

  void begin_with(const std::string& session, Json meta) {
    session_ = session;
    SessionInfo info;
    info.id = session_;
    info.source = path_;
    info.format = kCodexFormat;
    info.metadata = std::move(meta);
    sink_.begin_session(std::move(info));
    begun_ = true;
    for (auto& [line, raw] : early_bad_) sink_.keep_record(session_, line, "line.bad", raw);
    early_bad_.clear();
  }

  std::string node_id(const JsonlRecord& rec) const {
    std::string id = session_ + ":" + std::to_string(rec.line);
    if (rec.part > 0) id += "." + std::to_string(rec.part);
    return id;
  }

  Node make_node(const JsonlRecord& rec, const char* role) const {
    Node n;
    n.id = node_id(rec);
    n.session = session_;
    n.role = role;
    n.metadata["source"] = source_meta(kCodexFormat, import_detail::file_name(path_), rec.line);
    if (auto o = rec.value.find("ordinal"); o != rec.value.end() && o->is_number_integer())
      n.metadata["source"]["ordinal"] = *o;
    if (auto ts = json_str(rec.value, "timestamp"); !ts.empty()) n.metadata["timestamp"] = ts;
    return n;
  }

  void append(Node n, std::int64_t line) {
    n.predecessor = last_;
    std::string id = sink_.add(std::move(n), line);
    chain_push(id, line);
    last_ = std::move(id);
  }

  /// The chain is kept as the lines of its nodes (a node's id is "<session>:<line>" but for a
  /// record split out of a glued line or a renamed copy, kept whole in chain_other_): 8 bytes a
  /// node instead of the id's string, so a long rollout does not hold every id until its end.
  void chain_push(const std::string& id, std::int64_t line) {
    const std::string plain = session_ + ":" + std::to_string(line);
    if (id == plain) {
      chain_.push_back(line);
    } else {
      chain_other_.push_back(id);
      chain_.push_back(-static_cast<std::int64_t>(chain_other_.size()));
    }
  }
  std::string chain_id(std::int64_t entry) const {
    return entry > 0 ? session_ + ":" + std::to_string(entry) : chain_other_[static_cast<std::size_t>(-entry - 1)];
  }

  void flush() {
    if (!pending_) return;
    Node n = std::move(*pending_);
    pending_.reset();
    append(std::move(n), pending_line_);
  }

  void keep(const JsonlRecord& rec, const std::string& type) { sink_.keep_record(session_, rec.line, type, dump_json(rec.value)); }

  void warn_unknown(const JsonlRecord& rec, const std::string& what) {
    if (warned_types_.insert(what).second)
      sink_.warn(rec.line, "record.unknown_type", "unknown codex record type '" + what + "' kept verbatim");
  }

  Node& assistant(const JsonlRecord& rec) {
    if (!pending_) {
      pending_ = make_node(rec, role::kAssistant);
      pending_->metadata["codex_items"] = Json::array();
      pending_line_ = rec.line;
    }
    return *pending_;
  }

  void handle(const JsonlRecord& rec) {
    const Json& v = rec.value;
    std::string type = json_str(v, "type");
    const Json& payload = json_at(v, "payload");
    if (type == "session_meta") {
      if (!seen_meta_ && payload.is_object()) add_instructions(rec, payload);
      seen_meta_ = true;
      keep(rec, type);
    } else if (type == "response_item" && payload.is_object()) {
      handle_item(rec, payload);
    } else if (type == "event_msg") {
      std::string sub = json_str(payload, "type");
      if (sub == "token_count" && payload.contains("info") && payload["info"].is_object()) {
        const Json& info = payload["info"];
        if (info.contains("model_context_window")) window_ = info["model_context_window"];
        if (pending_ && !pending_->metadata.contains("usage_source") && info.contains("last_token_usage") &&
            info["last_token_usage"].is_object()) {
          Json usage = info["last_token_usage"];
          if (info.contains("model_context_window")) usage["model_context_window"] = info["model_context_window"];
          pending_->metadata["usage"] = usage;
        }
      } else if (sub == "task_started") {
        turn_active_ = false;
        if (payload.contains("model_context_window")) window_ = payload["model_context_window"];
      }
      keep(rec, "event_msg/" + sub);
    } else if (type == "token_usage_record") {
      usage_record(payload);
      keep(rec, type);
    } else if (type == "world_state") {
      keep(rec, type);
    } else if (type == "turn_context") {
      flush();
      keep(rec, type);
    } else if (type == "compacted") {
      flush();
      add_compaction(rec, payload);
      keep(rec, type);
    } else {
      warn_unknown(rec, type.empty() ? std::string("(none)") : type);
      keep(rec, type.empty() ? std::string("unknown") : type);
    }
  }

  /// The system prompt a session_meta names: base_instructions (a string, or {text, provenance?})
  /// before instructions; with the key it came from.
  static std::pair<std::string, std::string> instructions_text(const Json& payload) {
    if (payload.contains("base_instructions")) {
      const Json& b = payload["base_instructions"];
      std::string text = b.is_string() ? b.get<std::string>() : json_str(b, "text");
      if (!text.empty()) return {text, "base_instructions"};
    }
    std::string text = json_str(payload, "instructions");
    return {text, text.empty() ? std::string() : std::string("instructions")};
  }

  void add_instructions(const JsonlRecord& rec, const Json& payload) {
    auto [text, source] = instructions_text(payload);
    if (text.empty()) return;
    Node n = make_node(rec, role::kSystem);
    n.content.push_back(text_block(text));
    n.metadata["codex_role"] = "instructions";
    // Codex 0.171 records base_instructions as {text, provenance} and sends that text as the
    // request's first input item, a developer message; older rollouts (a plain text, or {text})
    // came from clients that sent it as the request's "instructions" (docs/formats/codex.md).
    const Json* b = payload.contains("base_instructions") ? &payload["base_instructions"] : nullptr;
    bool developer = source == "base_instructions" && b->is_object() && b->contains("provenance");
    n.metadata["codex_delivery"] = developer ? "developer_message" : "instructions";
    append(std::move(n), rec.line);
    instructions_id_ = last_;
  }

  void handle_item(const JsonlRecord& rec, const Json& item) {
    std::string type = json_str(item, "type");
    // Content the Responses API never writes (a number, an object): read as none, so the record
    // is kept verbatim beside its node.
    if (auto c = item.find("content"); c != item.end() && !c->is_string() && !c->is_array() && !c->is_null()) {
      sink_.warn(rec.line, "record.field_type",
                 "field \"payload.content\" is neither a string nor an array; read as empty, the record kept");
      keep(rec, "record.field_type");
    }
    if (type == "message") {
      turn_active_ = true;
      handle_message(rec, item);
    } else if (type == "reasoning") {
      turn_active_ = true;
      handle_reasoning(rec, item);
    } else if (type == "function_call" || type == "custom_tool_call" || type == "local_shell_call") {
      turn_active_ = true;
      handle_call(rec, item, type);
    } else if (type == "web_search_call" || type == "compaction") {
      // compaction: an opaque compaction item standing alone in the history (a session ctxfold
      // wrote back from one that held it, docs/formats/writeback.md), sent again as recorded
      Node& n = assistant(rec);
      n.content.push_back(opaque_block("openai", item));
      n.metadata["codex_items"].push_back(Json{{"type", type}});
    } else if (type == "function_call_output" || type == "custom_tool_call_output" ||
               type == "local_shell_call_output") {
      handle_output(rec, item, type);
    } else if (type == "ghost_snapshot") {
      keep(rec, "response_item/ghost_snapshot");
    } else {
      warn_unknown(rec, "response_item/" + type);
      keep(rec, "response_item/" + type);
    }
  }

  /// A message item: an assistant one joins the current assistant node, any other role closes
  /// it and becomes a node of its own.
  void handle_message(const JsonlRecord& rec, const Json& item) {
    std::string r = json_str(item, "role");
    if (r == "assistant") {
      Node& n = assistant(rec);
      Json parts = convert_parts(json_at(item, "content"));
      for (auto& b : parts) n.content.push_back(b);
      Json entry = {{"type", "message"}};
      if (item.contains("phase")) entry["phase"] = item["phase"];
      if (item.contains("id")) entry["id"] = item["id"];
      if (item.contains("status")) entry["status"] = item["status"];
      entry["parts"] = parts.size();
      n.metadata["codex_items"].push_back(entry);
      if (compaction_output(rec)) n.metadata["codex_compaction_output"] = true;
      return;
    }
    flush();
    if (r != "user" && r != "developer" && r != "system" && warned_roles_.insert(r).second)
      sink_.warn(rec.line, "record.unknown_role",
                 "codex message with role '" + (r.empty() ? std::string("(none)") : r) +
                     "' kept as a system node (metadata.codex_role)");
    Node n = make_node(rec, r == "user" ? role::kUser : role::kSystem);
    if (r != "user") n.metadata["codex_role"] = r.empty() ? std::string("unknown") : r;
    n.content = convert_parts(item.contains("content") ? item["content"] : Json());
    Json extra = import_detail::extra_keys(item, {"type", "role", "content"});
    if (!extra.empty()) n.metadata["codex_extra"] = extra;
    append(std::move(n), rec.line);
  }

  /// A reasoning item: a thinking block (summary text, nothing encrypted) or an opaque one.
  void handle_reasoning(const JsonlRecord& rec, const Json& item) {
    Node& n = assistant(rec);
    bool encrypted = item.contains("encrypted_content") && item["encrypted_content"].is_string();
    std::string summary;
    if (item.contains("summary") && item["summary"].is_array())
      for (const auto& s : item["summary"]) {
        std::string t = json_str(s, "text");
        if (t.empty()) continue;
        if (!summary.empty()) summary += "\n\n";
        summary += t;
      }
    if (!encrypted && !summary.empty() && !(item.contains("content") && item["content"].is_array()))
      n.content.push_back(Json{{"type", "thinking"}, {"thinking", summary}});
    else
      n.content.push_back(opaque_block("openai", item));
    Json entry = {{"type", "reasoning"}};
    if (item.contains("id")) entry["id"] = item["id"];
    n.metadata["codex_items"].push_back(entry);
  }

  /// A function_call, custom_tool_call or local_shell_call: a tool_use of the assistant node.
  void handle_call(const JsonlRecord& rec, const Json& item, const std::string& type) {
    Node& n = assistant(rec);
    Json input;
    std::optional<std::string> raw_args;  // the arguments string, when re-encoding would differ
    if (type == "function_call") {
      bool parsed = false;
      std::string args = json_str(item, "arguments");
      input = parse_arguments(args, &parsed);
      if (!parsed) {
        if (raw_arguments_++ == 0) first_raw_line_ = rec.line;
      } else if (dump_json(input) != args) {
        raw_args = args;
      }
    } else if (type == "custom_tool_call") {
      input = Json{{"raw", json_str(item, "input")}};
    } else {
      input = item.contains("action") ? item["action"] : Json::object();
    }
    std::string call_id = json_str(item, "call_id", json_str(item, "id"));
    std::string name = json_str(item, "name", type == "local_shell_call" ? "local_shell" : "");
    n.content.push_back(Json{{"type", "tool_use"}, {"id", call_id}, {"name", name}, {"input", input}});
    Json entry = {{"type", type}};
    if (item.contains("status")) entry["status"] = item["status"];
    if (item.contains("id")) entry["id"] = item["id"];
    if (raw_args) entry["arguments"] = *raw_args;
    n.metadata["codex_items"].push_back(entry);
  }

  /// A *_output item: a role "tool" node of its own.
  void handle_output(const JsonlRecord& rec, const Json& item, const std::string& type) {
    flush();
    Node n = make_node(rec, role::kTool);
    Json content;
    bool is_error = false;
    const Json& out = json_at(item, "output");
    if (out.is_string()) {
      content = out;
    } else if (out.is_array()) {
      content = convert_parts(out);
    } else if (out.is_object() && out.contains("content")) {
      content = out["content"].is_string() ? out["content"] : convert_parts(out["content"]);
      if (out.contains("success") && out["success"].is_boolean()) is_error = !out["success"].get<bool>();
    } else {
      content = dump_json(out);
    }
    n.content.push_back(Json{{"type", "tool_result"},
                             {"tool_use_id", json_str(item, "call_id")},
                             {"content", content},
                             {"is_error", is_error}});
    n.metadata["codex_items"] = Json::array({Json{{"type", type}}});
    Json extra = import_detail::extra_keys(item, {"type", "call_id", "output"});
    if (!extra.empty()) n.metadata["codex_extra"] = extra;
    append(std::move(n), rec.line);
  }

  /// `compacted` → summary view node. With replacement_history (docs/formats/codex.md) its content is
  /// those items as blocks (messages' parts; the opaque `compaction` item and anything else as
  /// opaque blocks), metadata.replacement_history lists each item's type/role/block count so the
  /// items can be told apart again. Legacy `compacted{message}` gives a text summary. It covers
  /// every chain node before it except the root instructions node (Codex sends instructions
  /// outside the history, so they survive compaction); its predecessor is that splice point.
  /// Instructions from a session_meta that came after other items are not the root: then the
  /// summary covers the whole chain from its root (a contiguous segment, invariant 3; found by
  /// fuzz/import_codex). The chain then continues from the last pre-compaction node: a summary
  /// is a view node.
  void add_compaction(const JsonlRecord& rec, const Json& payload) {
    const bool instructions_root = instructions_id_ && !chain_.empty() && chain_id(chain_.front()) == *instructions_id_;
    std::vector<std::string> covers;
    covers.reserve(chain_.size());
    for (std::size_t k = instructions_root ? 1 : 0; k < chain_.size(); ++k) covers.push_back(chain_id(chain_[k]));
    if (covers.empty()) {
      sink_.warn(rec.line, "compaction.empty", "codex compaction before any message; kept as a record only");
      return;
    }
    Node n = make_node(rec, role::kUser);
    n.kind = kind::kSummary;
    if (instructions_root) n.predecessor = instructions_id_;
    n.covers_ids = std::move(covers);
    n.metadata["strategy"] = "rolling";
    n.metadata["origin"] = "import";
    n.metadata["format"] = kCodexFormat;
    std::string message = json_str(payload, "message");
    if (payload.contains("replacement_history") && payload["replacement_history"].is_array()) {
      const Json& items = payload["replacement_history"];
      Json described = Json::array();
      for (const auto& item : items) {
        std::string type = json_str(item, "type");
        Json blocks = type == "message" ? convert_parts(json_at(item, "content"))
                                        : Json::array({opaque_block("openai", item)});
        Json d = {{"type", type}};
        if (item.contains("role")) d["role"] = item["role"];
        if (item.contains("id")) d["id"] = item["id"];
        if (item.contains("phase")) d["phase"] = item["phase"];
        d["blocks"] = blocks.size();
        described.push_back(d);
        for (auto& b : blocks) n.content.push_back(b);
      }
      n.metadata["replacement_history_items"] = items.size();
      n.metadata["replacement_history"] = described;
      if (!message.empty()) n.metadata["codex_message"] = message;
    } else {
      n.content.push_back(text_block(message));
    }
    for (const char* k : {"window_number", "first_window_id", "previous_window_id", "window_id", "compaction_response_id"})
      if (payload.contains(k)) n.metadata[k] = payload[k];
    n.metadata["compact_metadata"] = compaction_facts(payload);
    if (n.metadata["compact_metadata"].contains("trigger")) n.metadata["trigger"] = n.metadata["compact_metadata"]["trigger"];
    sink_.add(std::move(n), rec.line);
  }

  /// A response_item Codex marks as its local compaction's own output (the summary text the
  /// summarization request returned; record-level metadata.compaction_output).
  static bool compaction_output(const JsonlRecord& rec) {
    auto m = rec.value.find("metadata");
    return m != rec.value.end() && m->is_object() && m->contains("compaction_output") &&
           (*m)["compaction_output"] == Json(true);
  }

  /// A token_usage_record: one response's measured usage, for the assistant node being built
  /// (the record follows that response's items).
  void usage_record(const Json& p) {
    if (!p.is_object() || !p.contains("usage") || !p["usage"].is_object()) return;
    std::string rid = json_str(p, "response_id");
    prev_usage_ = std::move(last_usage_);
    last_usage_ = Json{{"response_id", rid}, {"usage", p["usage"]}};
    if (!pending_) return;
    Json usage = p["usage"];
    if (!window_.is_null()) usage["model_context_window"] = window_;
    pending_->metadata["usage"] = std::move(usage);
    pending_->metadata["usage_source"] = "token_usage_record";
    if (!rid.empty()) pending_->metadata["response_id"] = rid;
  }

  /// What the rollout tells of a compaction (compact_metadata of the summary node, read by
  /// `ctxfold compactions`): trigger "auto" when it fired inside a turn that had already sampled
  /// (Codex compacts mid-turn when the reported usage passes its limit; a compaction with no
  /// model activity before it in its turn has no recorded trigger), preTokens = the measured
  /// total_tokens of the last model response before it (not the summarization response, named
  /// by compaction_response_id), window = the model context window last reported, and the
  /// summarization's own usage.
  Json compaction_facts(const Json& payload) const {
    Json cm = Json::object();
    if (turn_active_) cm["trigger"] = "auto";
    std::string crid = json_str(payload, "compaction_response_id");
    const Json* before = nullptr;
    if (last_usage_.is_object() && (crid.empty() || json_str(last_usage_, "response_id") != crid)) before = &last_usage_;
    else if (prev_usage_.is_object()) before = &prev_usage_;
    if (before) {
      const Json& u = (*before)["usage"];
      if (u.contains("total_tokens") && u["total_tokens"].is_number_integer()) cm["preTokens"] = u["total_tokens"];
      cm["pre_usage"] = u;
      if (!json_str(*before, "response_id").empty()) cm["pre_response_id"] = (*before)["response_id"];
    }
    if (!window_.is_null()) cm["window"] = window_;
    if (payload.contains("latest_token_usage_record") && payload["latest_token_usage_record"].is_object() &&
        payload["latest_token_usage_record"].contains("usage"))
      cm["summary_usage"] = payload["latest_token_usage_record"]["usage"];
    return cm;
  }

  std::string path_;
  ImportSink& sink_;
  std::string session_;
  bool begun_ = false;
  bool seen_meta_ = false;
  std::optional<std::string> last_;
  std::optional<std::string> instructions_id_;
  std::vector<std::int64_t> chain_;        ///< chain_push: a line, or -(1 + index in chain_other_)
  std::vector<std::string> chain_other_;
  std::optional<Node> pending_;
  std::int64_t pending_line_ = 0;
  std::int64_t raw_arguments_ = 0;
  std::int64_t first_raw_line_ = 0;
  std::set<std::string> warned_types_;
  std::set<std::string> warned_roles_;
  Json window_;             ///< the model context window last reported (task_started, token_count)
  Json last_usage_, prev_usage_;  ///< the two latest token_usage_records: {response_id, usage}
  bool turn_active_ = false;  ///< the current turn (since task_started) has sampled or had input
  std::vector<std::pair<std::int64_t, std::string>> early_bad_;
};

}  // namespace

void import_codex(const std::string& path, ImportSink& sink) { CodexImporter(path, sink).run(); }

}  // namespace ctxfold
