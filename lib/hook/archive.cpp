#include "hook/archive.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "import/home.hpp"
#include "util/error.hpp"

namespace ctxfold {

HookArchive archive_transcript(Store& store, const HookPayload& p, const std::string& agent) {
  HomeOptions opts;
  opts.from = agent;
  opts.files = {p.transcript_path};
  // The open turn waits for the next call; on Stop and SessionEnd the reply is complete and only
  // what follows it waits (docs/formats/claude-code.md "Read while it is written").
  opts.hold_open_turn = true;
  opts.reply_done = p.event == "Stop" || p.event == "SessionEnd";
  HomeResult res = import_home(store, opts);
  HookArchive a;
  // Claude Code names a session by its file's stem, which is its session_id; Codex's importer
  // takes the rollout's session id, which is the payload's.
  a.session = store.session(p.session_id) ? p.session_id : std::filesystem::path(p.transcript_path).stem().string();
  for (const HomeFile& f : res.files) {
    if (f.outcome == "failed")
      throw Error(Exit::environment, "hook.import", fmt::format("the transcript was not archived: {}", f.error));
    a.bytes_read += f.bytes_read;
  }
  if (!res.files.empty()) a.outcome = res.files.front().outcome;
  for (const SessionImport& s : res.import.sessions) a.nodes_added += s.nodes_added;
  a.warnings = static_cast<std::int64_t>(res.import.warnings.size());
  return a;
}

}  // namespace ctxfold
