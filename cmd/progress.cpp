#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ctxfold {

namespace {
bool terminal(int fd) {
  if (!isatty(fd)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}
}  // namespace

bool progress_wanted() {
  if (const char* p = std::getenv("CTXFOLD_PROGRESS"); p && *p) return std::strcmp(p, "0") != 0;
  return terminal(STDERR_FILENO);
}

bool colour_wanted(int fd) {
  const char* no = std::getenv("NO_COLOR");
  if (no && *no) return false;
  return terminal(fd);
}

Progress::Progress(std::string label) : label_(std::move(label)), on_(progress_wanted()) {}

Progress::~Progress() { finish(); }

void Progress::update(std::int64_t done, std::int64_t total, const std::string& phase) {
  if (!on_) return;
  auto now = std::chrono::steady_clock::now();
  bool complete = total > 0 && done >= total;
  if (drawn_ && !complete && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string line;
  if (total > 0) {
    constexpr int kWidth = 24;
    std::int64_t filled = std::min<std::int64_t>(kWidth, done * kWidth / total);
    line = fmt::format("ctxfold: {} [{}{}] {}/{}", label_, std::string(static_cast<std::size_t>(filled), '#'),
                       std::string(static_cast<std::size_t>(kWidth - filled), '.'), done, total);
  } else {
    line = fmt::format("ctxfold: {} {}", label_, done);
  }
  if (!phase.empty()) line += " " + phase;
  // \r to the line start, the text, then erase to the end of the line (ECMA-48 EL).
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (!on_ || !drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace ctxfold
