#pragma once
// `ctxfold mcp`: a Model Context Protocol server (JSON-RPC 2.0) over the recall tools of
// mcp/tools.hpp. This file is the protocol only: one message in, at most one message out; the
// stdio loop that feeds it lives in cmd/mcp.cpp. Rules: docs/commands.md "mcp".
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/tools.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold::mcp {

/// The revision without the initialize handshake (every request names its version in
/// params._meta["io.modelcontextprotocol/protocolVersion"]; `server/discover` describes the server).
inline constexpr const char* kStatelessRevision = "2026-07-28";
/// The initialize-handshake revisions this server speaks, newest first; `initialize` answers the
/// client's version when it is one of them, else the first.
inline const std::vector<std::string> kHandshakeRevisions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

/// JSON-RPC 2.0 error codes (JSON-RPC 2.0 "Error object") and MCP 2026-07-28's
/// UnsupportedProtocolVersion.
namespace code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kUnsupportedVersion = -32022;
}  // namespace code

struct ServerOptions {
  ToolLimits limits;
  /// A message longer than this many bytes (its line, without the newline) is refused unread.
  std::size_t max_message_bytes = 1 << 20;
  std::string version = "0.1.0";  ///< serverInfo.version
};

/// Opens a fresh read-only snapshot of the archive for one tool call (so a call sees what
/// `import` committed before it; docs/commands.md "Reading while import writes").
using StoreOpener = std::function<Store()>;

/// The server's state across messages: which handshake revision was negotiated, if any.
/// handle() never throws: every failure becomes a JSON-RPC error or a tool error.
class Server {
 public:
  Server(StoreOpener open, ServerOptions options);

  /// Answers one message (a line of the stdio transport, without its newline): the response text
  /// (one line, no newline), or nullopt when none is due (a notification, a response, a blank
  /// line, a batch of notifications only). Malformed JSON: -32700; not a request object, a bad
  /// "jsonrpc" or id, a second initialize, a request before initialize that names no revision in
  /// _meta: -32600; unknown method (`shutdown` and `exit` too: MCP ends a stdio session by closing
  /// stdin): -32601; bad params or an unknown tool: -32602; a revision in _meta it does not speak:
  /// -32022 with data {"requested","supported"}. A batch (JSON array) is answered only after
  /// `initialize` negotiated 2025-03-26, the one revision that has batches; otherwise -32600.
  std::optional<std::string> handle(std::string_view message);

  /// The answer to a message longer than ServerOptions::max_message_bytes: -32600 with id null.
  std::string refuse_oversized(std::size_t bytes) const;

  /// The revision `initialize` negotiated, or nullopt before it.
  const std::optional<std::string>& negotiated() const { return negotiated_; }
  const ServerOptions& options() const { return options_; }

 private:
  std::optional<Json> dispatch(const Json& msg, bool in_batch);
  Json request(const Json& id, const std::string& method, const Json& params, bool in_batch);
  Json initialize(const Json& params);
  Json discover() const;
  Json tools_list(const std::string& revision) const;
  Json tools_call(const Json& params, const std::string& revision);

  StoreOpener open_;
  ServerOptions options_;
  std::optional<std::string> negotiated_;
};

/// Cuts a byte stream into the stdio transport's messages (one per "\n"-terminated line; a "\r"
/// before the "\n" is dropped) without holding more than max_bytes of a line: a longer line is
/// reported by its length and its bytes are skipped up to its newline.
class LineFramer {
 public:
  explicit LineFramer(std::size_t max_bytes) : max_(max_bytes) {}
  struct Message {
    std::string text;         ///< the line (empty when oversized)
    std::size_t bytes = 0;    ///< the line's length in bytes
    bool oversized = false;
  };
  /// Feeds bytes; returns the messages they complete.
  std::vector<Message> push(std::string_view bytes);
  /// At end of input: the last line when it had no newline (nullopt when none).
  std::optional<Message> finish();

 private:
  std::size_t max_;
  std::string line_;
  std::size_t bytes_ = 0;
  bool skipping_ = false;
};

}  // namespace ctxfold::mcp
