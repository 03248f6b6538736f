// ctxfold-retention: how good a compaction summary is for the history it covers, for a real
// agent's own summary (the anchor: Claude Code's, Codex's) and for ctxfold's extractive
// summarizer given no more bytes than the anchor (issue 10, issue 26 item 2; driven by
// bench/retention.sh; bench/README.md "Retention" states the rules).
//
// For every summary imported from the agent (origin "import") in the named sessions, over the
// nodes it covers:
//   recall     files    distinct file names (last component) of the real paths: tool-argument
//                       paths and paths written in user or assistant text (model/identifiers.hpp
//                       tool_argument_paths, scan_prose_paths); kept when the summary contains the name;
//              commands distinct tool-call commands (whitespace collapsed); kept when the collapsed
//                       summary contains the command's first 60 bytes (all of it when shorter);
//              errors   distinct error lines of failed tool results (first line not "Exit code N",
//                       up to a line break, literal "\n" included, collapsed); kept when the
//                       summary contains its first 60 bytes;
//              ids      distinct `backticked` one-word names of user or assistant text; kept verbatim.
//   precision  the share of the paths the summary lists (model/identifiers.hpp scan_paths_and_urls
//              over the summary, "dir/{a, b}" expanded) and of its `backticked` one-word names that
//              are real: the path occurs in the covered history's tool arguments, commands, user or
//              assistant text, not right after '<' and not cut inside a name; the name occurs
//              anywhere in the covered history.
//   requests   the share of real user requests (model/user_text.hpp classify_user_node == request)
//              represented: >= 60% of its first 12 distinct content words appear in the summary.
//   outcomes   the share of completed turns (a request whose last assistant message ends with text)
//              whose end-of-turn statement is represented: >= 50% of its first 12 content words.
//   plan       the last TodoWrite / update_plan: >= 50% of its items represented (60% of words); "-" when none.
//   next       the next step: the plan's first unfinished item, else the covered history's last
//              assistant statement: >= 50% of its first 12 content words.
// ctxfold's summary: ExtractiveSummarizer over the covered nodes' transcript (rendered with the
// summarizer's own transcript_options, as compact does; one call) with max_output_tokens = anchor
// bytes / 4. RETENTION_DUMP=DIR writes each transcript and summary there; RETENTION_ALSO=LABEL=DIR
// scores DIR/<session 8>.ours as one more summarizer (another build's dump, to compare).
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/identifiers.hpp"
#include "model/user_text.hpp"
#include "session/open.hpp"
#include "store/store.hpp"
#include "summarize/extractive.hpp"
#include "summarize/transcript.hpp"
#include "util/error.hpp"

using namespace ctxfold;

namespace {

std::string base_name(std::string p) {
  while (!p.empty() && p.back() == '/') p.pop_back();
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

struct Share {
  std::size_t kept = 0, total = 0;
  double pct() const { return total ? 100.0 * static_cast<double>(kept) / static_cast<double>(total) : 100.0; }
  std::string str() const { return total ? fmt::format("{}/{} {:.0f}%", kept, total, pct()) : "-"; }
  void add(const Share& o) { kept += o.kept, total += o.total; }
};

std::string text_of(const Node& n) {
  std::string out;
  if (n.content.is_string()) return n.content.get<std::string>();
  for (const auto& b : n.content)
    if (b.is_object() && json_str(b, "type") == "text") out += json_str(b, "text") + "\n";
  return out;
}

const std::set<std::string>& stopwords() {
  static const std::set<std::string> s = {"this", "that", "with", "from", "have", "will", "then", "than", "them",
                                          "they", "there", "their", "what", "when", "which", "while", "into",
                                          "also", "just", "only", "some", "each", "more", "been", "were", "your",
                                          "about", "would", "could", "should", "these", "those", "here", "does",
                                          "done", "make", "sure", "let's", "like", "need", "now,", "okay"};
  return s;
}

/// The first `n` distinct content words (lower case, 4+ characters of letters, digits, '_', '-',
/// '.', not stop words).
std::vector<std::string> content_words(const std::string& text, std::size_t n) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string w;
  auto flush = [&] {
    while (!w.empty() && (w.back() == '.' || w.back() == '-')) w.pop_back();
    if (w.size() >= 4 && !stopwords().count(w) && seen.insert(w).second && out.size() < n) out.push_back(w);
    w.clear();
  };
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || c == '-' || c == '.' || u >= 0x80) w.push_back(static_cast<char>(std::tolower(u)));
    else flush();
  }
  flush();
  return out;
}

/// Whether text is represented in the summary: the share of its content words present >= share.
bool represented(const std::string& text, const std::set<std::string>& summary_words, double share) {
  auto ws = content_words(text, 12);
  if (ws.empty()) return true;
  std::size_t hit = 0;
  for (const auto& w : ws) hit += summary_words.count(w);
  return static_cast<double>(hit) >= share * static_cast<double>(ws.size()) - 1e-9;
}

std::set<std::string> word_set(const std::string& text) {
  auto ws = content_words(text, static_cast<std::size_t>(-1));
  return {ws.begin(), ws.end()};
}

std::string head60(const std::string& s) { return s.substr(0, std::min<std::size_t>(s.size(), 60)); }

/// What the covered history holds: the truth a summary is scored against.
struct Truth {
  std::set<std::string> files, commands, errors, ids;
  std::vector<std::string> requests, outcomes;
  std::vector<std::string> plan;
  std::string next;
  std::string real_text;  // tool arguments, commands, user and assistant text
  std::string all_text;   // everything, for backticked names
  std::string transcript;
  std::size_t covered_bytes = 0;
};

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '~' || c == '+' ||
         static_cast<unsigned char>(c) >= 0x80;
}

/// The path occurs in real_text not right after '<' and not cut inside a name.
bool real_path(const std::string& real_text, const std::string& p) {
  for (std::size_t at = real_text.find(p); at != std::string::npos; at = real_text.find(p, at + 1)) {
    if (at > 0 && real_text[at - 1] == '<') continue;
    std::size_t end = at + p.size();
    if (p.back() != '/' && end < real_text.size() && path_char(real_text[end])) continue;
    return true;
  }
  return false;
}

void scan_backticks(const std::string& text, const std::function<void(std::string)>& on) {
  std::size_t p = 0;
  while ((p = text.find('`', p)) != std::string::npos) {
    std::size_t q = text.find('`', p + 1);
    if (q == std::string::npos) break;
    std::string span = text.substr(p + 1, q - p - 1);
    if (!span.empty() && span.size() <= 80 && span.find_first_of(" \n") == std::string::npos) on(span);
    p = q + 1;
  }
}

void for_each_line(const std::string& text, const std::function<void(std::string_view)>& on) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    on(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
  }
}

std::string error_line(const std::string& result) {
  std::string out;
  for_each_line(result, [&](std::string_view l) {
    std::string c = collapse_space(l);
    if (std::size_t esc = c.find("\\n"); esc != std::string::npos) c.resize(esc);  // an escaped line break
    if (out.empty() && !c.empty() && c.rfind("Exit code", 0) != 0) out = c;
  });
  return out;
}

void read_assistant(const Node& n, Truth& t, std::string& last_text, bool& text_last) {
  for (const auto& b : n.content) {
    if (!b.is_object()) continue;
    std::string type = json_str(b, "type");
    if (type == "text") {
      std::string s = json_str(b, "text");
      if (collapse_space(s).empty()) continue;
      last_text = s;
      text_last = true;
      t.real_text += s + "\n";
      for_each_line(s, [&](std::string_view l) {
        scan_prose_paths(l, [&](std::string_view p) { t.files.insert(base_name(std::string(p))); }, [](std::string_view) {});
      });
      scan_backticks(s, [&](std::string v) { t.ids.insert(v); });
    } else if (type == "tool_use" && b.contains("input")) {
      text_last = false;
      const Json& in = b["input"];
      tool_argument_paths(in, [&](std::string_view p) {
        t.files.insert(base_name(std::string(p)));
        t.real_text += std::string(p) + "\n";
      });
      std::string c = tool_command(in);
      if (!c.empty()) t.commands.insert(c), t.real_text += c + "\n";
      if (in.is_object())
        for (const char* key : {"todos", "plan"})
          if (auto it = in.find(key); it != in.end() && it->is_array()) {
            t.plan.clear();
            t.next.clear();
            for (const auto& item : *it) {
              std::string s = json_str(item, "content").empty() ? json_str(item, "step") : json_str(item, "content");
              t.plan.push_back(s);
              if (t.next.empty() && json_str(item, "status") != "completed") t.next = s;
            }
          }
    }
  }
}

Truth read_truth(Store& st, const Node& v) {
  Truth t;
  std::string last_text;
  bool text_last = false, in_turn = false;
  auto end_turn = [&] {
    if (in_turn && text_last && !last_text.empty()) t.outcomes.push_back(last_text);
  };
  for (const std::string& id : st.covers_of(v.seq)) {
    auto n = st.node(id, false);
    if (!n) continue;
    t.covered_bytes += node_text(*n).size();
    t.all_text += dump_json(n->content) + "\n";
    std::string tr = node_transcript(*n, ExtractiveSummarizer::extractive_transcript_options());
    if (!tr.empty()) t.transcript += (t.transcript.empty() ? "" : "\n\n") + tr;
    if (n->kind != kind::kMessage) continue;
    if (n->role == role::kAssistant) {
      read_assistant(*n, t, last_text, text_last);
    } else if (n->role == role::kUser && classify_user_node(*n) == UserTextClass::request) {
      end_turn();
      in_turn = true, text_last = false, last_text.clear();
      std::string s = text_of(*n);
      t.requests.push_back(s);
      t.real_text += s + "\n";
      for_each_line(s, [&](std::string_view l) {
        scan_prose_paths(l, [&](std::string_view p) { t.files.insert(base_name(std::string(p))); }, [](std::string_view) {});
      });
      scan_backticks(s, [&](std::string x) { t.ids.insert(x); });
    }
    for (const auto& b : n->content)
      if (b.is_object() && json_str(b, "type") == "tool_result") {
        Node tmp;
        tmp.content = Json::array({b});
        std::string r = node_text(tmp);
        bool err = b.value("is_error", false) == true;
        if (!err && r.rfind("Exit code ", 0) == 0 && r.rfind("Exit code 0", 0) != 0) err = true;
        if (err) {
          std::string e = error_line(r);
          if (!e.empty()) t.errors.insert(head60(e));
        }
      }
  }
  end_turn();
  if (t.next.empty()) t.next = last_text;
  t.files.erase("");
  return t;
}

struct Score {
  std::string label;
  std::size_t bytes = 0;
  Share files, commands, errors, ids, precision, requests, outcomes, plan;
  bool next = false;
  Share recall() const {
    Share s;
    s.add(files), s.add(commands), s.add(errors), s.add(ids);
    return s;
  }
};

Score score(const std::string& label, const std::string& summary, const Truth& t) {
  Score s;
  s.label = label;
  s.bytes = summary.size();
  const std::string flat = collapse_space(summary);
  for (const auto& f : t.files) s.files.total++, s.files.kept += summary.find(f) != std::string::npos;
  for (const auto& c : t.commands) s.commands.total++, s.commands.kept += flat.find(head60(c)) != std::string::npos;
  for (const auto& e : t.errors) s.errors.total++, s.errors.kept += flat.find(e) != std::string::npos;
  for (const auto& i : t.ids) s.ids.total++, s.ids.kept += summary.find(i) != std::string::npos;
  std::set<std::string> listed_paths, listed_ids;
  for_each_line(summary, [&](std::string_view l) {
    scan_paths_and_urls(
        l,
        [&](std::string_view p) {
          std::string ps(p);
          if (auto open = ps.find("/{"); open != std::string::npos) ps = ps.substr(0, open + 1);  // "dir/{a, b}": the dir
          listed_paths.insert(ps);
        },
        [](std::string_view) {});
  });
  scan_backticks(summary, [&](std::string x) {
    if (x.find('/') == std::string::npos) listed_ids.insert(x);
  });
  for (const auto& p : listed_paths) s.precision.total++, s.precision.kept += real_path(t.real_text, p);
  for (const auto& i : listed_ids) s.precision.total++, s.precision.kept += t.all_text.find(i) != std::string::npos;
  const std::set<std::string> words = word_set(summary);
  for (const auto& r : t.requests) s.requests.total++, s.requests.kept += represented(r, words, 0.6);
  for (const auto& o : t.outcomes) s.outcomes.total++, s.outcomes.kept += represented(o, words, 0.5);
  for (const auto& p : t.plan) s.plan.total++, s.plan.kept += represented(p, words, 0.6);
  s.next = !t.next.empty() && represented(t.next, words, 0.5);
  return s;
}

void write_file(const std::string& p, const std::string& t) {
  std::ofstream(p, std::ios::binary) << t;
}

std::string read_whole(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void print_row(const std::string& session, const Score& s, std::size_t anchor) {
  std::printf("| %s | %s | %zu (%.2fx) | %s | %s | %s | %s | **%s** | **%s** | %s | %s | %s | %s |\n", session.c_str(),
              s.label.c_str(), s.bytes, anchor ? static_cast<double>(s.bytes) / static_cast<double>(anchor) : 0.0,
              s.files.str().c_str(), s.commands.str().c_str(), s.errors.str().c_str(), s.ids.str().c_str(),
              s.recall().str().c_str(), s.precision.str().c_str(), s.requests.str().c_str(), s.outcomes.str().c_str(),
              s.plan.str().c_str(), s.next ? "yes" : "no");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: ctxfold-retention DB SESSION...\n");
    return 2;
  }
  try {
    Store st = open_store(argv[1], Store::Mode::read_only);
    std::string also_label, also_dir;
    if (const char* a = std::getenv("RETENTION_ALSO")) {
      std::string s = a;
      auto eq = s.find('=');
      if (eq != std::string::npos) also_label = s.substr(0, eq), also_dir = s.substr(eq + 1);
    }
    std::printf("| session | summary | bytes (x anchor) | files | commands | errors | ids | recall | precision | "
                "requests | outcomes | plan | next step |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    bool all_ok = true;
    for (int a = 2; a < argc; ++a) {
      const std::string session = argv[a];
      const std::string sid = session.substr(0, 8);
      for (const Node& v : st.view_nodes(session, kind::kSummary)) {
        if (v.metadata.value("origin", "") != "import") continue;
        const std::string anchor = node_text(v);
        Truth t = read_truth(st, v);
        const bool codex = v.metadata.contains("replacement_history");
        ExtractiveSummarizer ex;
        SummaryRequest req;
        req.transcript = t.transcript;
        req.max_output_tokens = static_cast<std::int64_t>(anchor.size() / 4);
        const std::string ours = ex.summarize(req).text;
        if (const char* d = std::getenv("RETENTION_DUMP")) {
          std::string base = std::string(d) + "/" + sid;
          write_file(base + ".transcript", t.transcript);
          write_file(base + ".ours", ours);
          write_file(base + ".real", anchor);
        }
        Score real = score(codex ? "Codex's own (anchor)" : "Claude Code's own (anchor)", anchor, t);
        Score mine = score("ctxfold extractive", ours, t);
        print_row(sid, real, anchor.size());
        print_row(sid, mine, anchor.size());
        if (!also_dir.empty()) {
          std::string other = read_whole(also_dir + "/" + sid + ".ours");
          if (!other.empty()) print_row(sid, score(also_label, other, t), anchor.size());
        }
        if (!codex) {
          bool ok = mine.bytes <= anchor.size() && mine.recall().pct() >= 80.0 && mine.precision.pct() >= 95.0 &&
                    mine.requests.pct() >= 90.0 && mine.outcomes.pct() >= 90.0 && mine.next &&
                    (t.plan.empty() || mine.plan.pct() >= 50.0);
          all_ok = all_ok && ok;
          std::fprintf(stderr, "%s: %s (covered %zu B)\n", sid.c_str(), ok ? "target met" : "TARGET MISSED",
                       t.covered_bytes);
        }
      }
    }
    std::printf("\ntarget (Claude Code sessions): ctxfold at <= the anchor's bytes with recall >= 80%%, precision >= "
                "95%%, requests and outcomes >= 90%%, the next step (and the plan, when there is one) present\n");
    return all_ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "ctxfold-retention: %s\n", e.what());
    return 4;
  }
}
