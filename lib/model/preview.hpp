#pragma once
#include <cstddef>
#include <string>

#include "model/node.hpp"

namespace ctxfold {

/// One-line preview of node_text for listings (log, the DAG picture): newlines, CR and tabs as
/// spaces, cut at max_bytes on a UTF-8 boundary with "..." appended when cut.
std::string node_preview(const Node& n, std::size_t max_bytes);

}  // namespace ctxfold
