#pragma once
#include <stdexcept>
#include <string>

namespace ctxfold {

/// Process exit codes of the public contract (docs/commands.md "Exit codes"). Only cmd/main.cpp
/// turns them into an actual exit status; library code throws Error carrying one of them.
enum class Exit : int {
  ok = 0,
  negative = 1,     ///< a valid negative answer (grep: no match; verify: violations)
  usage = 2,        ///< bad command line
  bad_input = 3,    ///< malformed input under --strict, not a ctxfold database, unknown schema
  environment = 4,  ///< I/O, database locked, network or provider failure
  partial = 5,      ///< compact: committed part of the work; the rest waits for another run
  internal = 70,    ///< a bug
  interrupted = 130,
};

/// The one error type: an exit code, a stable machine code ("db.locked", "input.malformed"),
/// a lowercase message without trailing period, and an optional hint for the user.
class Error : public std::runtime_error {
 public:
  Error(Exit exit, std::string code, const std::string& message, std::string hint = {})
      : std::runtime_error(message), exit_(exit), code_(std::move(code)), hint_(std::move(hint)) {}
  Exit exit() const { return exit_; }
  const std::string& code() const { return code_; }
  const std::string& hint() const { return hint_; }

 private:
  Exit exit_;
  std::string code_;
  std::string hint_;
};

}  // namespace ctxfold
