// The system environment (util/environment.hpp): the one file of lib/ that reads the process's
// environment variables and clock, writes to stderr, installs signal handlers and raises signals.
#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>

#include "util/environment.hpp"

extern char** environ;

namespace ctxfold {

namespace {

volatile sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

/// While a child process runs, SIGINT, SIGTERM and SIGHUP stop ctxfold only after the caller
/// has dealt with the child (a summarizer command's process group is killed first). Each is
/// caught unless ignored on entry (nohup, a background job of a non-interactive shell keep it
/// ignored) and kept blocked except inside wait(), so none arrives unseen between two checks. The
/// child gets the mask the process had before (exec resets the handlers).
class SystemStopGuard : public StopGuard {
 public:
  SystemStopGuard() {
    g_stop_signal = 0;
    sigemptyset(&set_);
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      struct sigaction old {};
      if (sigaction(kSignals[i], nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = on_stop_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = 0;  // no SA_RESTART: ppoll returns EINTR
      if (sigaction(kSignals[i], &sa, &old_[i]) == 0) {
        installed_[i] = true;
        sigaddset(&set_, kSignals[i]);
      }
    }
    pthread_sigmask(SIG_BLOCK, &set_, &entry_mask_);
  }
  ~SystemStopGuard() override { restore(); }
  SystemStopGuard(const SystemStopGuard&) = delete;
  SystemStopGuard& operator=(const SystemStopGuard&) = delete;

  void enter_child() const override {
    ::signal(SIGPIPE, SIG_DFL);
    pthread_sigmask(SIG_SETMASK, &entry_mask_, nullptr);
  }
  int caught() const override { return g_stop_signal; }
  int wait(pollfd* fds, nfds_t n, std::int64_t ms) const override {
    sigset_t during;
    pthread_sigmask(SIG_BLOCK, nullptr, &during);
    for (int sig : kSignals)
      if (sigismember(&set_, sig)) sigdelset(&during, sig);
    timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
    return ppoll(fds, n, &ts, &during);
  }
  [[noreturn]] void die(int sig) override {
    restore();
    std::fflush(nullptr);
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::raise(sig);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    _exit(128 + sig);
  }

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  void restore() {
    if (restored_) return;
    restored_ = true;
    for (std::size_t i = 0; i < std::size(kSignals); ++i)
      if (installed_[i]) sigaction(kSignals[i], &old_[i], nullptr);
    pthread_sigmask(SIG_SETMASK, &entry_mask_, nullptr);
  }
  sigset_t set_{}, entry_mask_{};
  struct sigaction old_[3] {};
  bool installed_[3] = {false, false, false};
  bool restored_ = false;
};

class SystemEnvironment : public Environment {
 public:
  std::optional<std::string> variable(std::string_view name) const override {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  }
  std::vector<std::string> variable_names() const override {
    std::vector<std::string> names;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string_view entry(*e);
      names.emplace_back(entry.substr(0, entry.find('=')));
    }
    return names;
  }
  std::int64_t unix_seconds() const override { return static_cast<std::int64_t>(std::time(nullptr)); }
  void diagnostic(std::string_view line) override {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  }
  std::unique_ptr<StopGuard> catch_stop_signals() override { return std::make_unique<SystemStopGuard>(); }
  void crash_point(std::string_view name) override {
    if (variable("CTXFOLD_TEST_CRASH_AT") == name) std::raise(SIGKILL);
  }
};

}  // namespace

Environment& system_environment() {
  static SystemEnvironment env;
  return env;
}

std::string rfc3339_utc(std::int64_t now) {
  std::time_t t = static_cast<std::time_t>(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ctxfold
