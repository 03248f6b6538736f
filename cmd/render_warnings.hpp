#pragma once
#include <string>
#include <vector>

namespace ctxfold::cli {

/// Prints a render's warnings on stderr (docs/commands.md "Output": warnings go to stderr) and returns the exit
/// code: 3 (bad input data) when one says HEAD's walk stopped before the root
/// (render/partial.hpp: a predecessor cycle or a missing predecessor in a database edited
/// directly, so what was printed is partial), else 0. Used by render, context, tokens, prepare.
int print_render_warnings(const std::vector<std::string>& warnings, const std::string& session);

}  // namespace ctxfold::cli
