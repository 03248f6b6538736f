#pragma once
#include <nlohmann/json.hpp>
#include <cstddef>
#include <string>
#include <string_view>

namespace ctxfold {

/// Where a JSON parse error lies in `text`, for a "FILE:LINE:COL: what" message: the 1-based line
/// and column of the byte nlohmann::json stopped at (its `byte` is 1-based; 0 means the start),
/// and its message from "syntax error" on (the "[json.exception.parse_error.101] parse error at
/// line 1, column 2: " prefix counts lines its own way and is dropped).
struct JsonErrorAt {
  std::size_t line = 1;
  std::size_t col = 1;
  std::string what;
};

/// The place and message of e, an error of parsing `text`.
JsonErrorAt json_error_at(std::string_view text, const nlohmann::json::parse_error& e);

}  // namespace ctxfold
