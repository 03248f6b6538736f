// What the model read, proven from the client's own records: the requests a transcript recorded
// (Claude Code's api-request / api-request-blob records, docs/formats/claude-code.md "The client's
// request records") against ctxfold's render at the node each was sent from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// One recorded request compared with the render.
struct RecordedRequest {
  std::string id;         ///< the record's request id
  std::string source;     ///< the file it was read from
  std::int64_t line = 0;  ///< its line there
  std::string head;       ///< the node rendered: the predecessor of the stored reply; empty when none
  std::int64_t messages = 0;  ///< messages in the recorded request
  std::int64_t compared = 0;  ///< messages whose body the client recorded (user turns) and were compared
  std::int64_t equal = 0;     ///< of those, equal to the render's message at the same position
  /// Each difference: {"message": index, "block": index or null, "role", "recorded", "rendered"}
  /// (blocks as JSON, long text cut at 300 bytes on a UTF-8 boundary), or {"message", "problem"}.
  Json differences = Json::array();
};

/// Every recorded request of a session, in file order.
struct FidelityReport {
  std::string session;
  std::vector<RecordedRequest> requests;
  std::int64_t without_reply = 0;  ///< requests whose reply is not stored (nothing to render at)
};

/// Rebuilds each recorded request's messages (the previous request's first `keep` messages, then
/// the blobs named by `tail`; assistant messages have no blob and are compared by role only) and
/// compares it, message by message and block by block (cache markers and "is_error": false
/// ignored), with the anthropic render body at the predecessor of the assistant node whose
/// metadata.request_ref names it, as of that node's seq (a later summary is not applied).
/// Read-only. Cost: one render per recorded request.
FidelityReport client_request_fidelity(Store& store, const std::string& session);

/// {"schema":"ctxfold.tokens.client_requests/1","session","requests":[{"request","source","line",
/// "head","messages","compared","equal","differences"}],"summary":{"requests","without_reply",
/// "compared","equal","differing_requests"}}.
Json fidelity_json(const FidelityReport& r);

}  // namespace ctxfold
