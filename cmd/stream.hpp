#pragma once
// The one JSON Lines envelope of every streaming command (docs/commands.md "Output").
#include <cstdint>
#include <string>
#include <string_view>

#include "util/json.hpp"

namespace ctxfold::cli {

/// A JSON Lines stream on stdout: each record is one flat object whose first key is "type" (the
/// record kind: "match", "node", "session", "compaction", "usage", ...) followed by its fields,
/// and the stream ends with exactly one {"type":"summary","schema":"ctxfold.<command>/<major>",
/// ...} record. --text output does not go through it.
class JsonLines {
 public:
  /// Writes {"type":type, ...fields}; fields is a JSON object (its keys keep their order) that
  /// has no "type" of its own.
  void record(std::string_view type, const Json& fields);
  /// Writes the closing {"type":"summary","schema":schema, ...fields}; once per stream.
  void summary(std::string_view schema, const Json& fields = Json::object());
  /// The records written so far, the summary not included.
  std::int64_t records() const { return records_; }

 private:
  std::int64_t records_ = 0;
  bool closed_ = false;
};

}  // namespace ctxfold::cli
