#pragma once
// Block helpers shared by the renderer's walk, its tool-pairing repair and its provider encoders
// (private to lib/render).
#include <cstdint>
#include <optional>
#include <string>

#include "model/node.hpp"
#include "util/json.hpp"

namespace ctxfold::render_detail {

/// The role a node's message takes in a request: a view node (summary, archive, notes) or a node
/// without a role is read as user text.
std::string message_role(const Node& n);

/// "[image WxH media/type]" (or "[image ? media/type]" when its size is unknown).
std::string image_label(const Json& block);

/// Plain text of a tool_result's content (a string, or blocks with images as labels).
std::string content_text(const Json& content);

/// {"type":"text","text":TEXT}.
Json text_block(std::string text);

/// "[tool_use ID NAME] INPUT-JSON": a call shown as text where it cannot be a tool call.
std::string tool_use_as_text(const Json& b);

/// True when B is an object whose "type" is T.
bool is_type(const Json& b, const char* t);

/// The text and image labels of CONTENT's blocks, non-empty pieces joined by SEP.
std::string joined_text(const Json& content, const char* sep);

/// A data: URL (or an http(s) ref) for an image block, when it has data or a URL.
std::optional<std::string> image_url(const Json& b);

/// Bytes of the strings CONTENT sends as text: text blocks, tool_result content (a string or its
/// text blocks), string content. What the row cap counts and render's system_prompt.chars.
std::int64_t text_bytes(const Json& content);

/// One block as transcript text (`render --format text`).
std::string block_text(const Json& b);

}  // namespace ctxfold::render_detail
