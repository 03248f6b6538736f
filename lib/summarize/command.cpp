#include "summarize/command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "summarize/extractive.hpp"
#include "summarize/prompt.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

constexpr std::size_t kMaxStdout = 64u << 20;
constexpr std::size_t kMaxStderr = 64u << 10;

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (!end || *end != '\0' || n <= 0)
    throw Error(Exit::usage, "summarizer.config", fmt::format("{} must be a positive integer, not '{}'", name, v));
  return n;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string first_line(const std::string& s) {
  std::size_t start = s.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return {};
  std::size_t end = s.find('\n', start);
  std::string line = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
  return line.substr(0, utf8_safe_prefix(line, 300));
}

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

const char* sigabbrev(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal"; }

/// SIGPIPE blocked on this thread while writing to the child; a pending one is consumed after.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeGuard() {
    timespec zero{0, 0};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_{}, old_{};
};

volatile sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

/// While a summarizer command runs, SIGINT, SIGTERM and SIGHUP stop ctxfold only after the
/// command's process group is killed (the group is its own, so a terminal's ^C reaches ctxfold
/// alone). Each is caught unless ignored on entry (nohup, a background job of a non-interactive
/// shell keep it ignored) and kept blocked except inside wait(), so none arrives unseen between
/// two checks. The child gets the mask it had before (exec resets the handlers).
class StopSignals {
 public:
  StopSignals() {
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
  ~StopSignals() { restore(); }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// The signal mask the process had before (for the child, before exec).
  const sigset_t& entry_mask() const { return entry_mask_; }
  /// The caught signal, 0 when none came.
  int caught() const { return g_stop_signal; }
  /// Waits for an fd event or `ms` milliseconds with the stop signals deliverable; like ppoll.
  int wait(pollfd* fds, nfds_t n, std::int64_t ms) const {
    sigset_t during;
    pthread_sigmask(SIG_BLOCK, nullptr, &during);
    for (int sig : kSignals)
      if (sigismember(&set_, sig)) sigdelset(&during, sig);
    timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
    return ppoll(fds, n, &ts, &during);
  }
  /// Ends the process as the signal would have (the shell sees 128+sig: 130 for SIGINT).
  [[noreturn]] void die(int sig) {
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

/// Kills the command's process group after a stop signal: SIGTERM, up to 500 ms for it to end,
/// then SIGKILL to whatever of the group is left; the command is reaped.
void stop_group(pid_t pid) {
  kill(-pid, SIGTERM);
  int status = 0;
  bool reaped = false;
  for (int i = 0; i < 100 && !reaped; ++i) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) reaped = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);
  if (!reaped) waitpid(pid, &status, 0);
}

}  // namespace

CommandSummarizer::CommandSummarizer(std::string command)
    : command_(std::move(command)),
      timeout_(env_int("CTXFOLD_SUMMARIZER_TIMEOUT_MS", 300000)),
      window_(env_int("CTXFOLD_SUMMARIZER_WINDOW", 32000)) {}

SummaryResult CommandSummarizer::summarize(const SummaryRequest& req) {
  std::string version = req.prompt_version.empty() ? std::string(kDefaultPromptVersion) : req.prompt_version;
  Json request{{"schema", "ctxfold.summarize-request/1"},
               {"prompt_version", version},
               {"prompt", std::string(embedded_prompt(version))},
               {"previous_summary", req.previous_summary},
               {"transcript", req.transcript},
               {"instructions", req.instructions},
               {"max_output_tokens", req.max_output_tokens},
               {"input_tokens", req.input_tokens}};
  const std::string input = dump_json(request) + "\n";

  int in[2], out[2], err[2];
  if (pipe(in) != 0) throw Error(Exit::environment, "summarizer.command", "cannot create a pipe");
  if (pipe(out) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw Error(Exit::environment, "summarizer.command", "cannot create a pipe");
  }
  if (pipe(err) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    throw Error(Exit::environment, "summarizer.command", "cannot create a pipe");
  }
  StopSignals stop;
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    throw Error(Exit::environment, "summarizer.command", fmt::format("cannot start '{}': fork failed", command_));
  }
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    pthread_sigmask(SIG_SETMASK, &stop.entry_mask(), nullptr);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    execl("/bin/sh", "sh", "-c", command_.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  int wfd = in[1], rfd = out[0], efd = err[0];
  for (int fd : {wfd, rfd, efd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

  SigpipeGuard guard;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  std::string sout, serr;
  std::size_t written = 0;
  bool timed_out = false, too_big = false;
  char buf[65536];
  auto interrupted = [&] {
    const int sig = stop.caught();
    if (sig == 0) return;
    stop_group(pid);
    fmt::print(stderr,
               "ctxfold: interrupted by {} while summarizer command '{}' ran: it was stopped, and nothing of this "
               "compaction was committed\n",
               sigabbrev(sig), command_);
    stop.die(sig);
  };
  while (rfd >= 0 || efd >= 0 || wfd >= 0) {
    interrupted();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3];
    int nfds = 0;
    if (wfd >= 0) fds[nfds++] = {wfd, POLLOUT, 0};
    if (rfd >= 0) fds[nfds++] = {rfd, POLLIN, 0};
    if (efd >= 0) fds[nfds++] = {efd, POLLIN, 0};
    int rc = stop.wait(fds, static_cast<nfds_t>(nfds), std::min<std::int64_t>(left.count(), 1000));
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    for (int k = 0; k < nfds; ++k) {
      if (!fds[k].revents) continue;
      int fd = fds[k].fd;
      if (fd == wfd) {
        ssize_t n = ::write(wfd, input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) close_fd(wfd);
        continue;
      }
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        std::string& dst = fd == rfd ? sout : serr;
        std::size_t cap = fd == rfd ? kMaxStdout : kMaxStderr;
        if (dst.size() < cap) dst.append(buf, static_cast<std::size_t>(n));
        if (fd == rfd && dst.size() >= kMaxStdout) {
          too_big = true;
          timed_out = false;
          close_fd(rfd);
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        if (fd == rfd) close_fd(rfd);
        else close_fd(efd);
      }
    }
    if (too_big) break;
  }
  close_fd(wfd);
  close_fd(rfd);
  close_fd(efd);

  int status = 0;
  bool reaped = false;
  while (!timed_out && !too_big) {
    interrupted();
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    stop.wait(nullptr, 0, 5);
  }
  if (!reaped) {
    kill(-pid, SIGKILL);  // the process group this call started
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  if (timed_out)
    throw Error(Exit::environment, "summarizer.timeout",
                fmt::format("summarizer command '{}' did not finish within {} ms", command_, timeout_.count()),
                "raise CTXFOLD_SUMMARIZER_TIMEOUT_MS or use a faster summarizer");
  if (too_big)
    throw Error(Exit::environment, "summarizer.malformed",
                fmt::format("summarizer command '{}' printed more than {} bytes", command_, kMaxStdout));
  if (WIFSIGNALED(status))
    throw Error(Exit::environment, "summarizer.command",
                fmt::format("summarizer command '{}' was killed by signal {}", command_, WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    std::string why = first_line(serr);
    throw Error(Exit::environment, "summarizer.command",
                fmt::format("summarizer command '{}' exited with status {}{}", command_, WEXITSTATUS(status),
                            why.empty() ? std::string() : ": " + utf8_sanitize(why)));
  }
  if (sout.find('\0') != std::string::npos || !utf8_valid(sout))
    throw Error(Exit::environment, "summarizer.malformed",
                fmt::format("summarizer command '{}' printed bytes that are not UTF-8 text", command_));
  std::string text = trim(sout);
  if (!text.empty() && text.front() == '{') {
    try {
      Json j = parse_json(text);
      if (j.is_object()) {
        if (j.contains("summary") && j["summary"].is_string()) text = trim(j["summary"].get<std::string>());
        else if (j.contains("text") && j["text"].is_string()) text = trim(j["text"].get<std::string>());
      }
    } catch (const std::exception&) {
      // not JSON: the text itself is the summary
    }
  }
  if (text.empty())
    throw Error(Exit::environment, "summarizer.empty", fmt::format("summarizer command '{}' printed no summary", command_));
  SummaryResult r;
  r.text = std::move(text);
  r.model = command_;
  return r;
}

std::unique_ptr<Summarizer> make_local_summarizer(const std::string& spec) {
  if (spec == "extractive") return std::make_unique<ExtractiveSummarizer>();
  if (spec.rfind("command:", 0) == 0) {
    std::string cmd = spec.substr(8);
    if (cmd.empty())
      throw Error(Exit::usage, "summarizer.spec", "command: needs a program", "use --summarizer 'command:CMD'");
    return std::make_unique<CommandSummarizer>(std::move(cmd));
  }
  return nullptr;
}

}  // namespace ctxfold
