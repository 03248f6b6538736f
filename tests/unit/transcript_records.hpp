#pragma once
// The real transcripts the unit tests read in place (CTXFOLD_TRANSCRIPTS_DIR, the shared data
// folder; never copied into the repository): each .jsonl and .json file whole, and its lines.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace ctxfold::test_data {

/// Calls fn(path, text) for every .jsonl and .json file under dir, text being the whole file.
template <class Fn>
void for_each_transcript_file(const std::string& dir, Fn fn) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".jsonl" && ext != ".json")) continue;
    std::ifstream f(e.path(), std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(f)), {});
    fn(e.path(), whole);
  }
}

/// Calls fn(line_number, line) for every line of text (1-based, without its newline).
template <class Fn>
void for_each_line(std::string_view text, Fn fn) {
  std::size_t at = 0, line = 0;
  while (at < text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    fn(++line, text.substr(at, nl - at));
    at = nl + 1;
  }
}

}  // namespace ctxfold::test_data
