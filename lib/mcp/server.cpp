// The MCP protocol of `ctxfold mcp`: JSON-RPC 2.0 framing and errors, the lifecycle (the
// initialize handshake of 2024-11-05 .. 2025-11-25 and the handshake-less 2026-07-28, whose
// requests carry their revision in _meta), tools/list and tools/call over mcp/tools.hpp.
#include "mcp/server.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.hpp"

namespace ctxfold::mcp {

namespace {

constexpr const char* kMetaVersion = "io.modelcontextprotocol/protocolVersion";
/// How long a client may cache server/discover and tools/list (2026-07-28 "Caching"): the tool
/// table is fixed for the life of the process, and private because the default session is the
/// caller's.
constexpr std::int64_t kTtlMs = 300000;

constexpr const char* kInstructions =
    "ctxfold's archive of agent sessions: everything a compaction summarized is still here. "
    "grep finds text in the raw history and the summaries (covered_by names the summary that replaced a "
    "match), expand pages through the rows a summary covers, describe and list show the summary tree, "
    "sessions lists the archive, dropped shows what a compaction's summary left out. Results are bounded; "
    "follow next_offset.";

/// Thrown inside request handling for a JSON-RPC error answer.
struct RpcError {
  int code;
  std::string message;
  Json data = nullptr;
};

Json error_response(const Json& id, int code, const std::string& message, const Json& data = nullptr) {
  Json e = {{"code", code}, {"message", message}};
  if (!data.is_null()) e["data"] = data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", e}};
}

bool valid_id(const Json& id) { return id.is_string() || id.is_number_integer(); }

std::vector<std::string> all_revisions() {
  std::vector<std::string> v = {kStatelessRevision};
  v.insert(v.end(), kHandshakeRevisions.begin(), kHandshakeRevisions.end());
  return v;
}

/// The revision a request names in params._meta, or nullopt. Errors: -32602 for a non-string,
/// -32022 for a revision other than 2026-07-28.
std::optional<std::string> meta_revision(const Json& params) {
  auto m = params.find("_meta");
  if (m == params.end() || !m->is_object()) return std::nullopt;
  auto v = m->find(kMetaVersion);
  if (v == m->end()) return std::nullopt;
  if (!v->is_string()) throw RpcError{code::kInvalidParams, fmt::format("_meta {} must be a string", kMetaVersion)};
  const std::string r = v->get<std::string>();
  if (r != kStatelessRevision)
    throw RpcError{code::kUnsupportedVersion,
                   fmt::format("unsupported protocol version '{}'", r.substr(0, 64)),
                   Json{{"requested", r.substr(0, 64)}, {"supported", all_revisions()}}};
  return r;
}

/// Results under 2026-07-28 say they are complete (its "resultType"); earlier revisions have no
/// such field.
Json finish(Json result, const std::string& revision) {
  if (revision == kStatelessRevision) result["resultType"] = "complete";
  return result;
}

std::string error_text(const Error& e) {
  std::string t = "ctxfold: error: " + std::string(e.what());
  if (!e.hint().empty()) t += "\nhint: " + e.hint();
  return t;
}

}  // namespace

Server::Server(StoreOpener open, ServerOptions options) : open_(std::move(open)), options_(std::move(options)) {}

std::string Server::refuse_oversized(std::size_t bytes) const {
  return dump_json(error_response(nullptr, code::kInvalidRequest,
                                  fmt::format("message of {} bytes is over the bound of {} bytes", bytes,
                                              options_.max_message_bytes)));
}

std::optional<std::string> Server::handle(std::string_view message) {
  if (message.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  Json msg;
  try {
    msg = parse_json(message);
  } catch (const nlohmann::json::exception& e) {
    return dump_json(error_response(nullptr, code::kParseError, fmt::format("parse error: {}", e.what())));
  }
  if (msg.is_array()) {
    if (negotiated_ != "2025-03-26")
      return dump_json(error_response(nullptr, code::kInvalidRequest,
                                      fmt::format("JSON-RPC batches are not part of protocol revision {}",
                                                  negotiated_.value_or(kStatelessRevision))));
    if (msg.empty()) return dump_json(error_response(nullptr, code::kInvalidRequest, "empty batch"));
    Json out = Json::array();
    for (const Json& m : msg)
      if (auto r = dispatch(m, true)) out.push_back(std::move(*r));
    if (out.empty()) return std::nullopt;
    return dump_json(out);
  }
  auto r = dispatch(msg, false);
  if (!r) return std::nullopt;
  return dump_json(*r);
}

std::optional<Json> Server::dispatch(const Json& msg, bool in_batch) {
  if (!msg.is_object()) return error_response(nullptr, code::kInvalidRequest, "a message must be a JSON object");
  const auto id_it = msg.find("id");
  const bool has_id = id_it != msg.end();
  const auto method_it = msg.find("method");
  // A response (result or error, no method): this server sends no requests, so there is nothing to match.
  if (method_it == msg.end() && has_id && (msg.contains("result") || msg.contains("error"))) return std::nullopt;
  if (has_id && !valid_id(*id_it))
    return error_response(nullptr, code::kInvalidRequest, "id must be a string or an integer");
  const Json id = has_id ? *id_it : Json(nullptr);
  auto jr = msg.find("jsonrpc");
  if (jr == msg.end() || *jr != "2.0") return error_response(id, code::kInvalidRequest, "jsonrpc must be \"2.0\"");
  if (method_it == msg.end() || !method_it->is_string())
    return error_response(id, code::kInvalidRequest, "method must be a string");
  const std::string method = method_it->get<std::string>();
  Json params = Json::object();
  if (auto p = msg.find("params"); p != msg.end()) {
    if (!p->is_object()) {
      if (!has_id) return std::nullopt;
      return error_response(id, code::kInvalidParams, "params must be an object");
    }
    params = *p;
  }
  if (!has_id) return std::nullopt;  // notifications (initialized, cancelled, ...) get no answer
  try {
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", request(id, method, params, in_batch)}};
  } catch (const RpcError& e) {
    return error_response(id, e.code, e.message, e.data);
  } catch (const std::exception& e) {
    return error_response(id, code::kInternalError, fmt::format("internal error: {}", e.what()));
  }
}

Json Server::request(const Json& /*id*/, const std::string& method, const Json& params, bool in_batch) {
  const std::optional<std::string> meta = meta_revision(params);
  if (method == "initialize") {
    if (in_batch) throw RpcError{code::kInvalidRequest, "initialize must not be part of a batch"};
    return initialize(params);
  }
  const std::string revision = meta ? *meta : negotiated_.value_or(kStatelessRevision);
  if (method == "server/discover") return finish(discover(), kStatelessRevision);
  if (method == "ping") return finish(Json::object(), revision);
  if (!meta && !negotiated_)
    throw RpcError{code::kInvalidRequest,
                   fmt::format("not initialized: send initialize first, or name the protocol revision in "
                               "params._meta \"{}\"",
                               kMetaVersion)};
  if (method == "tools/list") return tools_list(revision);
  if (method == "tools/call") return tools_call(params, revision);
  std::string hint;
  if (method == "shutdown" || method == "exit") hint = " (an MCP stdio session ends when the client closes stdin)";
  throw RpcError{code::kMethodNotFound, fmt::format("method not found: '{}'{}", method.substr(0, 128), hint)};
}

Json Server::initialize(const Json& params) {
  if (negotiated_) throw RpcError{code::kInvalidRequest, fmt::format("already initialized ({})", *negotiated_)};
  auto v = params.find("protocolVersion");
  if (v == params.end() || !v->is_string()) throw RpcError{code::kInvalidParams, "initialize: protocolVersion must be a string"};
  const std::string asked = v->get<std::string>();
  const bool known = std::find(kHandshakeRevisions.begin(), kHandshakeRevisions.end(), asked) != kHandshakeRevisions.end();
  negotiated_ = known ? asked : kHandshakeRevisions.front();
  Json info = {{"name", "ctxfold"}, {"version", options_.version}};
  if (*negotiated_ >= "2025-06-18") info["title"] = "ctxfold recall";
  return {{"protocolVersion", *negotiated_},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", info},
          {"instructions", kInstructions}};
}

Json Server::discover() const {
  return {{"supportedVersions", all_revisions()},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "ctxfold"}, {"title", "ctxfold recall"}, {"version", options_.version}}},
          {"instructions", kInstructions},
          {"ttlMs", kTtlMs},
          {"cacheScope", "private"}};
}

Json Server::tools_list(const std::string& revision) const {
  Json tools = Json::array();
  for (const Tool& t : tool_table()) {
    Json j = {{"name", t.name}};
    if (revision >= "2025-06-18") j["title"] = t.title;
    j["description"] = t.description;
    j["inputSchema"] = input_schema(t);
    if (revision >= "2025-03-26")
      j["annotations"] = {{"readOnlyHint", true}, {"destructiveHint", false}, {"idempotentHint", true}, {"openWorldHint", false}};
    tools.push_back(j);
  }
  Json r = {{"tools", tools}};
  if (revision == kStatelessRevision) {
    r["ttlMs"] = kTtlMs;
    r["cacheScope"] = "private";
  }
  return finish(r, revision);
}

Json Server::tools_call(const Json& params, const std::string& revision) {
  auto n = params.find("name");
  if (n == params.end() || !n->is_string()) throw RpcError{code::kInvalidParams, "tools/call: name must be a string"};
  const Tool* tool = find_tool(n->get<std::string>());
  if (!tool) {
    std::string names;
    for (const Tool& t : tool_table()) names += (names.empty() ? "" : ", ") + std::string(t.name);
    throw RpcError{code::kInvalidParams,
                   fmt::format("unknown tool '{}' (the tools are {})", n->get<std::string>().substr(0, 128), names)};
  }
  Json args = Json::object();
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object()) throw RpcError{code::kInvalidParams, "tools/call: arguments must be an object"};
    args = *a;
  }
  Json result;
  try {
    const Json checked = check_arguments(*tool, args);
    Store st = open_();  // a fresh read snapshot per call
    const Json doc = tool->run(st, checked, options_.limits);
    result = {{"content", Json::array({{{"type", "text"}, {"text", dump_json(doc)}}})}};
    if (revision >= "2025-06-18") result["structuredContent"] = doc;
    result["isError"] = false;
  } catch (const Error& e) {
    result = {{"content", Json::array({{{"type", "text"}, {"text", error_text(e)}}})}, {"isError", true}};
  } catch (const nlohmann::json::exception& e) {
    result = {{"content", Json::array({{{"type", "text"}, {"text", fmt::format("ctxfold: error: invalid JSON: {}", e.what())}}})},
              {"isError", true}};
  }
  return finish(result, revision);
}

std::vector<LineFramer::Message> LineFramer::push(std::string_view bytes) {
  std::vector<Message> out;
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view part = bytes.substr(0, nl);
    bytes_ += part.size();
    if (!skipping_) {
      if (bytes_ > max_) {
        skipping_ = true;
        line_.clear();
        line_.shrink_to_fit();
      } else {
        line_.append(part);
      }
    }
    if (nl == std::string_view::npos) break;
    bytes.remove_prefix(nl + 1);
    Message m;
    if (!skipping_ && !line_.empty() && line_.back() == '\r') line_.pop_back();
    m.bytes = bytes_;
    m.oversized = skipping_;
    if (!skipping_) m.text = std::move(line_);
    out.push_back(std::move(m));
    line_.clear();
    bytes_ = 0;
    skipping_ = false;
  }
  return out;
}

std::optional<LineFramer::Message> LineFramer::finish() {
  if (bytes_ == 0) return std::nullopt;
  Message m;
  m.bytes = bytes_;
  m.oversized = skipping_;
  if (!skipping_) m.text = std::move(line_);
  line_.clear();
  bytes_ = 0;
  skipping_ = false;
  return m;
}

}  // namespace ctxfold::mcp
