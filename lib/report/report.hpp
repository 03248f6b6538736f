#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "forensics/redact.hpp"
#include "render/render.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// The bounds of a report (docs/report.md "Size"). Past a bound the page says what it left out
/// and which command reads it whole; nothing is ever cut inside a UTF-8 sequence.
struct ReportLimits {
  /// Text of one block (a message's text, a thinking block, a tool input, a tool result) shown at
  /// most; the rest is named by a marker pointing to `ctxfold show ID`.
  std::int64_t block_bytes = 16 * 1024;
  /// Page bytes spent on the nodes the model read (every session's render together); past it each
  /// further node is a one-line stub that keeps its anchor.
  std::int64_t read_bytes = 12 * 1024 * 1024;
  /// Page bytes spent on the covered turns inside the capsules (all capsules together); past it
  /// each further covered node is a stub.
  std::int64_t covered_bytes = 12 * 1024 * 1024;
  /// Covered nodes one capsule lists at most (stubs included); the rest are counted and named by
  /// `ctxfold expand ID`.
  std::int64_t capsule_nodes = 5000;
  /// One image's base64 bytes embedded at most, and all images' together; past either an image
  /// is a line naming its type, size and node.
  std::int64_t image_bytes = 2 * 1024 * 1024;
  std::int64_t images_bytes = 16 * 1024 * 1024;
  /// Capsules nested inside capsules (a summary covering an older summary) shown at most.
  int capsule_depth = 8;
  /// --markdown: the document's bytes at most (GitHub's issue body holds 65,536 characters).
  std::int64_t markdown_bytes = 60000;
};

/// What `ctxfold report` is asked for. session: the session shown, followed by the sub-agents it
/// launched (sidechains, recursively, in the sessions index's order); nullopt: every session of
/// the archive, in the index's order (parents before their children).
struct ReportRequest {
  std::optional<std::string> session;
  /// The render options of each session (its strategy and snapcompact model are the caller's
  /// choice, as `render` makes it).
  std::function<RenderOptions(const std::string& session)> render_options;
  /// Non-null: every transcript string shown (messages, tool calls and results, summaries,
  /// titles, paths, dropped identifiers) is redacted first (forensics/redact.hpp); node and
  /// session ids are kept so anchors stay stable.
  Redactor* redactor = nullptr;
  ReportLimits limits;
};

/// What a report left out, for the command's JSON summary.
struct ReportStats {
  std::vector<std::string> sessions;  ///< the sessions shown, in page order
  std::int64_t nodes = 0;             ///< nodes shown with their content
  std::int64_t stubs = 0;             ///< nodes shown as a stub (a size bound was reached)
  std::int64_t capsules = 0;
  std::int64_t capsule_omitted = 0;   ///< covered nodes past ReportLimits::capsule_nodes
  std::int64_t truncated_blocks = 0;  ///< blocks cut at ReportLimits::block_bytes
  std::int64_t images = 0;
  std::int64_t images_omitted = 0;
  std::int64_t bytes = 0;
  std::vector<std::string> warnings;  ///< render warnings, "session: text"
};

/// The HTML report (docs/report.md): one self-contained UTF-8 page, no external asset and no
/// request (a Content-Security-Policy meta tag with default-src 'none', the inline style and
/// script admitted by their SHA-256 hashes, images as data: URIs only). Per session, one section
/// each (html_sections): overview, usage and cost, compactions with their dropped reports,
/// sub-agents, the conversation as the model reads it (render_context) with each summary a capsule
/// whose <details> holds the covered turns, tool calls with their results, thinking collapsed,
/// images embedded. Every node shown carries id="node-<id>" (report/escape.hpp node_anchor).
/// Deterministic: the same database gives the same bytes. Read-only.
std::string html_report(Store& store, const ReportRequest& req, ReportStats& stats);

/// The Markdown digest (`report --markdown`), for pasting into an issue: per session the
/// overview, usage, compactions with dropped identifiers, and the conversation as the model reads
/// it with each message's text in a fenced block, bounded by ReportLimits::markdown_bytes.
std::string markdown_report(Store& store, const ReportRequest& req, ReportStats& stats);

}  // namespace ctxfold
