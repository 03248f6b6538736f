#pragma once
#include <poll.h>
#include <signal.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The environment seam (docs/architecture.md "The environment seam"): what lib/ asks of the
// process it runs in — environment variables, the clock, diagnostics for the user, the stop
// signals and the kill tests' crash points — reaches it through one Environment that cmd/ passes
// in. Tests pass their own (tests/unit/fake_environment.hpp) and drive time, variables and
// signals without global state. Only lib/util/system_environment.cpp touches the process itself.
namespace ctxfold {

/// The stop signals (SIGINT, SIGTERM, SIGHUP) caught while a child process runs, for the life of
/// the guard: a signal that arrives is remembered, not acted on, until the caller looks.
class StopGuard {
 public:
  virtual ~StopGuard() = default;
  /// The caught signal, 0 when none came.
  virtual int caught() const = 0;
  /// Waits like ppoll for an event on `fds` or `ms` milliseconds, the stop signals deliverable
  /// only during the wait; returns ppoll's result (-1 with errno EINTR when a signal came).
  virtual int wait(pollfd* fds, nfds_t n, std::int64_t ms) const = 0;
  /// Called in a forked child before exec (async-signal-safe): gives the child the signal mask
  /// and the SIGPIPE disposition the process had before the guard.
  virtual void enter_child() const = 0;
  /// Ends the process as signal `sig` would have (the shell sees 128+sig); a test environment
  /// throws instead.
  [[noreturn]] virtual void die(int sig) = 0;
};

/// What the process gives lib/. Every member may be called from any lib/ layer.
class Environment {
 public:
  virtual ~Environment() = default;
  /// The value of environment variable `name`; nullopt when it is unset or empty (every reader
  /// in ctxfold treats the two alike).
  virtual std::optional<std::string> variable(std::string_view name) const = 0;
  /// The names of the variables that are set, in no particular order (what the summarizers'
  /// redaction looks through, lib/summarize/secrets.hpp); none for an environment that cannot
  /// list them.
  virtual std::vector<std::string> variable_names() const { return {}; }
  /// The wall clock: whole seconds since the Unix epoch (UTC).
  virtual std::int64_t unix_seconds() const = 0;
  /// One line for the user, outside the command's output (the CLI writes it to stderr, ending it
  /// with a newline).
  virtual void diagnostic(std::string_view line) = 0;
  /// Starts catching the stop signals; they are caught until the guard is destroyed.
  virtual std::unique_ptr<StopGuard> catch_stop_signals() = 0;
  /// A crash point of the kill tests: ends the process at once, as SIGKILL would, when the point
  /// named `name` is armed (the system environment arms it with CTXFOLD_TEST_CRASH_AT=name);
  /// nothing otherwise.
  virtual void crash_point(std::string_view name) = 0;
};

/// The process itself: getenv, the system clock, stderr, sigaction and raise(SIGKILL).
Environment& system_environment();

/// `now` (seconds since the epoch) as RFC 3339 UTC with a Z suffix: "2026-12-01T15:42:43Z".
std::string rfc3339_utc(std::int64_t now);

}  // namespace ctxfold
