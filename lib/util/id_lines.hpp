#pragma once
#include <cstdint>
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

/// One id read by id_lines_from, with the 1-based input line it came from (a listing's items
/// share their line).
struct IdLine {
  std::int64_t line = 0;
  std::string id;
};

/// ids_from_lines with line numbers, so an error about one record can name its line.
std::vector<IdLine> id_lines_from(std::istream& in);

}  // namespace ctxfold
