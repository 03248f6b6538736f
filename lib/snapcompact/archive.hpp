#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/models.hpp"
#include "snapcompact/frames.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

// snapcompact's archive as the model reads it (docs/strategies.md "snapcompact"): the
// per-model frame geometry, the frame budget, the frame cache (schema 003) and the image blocks a
// render puts where the archive view node stands.
namespace ctxfold {

/// The model's geometry: the preferred frame (catalog defaults.frame) clamped so width and height
/// are within max_edge, the shorter side within short_edge, and the area within max_pixels; at
/// least 1 column and 1 row. Narrower or shorter, never scaled.
FrameGeometry frame_geometry(const ModelInfo& m);

/// Settings of snapcompact's frames (the snapcompact config: archivePercent, maxFrames).
struct SnapSettings {
  std::optional<std::int64_t> window;  ///< contextWindowTokens (the model's catalog window when absent)
  int archive_percent = 20;            ///< archivePercent: share of the window the frames may take
  std::optional<int> max_frames;       ///< maxFrames: replaces the provider caps
};

/// The settings an archive view node recorded at its compaction (metadata.snapcompact: "window",
/// "archive_percent", "max_frames"); defaults where it recorded none.
SnapSettings archive_settings(const Node& archive);

/// The frame budget: the smallest of four limits (docs/strategies.md "snapcompact").
struct FrameBudget {
  std::int64_t limit = 0;       ///< frames kept at most (>= 1)
  std::int64_t provider = 0;    ///< nine tenths of a declared image limit, else the provider cap (or maxFrames)
  std::optional<std::int64_t> inline_data;  ///< 60 (3 MB at ~50 KB a frame), absent for provider "claude"
  std::int64_t hard = 80;       ///< 80 frames
  std::optional<std::int64_t> window;       ///< archivePercent of the window / tokens of one full frame
  std::string binding;          ///< which limit binds: provider | inline_data | hard | window
  Json to_json() const;
};
/// Provider caps when a model declares no image limit: 90 for anthropic,
/// amazon-bedrock, openrouter and antigravity; 200 for openai, openai-codex and the Google
/// providers (google, gemini, google-vertex); 10 for umans; 5 for any other provider or unknown model.
FrameBudget frame_budget(const ModelInfo& m, const FrameGeometry& g, const SnapSettings& s);

/// Which of n frames a budget keeps: all when n <= limit; else the first and the newest limit-1
/// (only the newest when limit is 1). Ascending indexes.
std::vector<std::size_t> kept_frames(std::size_t n, std::int64_t limit);

/// One frame a render sends.
struct RenderedFrame {
  std::size_t index = 0;  ///< position among all frames of the archive
  std::string key;
  int width = 0, height = 0;
  std::int64_t chars = 0;
  std::int64_t missing_glyphs = 0;
  bool cached = false;          ///< read from snapcompact_frames rather than drawn
  std::string png_base64;       ///< empty when the render did not encode (planning)
};

/// The archive's frames for one model, as a render sends them.
struct FrameSet {
  ModelInfo model;
  FrameGeometry geometry;
  FrameBudget budget;
  std::int64_t total_frames = 0;
  std::int64_t total_chars = 0;     ///< grapheme clusters of the archive text
  std::int64_t dropped_frames = 0;
  std::int64_t dropped_chars = 0;   ///< characters of the dropped middle frames
  std::int64_t missing_glyphs = 0;  ///< over the kept frames
  std::vector<RenderedFrame> frames;  ///< kept, in order
  /// The blocks that stand for the archive: a caption text block (id, source range, geometry, what
  /// the budget dropped, how to read the text; ids as model/quoted_id.hpp quotes them), then one
  /// image block per kept frame {"type":"image","media_type":"image/png","data","width","height"} (no "data" when not encoded).
  Json content = Json::array();
  Json to_json() const;  ///< {"model","geometry","budget","total","kept","dropped","dropped_chars",...}
};

/// The text of an archive view node (its text blocks joined).
std::string archive_text(const Node& archive);

/// Builds the frames of `archive` for the model: layout, split, budget; each kept frame is read
/// from the cache (store may be null) or drawn and, when encode, PNG-encoded. Never writes.
FrameSet archive_frames(Store* store, const Node& archive, const std::string& model, const SnapSettings& s,
                        bool encode);

/// Stores the encoded frames of fs not yet cached (a key already there is left as it is) inside the caller's
/// transaction, so a compaction commits its archive and the archive's frames together
/// (docs/strategies.md "snapcompact"). Returns how many were added; 0 without the frame cache
/// table (SQLite schema 003, server schema 003). Needs a read-write store.
std::int64_t store_frames(Store& store, const FrameSet& fs);

/// store_frames in a transaction of its own (the caller holds none).
std::int64_t cache_frames(Store& store, const FrameSet& fs);

/// Whether every kept frame of fs was read from the cache.
bool all_frames_cached(const FrameSet& fs);

/// Whether the database has the frame cache table (SQLite schema 003, server schema 003).
bool has_frame_cache(Store& store);

}  // namespace ctxfold
