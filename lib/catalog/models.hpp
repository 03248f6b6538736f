#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// The model catalog (share/models/catalog.json, embedded at build time): what ctxfold knows of a
// model a session talks to — its provider, context window, output cap and image limits. The
// entries marked with a client source carry that client's own figures (docs/models.md); a model
// the catalog does not list is reported as not known, never given a guessed window.
namespace ctxfold {

/// A model of the catalog. An id the catalog does not know (or none) gets the catalog's
/// defaults: reads images (docs/strategies.md "snapcompact": a model without catalog modalities is
/// treated as vision-capable), provider "" (image budget 5), default image limits, no window.
struct ModelInfo {
  std::string id;        ///< the id asked for, as given
  std::string entry;     ///< the catalog entry it matched ("" when not known)
  std::string provider;  ///< "anthropic", "openai", "google", ... ("" when not known)
  bool known = false;
  std::string source;    ///< where the entry's figures come from: a client ("claude-code", ...) or "" (provider docs)
  bool reads_images = true;
  /// The window the client works in by default, in tokens (absent when the catalog does not say).
  std::optional<std::int64_t> context_window;
  /// The largest window the model can be given (the 1M-token beta), when larger than context_window.
  std::optional<std::int64_t> max_context_window;
  /// The most output tokens one request may ask of the model (catalog max_output_tokens, from the
  /// provider's model documentation or the client's table); absent when the catalog does not say.
  std::optional<std::int64_t> max_output_tokens;
  int max_edge = 1568;     ///< longest side in px taken without scaling
  int short_edge = 0;      ///< shortest side in px taken without scaling (0: no such limit)
  std::int64_t max_pixels = 0;  ///< area taken without scaling (0: no such limit)
  int max_images = 0;      ///< images a request may carry, when the model declares it (0: not declared)
  bool image_limits_declared = false;  ///< the entry gives its own image limits
  int frame_width = 1072;  ///< preferred frame width in px before clamping (catalog defaults.frame)
  int frame_rows = 82;     ///< preferred rows per frame before clamping
};

/// Looks a model up in the embedded catalog: the exact id, else an entry that lists it among its
/// aliases (the first-party id a transcript records, e.g. "claude-sonnet-4-5-20250929"), else for
/// a dated snapshot id ("<alias>-YYYYMMDD") the alias's entry. ModelInfo::id stays the id given.
/// Throws Error(internal,"catalog.invalid") when the embedded catalog does not parse.
ModelInfo lookup_model(const std::string& id);

/// The client releases whose model tables the catalog was last checked against, e.g.
/// "Claude Code 2.1.332, Codex CLI 0.171.0, Gemini CLI 0.61.0" (catalog "clients").
std::string catalog_as_of();

/// The sentence for a model the catalog does not know: names the model, the releases the catalog
/// is as of, and that a newer model needs a newer catalog; "" when `m` is known.
std::string unknown_model_note(const ModelInfo& m);

}  // namespace ctxfold
