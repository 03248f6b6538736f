#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "import/copilot.hpp"
#include "import/import.hpp"
#include "import/pi.hpp"
#include "import/opencode.hpp"
#include "import/qwen.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

/// An overlong line in a stream is read past for at most this many times the record limit; a
/// stream has no size to end the skip (`/dev/zero` never sends a newline).
constexpr std::uint64_t kStreamSkipFactor = 16;

/// The name a spooled source is imported under: stdin's (and a file descriptor's or device's,
/// whose names say nothing) from its content's digest, so piping the same bytes again names the
/// same session (import stays idempotent); a named FIFO keeps its own name, so it imports as the
/// regular file of that name would.
std::string spool_name(const std::string& given, const std::string& digest) {
  const bool is_stdin = given == "-" || given == "/dev/stdin" || given == "/proc/self/fd/0" || given == "/dev/fd/0";
  if (is_stdin) return "stdin-" + digest.substr(0, 12);
  if (given.rfind("/dev/", 0) == 0 || given.rfind("/proc/", 0) == 0) return "stream-" + digest.substr(0, 12);
  return fs::path(given).filename().string();
}

/// A source that is not a regular file (stdin, a pipe, a FIFO, a device) cannot be read twice,
/// yet format detection reads a prefix and the importers may re-read lines by offset: it is read
/// exactly once, into a private temporary file that everything else reads. A line longer than
/// the record limit is copied only up to one byte past the limit (the importer then skips it as
/// "line.too_long"), so the spool stays bounded by the lines kept; in a stream such a line is
/// read past for at most kStreamSkipFactor times the limit, then the rest is not read
/// ("line.unterminated").
class Spool {
 public:
  Spool(const std::string& given, std::uint64_t max_line, ImportResult& result) {
    std::string tmpl = (fs::temp_directory_path() / "ctxfold-stream-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error(Exit::environment, "io.tmp", "cannot create a temporary directory for a stream");
    dir_ = tmpl;
    const bool from_stdin = given == "-";
    FILE* in = from_stdin ? stdin : std::fopen(given.c_str(), "rb");
    if (!in)
      throw Error(Exit::environment, "io.open", fmt::format("cannot open '{}': {}", given, std::strerror(errno)));
    std::string tmp = dir_ + "/spool";
    FILE* out = std::fopen(tmp.c_str(), "wb");
    if (!out) {
      if (!from_stdin) std::fclose(in);
      throw Error(Exit::environment, "io.tmp", "cannot create a temporary file for a stream");
    }
    Sha256 digest;
    Copy c{in, out, max_line, digest};
    const bool ok = copy(c, given, result);
    const bool read_failed = std::ferror(in) != 0;
    if (!from_stdin) std::fclose(in);
    const bool write_failed = std::fclose(out) != 0 || !ok;
    if (read_failed) throw Error(Exit::environment, "io.read", fmt::format("cannot read '{}'", given));
    if (write_failed) throw Error(Exit::environment, "io.write", "cannot spool a stream to a temporary file");
    path_ = dir_ + "/" + spool_name(given, digest.hex());
    fs::rename(tmp, path_);
  }
  ~Spool() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  const std::string& path() const { return path_; }

 private:
  struct Copy {
    FILE* in;
    FILE* out;
    std::uint64_t max_line;
    Sha256& digest;
  };

  /// Copies in to out, each line cut one byte past the limit; false on a write error.
  static bool copy(Copy& c, const std::string& label, ImportResult& result) {
    std::vector<char> buf(std::size_t{1} << 16);
    std::uint64_t line_len = 0;
    std::int64_t line = 1;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), c.in)) > 0) {
      c.digest.update(std::string_view(buf.data(), n));
      std::size_t at = 0;
      while (at < n) {
        const char* nl = static_cast<const char*>(std::memchr(buf.data() + at, '\n', n - at));
        std::size_t end = nl ? static_cast<std::size_t>(nl - buf.data()) : n;
        std::size_t len = end - at;
        // Keep up to one byte past the limit of this line, so the importer sees it is too long.
        std::uint64_t room = line_len > c.max_line ? 0 : c.max_line + 1 - line_len;
        std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(room, len));
        if (keep > 0 && std::fwrite(buf.data() + at, 1, keep, c.out) != keep) return false;
        line_len += len;
        if (line_len > c.max_line * kStreamSkipFactor) {
          result.warnings.push_back(ImportWarning{
              label, line, "line.unterminated",
              fmt::format("no newline in {} bytes of a stream, over {} times the record limit: the rest of the "
                          "stream is not read",
                          line_len, kStreamSkipFactor)});
          return true;
        }
        at = end;
        if (nl) {
          if (std::fputc('\n', c.out) == EOF) return false;
          ++at;
          ++line;
          line_len = 0;
        }
      }
    }
    return true;
  }

  std::string dir_;
  std::string path_;
};

/// True for a regular file (symlinks followed); Error(environment,"io.open") when path does not
/// exist, Error(usage,"import.directory") for a folder.
bool is_regular(const std::string& path) {
  if (path == "-") return false;
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0)
    throw Error(Exit::environment, "io.open", fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  if (S_ISDIR(sb.st_mode))
    throw Error(Exit::usage, "import.directory", fmt::format("'{}' is a directory", path),
                "pass the transcript files themselves, or import the folder with --from all DIR");
  return S_ISREG(sb.st_mode);
}

}  // namespace

ImportFn importer_for(const std::string& format) {
  if (format == "claude-code") return import_claude_code;
  if (format == "codex") return import_codex;
  if (format == "gemini") return import_gemini;
  if (format == "qwen") return import_qwen;
  if (format == "pi") return import_pi;
  if (format == "copilot") return import_copilot;
  if (format == "cline") return import_cline;
  if (format == "opencode") return import_opencode;
  if (format == "kilo") return import_kilo;
  if (format == "openai") return import_openai_messages;
  if (format == "anthropic") return import_anthropic_messages;
  if (format == "openhands") return import_openhands;
  if (format == "ctxfold") return import_ctxfold_jsonl;
  throw Error(Exit::usage, "import.unknown_format", fmt::format("unknown import format '{}'", format),
              "use one of: auto, claude-code, codex, gemini, qwen, pi, copilot, cline, opencode, kilo, openai, anthropic, openhands, ctxfold");
}

ImportResult import_paths(Store& store, const std::vector<std::string>& paths, const ImportOptions& opts) {
  ImportResult result;
  if (opts.format != "auto") importer_for(opts.format);  // validate before touching anything
  // One write transaction for the whole call: an import lands whole or not at all, and --strict
  // can roll back everything when any warning appears.
  Txn txn(store.db());
  // Into a database without nodes, the predecessor index is built once at the end instead of
  // row by row (docs/import.md "A first import").
  store.defer_predecessor_index();
  for (const std::string& given : paths) {
    // Regular files are read by path (the Claude Code importer re-reads lines by offset); any
    // other source is read once into a spool, and so is a file descriptor's name (/dev/stdin,
    // /dev/fd/N), whatever it stands for, so that it is named the same way each time.
    std::unique_ptr<Spool> spool;
    std::string path = given;
    const bool descriptor = given.rfind("/dev/", 0) == 0 || given.rfind("/proc/", 0) == 0;
    if (!is_regular(given) || descriptor) {
      spool = std::make_unique<Spool>(given, opts.max_record_bytes, result);
      path = spool->path();
    }
    const std::string label = given == "-" ? std::string("stdin") : given;
    std::string format = opts.format == "auto" ? detect_format(path, label) : opts.format;
    ImportSink sink(store, result, given == "-" ? std::string("-") : given);
    sink.set_max_record_bytes(opts.max_record_bytes);
    // The sink reads the file through its own path; stdin was spooled, so label it.
    std::size_t first_session = result.sessions.size();
    importer_for(format)(path, sink);
    if (format == "claude-code" && !spool) {
      // 2.1.x sub-agents live beside the main file: each becomes a sidechain session.
      for (const std::string& agent : claude_code_subagent_files(path)) {
        ImportSink agent_sink(store, result, agent);
        agent_sink.set_max_record_bytes(opts.max_record_bytes);
        import_claude_code(agent, agent_sink);
      }
    }
    for (std::size_t i = first_session; i < result.sessions.size(); ++i)
      if (result.sessions[i].format.empty()) result.sessions[i].format = format;
  }
  if (opts.strict && !result.warnings.empty()) {
    const auto& w = result.warnings.front();
    throw Error(Exit::bad_input, "import.strict",
                fmt::format("{}:{}: {} ({}); {} warning(s) in all, nothing written", w.file, w.line, w.message,
                            w.code, result.warnings.size()),
                "drop --strict to import what can be kept");
  }
  store.restore_predecessor_index();
  txn.commit();
  return result;
}

}  // namespace ctxfold
