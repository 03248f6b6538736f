#include "context.hpp"
#include "import/import.hpp"

namespace ctxfold::cli {

namespace {
struct ImportOptionsCli {
  std::vector<std::string> paths;
  ImportOptions opts;
};

int run_import(Context& ctx, const ImportOptionsCli& o) {
  ImportResult r = import_paths(ctx.db(), o.paths, o.opts);
  Json out = {{"schema", "ctxfold.import/1"}, {"sessions", Json::array()}, {"warnings", Json::array()}};
  for (const auto& s : r.sessions)
    out["sessions"].push_back({{"session", s.session},
                               {"source", s.source},
                               {"format", s.format},
                               {"nodes_added", s.nodes_added},
                               {"nodes_skipped", s.nodes_skipped},
                               {"head", s.head ? Json(*s.head) : Json(nullptr)}});
  for (const auto& w : r.warnings) {
    out["warnings"].push_back({{"file", w.file}, {"line", w.line}, {"code", w.code}, {"message", w.message}});
    warn(w.file + ":" + std::to_string(w.line) + ": " + w.message + " (" + w.code + ")");
  }
  emit(out);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_import(CLI::App& sub) {
  auto o = std::make_shared<ImportOptionsCli>();
  sub.add_option("paths", o->paths, "transcript files, or - for stdin")->required();
  sub.add_option("--format", o->opts.format, "auto, claude-code, codex, gemini, openai, anthropic, openhands, ctxfold")
      ->default_val("auto");
  sub.add_flag("--strict", o->opts.strict, "any warning fails the import (exit 3) and nothing is written");
  return [o](Context& ctx) { return run_import(ctx, *o); };
}

}  // namespace ctxfold::cli
