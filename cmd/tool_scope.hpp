#pragma once
// What `files` and `commands` share: which sessions they read (--session, --all-sessions), the
// state they read (--as-of) and the page they print (--offset, --limit).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "as_of.hpp"
#include "context.hpp"

namespace ctxfold::cli {

/// The scope flags of a tool-event command.
struct ToolScope {
  bool all_sessions = false;
  AsOfOption as_of;
  std::int64_t offset = 0;
  std::int64_t limit = -1;  ///< negative: no limit (the flag itself refuses negative values)

  /// Declares --all-sessions, --as-of, --offset and --limit on sub; `what` names the records.
  void add_to(CLI::App& sub, const std::string& what);
  /// The sessions to read, in the store's order (one unless --all-sessions), and the boundary.
  std::vector<std::string> sessions(Context& ctx, std::int64_t* as_of) const;
  /// Whether the record of 0-based index i (among the matching ones) is on the page.
  bool on_page(std::int64_t i) const { return i >= offset && (limit < 0 || i < offset + limit); }
  /// The summary fields every tool-event stream ends with: session (null with --all-sessions),
  /// sessions, as_of, offset, limit.
  Json summary_fields(const std::vector<std::string>& sessions, std::int64_t as_of) const;
};

}  // namespace ctxfold::cli
