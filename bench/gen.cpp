// ctxfold-gen: writes a Claude Code JSONL of N nodes with the shapes of real transcripts, for the
// benchmarks in bench/. See bench/README.md.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "gen_core.hpp"

namespace {

/// "1000", "1e6", "2.5e5", "10k", "1M".
std::uint64_t parse_count(const std::string& s) {
  if (s.empty()) throw CLI::ValidationError("count", "empty");
  double mult = 1;
  std::string t = s;
  char last = t.back();
  if (last == 'k' || last == 'K') mult = 1e3, t.pop_back();
  if (last == 'm' || last == 'M') mult = 1e6, t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (!end || *end != '\0' || !(v >= 0) || v * mult > 1e12) throw CLI::ValidationError("count", "not a count: " + s);
  return static_cast<std::uint64_t>(std::llround(v * mult));
}

/// The folder of the sample transcripts of one client (sub: "claude-code", "codex", "gemini").
std::string default_dir(const char* argv0, const std::string& sub) {
  namespace fs = std::filesystem;
  if (const char* e = std::getenv("CTXFOLD_TRANSCRIPTS"); e && *e) return std::string(e) + "/" + sub;
#ifdef CTXFOLD_GEN_DEFAULT_DIR
  if (fs::is_directory(std::string(CTXFOLD_GEN_DEFAULT_DIR) + "/" + sub)) return std::string(CTXFOLD_GEN_DEFAULT_DIR) + "/" + sub;
#endif
  // <repo>/<build dir>/bench/ctxfold-gen -> <repo>/../shared/data/transcripts/<sub>
  std::error_code ec;
  fs::path self = fs::weakly_canonical(fs::path(argv0), ec);
  for (fs::path p = self.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    fs::path cand = p / ".." / "shared" / "data" / "transcripts" / sub;
    if (fs::is_directory(cand, ec)) return cand.lexically_normal().string();
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"ctxfold-gen: scale real Claude Code transcripts up to N nodes (fresh ids, same shapes)", "ctxfold-gen"};
  std::vector<std::string> paths;
  std::string nodes_s = "1000", tail_s, out_path, dir;
  ctxfold::gen::GenOptions o;
  bool quiet = false;
  std::string format = "claude-code";
  app.add_option("paths", paths, "source sessions (default: every main session file under --transcripts)");
  app.add_option("--format", format,
                 "claude-code (default), codex (a rollout) or gemini (Gemini CLI JSONL); codex and gemini count all lines as --nodes")
      ->check(CLI::IsMember({"claude-code", "codex", "gemini"}));
  app.add_option("--nodes,-n", nodes_s, "nodes (lines with a uuid) to write: 1000, 1e6, 10k")->default_val("1000");
  app.add_option("--seed", o.seed, "seed of the fresh ids")->default_val(1);
  app.add_option("--compact-tail", tail_s,
                 "append a compact_boundary + isCompactSummary pair so one summary covers all but the last ~K nodes");
  app.add_flag("--synthetic", o.synthetic, "no input files: a plausible session from built-in templates");
  app.add_flag("--text-dense", o.text_dense, "drop thinking, image blocks and toolUseResult copies: mostly searchable text");
  app.add_option("--short", o.short_text,
                 "cut every string of a line's message to N bytes (implies --text-dense): many short nodes")
      ->check(CLI::PositiveNumber);
  app.add_flag("--cjk", o.cjk, "also replay 3 built-in turns in Chinese, Japanese and Korean (one more source)");
  app.add_option("--transcripts", dir, "directory of the --format's transcripts (default ../shared/data/transcripts/<format>)");
  app.add_option("-o,--out", out_path, "write here instead of stdout");
  app.add_flag("-q,--quiet", quiet, "no statistics on stderr");
  CLI11_PARSE(app, argc, argv);

  try {
    o.nodes = parse_count(nodes_s);
    if (format == "codex") o.format = ctxfold::gen::Format::codex;
    if (format == "gemini") o.format = ctxfold::gen::Format::gemini;
    if (o.format != ctxfold::gen::Format::claude_code && (o.synthetic || o.cjk || o.text_dense || o.short_text))
      throw CLI::ValidationError("--format", "--synthetic, --cjk, --text-dense and --short are Claude Code shapes only");
    if (!tail_s.empty()) o.compact_tail = parse_count(tail_s);
  } catch (const CLI::ValidationError& e) {
    std::fprintf(stderr, "ctxfold-gen: %s\n", e.what());
    return 2;
  }
  if (!o.synthetic) {
    if (paths.empty()) {
      if (dir.empty()) dir = default_dir(argv[0], format);
      if (dir.empty()) {
        std::fprintf(stderr, "ctxfold-gen: no transcripts found (give paths, --transcripts DIR, or --synthetic)\n");
        return 2;
      }
      paths = o.format == ctxfold::gen::Format::claude_code ? ctxfold::gen::default_sources(dir)
                                                             : ctxfold::gen::default_format_sources(dir, o.format);
      if (paths.empty()) {
        std::fprintf(stderr, "ctxfold-gen: no sessions under %s\n", dir.c_str());
        return 2;
      }
    }
    o.paths = paths;
  }

  std::FILE* out = stdout;
  if (!out_path.empty() && out_path != "-") {
    out = std::fopen(out_path.c_str(), "wb");
    if (!out) {
      std::fprintf(stderr, "ctxfold-gen: cannot write %s: %s\n", out_path.c_str(), std::strerror(errno));
      return 4;
    }
  }
  try {
    auto write = [&](std::string_view chunk) {
      if (std::fwrite(chunk.data(), 1, chunk.size(), out) != chunk.size()) {
        if (errno == EPIPE) std::exit(0);
        throw std::runtime_error(std::string("write failed: ") + std::strerror(errno));
      }
    };
    auto stats = o.format == ctxfold::gen::Format::codex    ? ctxfold::gen::generate_codex(o, write)
                 : o.format == ctxfold::gen::Format::gemini ? ctxfold::gen::generate_gemini(o, write)
                                                            : ctxfold::gen::generate(o, write);
    if (std::fflush(out) != 0 || (out != stdout && std::fclose(out) != 0)) {
      std::fprintf(stderr, "ctxfold-gen: write failed: %s\n", std::strerror(errno));
      return 4;
    }
    for (const auto& w : stats.warnings) std::fprintf(stderr, "ctxfold-gen: warning: %s\n", w.c_str());
    if (!quiet) {
      std::fprintf(stderr,
                   "{\"nodes\":%llu,\"lines\":%llu,\"bytes\":%llu,\"cycles\":%llu,\"source_lines\":%llu,"
                   "\"sidechain_nodes\":%llu,\"session\":\"%s\"",
                   static_cast<unsigned long long>(stats.nodes), static_cast<unsigned long long>(stats.lines),
                   static_cast<unsigned long long>(stats.bytes), static_cast<unsigned long long>(stats.cycles),
                   static_cast<unsigned long long>(stats.source_lines),
                   static_cast<unsigned long long>(stats.sidechain_nodes), stats.session.c_str());
      if (stats.cut_at)
        std::fprintf(stderr, ",\"compact\":{\"covered_nodes\":%llu,\"tail_nodes\":%llu,\"boundary\":\"%s\",\"summary\":\"%s\"}",
                     static_cast<unsigned long long>(*stats.cut_at), static_cast<unsigned long long>(*stats.tail),
                     stats.boundary_uuid.c_str(), stats.summary_uuid.c_str());
      std::fprintf(stderr, "}\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ctxfold-gen: error: %s\n", e.what());
    return 3;
  }
  return 0;
}
