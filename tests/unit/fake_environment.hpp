#pragma once
// A test's own Environment (util/environment.hpp): variables from a map, a clock the test sets,
// diagnostics collected, crash points recorded, and stop signals the test raises — no process
// state is read or changed.
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/environment.hpp"

namespace ctxfold::testing_env {

/// Thrown by FakeStopGuard::die: the test sees which signal would have ended the process.
struct Died : std::runtime_error {
  int signal;
  explicit Died(int sig) : std::runtime_error("died of signal " + std::to_string(sig)), signal(sig) {}
};

class FakeEnvironment;

/// A stop guard whose signal arrives when the test says: after `signal_after_waits` waits.
class FakeStopGuard : public StopGuard {
 public:
  FakeStopGuard(int signal, int after) : signal_(signal), after_(after) {}
  int caught() const override { return waits_ >= after_ ? signal_ : 0; }
  int wait(pollfd* fds, nfds_t n, std::int64_t ms) const override {
    ++waits_;
    return ::poll(fds, n, static_cast<int>(ms));
  }
  void enter_child() const override {}
  [[noreturn]] void die(int sig) override { throw Died(sig); }

 private:
  int signal_, after_;
  mutable int waits_ = 0;
};

class FakeEnvironment : public Environment {
 public:
  std::map<std::string, std::string, std::less<>> vars;
  std::int64_t now = 1'764'600'000;  ///< 2025-12-01T14:40:00Z until the test moves it
  std::vector<std::string> diagnostics;
  std::vector<std::string> crash_points;  ///< every crash point passed, in order
  int stop_signal = 0;                    ///< the signal a guard catches (0: none)
  int stop_after_waits = 0;               ///< ...once this many waits have passed

  void set(const std::string& name, const std::string& value) { vars[name] = value; }
  void unset(const std::string& name) { vars.erase(name); }

  std::optional<std::string> variable(std::string_view name) const override {
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> variable_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, value] : vars) names.push_back(name);
    return names;
  }
  std::int64_t unix_seconds() const override { return now; }
  void diagnostic(std::string_view line) override { diagnostics.emplace_back(line); }
  std::unique_ptr<StopGuard> catch_stop_signals() override {
    return std::make_unique<FakeStopGuard>(stop_signal, stop_after_waits);
  }
  void crash_point(std::string_view name) override { crash_points.emplace_back(name); }
};

/// One FakeEnvironment for tests that only need an environment to be there (a compaction's
/// clock and crash points); a test that looks at what it records makes its own.
inline FakeEnvironment& shared_environment() {
  static FakeEnvironment env;
  return env;
}

}  // namespace ctxfold::testing_env
