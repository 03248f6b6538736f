#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "model/node.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Pixel dimensions read from an image header (PNG IHDR, JPEG SOFn, GIF, WebP VP8/VP8L/VP8X).
struct ImageDims {
  int width = 0;
  int height = 0;
};

/// Dimensions from raw image bytes; nullopt when the header is not recognised or truncated.
/// JPEG is read by walking marker segments up to the first SOFn; a zero or absurd (> 1e6 px)
/// side is treated as unreadable.
std::optional<ImageDims> image_dimensions(std::string_view bytes);

/// Dimensions from base64 image data, decoding only as much of the header as needed (a JPEG may
/// need more). nullopt for empty, corrupt or unrecognised data. Whitespace and newlines inside the
/// text are skipped, the URL-safe alphabet is accepted, and a "data:<type>;base64," prefix is
/// stripped. Decoding stops at '=' or the first character outside the alphabet.
std::optional<ImageDims> image_dimensions_base64(std::string_view b64);

/// Token estimates are local estimates, never provider accounting (PRODUCT.md §2):
/// text is UTF-8 bytes / 4 rounded up; every block adds kBlockOverhead, every message
/// kMessageOverhead; images count by pixel dimensions with Anthropic's documented rule
/// tokens = width*height/750 after scaling the long edge down to 1568 px (docs: "Vision",
/// image costs), never by base64 length; an image whose size cannot be read counts
/// kUnknownImageTokens. An image block's own "width"/"height" fields win over its data.
/// tool_result content (string or nested blocks) is recursed; opaque blocks count only their
/// overhead; unknown blocks count their string fields except "data".
inline constexpr std::int64_t kBlockOverhead = 3;
inline constexpr std::int64_t kMessageOverhead = 4;
inline constexpr std::int64_t kUnknownImageTokens = 1600;
inline constexpr double kImageMaxEdge = 1568.0;

std::int64_t estimate_text_tokens(std::string_view text);
std::int64_t estimate_image_tokens(int width, int height);
std::int64_t estimate_block_tokens(const Json& block);
/// Sum over the node's blocks plus kMessageOverhead; 0 for event nodes (never model input).
std::int64_t estimate_node_tokens(const Node& n);

}  // namespace ctxfold
