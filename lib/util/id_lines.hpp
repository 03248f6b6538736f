#pragma once
#include <istream>
#include <string>
#include <vector>

namespace ctxfold {

/// The ids piped to a command that takes `-` (show, expand, describe, checkout, rewind --to,
/// fork --at): one id per line (trailing spaces and CR dropped, blank lines skipped), where a
/// line may also be a JSON record printed by another ctxfold command: its "id", "node",
/// "summary_id" or "head" string (the first non-empty one, in that order), looked up in "data" for JSON
/// Lines envelopes such as grep's {"type":"match","data":{"id":...}}. A JSON object without any
/// of them (grep's summary record) gives nothing; a line that starts with '{' but does not
/// parse as an object is taken as an id.
std::vector<std::string> ids_from_lines(std::istream& in);

}  // namespace ctxfold
