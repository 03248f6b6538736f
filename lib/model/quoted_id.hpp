#pragma once
#include <string>

#include "model/node.hpp"
#include "util/json.hpp"

// The id model-visible text names a node by (docs/strategies.md "What a fork copies"): the id the
// node was first written under, so that text quoting ids (the rolling recap, the fold and archive
// headers, a truncated row's marker) is the same in a fork as in its source.
namespace ctxfold {

/// The id text quotes for n: for a copy made by `ctxfold fork` (metadata.forked_from, an object
/// {"session","id"} with "origin" on a copy of a copy), forked_from.origin, else forked_from.id;
/// for any other node its own id. Every node is quoted by an id of the same database whose content
/// equals the copy's, so `ctxfold expand` and `ctxfold show` of a quoted id read what the copy
/// holds.
std::string quoted_id(const Node& n);

/// The metadata.forked_from a copy of `source` (a node of session `source_session`, metadata as
/// the source stored it) gets: {"session","id"}, plus "origin" (quoted_id of the source) when the
/// source is itself a copy.
Json forked_from_record(const std::string& source_session, const std::string& source_id,
                        const Json& source_metadata);

}  // namespace ctxfold
