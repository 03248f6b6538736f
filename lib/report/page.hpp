#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.hpp"
#include "report/report.hpp"
#include "report/session_view.hpp"
#include "store/store.hpp"

namespace ctxfold::report_detail {

/// Which size bound a node's bytes count against (ReportLimits::read_bytes or covered_bytes).
enum class Budget { read, covered };

/// The HTML page being written: every transcript string goes through text() or markdown(), which
/// redact (when asked), make hidden characters visible and escape, so no caller escapes by hand.
class Page {
 public:
  Page(Store& store, const ReportRequest& req, ReportStats& stats) : store(store), req(req), stats(stats) {}

  void raw(std::string_view html) { out += html; }
  /// Transcript text as escaped HTML text.
  void text(std::string_view s);
  /// Transcript text read as Markdown (report/markdown.hpp).
  void markdown(std::string_view s);
  /// A string the page made itself (numbers, labels, encoded anchors): escaped, never redacted.
  void label(std::string_view s);
  /// A block's text cut at ReportLimits::block_bytes (UTF-8 safe); `cut` tells whether it was.
  std::string_view bounded(std::string_view s, bool& cut) const;
  /// The marker written after a cut block of node `id`.
  void cut_marker(std::string_view s, std::string_view id);
  /// Writes id="ANCHOR" once per page: true when this call wrote it.
  bool anchor(const std::string& anchor_id);
  /// Whether `budget` still has room.
  bool room(Budget b) const;
  std::int64_t used(Budget b) const { return b == Budget::read ? read_used : covered_used; }
  void spend(Budget b, std::int64_t bytes) { (b == Budget::read ? read_used : covered_used) += bytes; }

  Store& store;
  const ReportRequest& req;
  ReportStats& stats;
  std::string out;
  std::int64_t images_used = 0;
  const SessionView* session = nullptr;  ///< the session being written

 private:
  std::string redacted(std::string_view s) const;
  std::set<std::string> anchors_;
  std::int64_t read_used = 0, covered_used = 0;
};

/// Writes nodes in order (tool results shown with their calls, summaries as capsules), each
/// against `budget`; depth is the capsule nesting (0: the render itself).
void write_nodes(Page& page, const std::vector<Node>& nodes, Budget budget, int depth);

/// The page's inline style and script, and the Content-Security-Policy admitting exactly them.
const std::string& page_style();
const std::string& page_script();
std::string page_csp();

}  // namespace ctxfold::report_detail
