#pragma once
// The warnings of an import, one "FILE:LINE CODE MESSAGE" line each: what the import tests print
// when an expectation about warnings fails.
#include <string>

#include "import/import.hpp"

namespace ctxfold {

inline std::string warnings_text(const ImportResult& r) {
  std::string s;
  for (const auto& w : r.warnings) s += w.file + ":" + std::to_string(w.line) + " " + w.code + " " + w.message + "\n";
  return s;
}

}  // namespace ctxfold
