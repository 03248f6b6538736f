#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace ctxfold {

/// A compiled grep pattern. Literal by default (every character, SQL/FTS/regex syntax included,
/// matches itself); `regex` selects ECMAScript regular expressions (std::regex), matched line by
/// line. `ignore_case` folds case by Unicode rules (utf8proc CASEFOLD|COMPOSE on both the text
/// and the pattern; for regexes the non-ASCII literal characters of the pattern are folded and
/// ASCII uses std::regex::icase). Throws Error(usage,"grep.empty_pattern") for an empty pattern
/// and Error(usage,"grep.bad_pattern") for an invalid regular expression.
class Matcher {
 public:
  Matcher(const std::string& pattern, bool regex, bool ignore_case);
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  /// Whether `text` (valid UTF-8) holds a match (no offset work: used for rows outside the page).
  bool matches(std::string_view text) const;
  /// Grapheme offset of the first match in `text` (valid UTF-8), or nullopt. With ignore_case the
  /// match is found in the folded text and mapped back to the original grapheme.
  std::optional<std::size_t> find_grapheme(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Where grep looks.
enum class GrepIn { raw, summaries, both };

struct GrepOptions {
  std::string pattern;
  bool regex = false;
  bool ignore_case = false;
  GrepIn in = GrepIn::both;
  /// One session, or every session when empty.
  std::optional<std::string> session;
  /// Only the nodes one view node covers, recursively (raw rows and the child summaries).
  std::optional<std::string> scope;
  /// Paging: raw and summary matches are paged separately at the same offset (seed 002 "lcm").
  std::int64_t offset = 0;
  std::int64_t limit = -1;  ///< negative: no limit
};

/// One matching node (one record per matching node; offset/snippet describe its first match).
struct GrepMatch {
  std::string session, id, kind, role;
  std::int64_t seq = 0;
  bool raw = true;
  std::optional<std::string> covered_by;  ///< the newest view node whose covers include it
  std::int64_t offset = 0;                ///< grapheme offset of the match in node_text
  std::string snippet;                    ///< ~80 graphemes around the match, valid UTF-8
};

struct GrepTotals {
  std::int64_t raw_matches = 0;      ///< matching raw nodes, all pages
  std::int64_t summary_matches = 0;  ///< matching view nodes, all pages
  std::int64_t nodes_scanned = 0;
  std::int64_t elapsed_ms = 0;
};

/// Scans nodes in seq order with one prepared statement (rows are streamed, never loaded all at
/// once), searching node_text (text blocks, tool_result text, tool_use name + input; ill-formed
/// UTF-8 replaced by U+FFFD first). Calls on_match for the matches inside the page. Read-only.
/// Errors: those of Matcher, Error(bad_input,"node.unknown"/"node.not_view") for --scope.
GrepTotals grep(Store& st, const GrepOptions& o, const std::function<void(const GrepMatch&)>& on_match);

/// The newest view node whose covers include `id` (covers_node index), or nullopt.
std::optional<std::string> covering_summary(Store& st, const std::string& id);

}  // namespace ctxfold
