#pragma once
#include <optional>
#include <string_view>

// Image headers: the pixel size of an image from its first bytes, raw or base64, without
// decoding the image (used by import, the token estimator, render and summarize).
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

}  // namespace ctxfold
