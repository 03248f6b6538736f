#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/json.hpp"

namespace ctxfold {

/// A key written twice in one object of a JSON text: the key (decoded) and the byte offset in
/// the text of the end of the object holding it.
struct DuplicateKey {
  std::string key;
  std::size_t offset = 0;
};

/// The first key that occurs twice in one object of `text` (a complete JSON value), if any:
/// nlohmann::json keeps the last value silently (docs/import.md "Bad input, by class").
std::optional<DuplicateKey> duplicate_key(std::string_view text);

/// Copies `text` to `out` with every number outside strings that overflows a double (`1e999`,
/// which nlohmann::json refuses, and with it the whole value) written as a string of its
/// characters; returns how many were (0: out is a copy). `first`, when given, receives the byte
/// offset in text of the first one.
std::size_t quote_huge_numbers(std::string_view text, std::string& out, std::size_t* first = nullptr);

/// One JSON value read from a JSONL file.
struct JsonlRecord {
  std::int64_t line = 0;     ///< 1-based physical line
  std::uint64_t offset = 0;  ///< byte offset of the physical line
  std::uint64_t length = 0;  ///< byte length of the physical line (without the newline)
  int part = 0;              ///< 0, or the index of a record split out of a glued line ("}{")
  Json value;
};

/// Streaming JSONL reader that never fails on bad lines (docs/import.md "Bad input, by class"):
/// blank lines are skipped; a line of NUL bytes is reported ("line.nul") and skipped; two records
/// glued on one line are split honouring strings and escapes ("line.glued"); invalid UTF-8 is
/// replaced by U+FFFD ("utf8.invalid"); a value that parses only once its lone UTF-16 surrogate
/// escapes (`\uD800` from JavaScript's JSON.stringify) read as U+FFFD is kept so
/// ("json.lone_surrogate"); a last line cut off mid-object is reported
/// ("line.truncated"); JSON nested deeper than kMaxDepth is refused ("line.too_deep"); a number
/// beyond the range of a double (`1e999`) is read as the string of its digits
/// ("json.number_range"); a value that is not an object is returned and reported
/// ("record.not_object"); an object with a key twice is read last-wins, reported
/// ("json.duplicate_key") and its bytes also handed to on_bad; any other unparseable text is
/// reported ("line.malformed"). A physical line longer than the record limit (`max_line` bytes,
/// kDefaultMaxRecord unless given) is read past in bounded memory and reported
/// ("line.too_long"), never parsed nor kept. Unusable bytes are handed to on_bad so the caller
/// can keep them verbatim. Memory is bounded by the record limit, not the file.
class JsonlReader {
 public:
  static constexpr int kMaxDepth = 512;
  /// The default record limit in bytes (64 MiB, docs/import.md "Bad input, by class").
  static constexpr std::uint64_t kDefaultMaxRecord = std::uint64_t{64} << 20;
  using Warn = std::function<void(std::int64_t line, const std::string& code, const std::string& message)>;
  using Bad = std::function<void(std::int64_t line, const std::string& raw)>;

  /// Throws Error(environment,"io.open") when path cannot be opened. `max_line`: the record
  /// limit in bytes (at least 1).
  JsonlReader(const std::string& path, Warn warn, Bad on_bad = {}, std::uint64_t max_line = kDefaultMaxRecord);
  ~JsonlReader();
  JsonlReader(const JsonlReader&) = delete;
  JsonlReader& operator=(const JsonlReader&) = delete;

  /// Starts reading at byte `offset` (the start of a physical line), numbering the lines after
  /// `lines_before` (an incremental import resumes where the last one stopped). Call before the
  /// first next(). read_at offsets stay absolute.
  void start_at(std::uint64_t offset, std::int64_t lines_before);

  /// Next record; false at end of file. Throws Error(environment,"io.read") on a read error.
  bool next(JsonlRecord& out);

  /// Replaces the DOM parse of next() (not of read_at): each complete value's text (after the
  /// recovery rules) is handed to parse, which returns false when it is not valid JSON (then the
  /// usual "line.malformed"/"line.truncated" handling applies). Records then carry a null value;
  /// parse is called once per record, in record order, before next() returns that record (all
  /// records of a physical line are parsed before its first is returned). Lets a caller that
  /// needs a few fields use a SAX handler instead of building a tree.
  using Parse = std::function<bool(std::string_view text)>;
  void set_parser(Parse parse);

  /// Re-reads the physical line at (offset, length) and returns its records' part `part`, parsed
  /// with the same recovery rules (used by two-pass importers that keep only a skeleton).
  /// Reports nothing (next() already did); null when the line no longer holds that part. Reads
  /// through a 1 MiB window of the file (one pread(2) per window when lines come in file order);
  /// a longer line is read alone. Throws Error(environment, "io.open" / "io.read").
  Json read_at(std::uint64_t offset, std::uint64_t length, int part = 0);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace ctxfold
