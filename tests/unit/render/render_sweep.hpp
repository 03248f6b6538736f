#pragma once
// The sweep the render comparison tests share (figures_test, item_content_test): every shipped
// transcript imported alone (read in place), each session rendered at HEAD in the rolling, raw and
// lcm views and at every step-th node of its raw spine, and the manual-compaction transcript
// after a rolling and an lcm compaction.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "forced_options.hpp"
#include "import/import.hpp"
#include "render/render.hpp"
#include "session/open.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "summarize/extractive.hpp"

namespace ctxfold::render_sweep {

inline const std::string kDir = CTXFOLD_TRANSCRIPTS_DIR;

/// Compares one render of a session (the options, a label for failures); returns the number of
/// differences it reported.
using Compare = std::function<int(Store&, const std::string& session, const RenderOptions&, const std::string& what)>;
/// A check made once per session after its renders; returns the number of differences it reported.
using PerSession = std::function<int(Store&, const std::string& session, const std::string& what)>;

/// Every shipped transcript file a session is imported from (sidechains come with their main file).
inline std::vector<std::string> transcript_files() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  if (!fs::exists(kDir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(kDir)) {
    if (!e.is_regular_file()) continue;
    const std::string p = e.path().string();
    if (p.find("/subagents/") != std::string::npos) continue;
    const std::string ext = e.path().extension().string();
    if (ext == ".jsonl" || ext == ".json") out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Every session of st: compare at HEAD in the rolling, raw and lcm views and at every step-th
/// node of the raw spine, then per_session (when given); returns the number of comparisons made.
inline int compare_all(Store& st, const std::string& what, std::size_t step, const Compare& compare,
                       const PerSession& per_session = nullptr) {
  int made = 0;
  for (const auto& s : st.sessions()) {
    if (!st.head(s.id)) continue;
    for (const char* strategy : {"rolling", "raw", "lcm"}) {
      RenderOptions o;
      o.strategy = strategy;
      EXPECT_EQ(compare(st, s.id, o, what + " " + s.id + " " + strategy), 0);
      ++made;
    }
    RenderOptions raw;
    raw.strategy = "raw";
    const Rendered spine = render_context(st, s.id, raw);
    for (std::size_t i = 0; i < spine.items.size(); i += step) {
      if (spine.items[i].seq <= 0) continue;
      RenderOptions o;
      o.head = spine.items[i].id;
      EXPECT_EQ(compare(st, s.id, o, what + " " + s.id + " at " + *o.head), 0);
      ++made;
    }
    if (per_session) {
      EXPECT_EQ(per_session(st, s.id, what + " " + s.id), 0);
      ++made;
    }
  }
  return made;
}

/// compare_all over each shipped transcript imported alone into a fresh database in dir; returns
/// the comparisons made (a file that holds no session is passed over).
inline int sweep_transcripts(const std::string& dir, std::size_t step, const Compare& compare,
                             const PerSession& per_session = nullptr) {
  int made = 0, n = 0;
  for (const auto& file : transcript_files()) {
    Store st = open_store(dir + "/t" + std::to_string(n++) + ".db", Store::Mode::read_write);
    try {
      import_paths(st, {file}, ImportOptions{});
    } catch (const std::exception&) {
      continue;  // a file that holds no session
    }
    made += compare_all(st, std::filesystem::path(file).filename().string(), step, compare, per_session);
  }
  return made;
}

/// The manual-compaction Claude Code transcript compacted with rolling, and a second copy with lcm
/// (the extractive summarizer, forced options); compare_all over each. Skips without the file.
inline void sweep_compactions(const std::string& dir, std::size_t step, const Compare& compare,
                              const PerSession& per_session = nullptr) {
  const std::string file =
      kDir + "/claude-code/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no transcript at " << file;
  for (const std::string strategy : {"rolling", "lcm"}) {
    Store st = open_store(dir + "/" + strategy + ".db", Store::Mode::read_write);
    import_paths(st, {file}, ImportOptions{});
    const std::string s = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    ExtractiveSummarizer ex;
    CompactResult c = strategy == "rolling" ? compact_rolling(st, s, ex, testing_env::forced_rolling(60000))
                                            : compact_lcm(st, s, ex, testing_env::forced_small_lcm());
    ASSERT_EQ(c.status, "compacted") << strategy;
    EXPECT_GT(compare_all(st, "compacted " + strategy, step, compare, per_session), 3);
  }
}

}  // namespace ctxfold::render_sweep
