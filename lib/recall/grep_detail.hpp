#pragma once
// Internal to grep (lib/recall/grep*.cpp): the UTF-8 helpers its pattern and scan halves share,
// and the text-pack scan grep() runs over the unindexed tail.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "recall/grep.hpp"

namespace ctxfold::grep_detail {

/// Length in bytes of the UTF-8 sequence starting with lead byte c (1 for anything unexpected).
inline std::size_t cp_len(unsigned char c) { return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/// The code point whose sequence starts at s[i] (the lead byte itself for a cut-short sequence).
inline std::uint32_t cp_at(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t n = cp_len(p[i]);
  if (n == 1 || i + n > s.size()) return p[i];
  std::uint32_t cp = p[i] & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
  return cp;
}

/// A node the pack scan found matching. When `located`, its match was placed while the pack's
/// text was at hand: `offset` is the grapheme offset of the first match in the node's searchable
/// text (0 when only the whole text matches, as GrepMatch::offset) and `snippet` is grep_snippet
/// there, so reporting it needs no read of the node's content. Nodes past the first page of
/// results are not located (their text would be walked for nothing); grep reads those itself.
struct PackMatch {
  std::int64_t seq = 0;
  bool view = false;
  bool located = false;
  std::int64_t offset = 0;
  std::string snippet;
};

/// The scan over text packs of the nodes with seq > `after` (of o.session, or all): calls
/// on_match for every matching node in seq order and counts the nodes read in
/// totals.nodes_scanned (lib/recall/grep_packs.cpp says how).
void scan_packs(Store& st, const Matcher& m, const GrepOptions& o, std::int64_t after, bool want_raw, bool want_views,
                GrepTotals& totals, const std::function<void(const PackMatch&)>& on_match);

}  // namespace ctxfold::grep_detail
