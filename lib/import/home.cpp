// Incremental import of an agent's whole home (`ctxfold import --from AGENT [DIR]`).
//
// The bookkeeping is the append-only source_files table (share/schema/004): per path, the newest
// row holds the size, modification time and the digest of the bytes read last time. A second run
// over an unchanged home therefore costs one stat and one indexed lookup per file.
#include "import/home.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

struct Candidate {
  std::string path;
  std::string agent;  ///< known from the root, or empty: detect
  std::string skip;   ///< not read, and why (a link out of the tree, a FIFO): reported as ignored
};

std::string env_or_home(const Environment& env, const char* var, const char* home_sub) {
  if (auto v = var ? env.variable(var) : std::nullopt) return *v;
  return fmt::format("{}/{}", env.variable("HOME").value_or("."), home_sub);
}

bool is_agent(const std::string& a) {
  return a == "claude-code" || a == "codex" || a == "gemini" || a == "qwen" || a == "pi" || a == "copilot" || a == "cline" ||
         a == "opencode" || a == "kilo";
}

/// The agents whose home is one SQLite store (docs/formats/opencode.md "Where").
bool is_store_agent(const std::string& a) { return a == "opencode" || a == "kilo"; }

/// True when the transcript file p (found under a root of `agent`) is one to import.
bool wanted(const fs::path& p, const std::string& agent) {
  std::string ext = p.extension().string();
  // opencode / Kilo CLI: the store in the data folder, <agent>.db or <agent>-<channel>.db.
  if (is_store_agent(agent)) return ext == ".db" && p.filename().string().rfind(agent, 0) == 0;
  if (agent.empty() && ext == ".db") return true;  // a folder walked: the content tells
  if (ext != ".jsonl" && ext != ".json") return false;
  if (agent == "claude-code" && ext != ".jsonl") return false;
  if (agent == "codex" && ext != ".jsonl") return false;
  // Qwen Code: <project>/chats/<sessionId>.jsonl only (beside them: .runtime.json status files).
  if (agent == "qwen" && (ext != ".jsonl" || p.parent_path().filename() != "chats")) return false;
  if (agent == "pi" && ext != ".jsonl") return false;  // pi: <sessions>/--<cwd>--/<timestamp>_<uuid>.jsonl
  // Copilot CLI: <sessionId>/events.jsonl only (beside it: workspace.yaml, checkpoints, ...).
  if (agent == "copilot" && p.filename() != "events.jsonl") return false;
  // Cline: <sessionId>/*.messages.json only (beside them: the <sessionId>.json session files).
  if (agent == "cline" && !p.filename().string().ends_with(".messages.json")) return false;
  // Gemini: chats/<file>.json|.jsonl, and sub-agent sessions in chats/<parent sessionId>/<id>.jsonl.
  if (agent == "gemini" && p.parent_path().filename() != "chats" &&
      !(ext == ".jsonl" && p.parent_path().parent_path().filename() == "chats"))
    return false;
  return true;
}

/// True when `target` (canonical) lies inside `root` (canonical).
bool inside(const fs::path& target, const fs::path& root) {
  auto [r, t] = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
  return r == root.end();
}

/// The candidate for an entry of the walk (docs/import.md "Agent homes"): a regular file as
/// found; a symbolic link to a file as its target, once, when the target lies inside the tree
/// walked or follow_symlinks is set, else skipped with the reason; a FIFO, socket or device
/// skipped with the reason (it cannot be re-read, and opening a FIFO would wait for a writer).
/// nullopt for anything else (a folder, a dangling link).
std::optional<Candidate> candidate_of(const fs::directory_entry& e, const std::string& given_root,
                                      const fs::path& root, const std::string& agent, bool follow_symlinks) {
  std::error_code ec;
  const std::string path = fs::absolute(e.path()).lexically_normal().string();
  if (e.is_symlink(ec)) {
    fs::path target = fs::canonical(e.path(), ec);
    if (ec || !fs::is_regular_file(target, ec)) return std::nullopt;
    // A target inside the tree is named as the walk names it, so it is imported once.
    if (inside(target, root))
      return Candidate{(fs::absolute(given_root) / target.lexically_relative(root)).lexically_normal().string(), agent,
                       {}};
    if (follow_symlinks) return Candidate{target.string(), agent, {}};
    return Candidate{path, agent,
                     fmt::format("a symbolic link to '{}', outside the folder walked (--follow-symlinks follows it)",
                                 target.string())};
  }
  if (e.is_regular_file(ec)) return Candidate{path, agent, {}};
  if (e.is_directory(ec) || ec) return std::nullopt;
  return Candidate{path, agent,
                   "not a regular file (a FIFO, socket or device cannot be re-read by an incremental import; "
                   "import it by name)"};
}

void walk(const std::string& root, const std::string& agent, bool follow_symlinks, std::vector<Candidate>& out,
          HomeResult& res) {
  std::error_code ec;
  if (fs::is_regular_file(root, ec) && is_store_agent(agent)) {  // $OPENCODE_DB / $KILO_DB: the store itself
    res.roots.push_back(root);
    out.push_back(Candidate{fs::absolute(root).lexically_normal().string(), agent, {}});
    return;
  }
  if (!fs::is_directory(root, ec)) return;
  res.roots.push_back(root);
  const fs::path canonical_root = fs::canonical(root, ec);
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    // A store agent's data folder holds its store at the top; below are snapshots, logs and caches.
    if (is_store_agent(agent)) it.disable_recursion_pending();
    if (!wanted(it->path(), agent)) continue;
    if (auto c = candidate_of(*it, root, canonical_root, agent, follow_symlinks)) out.push_back(std::move(*c));
  }
  if (ec) res.import.warnings.push_back(ImportWarning{root, 0, "home.walk", fmt::format("cannot list '{}': {}", root, ec.message())});
}

struct Known {
  std::string agent;
  std::int64_t size = 0, mtime_ns = 0, read_bytes = 0;
  std::string digest;
  std::int64_t resume_offset = 0, read_lines = 0;
  std::string tail_digest;
};

std::optional<Known> known(Store& st, const std::string& path) {
  auto& q = st.db().cached(
      "SELECT agent, size, mtime_ns, read_bytes, digest, resume_offset, read_lines, tail_digest FROM source_files "
      "WHERE path=?1 ORDER BY seq DESC LIMIT 1");
  ResetOnExit r(q);
  q.bind(1, path);
  if (!q.step()) return std::nullopt;
  return Known{q.text(0), q.int64(1), q.int64(2), q.int64(3), q.text(4), q.int64(5), q.int64(6), q.text(7)};
}

/// What one run leaves for the next (a source_files row).
struct Seen {
  std::int64_t read_bytes = 0;  ///< bytes covered by digest (0 and "" after a resumed read)
  std::string digest;
  std::int64_t resume_offset = 0, read_lines = 0;
  std::string tail_digest;
};

void record(Store& st, const std::string& path, const std::string& agent, std::int64_t size, std::int64_t mtime,
            const Seen& seen, const std::string& outcome) {
  auto& q = st.db().cached(
      "INSERT INTO source_files(path, agent, size, mtime_ns, read_bytes, digest, outcome, boundary_seq, resume_offset, "
      "read_lines, tail_digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  ResetOnExit r(q);
  q.bind(1, path).bind(2, agent).bind(3, size).bind(4, mtime).bind(5, seen.read_bytes).bind(6, seen.digest);
  q.bind(7, outcome).bind(8, st.max_seq()).bind(9, seen.resume_offset).bind(10, seen.read_lines);
  q.bind(11, seen.tail_digest);
  q.run();
}

/// The bytes the tail digest covers: up to this many before the resume offset.
constexpr std::int64_t kTailBytes = 64 * 1024;

/// One pass over [from, to) of an open file: its digest, the bytes actually there (fewer when
/// the file shrank meanwhile), and its newlines (count, and the offset just after the last).
struct Span {
  std::int64_t bytes = 0;
  std::string digest;
  std::int64_t newlines = 0;
  std::int64_t after_last_newline = -1;  ///< absolute; -1 when the span has none
};
Span read_span(FILE* f, const std::string& path, std::int64_t from, std::int64_t to) {
  Span s;
  Sha256 h;
  if (std::fseek(f, static_cast<long>(from), SEEK_SET) != 0)
    throw Error(Exit::environment, "io.read", fmt::format("cannot seek in '{}'", path));
  std::string buf(1 << 16, '\0');
  std::int64_t at = from;
  while (at < to) {
    std::size_t want = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), to - at));
    std::size_t n = std::fread(buf.data(), 1, want, f);
    if (n == 0) break;
    std::string_view chunk(buf.data(), n);
    h.update(chunk);
    for (std::size_t i = 0; i < n; ++i)
      if (chunk[i] == '\n') {
        ++s.newlines;
        s.after_last_newline = at + static_cast<std::int64_t>(i) + 1;
      }
    at += static_cast<std::int64_t>(n);
  }
  if (std::ferror(f)) throw Error(Exit::environment, "io.read", fmt::format("cannot read '{}'", path));
  s.bytes = at - from;
  s.digest = h.hex();
  return s;
}

struct File {
  FILE* f = nullptr;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {
    if (!f) throw Error(Exit::environment, "io.open", fmt::format("cannot read '{}'", path));
  }
  ~File() {
    if (f) std::fclose(f);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
};

/// The tail digest of the bytes before `resume` (see kTailBytes).
std::string tail_digest(FILE* f, const std::string& path, std::int64_t resume) {
  return read_span(f, path, std::max<std::int64_t>(0, resume - kTailBytes), resume).digest;
}

/// The resume point after the bytes [from, to): just after the last newline in them, else
/// `from` (`lines` newlines before it); with the tail digest there.
Seen resume_after(FILE* f, const std::string& path, const Span& span, std::int64_t from, std::int64_t lines) {
  Seen s;
  s.resume_offset = span.after_last_newline >= 0 ? span.after_last_newline : from;
  s.read_lines = lines + span.newlines;
  s.tail_digest = tail_digest(f, path, s.resume_offset);
  return s;
}

}  // namespace

namespace {

/// --from's value: an agent or "all"; Error(usage,"import.from") otherwise.
void check_agent(const std::string& agent) {
  if (agent != "all" && !is_agent(agent))
    throw Error(Exit::usage, "import.from", fmt::format("unknown agent '{}'", agent),
                "use one of: claude-code, codex, gemini, qwen, pi, copilot, cline, opencode, kilo, all");
}

}  // namespace

std::vector<std::string> agent_home_roots(const std::string& agent, const Environment& env) {
  std::vector<std::string> roots;
  check_agent(agent);
  bool all = agent == "all";
  if (all || agent == "claude-code") roots.push_back(env_or_home(env, "CLAUDE_CONFIG_DIR", ".claude") + "/projects");
  if (all || agent == "codex") {
    std::string h = env_or_home(env, "CODEX_HOME", ".codex");
    roots.push_back(h + "/sessions");
    roots.push_back(h + "/archived_sessions");
  }
  if (all || agent == "gemini") {
    // GEMINI_CLI_HOME: "root directory for user-level configuration and storage; a .gemini folder
    // is created inside it" (Gemini CLI docs, environment variables); default the user's home.
    const std::optional<std::string> g = env.variable("GEMINI_CLI_HOME");
    roots.push_back(g ? fmt::format("{}/.gemini/tmp", *g) : env_or_home(env, nullptr, ".gemini") + "/tmp");
  }
  if (all || agent == "qwen") {
    // Qwen Code keeps sessions under its runtime folder: QWEN_RUNTIME_DIR, else QWEN_HOME (which
    // replaces ~/.qwen), else ~/.qwen (docs/formats/qwen-code.md "Where").
    const std::optional<std::string> rt = env.variable("QWEN_RUNTIME_DIR");
    roots.push_back((rt ? *rt : env_or_home(env, "QWEN_HOME", ".qwen")) + "/projects");
  }
  if (all || agent == "pi") {
    // pi: PI_CODING_AGENT_SESSION_DIR, else PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions
    // (the package's README, "Environment Variables"; docs/formats/pi.md "Where").
    const std::optional<std::string> sd = env.variable("PI_CODING_AGENT_SESSION_DIR");
    roots.push_back(sd ? *sd : env_or_home(env, "PI_CODING_AGENT_DIR", ".pi/agent") + "/sessions");
  }
  // Copilot CLI: COPILOT_HOME replaces ~/.copilot (docs/formats/copilot-cli.md "Where").
  if (all || agent == "copilot") roots.push_back(env_or_home(env, "COPILOT_HOME", ".copilot") + "/session-state");
  // Cline: CLINE_SESSION_DATA_DIR, else CLINE_DATA_DIR/sessions, else CLINE_DIR (replacing
  // ~/.cline)/data/sessions (docs/formats/cline.md "Where").
  if (all || agent == "cline") {
    const std::optional<std::string> sd = env.variable("CLINE_SESSION_DATA_DIR");
    const std::optional<std::string> dd = env.variable("CLINE_DATA_DIR");
    roots.push_back(sd ? *sd : dd ? *dd + "/sessions" : env_or_home(env, "CLINE_DIR", ".cline") + "/data/sessions");
  }
  for (const char* a : {"opencode", "kilo"}) {
    if (!all && agent != a) continue;
    // The agent's data folder ($XDG_DATA_HOME/<agent>, default ~/.local/share/<agent>), or the
    // store $OPENCODE_DB / $KILO_DB names (absolute, or relative to that folder).
    const std::string data = env_or_home(env, "XDG_DATA_HOME", ".local/share") + "/" + a;
    const std::optional<std::string> db = env.variable(std::string(a) == "kilo" ? "KILO_DB" : "OPENCODE_DB");
    roots.push_back(!db || db->empty() ? data : (*db)[0] == '/' ? *db : data + "/" + *db);
  }
  return roots;
}

namespace {

/// The candidates of HomeOptions::files: each file as opts.from's format, a Claude Code main
/// file followed by its sub-agent files.
void explicit_files(const HomeOptions& opts, std::vector<Candidate>& out) {
  if (!is_agent(opts.from))
    throw Error(Exit::usage, "import.from", "importing named files incrementally needs one agent, not 'all'");
  for (const std::string& f : opts.files) {
    std::error_code ec;
    if (!fs::is_regular_file(f, ec))
      throw Error(Exit::bad_input, "import.no_file", fmt::format("'{}' does not exist or is not a regular file", f));
    const std::string path = fs::absolute(f).lexically_normal().string();
    out.push_back(Candidate{path, opts.from, {}});
    if (opts.from == "claude-code")
      for (const std::string& sub : claude_code_subagent_files(path)) out.push_back(Candidate{sub, opts.from, {}});
  }
}

/// The files to import: opts.files, else opts.dir walked (formats detected), else the agents' roots; main files
/// before their sub-agent files, each path once.
std::vector<Candidate> candidates(const HomeOptions& opts, HomeResult& res) {
  check_agent(opts.from);
  std::vector<Candidate> cands;
  if (!opts.files.empty()) {
    explicit_files(opts, cands);
  } else if (opts.dir) {
    std::error_code ec;
    if (!fs::is_directory(*opts.dir, ec))
      throw Error(Exit::environment, "io.open", fmt::format("'{}' is not a readable folder", *opts.dir));
    walk(*opts.dir, "", opts.follow_symlinks, cands, res);
  } else {
    if (opts.env == nullptr)
      throw Error(Exit::internal, "import.env", "import --from without a folder needs the environment's agent homes");
    std::vector<std::string> roots = agent_home_roots(opts.from, *opts.env);
    std::size_t r = 0;
    for (const std::string& a :
         {std::string("claude-code"), std::string("codex"), std::string("gemini"), std::string("qwen"), std::string("pi"),
          std::string("copilot"), std::string("cline"), std::string("opencode"), std::string("kilo")}) {
      if (opts.from != "all" && opts.from != a) continue;
      std::size_t n = a == "codex" ? 2 : 1;
      for (std::size_t k = 0; k < n && r < roots.size(); ++k, ++r) walk(roots[r], a, opts.follow_symlinks, cands, res);
    }
  }
  // Main files before their sub-agent files: per folder, agent-* names last; a main file
  // "<stem>.jsonl" sorts before its folder "<stem>/subagents/".
  auto key = [](const Candidate& c) {
    fs::path p(c.path);
    std::string name = p.filename().string();
    return std::make_tuple(p.parent_path().string(), name.rfind("agent-", 0) == 0, name);
  };
  std::sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
  cands.erase(std::unique(cands.begin(), cands.end(),
                          [](const Candidate& a, const Candidate& b) { return a.path == b.path; }),
              cands.end());
  return cands;
}

/// One file being imported: what the last run recorded of it and what this run finds.
struct FileImport {
  Store& store;
  const HomeOptions& opts;
  HomeResult& res;
  const Candidate& c;
  HomeFile hf{};
  std::int64_t size = 0, mtime = 0;
  std::optional<Known> k{};
  std::size_t first_session = 0, first_warning = 0;
  std::optional<ResumePoint> held{};  ///< where the importer held the open turn back

  void fail(const std::string& code, const std::string& msg) {
    hf.outcome = "failed";
    hf.error = msg;
    res.import.warnings.push_back(ImportWarning{c.path, 0, code, msg});
  }
};

/// The format of a file found in a folder walked, or "ignored" (hf.reason says why).
std::string detect_agent(FileImport& f) {
  // A folder walked: each file's format is detected. --from all imports every format
  // ctxfold reads (the interchange ones too: OpenAI/Anthropic messages, OpenHands,
  // ctxfold JSONL); --from AGENT only that agent's. Any other file is named with why.
  std::string agent;
  try {
    agent = detect_format(f.c.path, f.c.path);
    if (f.opts.from != "all" && f.opts.from != agent) {
      f.hf.reason =
          fmt::format("detected as {}, not {} (import it with --from all or by name)", agent, f.opts.from);
      agent = "ignored";
    }
  } catch (const Error& e) {
    if (e.exit() != Exit::bad_input) throw;
    f.hf.reason = e.what();
    agent = "ignored";
  }
  return agent;
}

/// What became of a file since the last run: ignored, new, touched, appended or rewritten.
std::string classify(FileImport& f, File& file, const std::string& agent, bool by_tail, bool grew) {
  const std::optional<Known>& k = f.k;
  if (agent == "ignored") return "ignored";
  if (!k || k->agent == "ignored") return "new";
  // A file whose open turn a hook call held back (whole lines after the resume point, not a line
  // still being written) is read from there when this run may store more of it: appended.
  const bool open_left = (!f.opts.hold_open_turn || f.opts.reply_done) && agent == "claude-code" &&
                         k->resume_offset < f.size &&
                         read_span(file.f, f.c.path, k->resume_offset, f.size).newlines > 0;
  if (grew) return f.size == k->size && !open_left ? "touched" : "appended";
  if (!by_tail) {
    // Recorded before resume points (or no newline read yet): the full prefix digest decides.
    Span prefix = read_span(file.f, f.c.path, 0, k->read_bytes);
    return prefix.bytes == k->read_bytes && prefix.digest == k->digest
               ? (f.size == k->read_bytes && !open_left ? "touched" : "appended")
               : "rewritten";
  }
  return "rewritten";
}

/// Runs the file's importer, from resume when set; a resume the importer refuses is dropped
/// (resume reset) and the whole file read instead.
void run_importer(FileImport& f, const std::string& agent, std::optional<ResumePoint>& resume) {
  HomeResult& res = f.res;
  auto run = [&](const std::optional<ResumePoint>& at) {
    ImportSink sink(f.store, res.import, f.c.path);
    sink.set_max_record_bytes(f.opts.max_record_bytes);
    sink.set_hold_open_turn(f.opts.hold_open_turn);
    sink.set_reply_done(f.opts.reply_done);
    if (at) sink.set_resume(*at);
    importer_for(agent)(f.c.path, sink);
    f.held = sink.held();
  };
  if (resume) {
    try {
      run(resume);
      f.hf.resumed_at = static_cast<std::int64_t>(resume->offset);
    } catch (const Error& e) {
      if (e.code() != kResumeUnsafe) throw;
      // Planned nothing written yet: read the whole file instead (deduplicated).
      res.import.sessions.resize(f.first_session);
      res.import.warnings.resize(f.first_warning);
      f.hf.resume_refused = e.what();
      resume.reset();
      run(std::nullopt);
    }
  } else {
    run(std::nullopt);
  }
  for (std::size_t i = f.first_session; i < res.import.sessions.size(); ++i)
    if (res.import.sessions[i].format.empty()) res.import.sessions[i].format = agent;
}

/// What this run read of the file, for the next one (and hf.bytes_read).
Seen what_was_read(FileImport& f, File& file, const std::string& outcome, bool grew,
                   const std::optional<ResumePoint>& resume) {
  const std::optional<Known>& k = f.k;
  Seen seen;
  if (resume) {
    // Read from the resume point: only the appended bytes.
    Span added = read_span(file.f, f.c.path, k->resume_offset, f.size);
    seen = resume_after(file.f, f.c.path, added, k->resume_offset, k->read_lines);
    f.hf.bytes_read = added.bytes;
  } else if (outcome == "touched" && grew) {
    seen = Seen{k->read_bytes, k->digest, k->resume_offset, k->read_lines, k->tail_digest};
    f.hf.bytes_read = 0;
  } else {
    Span whole = read_span(file.f, f.c.path, 0, f.size);
    seen = resume_after(file.f, f.c.path, whole, 0, 0);
    seen.read_bytes = whole.bytes;
    seen.digest = whole.digest;
    f.hf.bytes_read = whole.bytes;
  }
  if (f.held && static_cast<std::int64_t>(f.held->offset) < seen.resume_offset) {
    // The open turn is read again next time (docs/formats/claude-code.md "Read while it is written").
    seen.resume_offset = static_cast<std::int64_t>(f.held->offset);
    seen.read_lines = f.held->lines;
    seen.tail_digest = tail_digest(file.f, f.c.path, seen.resume_offset);
  }
  return seen;
}

/// Imports a file that changed since the last run (or is new), in one write transaction.
void import_changed(FileImport& f) {
  const std::optional<Known>& k = f.k;
  std::string agent = f.c.agent;
  if (agent.empty()) agent = detect_agent(f);
  f.hf.agent = agent;
  File file(f.c.path);
  // A file that only grew since a run that left a resume point: the bytes before it are
  // checked by the tail digest only, and a Claude Code file is read from there on.
  const bool by_tail = k && !k->tail_digest.empty() && k->resume_offset > 0;
  bool grew = by_tail && k->agent == agent && f.size >= k->resume_offset &&
              tail_digest(file.f, f.c.path, k->resume_offset) == k->tail_digest;
  std::optional<ResumePoint> resume;
  std::string outcome = classify(f, file, agent, by_tail, grew);
  if (outcome == "appended" && agent == "claude-code" && grew && k->resume_offset > 0)
    resume = ResumePoint{static_cast<std::uint64_t>(k->resume_offset), k->read_lines};
  Txn txn(f.store.db());
  f.store.defer_predecessor_index();  // the first file into a new database (docs/import.md "A first import")
  if (outcome == "new" || outcome == "appended" || outcome == "rewritten") run_importer(f, agent, resume);
  Seen seen = what_was_read(f, file, outcome, grew, resume);
  record(f.store, f.c.path, agent, f.size, f.mtime, seen, outcome);
  f.store.restore_predecessor_index();
  txn.commit();
  f.hf.outcome = outcome;
  if (outcome == "ignored")
    f.res.import.warnings.push_back(
        ImportWarning{f.c.path, 0, "source.ignored", fmt::format("not imported: {}", f.hf.reason)});
}

/// An SQLite store's newest writes may sit in its -wal file while the agent runs, the database
/// file untouched: its size and modification time count as the store's, so a store that grew
/// there is not taken for unchanged.
void add_wal(const std::string& path, std::int64_t& size, std::int64_t& mtime) {
  struct stat wb {};
  if (fs::path(path).extension() != ".db" || ::stat((path + "-wal").c_str(), &wb) != 0) return;
  size += wb.st_size;
  mtime = std::max<std::int64_t>(mtime, static_cast<std::int64_t>(wb.st_mtim.tv_sec) * 1000000000 + wb.st_mtim.tv_nsec);
}

/// Cline's compaction state is written beside its messages file (docs/formats/cline.md
/// "Compaction"), and read with it: its size and modification time count as the messages file's,
/// so a compaction written after the file's last change is not taken for unchanged.
void add_compaction_state(const std::string& path, std::int64_t& size, std::int64_t& mtime) {
  const std::string suffix = ".messages.json";
  if (!path.ends_with(suffix)) return;
  struct stat cb {};
  if (::stat((path.substr(0, path.size() - suffix.size()) + ".compaction.json").c_str(), &cb) != 0) return;
  size += cb.st_size;
  mtime = std::max<std::int64_t>(mtime, static_cast<std::int64_t>(cb.st_mtim.tv_sec) * 1000000000 + cb.st_mtim.tv_nsec);
}

/// One file's outcome: unchanged files are not opened, a file that fails is reported and what
/// it added undone (a database error is thrown on).
HomeFile import_file(Store& store, const HomeOptions& opts, const Candidate& c, HomeResult& res) {
  FileImport f{store, opts, res, c};
  f.hf.path = c.path;
  f.hf.agent = c.agent;
  if (!c.skip.empty()) {
    f.hf.outcome = "ignored";
    f.hf.reason = c.skip;
    res.import.warnings.push_back(ImportWarning{c.path, 0, "source.ignored", fmt::format("not imported: {}", c.skip)});
    return std::move(f.hf);
  }
  struct stat sb {};
  if (::stat(c.path.c_str(), &sb) != 0) {
    f.fail("source.vanished", fmt::format("'{}' vanished before it was read", c.path));
    return std::move(f.hf);
  }
  f.size = sb.st_size;
  f.mtime = static_cast<std::int64_t>(sb.st_mtim.tv_sec) * 1000000000 + sb.st_mtim.tv_nsec;
  add_wal(c.path, f.size, f.mtime);
  add_compaction_state(c.path, f.size, f.mtime);
  f.k = known(store, c.path);
  if (opts.after_stat) opts.after_stat(c.path);
  // A file an earlier run ignored is looked at again: this run may take its format (--from all
  // takes every importable one) and otherwise names it and why. A Claude Code file whose open
  // turn a hook call held back is read again when this run may store more of it
  // (docs/formats/claude-code.md "Read while it is written").
  if (f.k && f.k->size == f.size && f.k->mtime_ns == f.mtime && f.k->agent != "ignored" &&
      ((opts.hold_open_turn && !opts.reply_done) || f.k->agent != "claude-code" || f.k->resume_offset >= f.size)) {
    f.hf.agent = f.k->agent;
    f.hf.outcome = "unchanged";
    return std::move(f.hf);
  }
  f.first_session = res.import.sessions.size();
  f.first_warning = res.import.warnings.size();
  try {
    import_changed(f);
  } catch (const std::exception& e) {
    if (auto* err = dynamic_cast<const Error*>(&e); err && err->code().rfind("db.", 0) == 0) throw;
    res.import.sessions.resize(f.first_session);
    res.import.warnings.resize(f.first_warning);
    std::error_code ec;
    bool gone = !fs::exists(c.path, ec);
    f.fail(gone ? "source.vanished" : "source.unreadable",
           gone ? fmt::format("'{}' vanished while it was read; nothing of it imported", c.path)
                : fmt::format("'{}' could not be imported: {}", c.path, e.what()));
  }
  return std::move(f.hf);
}

/// Whether path is the database `store` writes to or one of its companion files (-wal, -shm,
/// -journal). A walk that reaches them passes them by unopened: they are no agent's transcript,
/// and opening then closing a descriptor of the database would drop this process's locks on it
/// (POSIX record locks belong to the process and the file).
bool is_own_database(const Store& store, const std::string& path) {
  if (store.path().empty() || store.path() == ":memory:") return false;
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    if (fs::equivalent(path, store.path() + suffix, ec) && !ec) return true;
  return false;
}

}  // namespace

HomeResult import_home(Store& store, const HomeOptions& opts) {
  HomeResult res;
  std::vector<Candidate> cands = candidates(opts, res);
  std::erase_if(cands, [&](const Candidate& c) { return is_own_database(store, c.path); });
  std::size_t done = 0;
  for (const Candidate& c : cands) {
    if (opts.progress)
      opts.progress(static_cast<std::int64_t>(done), static_cast<std::int64_t>(cands.size()),
                    fs::path(c.path).filename().string());
    ++done;
    res.files.push_back(import_file(store, opts, c, res));
  }
  return res;
}

}  // namespace ctxfold
