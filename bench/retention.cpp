// ctxfold-retention: how much of the covered history's file names and Bash commands a real
// agent's compaction summary keeps, against ctxfold's extractive summarizer given no more bytes
// than that summary (issue 10 benchmark; driven by bench/retention.sh).
//
// For every compaction imported from the agent (origin "import") in the named sessions:
//   files    = distinct file names (last path component) of the paths found in the covered nodes
//              (model/identifiers.hpp, the dropped report's rule);
//   commands = distinct Bash tool calls' commands (whitespace collapsed) in the covered nodes;
// a file name is kept when the summary contains it, a command when the summary (whitespace
// collapsed) contains it whole. ctxfold's summary: ExtractiveSummarizer over the covered nodes'
// transcript (summarize/transcript.hpp, rendered with the extractive summarizer's own
// transcript_options as compact does; one call) with max_output_tokens = real bytes / 4, so it
// never has more bytes than the real summary (checked). RETENTION_DUMP=DIR writes each covered
// transcript, both summaries and the name/command sets there, for inspection.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "model/identifiers.hpp"
#include "store/store.hpp"
#include "summarize/extractive.hpp"
#include "summarize/transcript.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

using namespace ctxfold;

namespace {
std::string base_name(std::string p) {
  while (!p.empty() && p.back() == '/') p.pop_back();
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

struct Share {
  std::size_t kept = 0, total = 0;
  double pct() const { return total ? 100.0 * static_cast<double>(kept) / static_cast<double>(total) : 0.0; }
};

Share files_kept(const std::set<std::string>& names, const std::string& summary) {
  Share s{0, names.size()};
  for (const auto& n : names)
    if (summary.find(n) != std::string::npos) ++s.kept;
  return s;
}
Share commands_kept(const std::set<std::string>& cmds, const std::string& summary) {
  const std::string flat = collapse_space(summary);
  Share s{0, cmds.size()};
  for (const auto& c : cmds)
    if (flat.find(c) != std::string::npos) ++s.kept;
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: ctxfold-retention DB SESSION...\n");
    return 2;
  }
  try {
    Store st = open_store(argv[1], Store::Mode::read_only);
    std::printf("%-38s %9s %9s %6s | %-17s %-17s | %9s %-17s %-17s\n", "session / summary", "covered", "real B",
                "real%", "real files", "real commands", "ctxfold B", "ctxfold files", "ctxfold commands");
    bool all_ok = true;
    for (int a = 2; a < argc; ++a) {
      const std::string session = argv[a];
      for (const Node& v : st.view_nodes(session, kind::kSummary)) {
        if (v.metadata.value("origin", "") != "import") continue;
        const std::string real = node_text(v);
        std::set<std::string> names, cmds;
        std::string transcript;
        std::size_t covered_bytes = 0;
        for (const std::string& id : st.covers_of(v.seq)) {
          auto n = st.node(id, false);
          if (!n) continue;
          covered_bytes += node_text(*n).size();
          node_identifiers(*n, [&](const char* kind, std::string value) {
            if (std::string(kind) == ident::kPath) names.insert(base_name(value));
          });
          for (const auto& b : n->content)
            if (b.is_object() && b.value("type", "") == "tool_use" && b.value("name", "") == "Bash" && b.contains("input")) {
              std::string c = tool_command(b["input"]);
              if (!c.empty()) cmds.insert(c);
            }
          std::string t = node_transcript(*n, ExtractiveSummarizer::extractive_transcript_options());
          if (t.empty()) continue;
          if (!transcript.empty()) transcript += "\n\n";
          transcript += t;
        }
        names.erase("");
        ExtractiveSummarizer ex;
        SummaryRequest req;
        req.transcript = transcript;
        req.max_output_tokens = static_cast<std::int64_t>(real.size() / 4);
        const std::string ours = ex.summarize(req).text;
        if (const char* d = std::getenv("RETENTION_DUMP")) {
          std::string base = std::string(d) + "/" + session.substr(0, 8);
          auto w = [](const std::string& p, const std::string& t) { FILE* f = std::fopen(p.c_str(), "w"); if (f) { std::fwrite(t.data(), 1, t.size(), f); std::fclose(f); } };
          w(base + ".transcript", transcript); w(base + ".ours", ours); w(base + ".real", real);
          std::string a, b; for (auto& x : names) a += x + "\n"; for (auto& x : cmds) b += x + "\n";
          w(base + ".names", a); w(base + ".cmds", b);
        }
        Share rf = files_kept(names, real), rc = commands_kept(cmds, real);
        Share of = files_kept(names, ours), oc = commands_kept(cmds, ours);
        bool ok = ours.size() <= real.size() && of.pct() >= 80.0 && oc.pct() >= 50.0;
        all_ok = all_ok && ok;
        std::printf("%-38s %9zu %9zu %5.1f%% | %3zu/%-3zu = %5.1f%% %3zu/%-3zu = %5.1f%% | %9zu %3zu/%-3zu = %5.1f%% %3zu/%-3zu = %5.1f%% %s\n",
                    session.substr(0, 38).c_str(), covered_bytes, real.size(),
                    covered_bytes ? 100.0 * static_cast<double>(real.size()) / static_cast<double>(covered_bytes) : 0.0,
                    rf.kept, rf.total, rf.pct(), rc.kept, rc.total, rc.pct(), ours.size(), of.kept, of.total, of.pct(),
                    oc.kept, oc.total, oc.pct(), ok ? "target met" : "TARGET MISSED");
      }
    }
    std::printf("target: ctxfold keeps >= 80%% of file names and >= 50%% of commands at <= the real summary's bytes\n");
    return all_ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "ctxfold-retention: %s\n", e.what());
    return 4;
  }
}
