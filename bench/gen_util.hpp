#pragma once
// ctxfold-gen's shared pieces: fresh ids that are a pure function of (seed, segment, old id), the
// civil calendar of the timestamps it shifts, and reading a source file's lines. Used by the Claude
// Code replay (gen_core.cpp) and the Codex and Gemini replays (gen_formats.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxfold::gen::detail {

/// splitmix64's finalizer: a well-mixed 64-bit function of z.
std::uint64_t mix64(std::uint64_t z);

/// The key of the idx-th id of one segment (a replay of one source) under a seed.
std::uint64_t key_of(std::uint64_t seed, std::uint64_t segment, std::uint64_t idx);

/// A fresh id with the same shape as `old` into out: a uuid stays a (v4) uuid; "toolu_01…",
/// "msg_01…", "call_…" keep their prefix and length with new base62 characters; other ids keep
/// their punctuation and character classes.
void fresh_like(const std::string& old, std::string& out, std::uint64_t key);

/// A fresh v4-shaped uuid.
std::string fresh_uuid(std::uint64_t key);

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithms).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);

/// The date `z` days after 1970-01-01 as "YYYY-MM-DD" (10 characters and a NUL).
void format_date(std::int64_t z, char out[11]);

/// "YYYY-MM-DDThh:mm:ss[.fff]Z" -> days since 1970-01-01; nullopt for any other shape.
std::optional<std::int64_t> iso_days(std::string_view s);

/// The lines of a file, without their '\n'. Throws std::runtime_error when it cannot be read.
std::vector<std::string> read_lines(const std::string& path);

}  // namespace ctxfold::gen::detail
