// Gemini CLI chat messages → ctxfold node content (docs/formats/gemini.md, "Messages").
#pragma once

#include <string>

#include "util/json.hpp"

namespace ctxfold::gemini_detail {

/// One Gemini CLI message as node fields: role ("user", "assistant", "tool"; empty for the UI
/// notices info/error/warning, which become event nodes), the content blocks and the metadata
/// the message carries besides its content.
struct Converted {
  std::string role;
  std::string kind;  ///< "message" or "event"
  Json content = Json::array();
  Json metadata = Json::object();
  bool has_tool_calls = false;  ///< an assistant message with toolCalls[] (see results_node)
};

/// Converts one message object {id, timestamp, type, content, thoughts?, toolCalls?, tokens?,
/// model?, ...}. The same turn written as a string (live recording) or as a Part array (a
/// `$set.messages` rewrite, where the content is the API parts and may hold functionCall and
/// thought parts) converts to the same blocks, so a rewrite of an unchanged turn is recognised
/// as unchanged. Part mapping: text → text; thought text → thinking{thinking, signature:
/// thoughtSignature}; functionCall → tool_use{id, name, input}; functionResponse →
/// tool_result{tool_use_id, content, is_error, name}; inlineData → image{media_type, data};
/// fileData → image{media_type, ref}; anything else → opaque{provider:"gemini"}. A
/// thoughtSignature on a non-thought part is kept on its block as "gemini_signature". A user
/// message of functionResponse parts only is a role "tool" node. `warn_type` is set to the type
/// when it is unknown (kept as an event node).
Converted convert_message(const Json& m, std::string* warn_type);

/// A message whose fields hold types Gemini CLI never writes there (an id or type that is not a
/// string, content neither a string nor a Part array, toolCalls or thoughts not an array): the
/// first such field, else nullptr; a null field is as absent. Such a message is reported
/// ("record.field_type") and kept verbatim besides being read as well as it can be
/// (docs/formats/gemini.md). live.hpp RecordProbe reads the same rule from SAX events.
const char* odd_field(const Json& m);

/// The call ids a message's functionResponse parts answer (empty for other messages).
std::vector<std::string> answered_call_ids(const Json& m);

/// The text of a message's content (string, or its text parts joined), for marker checks.
std::string message_text(const Json& m);

/// For an assistant message with toolCalls[] whose results are not recorded as a separate user
/// message (older recordings): the role "tool" content, one tool_result per functionResponse in
/// toolCalls[].result (a call without any result gets a text result naming its status), and
/// the calls' UI fields (status, displayName, resultDisplay, ...) as metadata.tool_calls.
Converted results_node(const Json& m);

}  // namespace ctxfold::gemini_detail
