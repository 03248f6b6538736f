#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// A view node's coverage resolved to original rows: the raw ids it stands for, in order,
/// reached recursively through covered view nodes (rolling and lcm summaries cover raw ids
/// directly — an lcm parent's covers are its children's, concatenated — but a view node may
/// cover child summaries), plus every view node met on the way (`views`, pre-order, the root
/// excluded). A covered view node that the chain continues from (some node names it as its
/// predecessor) is a row of the transcript, not a child, and is listed as a row. Throws Error(bad_input,"node.unknown") for an unknown id and
/// Error(bad_input,"node.not_view") for a node that is not a view node.
/// row_graphemes[i] is the grapheme length of rows[i]'s text from node_text (`ctxfold index`),
/// or -1 where it is not indexed.
struct Coverage {
  std::vector<std::string> rows;
  std::vector<std::string> views;
  std::vector<std::int64_t> row_graphemes;
};
Coverage resolve_coverage(Store& st, const std::string& id);

/// One row (or the part of it inside the page) of an expansion.
struct ExpandRow {
  std::string id;
  std::int64_t seq = 0;
  std::string role;
  std::string text;  ///< node_text of the row, sliced at grapheme boundaries
};

/// One page of `expand ID` (schema ctxfold.expand/1). The expansion is the covered rows' texts
/// (node_text) joined by "\n\n"; offset and limit count grapheme clusters of that whole string,
/// separators included. next_offset is empty on the last page.
struct ExpandPage {
  std::string id;
  std::string first, last;
  std::int64_t count = 0;
  std::int64_t offset = 0, limit = 0;
  std::optional<std::int64_t> next_offset;
  std::vector<ExpandRow> rows;
};

/// The separator between two rows of an expansion (two graphemes).
inline constexpr const char* kExpandSeparator = "\n\n";

/// Reads page [offset, offset+limit) of the expansion of view node `id`. Rows before the page
/// are skipped by their grapheme length: the stored one (node_text, filled by `ctxfold index`)
/// without reading the row, else counted from the row's text; the read stops at the end of the
/// page. With the index, a page deep in a long range costs the coverage walk plus the rows of
/// the page, not the text before it; with the derived cover spans (`ctxfold index`,
/// lib/recall/cover_spans.hpp) not even the walk: whole covered view nodes and blocks of 1024
/// covers before the page are skipped by their stored lengths, and count/first/last come from the
/// spans, so the first page of a 400,000-row range reads the rows of that page only. Both ways
/// give the same page. limit must be > 0 (Error(usage,"expand.limit")).
ExpandPage expand(Store& st, const std::string& id, std::int64_t offset, std::int64_t limit);

/// The page as the document of schema ctxfold.expand/1 (docs/commands.md "expand"):
/// {"schema","id","covers":{"first","last","count"},"offset","limit","next_offset" (null on the
/// last page),"rows":[{"id","seq","role","text"}]}; first/last/role null when empty. The one
/// definition `expand` prints and `mcp`'s expand tool returns.
Json expand_page_record(const ExpandPage& p);

}  // namespace ctxfold
