#pragma once
// The provider encoders behind render_request_body and render_to_json (private to lib/render):
// each turns Rendered::messages (after tool-pairing repair) into one provider's request shape.
#include <functional>
#include <string>
#include <utility>

#include "render/render.hpp"

namespace ctxfold::render_detail {

/// Calls emit with each OpenAI chat-completions message that rendered message m becomes (none,
/// one, or one per tool result), as openai_messages does: the conversion is per message.
void openai_message(const RenderedMessage& m, const std::function<void(Json&&)>& emit);

/// OpenAI chat-completions "messages". Tool-call ids longer than kOpenAIToolIdMax are sent as
/// openai_tool_call_id(id).
Json openai_messages(const Rendered& r);

/// The longest tool-call id the OpenAI chat-completions API accepts (a longer `tool_calls[].id`
/// or `tool_call_id` is refused with a 400: "string too long ... maximum length 40").
inline constexpr std::size_t kOpenAIToolIdMax = 40;

/// ID itself when it is at most kOpenAIToolIdMax bytes; else "call_" + the first 35 hex digits of
/// its SHA-256 (40 bytes): deterministic, so a call and its result keep matching, and reversible
/// through openai_tool_id_map.
std::string openai_tool_call_id(const std::string& id);

/// The ids openai_messages shortened in R: [{"id": sent id, "original": stored id}] in first-use
/// order (empty when none was); `render --format openai` prints it as "tool_call_ids".
Json openai_tool_id_map(const Rendered& r);

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

/// anthropic_body(r) without its messages (their "messages" empty): the leading system run only,
/// read up to the first message that is not part of it.
AnthropicBody anthropic_system(const Rendered& r);

/// anthropic_body one rendered message at a time: add() each of Rendered::messages in order,
/// then finish(); emit receives each message of the body's "messages" as soon as no later message
/// can change it (consecutive same-role turns are merged, so a message goes out when the next
/// role begins, and the last at finish()). Holds one merged message. finish() returns the body's
/// system fields (messages empty).
class AnthropicStream {
 public:
  explicit AnthropicStream(std::function<void(Json&&)> emit) : emit_(std::move(emit)) {}
  void add(const RenderedMessage& m);
  AnthropicBody finish();
  /// True once a message (not of the leading system run) has begun.
  bool started() const { return started_; }

 private:
  void emit_pending();
  static void finish_message(Json& msg);
  std::function<void(Json&&)> emit_;
  AnthropicBody body_;
  Json pending_;  ///< the message being merged; null when none
  bool started_ = false, emitted_ = false;
};

/// ctxfold's neutral messages: {"id","ids","kind","role","content"} per message.
Json ctxfold_messages(const Rendered& r);

}  // namespace ctxfold::render_detail
