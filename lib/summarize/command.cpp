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
#include "summarize/http.hpp"
#include "summarize/prompt.hpp"
#include "summarize/secrets.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

constexpr std::size_t kMaxStdout = 64u << 20;
constexpr std::size_t kMaxStderr = 64u << 10;

std::int64_t env_int(const Environment& env, const char* name, std::int64_t fallback) {
  const std::optional<std::string> v = env.variable(name);
  if (!v) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  if (!end || *end != '\0' || n <= 0)
    throw Error(Exit::usage, "summarizer.config", fmt::format("{} must be a positive integer, not '{}'", name, *v));
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

/// The request the command reads on stdin: one line of ctxfold.summarize-request/1.
std::string request_line(const SummaryRequest& req) {
  std::string version = req.prompt_version.empty() ? std::string(kDefaultPromptVersion) : req.prompt_version;
  Json request{{"schema", "ctxfold.summarize-request/1"},
               {"prompt_version", version},
               {"prompt", std::string(embedded_prompt(version))},
               {"previous_summary", req.previous_summary},
               {"transcript", req.transcript},
               {"instructions", req.instructions},
               {"max_output_tokens", req.max_output_tokens},
               {"input_tokens", req.input_tokens}};
  return dump_json(request) + "\n";
}

/// The command's stdin, stdout and stderr pipes, as pipe() gives them.
struct Pipes {
  int in[2], out[2], err[2];
};

Pipes open_pipes() {
  Pipes p;
  int(&in)[2] = p.in;
  int(&out)[2] = p.out;
  int(&err)[2] = p.err;
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
  return p;
}

/// The running command: its pid (the leader of its own process group) and this side's
/// non-blocking pipe ends (-1 once closed).
struct Child {
  pid_t pid = -1;
  int wfd = -1, rfd = -1, efd = -1;
};

/// Forks `sh -c command` in its own process group, its stdio on the pipes and the signal mask
/// ctxfold had on entry.
Child spawn(const std::string& command, const Pipes& p, const StopGuard& stop) {
  const int(&in)[2] = p.in;
  const int(&out)[2] = p.out;
  const int(&err)[2] = p.err;
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    throw Error(Exit::environment, "summarizer.command", fmt::format("cannot start '{}': fork failed", command));
  }
  if (pid == 0) {
    setpgid(0, 0);
    stop.enter_child();
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  Child ch;
  ch.pid = pid;
  ch.wfd = in[1];
  ch.rfd = out[0];
  ch.efd = err[0];
  for (int fd : {ch.wfd, ch.rfd, ch.efd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return ch;
}

/// What the command printed and how the exchange ended.
struct Output {
  std::string sout, serr;
  bool timed_out = false, too_big = false;
};

using Deadline = std::chrono::steady_clock::time_point;

/// After a stop signal: stops the command's group, says so, and ends ctxfold as the signal would.
void check_interrupted(Environment& env, StopGuard& stop, pid_t pid, const std::string& command) {
  const int sig = stop.caught();
  if (sig == 0) return;
  stop_group(pid);
  env.diagnostic(fmt::format("ctxfold: interrupted by {} while summarizer command '{}' ran: it was stopped, and "
                             "nothing of this compaction was committed",
                             sigabbrev(sig), redact(command, summarizer_secrets(env, {}))));
  stop.die(sig);
}

/// One ready pipe: writes more of `input` to stdin, or reads stdout or stderr (stdout past its
/// cap ends the exchange as too big; stderr past its cap is dropped).
void pump(int fd, Child& ch, const std::string& input, std::size_t& written, Output& o) {
  char buf[65536];
  if (fd == ch.wfd) {
    ssize_t n = ::write(ch.wfd, input.data() + written, input.size() - written);
    if (n > 0) written += static_cast<std::size_t>(n);
    if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) close_fd(ch.wfd);
    return;
  }
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    std::string& dst = fd == ch.rfd ? o.sout : o.serr;
    std::size_t cap = fd == ch.rfd ? kMaxStdout : kMaxStderr;
    if (dst.size() < cap) dst.append(buf, static_cast<std::size_t>(n));
    if (fd == ch.rfd && dst.size() >= kMaxStdout) {
      o.too_big = true;
      o.timed_out = false;
      close_fd(ch.rfd);
    }
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    if (fd == ch.rfd) close_fd(ch.rfd);
    else close_fd(ch.efd);
  }
}

/// Writes `input` to the command and reads what it prints until every pipe is closed, the
/// deadline passes or stdout is too big; the pipes are closed after.
void exchange(Child& ch, const std::string& input, Deadline deadline, Environment& env, StopGuard& stop,
              const std::string& command, Output& o) {
  std::size_t written = 0;
  while (ch.rfd >= 0 || ch.efd >= 0 || ch.wfd >= 0) {
    check_interrupted(env, stop, ch.pid, command);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      o.timed_out = true;
      break;
    }
    pollfd fds[3];
    int nfds = 0;
    if (ch.wfd >= 0) fds[nfds++] = {ch.wfd, POLLOUT, 0};
    if (ch.rfd >= 0) fds[nfds++] = {ch.rfd, POLLIN, 0};
    if (ch.efd >= 0) fds[nfds++] = {ch.efd, POLLIN, 0};
    int rc = stop.wait(fds, static_cast<nfds_t>(nfds), std::min<std::int64_t>(left.count(), 1000));
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    for (int k = 0; k < nfds; ++k) {
      if (!fds[k].revents) continue;
      pump(fds[k].fd, ch, input, written, o);
    }
    if (o.too_big) break;
  }
  close_fd(ch.wfd);
  close_fd(ch.rfd);
  close_fd(ch.efd);
}

/// Waits for the command to end before the deadline (it is killed, with its group, when it does
/// not, or when the exchange timed out or overflowed); its wait status.
int reap(const Child& ch, Deadline deadline, Environment& env, StopGuard& stop, const std::string& command,
         Output& o) {
  const pid_t pid = ch.pid;
  int status = 0;
  bool reaped = false;
  while (!o.timed_out && !o.too_big) {
    check_interrupted(env, stop, pid, command);
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      o.timed_out = true;
      break;
    }
    stop.wait(nullptr, 0, 5);
  }
  if (!reaped) {
    kill(-pid, SIGKILL);  // the process group this call started
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  return status;
}

/// Throws for a command that timed out, printed too much, was killed by a signal or failed.
void check_status(const std::string& command, std::chrono::milliseconds timeout, const Output& o, int status) {
  if (o.timed_out)
    throw Error(Exit::environment, "summarizer.timeout",
                fmt::format("summarizer command '{}' did not finish within {} ms", command, timeout.count()),
                "raise CTXFOLD_SUMMARIZER_TIMEOUT_MS or use a faster summarizer");
  if (o.too_big)
    throw Error(Exit::environment, "summarizer.malformed",
                fmt::format("summarizer command '{}' printed more than {} bytes", command, kMaxStdout));
  if (WIFSIGNALED(status))
    throw Error(Exit::environment, "summarizer.command",
                fmt::format("summarizer command '{}' was killed by signal {}", command, WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    std::string why = first_line(o.serr);
    throw Error(Exit::environment, "summarizer.command",
                fmt::format("summarizer command '{}' exited with status {}{}", command, WEXITSTATUS(status),
                            why.empty() ? std::string() : ": " + utf8_sanitize(why)));
  }
}

/// The summary the command printed: UTF-8 text, or the "summary" (else "text") string of a JSON
/// object; throws when it is not text or empty.
std::string printed_summary(const std::string& command, const std::string& sout) {
  if (sout.find('\0') != std::string::npos || !utf8_valid(sout))
    throw Error(Exit::environment, "summarizer.malformed",
                fmt::format("summarizer command '{}' printed bytes that are not UTF-8 text", command));
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
    throw Error(Exit::environment, "summarizer.empty", fmt::format("summarizer command '{}' printed no summary", command));
  return text;
}

}  // namespace

CommandSummarizer::CommandSummarizer(std::string command, Environment& env)
    : command_(std::move(command)),
      env_(env),
      timeout_(env_int(env, "CTXFOLD_SUMMARIZER_TIMEOUT_MS", 300000)),
      window_(env_int(env, "CTXFOLD_SUMMARIZER_WINDOW", 32000)) {}

SummaryResult CommandSummarizer::summarize(const SummaryRequest& req) {
  const std::string input = request_line(req);
  const Pipes pipes = open_pipes();
  const std::unique_ptr<StopGuard> stop = env_.catch_stop_signals();
  Child ch = spawn(command_, pipes, *stop);

  SigpipeGuard guard;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  Output o;
  exchange(ch, input, deadline, env_, *stop, command_, o);
  const int status = reap(ch, deadline, env_, *stop, command_, o);
  check_status(command_, timeout_, o, status);
  SummaryResult r;
  r.text = printed_summary(command_, o.sout);
  r.model = command_;
  return r;
}

std::unique_ptr<Summarizer> make_local_summarizer(const std::string& spec, Environment& env) {
  if (spec == "extractive") return std::make_unique<ExtractiveSummarizer>();
  if (spec.rfind("command:", 0) == 0) {
    std::string cmd = spec.substr(8);
    if (cmd.empty())
      throw Error(Exit::usage, "summarizer.spec", "command: needs a program", "use --summarizer 'command:CMD'");
    return redacting_summarizer(std::make_unique<CommandSummarizer>(std::move(cmd), env),
                                summarizer_secrets(env, {}));
  }
  return nullptr;
}

}  // namespace ctxfold
