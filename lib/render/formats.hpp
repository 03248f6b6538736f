#pragma once
// The provider encoders behind render_request_body and render_to_json (private to lib/render):
// each turns Rendered::messages (after tool-pairing repair) into one provider's request shape.
#include <string>

#include "render/render.hpp"

namespace ctxfold::render_detail {

/// OpenAI chat-completions "messages".
Json openai_messages(const Rendered& r);

/// Anthropic Messages: the leading system text and "messages".
struct AnthropicBody {
  std::string system;
  Json messages = Json::array();
};
AnthropicBody anthropic_body(const Rendered& r);

/// ctxfold's neutral messages: {"id","ids","kind","role","content"} per message.
Json ctxfold_messages(const Rendered& r);

}  // namespace ctxfold::render_detail
