// replay: re-derive a summary offline from its recorded summarizer calls (issue 11 part 4).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "context.hpp"
#include "strategies/replay.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {

struct ReplayCliOptions {
  std::string id;
  std::optional<std::string> export_dir;
};

int run_replay(Context& ctx, const ReplayCliOptions& o) {
  ReplayResult r = replay_summary(ctx.db(), o.id);
  int exported = 0;
  if (o.export_dir) {
    std::error_code ec;
    std::filesystem::create_directories(*o.export_dir, ec);
    if (ec)
      throw Error(Exit::environment, "replay.export", fmt::format("cannot create '{}': {}", *o.export_dir, ec.message()));
    for (const auto& c : r.calls) {
      if (!c.contains("response")) continue;
      const std::string digest = json_str(c, "request_digest");
      const std::string path = (std::filesystem::path(*o.export_dir) / (digest + ".json")).string();
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      Json rec{{"request_digest", digest}, {"request", c["request"]}, {"response", c["response"]}};
      if (c.contains("summarizer")) rec["summarizer"] = c["summarizer"];  // its transcript options (replay:DIR)
      out << dump_json(rec) << "\n";
      if (!out) throw Error(Exit::environment, "replay.export", fmt::format("cannot write '{}'", path));
      ++exported;
    }
  }
  if (ctx.text) {
    emit_text(fmt::format("{}: {} from {} recorded call(s) of {}{}\n", r.summary_id,
                          r.identical ? "reproduced byte for byte" : "DIFFERS", r.calls.size(), r.compaction,
                          r.replanned ? fmt::format(" (re-planned from the ledger: {} pass, {} requests issued again)",
                                                    r.replan_pass, r.replan_calls)
                                      : std::string()));
  } else {
    Json calls = Json::array();
    for (const auto& c : r.calls)
      calls.push_back(Json{{"index", c.value("index", 0)},
                           {"request_digest", json_str(c, "request_digest")},
                           {"summarizer", c.contains("summarizer") ? c["summarizer"] : Json(nullptr)},
                           {"answered", c.contains("response")}});
    Json j{{"schema", "ctxfold.replay/1"},
           {"summary_id", r.summary_id},
           {"strategy", r.strategy},
           {"compaction", r.compaction},
           {"calls", std::move(calls)},
           {"identical", r.identical},
           {"replanned", r.replanned},
           {"replan_pass", r.replanned ? Json(r.replan_pass) : Json(nullptr)},
           {"replan_calls", r.replanned ? Json(r.replan_calls) : Json(nullptr)},
           {"content", r.reproduced}};
    if (o.export_dir) j["exported"] = exported;
    emit(j);
  }
  if (!r.identical) warn(fmt::format("summary '{}' is not reproduced by its recorded answers", r.summary_id));
  return r.identical ? 0 : static_cast<int>(Exit::negative);
}

}  // namespace

std::function<int(Context&)> setup_replay(CLI::App& sub) {
  auto o = std::make_shared<ReplayCliOptions>();
  sub.add_option("id", o->id, "the summary to replay")->required();
  sub.add_option("--export", o->export_dir,
                 "also write each recorded answer as DIR/<request digest>.json, for --summarizer replay:DIR");
  return [o](Context& ctx) { return run_replay(ctx, *o); };
}

}  // namespace ctxfold::cli
