// `ctxfold mcp`: the MCP stdio transport around lib/mcp's server. Messages are read from stdin,
// one per line, and each answer is written to stdout as one line and flushed; stderr carries only
// warnings. The session ends when stdin closes (exit 0).
#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "context.hpp"
#include "mcp/server.hpp"
#include "session/open.hpp"
#include "util/config.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct McpOptions {
  std::optional<std::int64_t> max_tokens;
  std::size_t max_message_bytes = 1 << 20;
  std::optional<std::string> config;
  const CLI::App* app = nullptr;  ///< the top-level app: was --db given?
};

/// The configuration file's "mcp" section (docs/commands.md "mcp"): "db" names the archive when
/// neither --db nor CTXFOLD_DB does ("~/" is $HOME), "maxTokens" the bound when --max-tokens does
/// not. Errors: Error(bad_input,"config.invalid") for a value of the wrong type or range.
void apply_config(Context& ctx, McpOptions& o) {
  const ConfigSource src = load_config(o.config, *ctx.env);
  const Json* sec = src.value.contains("mcp") ? &src.value["mcp"] : nullptr;
  const std::string where = src.path.value_or("config");
  if (sec && !sec->is_object()) throw Error(Exit::bad_input, "config.invalid", where + ": \"mcp\" must be an object");
  const bool db_given = (o.app && o.app->get_option("--db")->count() > 0) || ctx.env->variable("CTXFOLD_DB");
  if (sec && sec->contains("db") && !db_given) {
    if (!(*sec)["db"].is_string() || (*sec)["db"].get<std::string>().empty())
      throw Error(Exit::bad_input, "config.invalid", where + ": mcp.db must be a non-empty string (a path)");
    std::string db = (*sec)["db"].get<std::string>();
    if (db.rfind("~/", 0) == 0)
      if (auto home = ctx.env->variable("HOME")) db = *home + db.substr(1);
    ctx.db_path = db;
  }
  if (sec && sec->contains("maxTokens") && !o.max_tokens) {
    const Json& v = (*sec)["maxTokens"];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 200 || v.get<std::int64_t>() > 1000000)
      throw Error(Exit::bad_input, "config.invalid", where + ": mcp.maxTokens must be an integer in 200..1000000");
    o.max_tokens = v.get<std::int64_t>();
  }
}

void answer(const std::optional<std::string>& line) {
  if (!line) return;
  emit_text(*line + "\n");
  std::fflush(stdout);
}

int run_mcp(Context& ctx, McpOptions o) {
  apply_config(ctx, o);
  mcp::ServerOptions so;
  so.limits.max_tokens = o.max_tokens.value_or(4000);
  so.limits.session = ctx.session;
  so.limits.agent_session = ctx.env->variable("CLAUDE_CODE_SESSION_ID");  // set by Claude Code for its MCP servers
  so.max_message_bytes = o.max_message_bytes;
  const std::string path = ctx.db_path;
  try {
    open_store(path, Store::Mode::read_only);
  } catch (const Error& e) {
    warn(fmt::format("the archive cannot be read yet ({}); each tool call tries again", e.what()));
  }
  mcp::Server server([path] { return open_store(path, Store::Mode::read_only); }, so);
  mcp::LineFramer framer(o.max_message_bytes);
  auto deliver = [&](const mcp::LineFramer::Message& m) {
    answer(m.oversized ? std::optional<std::string>(server.refuse_oversized(m.bytes)) : server.handle(m.text));
  };
  // read(2), not stdio: a message is answered as soon as its line arrives, not when a buffer fills.
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Exit::environment, "mcp.stdin", fmt::format("cannot read stdin: {}", std::strerror(errno)));
    if (n == 0) break;
    for (const auto& m : framer.push(std::string_view(buf, static_cast<std::size_t>(n)))) deliver(m);
  }
  if (auto last = framer.finish()) deliver(*last);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_mcp(CLI::App& sub) {
  auto o = std::make_shared<McpOptions>();
  sub.add_option("--max-tokens", o->max_tokens,
                 "bound of one tool result in estimated tokens (default 4000); a longer page is cut and its "
                 "next_offset continues it")
      ->check(CLI::Range(static_cast<std::int64_t>(200), static_cast<std::int64_t>(1000000)));
  sub.add_option("--max-message-bytes", o->max_message_bytes,
                 "refuse a JSON-RPC message longer than this (default 1048576)")
      ->check(CLI::Range(static_cast<std::size_t>(1024), static_cast<std::size_t>(1) << 30));
  sub.add_option("--config", o->config,
                 R"(JSON file whose "mcp" section may name the archive ("db", used when neither --db nor CTXFOLD_DB does) and "maxTokens" (default: $CTXFOLD_CONFIG, then ~/.config/ctxfold/config.json))");
  o->app = sub.get_parent();
  return [o](Context& ctx) { return run_mcp(ctx, *o); };
}

}  // namespace ctxfold::cli
