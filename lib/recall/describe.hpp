#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Depth of a node in the summary tree: 0 for a raw node, metadata.depth when a strategy stored
/// one (lcm parents), else 1 + the deepest view node it covers (a leaf summary is 1).
std::int64_t node_depth(Store& st, const Node& n);

/// The view nodes a view node covers directly (lcm parents' children), in covers order.
std::vector<std::string> view_children(Store& st, std::int64_t view_seq);

/// `describe ID` (schema ctxfold.describe/1):
/// {"schema","id","session","kind","role","depth","active","superseded",
///  "coverage":{"first","last","first_seq","last_seq","count"} (raw rows, resolved recursively),
///  "children" (metadata.children — an lcm parent's child summaries — else covered view nodes),
///  "parents" (view nodes whose covers include it, and lcm parents naming it as a child), "summary_text","estimated_tokens","source_estimated_tokens" (SQL sum of the
///  covered rows' tokens), "producer":{"summarizer","model","prompt_version","origin","format"}}.
/// A rolling (or strategy-less) summary is active when it is the session's active summary; any
/// other view node when it is on the frontier: no other view node covers it and no lcm parent
/// condensed it (names it in metadata.children). Raw nodes: coverage, active and
/// superseded are null; parents are their covering summaries.
/// Errors: Error(bad_input,"node.unknown").
Json describe_node(Store& st, const std::string& id);

/// `list` (schema ctxfold.list/1): the view nodes of a session, active or not, oldest first;
/// total and the page (offset, limit; limit <= 0 means all) are selected in SQL. Each item:
/// {"id","kind","seq","strategy","depth","active","frontier","covers":{"first","last","count"},
///  "estimated_tokens"}. frontier: no other view node covers it and no lcm parent condensed it
/// (the children of every lcm parent are read in one pass over the session's parents).
Json list_views(Store& st, const std::string& session, std::int64_t offset, std::int64_t limit);

}  // namespace ctxfold
