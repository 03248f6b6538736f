#pragma once
// The provider encoders behind render_request_body and render_to_json (private to lib/render):
// each turns Rendered::messages (after tool-pairing repair) into one provider's request shape.
#include <string>

#include "render/render.hpp"

namespace ctxfold::render_detail {

/// OpenAI chat-completions "messages".
Json openai_messages(const Rendered& r);

/// Anthropic Messages: the leading system text and "messages". A leading run of one system
/// message holding several text blocks (a client's system prompt as the client sent it, in
/// parts) is sent as that array of text blocks; otherwise "system" is the run's text joined by a
/// blank line.
struct AnthropicBody {
  std::string system;
  Json system_blocks = Json::array();  ///< the run's non-empty text blocks, in order
  int system_messages = 0;             ///< messages in the leading system run
  Json messages = Json::array();
  /// The "system" value of the request body (a string or an array of text blocks); null when empty.
  Json system_value() const;
};
AnthropicBody anthropic_body(const Rendered& r);

/// ctxfold's neutral messages: {"id","ids","kind","role","content"} per message.
Json ctxfold_messages(const Rendered& r);

}  // namespace ctxfold::render_detail
