#pragma once
// Progress on stderr for long work (docs/commands.md "Output": a terminal may get colour and
// progress bars, never a different structure): drawn only when stderr is a terminal, never on
// stdout, erased at the end.
#include <chrono>
#include <cstdint>
#include <string>

namespace ctxfold {

/// True when fd is a terminal that can take control sequences: isatty(fd) and TERM is not "dumb".
/// CTXFOLD_PROGRESS=0 turns progress off, =1 forces it on (for tests driving a pipe).
bool progress_wanted();

/// True when colour may be written to fd: a terminal (as above) and NO_COLOR unset or empty
/// (https://no-color.org).
bool colour_wanted(int fd);

/// One progress line on stderr: "ctxfold: LABEL [#####.....] DONE/TOTAL PHASE", redrawn in place
/// at most every 100 ms (and always at 100 %), erased by finish() or the destructor. Does nothing
/// when progress_wanted() is false. total 0 means unknown: a counter without a bar.
class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(std::int64_t done, std::int64_t total, const std::string& phase = {});
  void finish();
  bool active() const { return on_; }

 private:
  std::string label_;
  bool on_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace ctxfold
