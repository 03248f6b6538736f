#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "import/import.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

/// stdin cannot be re-read or sniffed twice: spool it to a private temporary file.
class Spool {
 public:
  // Named after its content's digest so a session id derived from the file name stays the same
  // when the same bytes are piped in again (import stays idempotent).
  Spool() {
    std::string tmpl = (fs::temp_directory_path() / "ctxfold-stdin-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error(Exit::environment, "io.tmp", "cannot create a temporary directory for stdin");
    dir_ = tmpl;
    std::string tmp = dir_ + "/spool";
    FILE* out = std::fopen(tmp.c_str(), "wb");
    if (!out) throw Error(Exit::environment, "io.tmp", "cannot create a temporary file for stdin");
    Sha256 digest;
    char buf[1 << 16];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
      digest.update(std::string_view(buf, n));
      if (std::fwrite(buf, 1, n, out) != n) {
        std::fclose(out);
        throw Error(Exit::environment, "io.write", "cannot spool stdin to a temporary file");
      }
    }
    std::fclose(out);
    path_ = dir_ + "/stdin-" + digest.hex().substr(0, 12);
    fs::rename(tmp, path_);
  }
  ~Spool() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

}  // namespace

ImportFn importer_for(const std::string& format) {
  if (format == "claude-code") return import_claude_code;
  if (format == "codex") return import_codex;
  if (format == "gemini") return import_gemini;
  if (format == "openai") return import_openai_messages;
  if (format == "anthropic") return import_anthropic_messages;
  if (format == "openhands") return import_openhands;
  if (format == "ctxfold") return import_ctxfold_jsonl;
  throw Error(Exit::usage, "import.unknown_format", fmt::format("unknown import format '{}'", format),
              "use one of: auto, claude-code, codex, gemini, openai, anthropic, openhands, ctxfold");
}

ImportResult import_paths(Store& store, const std::vector<std::string>& paths, const ImportOptions& opts) {
  ImportResult result;
  if (opts.format != "auto") importer_for(opts.format);  // validate before touching anything
  // One write transaction for the whole call: an import lands whole or not at all, and --strict
  // can roll back everything when any warning appears.
  Txn txn(store.db());
  for (const std::string& given : paths) {
    std::unique_ptr<Spool> spool;
    std::string path = given;
    if (given == "-") {
      spool = std::make_unique<Spool>();
      path = spool->path();
    } else {
      std::error_code ec;
      if (!fs::exists(given, ec))
        throw Error(Exit::environment, "io.open", fmt::format("cannot read '{}': no such file", given));
      if (fs::is_directory(given, ec))
        throw Error(Exit::usage, "import.directory", fmt::format("'{}' is a directory", given),
                    "pass the transcript files themselves, or import the folder with --from all DIR");
    }
    std::string format = opts.format == "auto" ? detect_format(path, given == "-" ? "stdin" : given) : opts.format;
    ImportSink sink(store, result, given == "-" ? std::string("-") : given);
    // The sink reads the file through its own path; stdin was spooled, so label it.
    std::size_t first_session = result.sessions.size();
    importer_for(format)(path, sink);
    if (format == "claude-code" && !spool) {
      // 2.1.x sub-agents live beside the main file: each becomes a sidechain session.
      for (const std::string& agent : claude_code_subagent_files(path)) {
        ImportSink agent_sink(store, result, agent);
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
  txn.commit();
  return result;
}

}  // namespace ctxfold
