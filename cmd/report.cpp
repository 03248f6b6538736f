#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "context.hpp"
#include "forensics/redact.hpp"
#include "render/view_policy.hpp"
#include "report/report.hpp"
#include "session/prepare.hpp"
#include "store/recorded_model.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ReportCli {
  bool html = false, markdown = false, all_sessions = false, redact = false;
  std::string output;
  std::optional<std::string> strategy;
  ReportLimits limits;
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw Error(Exit::environment, "io.write", fmt::format("cannot write the report '{}'", path));
}

int run_report(Context& ctx, const ReportCli& o) {
  if (o.html && o.markdown) throw Error(Exit::usage, "usage.report", "--html and --markdown exclude each other");
  Store& st = ctx.db();
  Redactor redactor;
  ReportRequest req;
  if (!o.all_sessions) req.session = ctx.resolve_session();
  req.redactor = o.redact ? &redactor : nullptr;
  req.limits = o.limits;
  req.render_options = [&](const std::string& session) {
    RenderOptions r;
    r.lean_metadata = true;  // the report reads timestamp and model, never the source records
    r.strategy = o.strategy.value_or(session_strategy(st, session));
    if (const ViewPolicy* v = find_view_policy(r.strategy); v && v->frames) r.model = recorded_model(st, session).value_or("");
    return r;
  };
  ReportStats stats;
  std::string page = o.markdown ? markdown_report(st, req, stats) : html_report(st, req, stats);
  for (const std::string& w : stats.warnings) warn(w);
  if (o.redact) {
    std::int64_t n = 0;
    for (const auto& x : redactor.report()) n += x.count;
    std::fprintf(stderr, "ctxfold: redacted %lld strings\n", static_cast<long long>(n));
  }
  if (o.output.empty() || o.output == "-") {
    emit_text(page);
    return 0;
  }
  write_file(o.output, page);
  emit({{"schema", "ctxfold.report/1"},
        {"output", o.output},
        {"format", o.markdown ? "markdown" : "html"},
        {"sessions", stats.sessions},
        {"bytes", stats.bytes},
        {"nodes", stats.nodes},
        {"stubs", stats.stubs},
        {"capsules", stats.capsules},
        {"capsule_omitted", stats.capsule_omitted},
        {"truncated_blocks", stats.truncated_blocks},
        {"images", stats.images},
        {"images_omitted", stats.images_omitted},
        {"redacted", o.redact}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_report(CLI::App& sub) {
  auto o = std::make_shared<ReportCli>();
  sub.add_flag("--html", o->html, "one self-contained HTML page (the default)");
  sub.add_flag("--markdown", o->markdown, "a bounded Markdown digest for pasting into an issue");
  sub.add_option("-o,--output", o->output,
                 "write the page to FILE and print a JSON summary of it (default: the page on stdout)");
  sub.add_flag("--all-sessions", o->all_sessions, "every session of the database (default: the session and its sub-agents)");
  sub.add_flag("--redact", o->redact,
               "replace API keys, tokens, private keys, e-mail addresses and home-folder user names with stable "
               "placeholders (as export --redact); a count on stderr");
  sub.add_option("--strategy", o->strategy, "view policy of the render (default: each session's own strategy)");
  auto& l = o->limits;
  sub.add_option("--max-block-bytes", l.block_bytes, "text of one block shown at most")
      ->default_val(l.block_bytes)->check(CLI::PositiveNumber);
  sub.add_option("--max-read-bytes", l.read_bytes, "page bytes for the nodes the model reads; past it, one-line stubs")
      ->default_val(l.read_bytes)->check(CLI::NonNegativeNumber);
  sub.add_option("--max-covered-bytes", l.covered_bytes, "page bytes for the covered nodes in capsules; past it, stubs")
      ->default_val(l.covered_bytes)->check(CLI::NonNegativeNumber);
  sub.add_option("--max-capsule-nodes", l.capsule_nodes, "covered nodes one capsule lists at most")
      ->default_val(l.capsule_nodes)->check(CLI::NonNegativeNumber);
  sub.add_option("--max-image-bytes", l.image_bytes, "base64 bytes of one embedded image at most")
      ->default_val(l.image_bytes)->check(CLI::NonNegativeNumber);
  sub.add_option("--max-images-bytes", l.images_bytes, "base64 bytes of all embedded images at most")
      ->default_val(l.images_bytes)->check(CLI::NonNegativeNumber);
  sub.add_option("--max-markdown-bytes", l.markdown_bytes, "--markdown: bytes of the digest at most (conversation cut past it)")
      ->default_val(l.markdown_bytes)->check(CLI::PositiveNumber);
  return [o](Context& ctx) { return run_report(ctx, *o); };
}

}  // namespace ctxfold::cli
