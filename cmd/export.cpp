#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "context.hpp"
#include "render_warnings.hpp"
#include "forensics/redact.hpp"
#include "model/node.hpp"
#include "session/export.hpp"
#include "session/writeback.hpp"
#include "stream.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ExportOptions {
  std::string format = "ctxfold";
  bool all_sessions = false;
  bool redact = false;
  std::string report;
  // --format claude-code | codex (session/writeback.hpp)
  std::optional<std::string> into_home;  ///< --into-home [DIR]: "" for the client's default root
  std::string id, cwd;
  RenderOptions render;
};

/// Single-quotes s for a POSIX shell when it holds anything but safe characters.
std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The client's root folder: DIR of --into-home DIR, else $CLAUDE_CONFIG_DIR or ~/.claude
/// (claude-code), $CODEX_HOME or ~/.codex (codex).
std::string client_root(const Context& ctx, WritebackClient client, const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* var = client == WritebackClient::codex ? "CODEX_HOME" : "CLAUDE_CONFIG_DIR";
  if (auto v = ctx.env->variable(var)) return *v;
  auto home = ctx.env->variable("HOME");
  if (!home)
    throw Error(Exit::environment, "export.home", fmt::format("neither {} nor HOME is set", var),
                "pass the client's folder: --into-home DIR");
  return *home + (client == WritebackClient::codex ? "/.codex" : "/.claude");
}

/// --format claude-code | codex: the session as the client's own transcript, on stdout or into
/// the client's folder (--into-home), never over an existing file.
int run_writeback(Context& ctx, const ExportOptions& o, WritebackClient client) {
  if (o.all_sessions || o.redact)
    throw Error(Exit::usage, "usage.export", fmt::format("--format {} writes one session: no --all-sessions, no --redact", o.format));
  WritebackOptions wo;
  wo.client = client;
  wo.render = o.render;
  wo.cwd = o.cwd;
  std::error_code ec;
  wo.fallback_cwd = std::filesystem::current_path(ec).string();
  wo.id = o.id;
  wo.now = ctx.env->unix_seconds();
  const std::string session = ctx.resolve_session();
  Writeback w = build_writeback(ctx.db(), session, wo);
  if (!o.into_home) {
    std::string all;
    for (const auto& l : w.lines) (all += l) += '\n';
    emit_text(all);
    std::fprintf(stderr, "ctxfold: %s session %s (%lld records) from %s\n", w.client.c_str(), w.id.c_str(),
                 static_cast<long long>(w.lines.size()), session.c_str());
    return 0;
  }
  const std::string root = client_root(ctx, client, *o.into_home);
  const std::string path = root + "/" + w.relative_path;
  write_new_file(path, w.lines);
  std::int64_t bytes = 0;
  for (const auto& l : w.lines) bytes += static_cast<std::int64_t>(l.size()) + 1;
  std::string env_prefix;
  if (!o.into_home->empty())
    env_prefix = fmt::format("{}={} ", client == WritebackClient::codex ? "CODEX_HOME" : "CLAUDE_CONFIG_DIR", shell_quote(root));
  const std::string resume =
      client == WritebackClient::codex
          ? fmt::format("cd {} && {}codex resume {}", shell_quote(w.cwd), env_prefix, w.id)
          : fmt::format("cd {} && {}claude --resume {}", shell_quote(w.cwd), env_prefix, w.id);
  JsonLines out;
  out.record("writeback", {{"client", w.client},
                           {"id", w.id},
                           {"path", path},
                           {"cwd", w.cwd},
                           {"resume", resume},
                           {"source_session", session},
                           {"source_head", w.provenance["source_head"]},
                           {"strategy", w.provenance["strategy"]},
                           {"compacted", w.compacted},
                           {"records", static_cast<std::int64_t>(w.lines.size())},
                           {"messages", w.messages},
                           {"bytes", bytes},
                           {"estimated_tokens", w.estimated_tokens}});
  out.summary(kExportSchema, {{"sessions", Json::array({Json{{"id", session}, {"written", w.id}}})}, {"files", 1}});
  std::fprintf(stderr, "ctxfold: resume it with: %s\n", resume.c_str());
  return 0;
}

/// --redact: the report (never a secret) to --report FILE and a one-line count on stderr.
void finish_redaction(const Redactor& r, const ExportOptions& o) {
  Json rep = {{"schema", "ctxfold.redaction/1"}, {"replacements", Json::array()}};
  Json counts = Json::object();
  for (const auto& x : r.report()) {
    rep["replacements"].push_back({{"kind", x.kind}, {"placeholder", x.placeholder}, {"length", x.length}, {"count", x.count}});
    counts[x.kind] = counts.value(x.kind, 0) + x.count;
  }
  rep["counts"] = counts;
  if (!o.report.empty()) {
    std::ofstream f(o.report, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(Exit::environment, "io.write", fmt::format("cannot write the report '{}'", o.report));
    f << dump_json(rep) << "\n";
  }
  std::string line;
  for (auto it = counts.begin(); it != counts.end(); ++it)
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", it.value().get<std::int64_t>(), it.key());
  std::fprintf(stderr, "ctxfold: redacted %s\n", line.empty() ? "nothing" : line.c_str());
}

int run_export(Context& ctx, const ExportOptions& o) {
  if (auto client = parse_writeback_client(o.format)) return run_writeback(ctx, o, *client);
  if (o.into_home || !o.id.empty() || !o.cwd.empty())
    throw Error(Exit::usage, "usage.export", "--into-home, --id and --cwd go with --format claude-code or codex");
  Store& st = ctx.db();
  if (o.format == "openai" || o.format == "anthropic") {
    if (o.all_sessions)
      throw Error(Exit::usage, "usage.export", "--all-sessions needs --format ctxfold (one messages document per session)");
    const std::string session = ctx.resolve_session();
    std::vector<std::string> warnings;
    Json doc = export_messages(st, session, parse_render_format(o.format), &warnings);
    Redactor redactor;
    if (o.redact) redactor.redact_json(doc);
    emit(doc);
    if (o.redact) finish_redaction(redactor, o);
    return print_render_warnings(warnings, session);
  }
  if (o.format != "ctxfold")
    throw Error(Exit::usage, "usage.export", fmt::format("unknown export format '{}' (ctxfold | openai | anthropic | claude-code | codex)", o.format));
  std::vector<std::string> ids;
  if (o.all_sessions)
    for (const SessionInfo& s : st.sessions()) ids.push_back(s.id);
  else
    ids.push_back(ctx.resolve_session());
  Json sessions = Json::array();
  std::int64_t nodes = 0, views = 0;
  Redactor redactor;
  JsonLines out;
  for (const std::string& id : ids) {
    ExportCounts c = export_ctxfold(st, id, [&](const Json& j) {
      // {"schema":"ctxfold.session/1",...} declares a session, every other record is a node.
      const char* type = json_str(j, "schema") == kSessionSchema ? "session" : "node";
      if (!o.redact) return out.record(type, j);
      Json r = j;
      redactor.redact_json(r);
      out.record(type, r);
    });
    sessions.push_back({{"id", c.session}, {"nodes", c.nodes}, {"views", c.views}});
    nodes += c.nodes;
    views += c.views;
  }
  out.summary(kExportSchema, {{"sessions", sessions}, {"nodes", nodes}, {"views", views}});
  if (o.redact) finish_redaction(redactor, o);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_export(CLI::App& sub) {
  auto o = std::make_shared<ExportOptions>();
  sub.add_option("--format", o->format, "ctxfold | openai | anthropic | claude-code | codex")->default_val("ctxfold");
  sub.add_flag("--all-sessions", o->all_sessions, "every session of the database (ctxfold format)");
  sub.add_flag("--redact", o->redact,
               "replace API keys, tokens, private keys, e-mail addresses and home-folder user names with stable "
               "placeholders; a count on stderr");
  sub.add_option("--report", o->report, "with --redact: write the replacement report (JSON, no secrets) to this file");
  sub.add_option("--into-home", o->into_home,
                 "claude-code | codex: write the session into the client's folder (DIR, else $CLAUDE_CONFIG_DIR or "
                 "~/.claude, $CODEX_HOME or ~/.codex) instead of stdout; prints the new id and the resume command")
      ->expected(0, 1)
      ->default_str("");
  sub.add_option("--id", o->id, "claude-code | codex: the new session's id (a UUID; default: a fresh one)");
  sub.add_option("--cwd", o->cwd,
                 "claude-code | codex: the project folder the client resumes in (default: the session's recorded one, "
                 "else the current folder)");
  sub.add_option("--strategy", o->render.strategy, "claude-code | codex: how the context is rendered: rolling | lcm | snapcompact | raw")
      ->default_val("rolling");
  sub.add_option("--head", o->render.head, "claude-code | codex: render from this node instead of HEAD");
  sub.add_option("--model", o->render.model, "claude-code | codex, strategy snapcompact: the model the frames are laid out for");
  return [o](Context& ctx) { return run_export(ctx, *o); };
}

}  // namespace ctxfold::cli
