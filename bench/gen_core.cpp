#include "gen_core.hpp"
#include "gen_util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace ctxfold::gen {

namespace {

using OJson = nlohmann::ordered_json;
using namespace detail;

// ---------------------------------------------------------------------------------------------
// Compiled sources.

enum class SlotKind : std::uint8_t { id, parent, session, ts };

struct Slot {
  SlotKind kind = SlotKind::id;
  bool main = false;              // parent: the line is on the main chain (not a sidechain)
  std::uint32_t arg = 0;          // id/parent: dict index; ts: day index
  std::int32_t parent_line = -1;  // parent: line index of the parent in its file; -1 = the anchor
  std::uint32_t rest_off = 0, rest_len = 0;  // ts: what follows the date, in File::text
};

struct Piece {
  std::uint32_t off = 0, len = 0;
  std::int32_t slot = -1;
};

struct Line {
  std::uint32_t piece_begin = 0, piece_end = 0;
  bool counted = false;    // carries a uuid: one node of the ledger
  bool sidechain = false;
  bool candidate = false;  // a conversation-unit start a compaction may cut before
  std::int32_t open_delta = 0;   // answered tool_uses it opens minus the results it closes
  std::int32_t parent_slot = -1;
  std::int32_t uuid_idx = -1;
};

struct File {
  std::string name;
  std::string text;
  std::vector<Piece> pieces;
  std::vector<Slot> slots;
  std::vector<Line> lines;
  std::vector<std::string> dict;  // old ids, by index
  std::vector<std::int64_t> days;
  std::int32_t tail_leaf = -1;    // the last main-chain node: what the next replay hangs off
  std::uint64_t counted = 0;
  // per-segment state
  std::vector<std::string> cur_ids;
  std::vector<std::array<char, 11>> cur_dates;
};

const std::unordered_set<std::string>& id_keys() {
  static const std::unordered_set<std::string> k = {
      "uuid",    "parentUuid", "logicalParentUuid", "sourceToolAssistantUUID", "leafUuid",   "messageId",
      "toolUseID", "parentToolUseID", "sourceToolUseID",         "tool_use_id", "requestId"};
  return k;
}

bool is_remapped_id(const std::string& v) {
  return v.rfind("toolu_", 0) == 0 || v.rfind("srvtoolu_", 0) == 0 || v.rfind("msg_", 0) == 0;
}

class Compiler {
 public:
  Compiler(std::string name, GenStats& stats, bool text_dense = false, std::size_t short_text = 0)
      : text_dense_(text_dense || short_text > 0), short_text_(short_text), stats_(stats) {
    f_.name = std::move(name);
  }

  File compile(const std::vector<std::string>& raw) {
    std::vector<OJson> docs;
    docs.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      std::string_view s = raw[i];
      while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
      if (s.empty()) continue;
      try {
        OJson j = OJson::parse(s);
        if (!j.is_object()) throw std::runtime_error("not an object");
        if (text_dense_) strip_unsearchable(j);
        if (short_text_ > 0)
          if (auto m = j.find("message"); m != j.end()) cut_strings(*m, short_text_);
        docs.push_back(std::move(j));
      } catch (const std::exception& e) {
        stats_.warnings.push_back(f_.name + ":" + std::to_string(i + 1) + ": skipped: " + e.what());
      }
    }
    stats_.source_lines += docs.size();

    // Existing compactions are folded away so the replay is one linear conversation: the
    // boundary's children hang off its logicalParentUuid, the summary's off the boundary's.
    std::unordered_map<std::string, std::optional<std::string>> redirect;
    std::vector<bool> keep(docs.size(), true);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const OJson& j = docs[i];
      const std::string type = j.value("type", "");
      const std::string uuid = str(j, "uuid");
      bool boundary = type == "system" && j.value("subtype", "") == "compact_boundary";
      bool summary = type == "user" && j.value("isCompactSummary", false);
      if ((boundary || summary) && !uuid.empty()) {
        keep[i] = false;
        std::string via = str(j, boundary ? "logicalParentUuid" : "parentUuid");
        redirect[uuid] = via.empty() ? std::nullopt : std::optional<std::string>(via);
      }
    }
    auto resolve = [&](std::optional<std::string> p) {
      for (int hop = 0; p && hop < 64; ++hop) {
        auto it = redirect.find(*p);
        if (it == redirect.end()) break;
        p = it->second;
      }
      return p;
    };

    std::unordered_map<std::string, std::int32_t> line_of;  // uuid -> kept line index
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (!keep[i]) continue;
      std::string uuid = str(docs[i], "uuid");
      if (!uuid.empty()) line_of.emplace(uuid, static_cast<std::int32_t>(kept.size()));
      kept.push_back(i);
    }
    // Title lines (`summary`) whose leaf is not in this file would dangle: dropped.
    {
      std::vector<std::size_t> k2;
      for (std::size_t i : kept) {
        const OJson& j = docs[i];
        if (j.value("type", "") == "summary" && !j.contains("uuid")) {
          auto leaf = resolve(opt_str(j, "leafUuid"));
          if (!leaf || !line_of.count(*leaf)) continue;
        }
        k2.push_back(i);
      }
      if (k2.size() != kept.size()) {
        kept.swap(k2);
        line_of.clear();
        for (std::size_t li = 0; li < kept.size(); ++li) {
          std::string uuid = str(docs[kept[li]], "uuid");
          if (!uuid.empty()) line_of.emplace(uuid, static_cast<std::int32_t>(li));
        }
      }
    }

    // Tool pairing inside this file: only calls answered here count as open.
    std::unordered_set<std::string> uses, results;
    for (std::size_t i : kept) {
      for_blocks(docs[i], [&](const OJson& b) {
        std::string t = b.value("type", "");
        if ((t == "tool_use" || t == "server_tool_use") && b.contains("id") && b["id"].is_string())
          uses.insert(b["id"].get<std::string>());
        if (t == "tool_result" && b.contains("tool_use_id") && b["tool_use_id"].is_string())
          results.insert(b["tool_use_id"].get<std::string>());
      });
    }

    std::string last_msg_id;
    char last_main = 0;  // 'p' prompt, 'r' tool result, 'a' assistant
    f_.lines.reserve(kept.size());
    for (std::size_t li = 0; li < kept.size(); ++li) {
      OJson& j = docs[kept[li]];
      Line line;
      const std::string type = j.value("type", "");
      line.counted = j.contains("uuid") && j["uuid"].is_string();
      line.sidechain = j.value("isSidechain", false);
      if (line.counted) {
        ++f_.counted;
        if (!line.sidechain) f_.tail_leaf = static_cast<std::int32_t>(li);
      }

      // pairing and unit boundaries
      int opened = 0, closed = 0;
      bool has_result = false;
      for_blocks(j, [&](const OJson& b) {
        std::string t = b.value("type", "");
        if ((t == "tool_use" || t == "server_tool_use") && b.contains("id") && b["id"].is_string() &&
            results.count(b["id"].get<std::string>()))
          ++opened;
        if (t == "tool_result") {
          has_result = true;
          if (b.contains("tool_use_id") && b["tool_use_id"].is_string() &&
              uses.count(b["tool_use_id"].get<std::string>()))
            ++closed;
        }
      });
      line.open_delta = opened - closed;
      if (line.counted && !line.sidechain) {
        if (type == "user") {
          bool meta = j.value("isMeta", false);
          if (has_result) {
            last_main = 'r';
          } else if (!meta) {
            line.candidate = true;
            last_main = 'p';
          }
        } else if (type == "assistant") {
          std::string mid;
          if (j.contains("message") && j["message"].is_object()) mid = str(j["message"], "id");
          if (mid != last_msg_id && last_main == 'r') line.candidate = true;
          last_msg_id = mid;
          last_main = 'a';
        }
      }

      // parent link
      if (line.counted && j.contains("parentUuid")) {
        auto parent = resolve(opt_str(j, "parentUuid"));
        auto it = parent ? line_of.find(*parent) : line_of.end();
        bool known = it != line_of.end() && it->second < static_cast<std::int32_t>(li);
        if (line.sidechain) {
          if (known) {
            j["parentUuid"] = placeholder(add_parent(*parent, it->second, false));
          } else {
            j["parentUuid"] = nullptr;  // a sidechain root, or one whose parent is not here
          }
        } else {
          int slot = known ? add_parent(*parent, it->second, true) : add_parent({}, -1, true);
          line.parent_slot = slot;
          j["parentUuid"] = placeholder(slot);
        }
      }
      if (line.counted) line.uuid_idx = static_cast<std::int32_t>(dict_index(j["uuid"].get<std::string>()));
      walk(j, resolve, true);

      std::string dumped = j.dump(-1, ' ', false, OJson::error_handler_t::replace);
      line.piece_begin = static_cast<std::uint32_t>(f_.pieces.size());
      split(dumped);
      add_literal("\n");
      line.piece_end = static_cast<std::uint32_t>(f_.pieces.size());
      f_.lines.push_back(line);
    }
    return std::move(f_);
  }

 private:
  static std::string str(const OJson& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  static std::optional<std::string> opt_str(const OJson& j, const char* key) {
    auto it = j.find(key);
    if (it != j.end() && it->is_string()) return it->get<std::string>();
    return std::nullopt;
  }
  template <class Fn>
  static void for_blocks(const OJson& j, Fn fn) {
    auto m = j.find("message");
    if (m == j.end() || !m->is_object()) return;
    auto c = m->find("content");
    if (c == m->end() || !c->is_array()) return;
    for (const OJson& b : *c)
      if (b.is_object()) fn(b);
  }

  std::uint32_t dict_index(const std::string& old) {
    auto [it, inserted] = dict_.emplace(old, static_cast<std::uint32_t>(f_.dict.size()));
    if (inserted) f_.dict.push_back(old);
    return it->second;
  }
  static std::string placeholder(int slot) { return "@@CFG" + std::to_string(slot) + "@@"; }
  int add_slot(Slot s) {
    f_.slots.push_back(s);
    return static_cast<int>(f_.slots.size() - 1);
  }
  int add_parent(const std::string& parent, std::int32_t parent_line, bool main) {
    Slot s;
    s.kind = SlotKind::parent;
    s.main = main;
    s.parent_line = parent_line;
    if (parent_line >= 0) s.arg = dict_index(parent);
    return add_slot(s);
  }

  template <class Resolve>
  void walk(OJson& v, const Resolve& resolve, bool top) {
    if (v.is_array()) {
      for (OJson& e : v) walk(e, resolve, false);
      return;
    }
    if (!v.is_object()) return;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& key = it.key();
      OJson& val = it.value();
      if (top && key == "parentUuid") continue;  // done by the caller
      if (val.is_string()) {
        const std::string& s = val.get_ref<const std::string&>();
        if (key == "sessionId") {
          Slot sl;
          sl.kind = SlotKind::session;
          val = placeholder(add_slot(sl));
        } else if (id_keys().count(key) || (key == "id" && is_remapped_id(s))) {
          auto r = resolve(std::optional<std::string>(s));
          if (!r) {
            val = nullptr;
          } else {
            Slot sl;
            sl.kind = SlotKind::id;
            sl.arg = dict_index(*r);
            val = placeholder(add_slot(sl));
          }
        } else if (key == "timestamp") {
          if (auto d = iso_days(s)) {
            Slot sl;
            sl.kind = SlotKind::ts;
            auto [di, ins] = day_.emplace(*d, static_cast<std::uint32_t>(f_.days.size()));
            if (ins) f_.days.push_back(*d);
            sl.arg = di->second;
            sl.rest_off = static_cast<std::uint32_t>(f_.text.size());
            sl.rest_len = static_cast<std::uint32_t>(s.size() - 10);
            f_.text.append(s, 10, std::string::npos);
            val = placeholder(add_slot(sl));
          }
        }
      } else if (val.is_structured()) {
        walk(val, resolve, false);
      }
    }
  }

  void add_literal(std::string_view s) {
    if (s.empty()) return;
    Piece p;
    p.off = static_cast<std::uint32_t>(f_.text.size());
    p.len = static_cast<std::uint32_t>(s.size());
    f_.text.append(s);
    f_.pieces.push_back(p);
  }
  void split(const std::string& d) {
    static constexpr std::string_view kOpen = "\"@@CFG";
    std::size_t from = 0;
    while (true) {
      std::size_t p = d.find(kOpen, from);
      if (p == std::string::npos) break;
      std::size_t q = p + kOpen.size();
      std::size_t n = 0;
      int slot = 0;
      while (q + n < d.size() && d[q + n] >= '0' && d[q + n] <= '9') slot = slot * 10 + (d[q + n++] - '0');
      if (n == 0 || d.compare(q + n, 3, "@@\"") != 0 || slot >= static_cast<int>(f_.slots.size())) {
        from = q;  // not ours (source text that happens to look like a placeholder)
        continue;
      }
      add_literal(std::string_view(d).substr(from, p - from));
      Piece pc;
      pc.slot = slot;
      f_.pieces.push_back(pc);
      from = q + n + 3;
    }
    add_literal(std::string_view(d).substr(from));
  }

  bool text_dense_ = false;
  std::size_t short_text_ = 0;

  /// --short: every string in v longer than n bytes cut to its first n, backing off to the start
  /// of a UTF-8 character so the line stays valid.
  static void cut_strings(OJson& v, std::size_t n) {
    if (v.is_string()) {
      std::string& s = v.get_ref<std::string&>();
      if (s.size() <= n) return;
      std::size_t at = n;
      while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
      s.resize(at);
    } else if (v.is_structured()) {
      for (auto& c : v) cut_strings(c, n);
    }
  }

  /// --text-dense: removes thinking, redacted_thinking and image blocks and toolUseResult.
  static void strip_unsearchable(OJson& j) {
    j.erase("toolUseResult");
    auto m = j.find("message");
    if (m == j.end() || !m->is_object()) return;
    auto c = m->find("content");
    if (c == m->end() || !c->is_array()) return;
    OJson kept = OJson::array();
    for (auto& b : *c) {
      const std::string t = b.is_object() ? b.value("type", "") : "";
      if (t == "thinking" || t == "redacted_thinking" || t == "image") continue;
      kept.push_back(std::move(b));
    }
    if (kept.empty()) kept.push_back(OJson{{"type", "text"}, {"text", "(thinking)"}});
    *c = std::move(kept);
  }
  GenStats& stats_;
  File f_;
  std::unordered_map<std::string, std::uint32_t> dict_;
  std::unordered_map<std::int64_t, std::uint32_t> day_;
};

std::string summary_text(std::uint64_t covered) {
  std::string s =
      "This session is being continued from a previous conversation that ran out of context. The "
      "conversation is summarized below:\nAnalysis:\nThe conversation (" +
      std::to_string(covered) +
      " transcript records, generated by ctxfold-gen for benchmarking) alternated user requests, "
      "assistant reasoning, and tool calls (Bash, Read, Edit, Grep, WebSearch, Task) with their results.\n\n"
      "Summary:\n1. Primary Request and Intent:\n   The user asked for a series of changes to a web "
      "application and its build, one request at a time, each verified by running the tests.\n"
      "2. Key Technical Concepts:\n   - Phoenix / Elixir server start-up, mix tasks, hooks\n"
      "   - Parallel tool calls and tool results\n   - Background agents and task notifications\n"
      "3. Files and Code Sections:\n   - lib/app/server.ex: start-up configuration was read and edited.\n"
      "   - config/dev.exs: port and watcher settings were inspected.\n"
      "4. Errors and fixes:\n   - A server that did not start: missing dependency fetched, then fixed.\n"
      "5. Problem Solving:\n   All requested changes were made and verified; no request is pending.\n"
      "6. All user messages:\n   - (elided by the generator)\n"
      "7. Pending Tasks:\n   - None.\n"
      "8. Current Work:\n   Continuing with the next request.\n"
      "9. Optional Next Step:\n   Wait for the user's next message.\n\n"
      "If you need specific details from before compaction (like exact code snippets, error messages, or "
      "content you generated), read the full transcript at: /home/USER/.claude/projects/bench/transcript.jsonl";
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::vector<std::string> default_sources(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_directory() && it->path().filename() == "subagents") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".jsonl") out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
struct Turn {
  const char* prompt;
  const char* thinking;
  const char* cmd;
  const char* stdout_text;
  const char* file;
  const char* file_text;
  const char* answer;
};
std::vector<std::string> turns_source(const std::vector<Turn>& turns, std::uint64_t key, const char* slug);
}  // namespace

std::vector<std::string> cjk_source() {
  static const std::vector<Turn> turns = {
      {"飞书机器人的消息推送失败了，帮我看看日志",
       "用户说飞书推送失败。先读日志，找到错误再改代码。",
       "tail -n 20 logs/feishu_bot.log",
       "2025-06-02 10:00:01 ERROR 飞书 webhook 返回 403：签名校验失败\n2025-06-02 10:00:02 INFO 重试第 1 次\n2025-06-02 10:00:05 ERROR 飞书 webhook 返回 403：签名校验失败",
       "/home/USER/projects/bot/config.yaml",
       "     1\twebhook: https://open.feishu.example/hook/XXXX\n     2\tsecret: ${FEISHU_SECRET}\n     3\t# 签名密钥从环境变量读取，不要写进仓库\n",
       "签名校验失败是因为密钥没有从环境变量读取。我修正了配置加载，重跑gen-itgc后飞书推送恢复正常。"},
      {"テストが失敗する原因を調べてください",
       "テストの失敗。まずテストを実行してエラーを読む。",
       "ctest --test-dir build --output-on-failure 2>&1 | tail -8",
       "1/2 Test #1: 文字列処理 .......   Passed    0.01 sec\n2/2 Test #2: 日付変換 .........***Failed    0.02 sec\n期待値: 2025年6月2日\n実際: 2025年6月1日",
       "/home/USER/projects/app/src/date.cpp",
       "    10\t// タイムゾーンを考慮せずに日付を変換している\n    11\tauto d = to_date(utc_seconds);\n",
       "日付変換がタイムゾーンを無視していました。ローカル時刻に直してから変換するように修正し、テストは全て通りました。"},
      {"빌드가 실패합니다. 로그를 확인해 주세요",
       "빌드 실패. 먼저 빌드 로그를 읽는다.",
       "cmake --build build 2>&1 | tail -5",
       "src/한글.cpp:3:10: fatal error: 헤더 파일을 찾을 수 없습니다\n빌드 실패",
       "/home/USER/projects/app/CMakeLists.txt",
       "     1\t# 한글 주석: include 경로 누락\n     2\tadd_executable(app src/main.cpp)\n",
       "include 경로가 빠져 있었습니다. target_include_directories를 추가했고 빌드가 성공합니다."},
  };
  return turns_source(turns, 0xC7C, "quiet-cjk-river");
}

std::vector<std::string> synthetic_source() {
  static const std::vector<Turn> turns = {
      {"the build fails on a fresh clone, can you look?",
       "The user reports a failing build. I should run the build and read the error before changing anything.",
       "cmake -S . -B build && cmake --build build -j2 2>&1 | tail -20",
       "[ 42%] Building CXX object CMakeFiles/app.dir/src/main.cpp.o\nsrc/main.cpp:12:10: fatal error: fmt/format.h: No such file or directory\n   12 | #include <fmt/format.h>\n      |          ^~~~~~~~~~~~~~\ncompilation terminated.",
       "/home/USER/projects/app/CMakeLists.txt",
       "     1\tcmake_minimum_required(VERSION 3.20)\n     2\tproject(app CXX)\n     3\tset(CMAKE_CXX_STANDARD 20)\n     4\tadd_executable(app src/main.cpp)\n",
       "The build fails because `fmt` is included but never found or linked. I added `find_package(fmt REQUIRED)` and linked `fmt::fmt`; the build now passes."},
      {"now add a --verbose flag that prints each step",
       "A new flag. Let me look at how options are parsed today.",
       "grep -n 'add_option\\|add_flag' src/*.cpp",
       "src/main.cpp:31:  app.add_option(\"--input\", input, \"input file\");\nsrc/main.cpp:32:  app.add_option(\"--jobs\", jobs, \"parallel jobs\");",
       "/home/USER/projects/app/src/main.cpp",
       "    28\tint main(int argc, char** argv) {\n    29\t  CLI::App app{\"app\"};\n    30\t  std::string input;\n    31\t  app.add_option(\"--input\", input, \"input file\");\n    32\t  app.add_option(\"--jobs\", jobs, \"parallel jobs\");\n    33\t  CLI11_PARSE(app, argc, argv);\n",
       "Added `--verbose` (a CLI11 flag) and a `log_step()` helper that prints to stderr only when it is set."},
      {"run the tests please",
       "Run the test suite and report failures, if any.",
       "ctest --test-dir build --output-on-failure 2>&1 | tail -15",
       "Test project /home/USER/projects/app/build\n    Start 1: parse_args\n1/3 Test #1: parse_args .......................   Passed    0.01 sec\n    Start 2: io\n2/3 Test #2: io ...............................   Passed    0.02 sec\n    Start 3: verbose\n3/3 Test #3: verbose ..........................***Failed    0.01 sec\n\n67% tests passed, 1 tests failed out of 3",
       "/home/USER/projects/app/tests/verbose_test.cpp",
       "     1\t#include <gtest/gtest.h>\n     2\tTEST(Verbose, PrintsSteps) {\n     3\t  EXPECT_EQ(run({\"--verbose\"}).err, \"step 1\\nstep 2\\n\");\n     4\t}\n",
       "One test failed: it expects every step on stderr, but the first step was printed before the flag was parsed. Moved the first `log_step()` after parsing; all 3 tests pass."},
      {"what does the io module do when the file is missing?",
       "Read the io module and explain the missing-file path.",
       "ls -la src/ && wc -l src/io.cpp",
       "total 24\ndrwxr-xr-x 2 user user 4096 Jun  1 10:00 .\ndrwxr-xr-x 6 user user 4096 Jun  1 10:00 ..\n-rw-r--r-- 1 user user 2210 Jun  1 10:00 io.cpp\n-rw-r--r-- 1 user user 1840 Jun  1 10:00 main.cpp\n88 src/io.cpp",
       "/home/USER/projects/app/src/io.cpp",
       "    40\tstd::string read_all(const std::string& path) {\n    41\t  std::ifstream in(path, std::ios::binary);\n    42\t  if (!in) throw IoError(\"cannot open \" + path);\n    43\t  std::ostringstream ss;\n    44\t  ss << in.rdbuf();\n    45\t  return ss.str();\n    46\t}\n",
       "`read_all()` throws `IoError(\"cannot open PATH\")` when the file cannot be opened; `main` catches it and exits with status 2 and the message on stderr."},
  };
  return turns_source(turns, 0x5e7, "quiet-synthetic-river");
}

namespace {
std::vector<std::string> turns_source(const std::vector<Turn>& turns, std::uint64_t key, const char* slug) {
  std::vector<std::string> lines;
  int n = 0;
  std::int64_t t_ms = 0;
  auto uuid = [&] { return fresh_uuid(key_of(key, 0, static_cast<std::uint64_t>(n++))); };
  auto ts = [&] {
    t_ms += 1700;
    std::int64_t base_days = days_from_civil(2025, 6, 2);
    std::int64_t secs = 10 * 3600 + t_ms / 1000;
    char date[11];
    format_date(base_days + secs / 86400, date);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%sT%02d:%02d:%02d.%03dZ", date, static_cast<int>(secs % 86400 / 3600),
                  static_cast<int>(secs % 3600 / 60), static_cast<int>(secs % 60), static_cast<int>(t_ms % 1000));
    return std::string(buf);
  };
  const std::string session = fresh_uuid(key_of(key, 1, 0));
  auto envelope = [&](const std::optional<std::string>& parent, const char* type) {
    OJson j;
    j["parentUuid"] = parent ? OJson(*parent) : OJson(nullptr);
    j["isSidechain"] = false;
    j["userType"] = "external";
    j["cwd"] = "/home/USER/projects/app";
    j["sessionId"] = session;
    j["version"] = "2.1.39";
    j["gitBranch"] = "main";
    j["slug"] = slug;
    j["type"] = type;
    return j;
  };
  auto usage = [] {
    return OJson{{"input_tokens", 3},
                 {"cache_creation_input_tokens", 1200},
                 {"cache_read_input_tokens", 18000},
                 {"cache_creation", {{"ephemeral_5m_input_tokens", 0}, {"ephemeral_1h_input_tokens", 1200}}},
                 {"output_tokens", 9},
                 {"service_tier", "standard"}};
  };
  int msg = 0;
  auto assistant = [&](const std::string& parent, const std::string& msg_id, const std::string& req, OJson block) {
    OJson j = envelope(parent, "assistant");
    j["message"] = {{"model", "claude-opus-4-6"}, {"id", msg_id},          {"type", "message"},
                    {"role", "assistant"},        {"content", OJson::array({block})}, {"stop_reason", nullptr},
                    {"stop_sequence", nullptr},   {"usage", usage()}};
    j["requestId"] = req;
    std::string u = uuid();
    j["uuid"] = u;
    j["timestamp"] = ts();
    lines.push_back(j.dump());
    return u;
  };
  auto ids = [&](const char* prefix) {
    std::string s = std::string(prefix) + "01AAAAAAAAAAAAAAAAAAAAAA";
    std::string out;
    fresh_like(s, out, key_of(key, 2, static_cast<std::uint64_t>(msg++)));
    return out;
  };
  auto tool_round = [&](std::string parent, const std::string& msg_id, const std::string& req, const char* name,
                        OJson input, const std::string& result_text, OJson tool_use_result) {
    std::string tid = ids("toolu_");
    std::string call =
        assistant(parent, msg_id, req, {{"type", "tool_use"}, {"id", tid}, {"name", name}, {"input", input}});
    OJson p = envelope(call, "progress");
    p["data"] = {{"type", "hook_progress"}, {"hookEvent", "PostToolUse"}, {"hookName", std::string("PostToolUse:") + name},
                 {"command", "/home/USER/.claude/hooks/notify.sh"}};
    p["parentToolUseID"] = tid;
    p["toolUseID"] = tid;
    p["timestamp"] = ts();
    p["uuid"] = uuid();
    lines.push_back(p.dump());
    OJson r = envelope(call, "user");
    r["message"] = {{"role", "user"},
                    {"content", OJson::array({{{"tool_use_id", tid}, {"type", "tool_result"}, {"content", result_text},
                                               {"is_error", false}}})}};
    std::string u = uuid();
    r["uuid"] = u;
    r["timestamp"] = ts();
    r["toolUseResult"] = tool_use_result;
    r["sourceToolAssistantUUID"] = call;
    lines.push_back(r.dump());
    return u;
  };

  std::optional<std::string> prev;
  for (const Turn& t : turns) {
    OJson snap = {{"type", "file-history-snapshot"}};
    OJson u = envelope(prev, "user");
    std::string uid = uuid();
    u["message"] = {{"role", "user"}, {"content", t.prompt}};
    u["uuid"] = uid;
    u["timestamp"] = ts();
    u["permissionMode"] = "default";
    snap["messageId"] = uid;
    snap["snapshot"] = {{"messageId", uid}, {"trackedFileBackups", OJson::object()}, {"timestamp", u["timestamp"]}};
    snap["isSnapshotUpdate"] = false;
    lines.push_back(snap.dump());
    lines.push_back(u.dump());
    std::string m1 = ids("msg_"), r1 = ids("req_");
    std::string a = assistant(uid, m1, r1, {{"type", "text"}, {"text", "\n\n"}});
    a = assistant(a, m1, r1, {{"type", "thinking"}, {"thinking", t.thinking}, {"signature", "EqQBCkYIBxgCKkA" + ids("sig_")}});
    std::string res = tool_round(a, m1, r1, "Bash", {{"command", t.cmd}, {"description", "Run the command"}},
                                 t.stdout_text,
                                 {{"stdout", t.stdout_text}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}});
    std::string m2 = ids("msg_"), r2 = ids("req_");
    std::string file_text = t.file_text;
    res = tool_round(res, m2, r2, "Read", {{"file_path", t.file}}, file_text,
                     {{"type", "text"},
                      {"file", {{"filePath", t.file}, {"content", file_text}, {"numLines", 6}, {"startLine", 1}, {"totalLines", 88}}}});
    std::string m3 = ids("msg_"), r3 = ids("req_");
    a = assistant(res, m3, r3, {{"type", "text"}, {"text", t.answer}});
    OJson d = envelope(a, "system");
    d["subtype"] = "turn_duration";
    d["durationMs"] = 18450;
    d["timestamp"] = ts();
    std::string did = uuid();
    d["uuid"] = did;
    d["isMeta"] = false;
    lines.push_back(d.dump());
    prev = did;
  }
  return lines;
}
}  // namespace

GenStats generate(const GenOptions& opts, const std::function<void(std::string_view)>& out) {
  GenStats stats;
  std::vector<File> files;
  if (opts.synthetic) {
    files.push_back(Compiler("<synthetic>", stats).compile(synthetic_source()));
  } else {
    if (opts.paths.empty()) throw std::runtime_error("no source transcripts (give paths, or --synthetic)");
    for (const std::string& p : opts.paths) {
      File f = Compiler(p, stats, opts.text_dense, opts.short_text).compile(read_lines(p));
      if (f.counted > 0) files.push_back(std::move(f));
    }
  }
  if (opts.cjk) files.push_back(Compiler("<cjk>", stats).compile(cjk_source()));
  std::uint64_t per_cycle = 0;
  std::int64_t min_day = INT64_MAX, max_day = INT64_MIN;
  for (const File& f : files) {
    per_cycle += f.counted;
    for (std::int64_t d : f.days) min_day = std::min(min_day, d), max_day = std::max(max_day, d);
  }
  if (per_cycle == 0) throw std::runtime_error("the sources hold no line with a uuid");
  // Every replay is shifted by the sources' whole date span, so (timestamp, content) never repeats.
  const std::int64_t shift_days = min_day <= max_day ? max_day - min_day + 1 : 1;
  const std::uint64_t N = opts.nodes;
  stats.session = fresh_uuid(key_of(opts.seed, ~0ULL, 0));

  // ---- plan the compaction cut: the unit boundary nearest to N-K-2 nodes ----
  std::optional<std::uint64_t> cut;
  if (opts.compact_tail) {
    const std::uint64_t K = *opts.compact_tail;
    if (N < 4) throw std::runtime_error("--compact-tail needs --nodes >= 4");
    const std::uint64_t target = N > K + 3 ? N - K - 2 : 1;
    const std::uint64_t window = std::max<std::uint64_t>(K, 200);
    std::uint64_t count = 0, best_dist = UINT64_MAX;
    bool anchor = false, done = false;
    for (std::uint64_t cycle = 0; !done; ++cycle) {
      for (const File& f : files) {
        std::int64_t open = 0;
        for (const Line& l : f.lines) {
          if (!l.counted) continue;
          if (count + 3 > N || count > target + window) {
            done = true;
            break;
          }
          if (l.candidate && open <= 0 && count >= 1 &&
              (f.slots[static_cast<std::size_t>(l.parent_slot)].parent_line >= 0 || anchor)) {
            std::uint64_t dist = count > target ? count - target : target - count;
            if (dist < best_dist) best_dist = dist, cut = count;
          }
          if (!l.sidechain) open += l.open_delta;
          ++count;
        }
        if (done) break;
        if (f.tail_leaf >= 0) anchor = true;
      }
    }
    if (!cut) throw std::runtime_error("no conversation-unit boundary to place the compaction at");
    stats.cut_at = *cut;
    stats.tail = N - *cut - 2;
  }

  // ---- emit ----
  std::string buf;
  buf.reserve((1u << 20) + (1u << 16));
  auto flush = [&] {
    if (buf.empty()) return;
    stats.bytes += buf.size();
    out(buf);
    buf.clear();
  };
  std::optional<std::string> anchor;
  std::string summary_id;
  std::string last_ts = "2025-06-02T10:00:00.000Z";
  std::uint64_t count = 0, segment = 0;
  bool done = false;
  for (std::uint64_t cycle = 0; !done && count < N; ++cycle) {
    ++stats.cycles;
    for (File& f : files) {
      if (count >= N) break;
      ++segment;
      f.cur_ids.resize(f.dict.size());
      for (std::size_t i = 0; i < f.dict.size(); ++i) fresh_like(f.dict[i], f.cur_ids[i], key_of(opts.seed, segment, i));
      f.cur_dates.resize(f.days.size());
      for (std::size_t i = 0; i < f.days.size(); ++i)
        format_date(f.days[i] + static_cast<std::int64_t>(cycle) * shift_days, f.cur_dates[i].data());
      std::int32_t cut_line = -1;
      for (std::size_t li = 0; li < f.lines.size(); ++li) {
        const Line& l = f.lines[li];
        if (count >= N) {
          done = true;
          break;
        }
        if (l.counted) {
          if (cut && count == *cut) {
            // The boundary names the leaf this line continues from; the summary is its parent.
            const Slot& ps = f.slots[static_cast<std::size_t>(l.parent_slot)];
            std::string logical = ps.parent_line >= 0 ? f.cur_ids[ps.arg] : anchor.value_or("");
            stats.boundary_uuid = fresh_uuid(key_of(opts.seed, ~1ULL, 0));
            stats.summary_uuid = fresh_uuid(key_of(opts.seed, ~1ULL, 1));
            OJson b, s;
            b["parentUuid"] = nullptr;
            b["logicalParentUuid"] = logical;
            b["isSidechain"] = false;
            b["userType"] = "external";
            b["cwd"] = "/home/USER/projects/bench";
            b["sessionId"] = stats.session;
            b["version"] = "2.1.39";
            b["gitBranch"] = "main";
            b["slug"] = "scaled-bench-session";
            b["type"] = "system";
            b["subtype"] = "compact_boundary";
            b["content"] = "Conversation compacted";
            b["isMeta"] = false;
            b["timestamp"] = last_ts;
            b["uuid"] = stats.boundary_uuid;
            b["level"] = "info";
            b["compactMetadata"] = {{"trigger", "manual"}, {"preTokens", (stats.bytes + buf.size()) / 4}};
            s["parentUuid"] = stats.boundary_uuid;
            s["isSidechain"] = false;
            s["userType"] = "external";
            s["cwd"] = "/home/USER/projects/bench";
            s["sessionId"] = stats.session;
            s["version"] = "2.1.39";
            s["gitBranch"] = "main";
            s["slug"] = "scaled-bench-session";
            s["type"] = "user";
            s["message"] = {{"role", "user"}, {"content", summary_text(*cut)}};
            s["isVisibleInTranscriptOnly"] = true;
            s["isCompactSummary"] = true;
            s["uuid"] = stats.summary_uuid;
            s["timestamp"] = last_ts;
            buf += b.dump();
            buf += '\n';
            buf += s.dump();
            buf += '\n';
            stats.lines += 2;
            count += 2;
            summary_id = stats.summary_uuid;
            anchor = summary_id;
            cut_line = static_cast<std::int32_t>(li);
          }
          ++count;
          if (l.sidechain) ++stats.sidechain_nodes;
        }
        for (std::uint32_t pi = l.piece_begin; pi < l.piece_end; ++pi) {
          const Piece& p = f.pieces[pi];
          if (p.slot < 0) {
            buf.append(f.text, p.off, p.len);
            continue;
          }
          const Slot& s = f.slots[static_cast<std::size_t>(p.slot)];
          switch (s.kind) {
            case SlotKind::id:
              buf += '"';
              buf += f.cur_ids[s.arg];
              buf += '"';
              break;
            case SlotKind::session:
              buf += '"';
              buf += stats.session;
              buf += '"';
              break;
            case SlotKind::ts: {
              std::size_t at = buf.size();
              buf += '"';
              buf.append(f.cur_dates[s.arg].data(), 10);
              buf.append(f.text, s.rest_off, s.rest_len);
              buf += '"';
              last_ts.assign(buf, at + 1, buf.size() - at - 2);
              break;
            }
            case SlotKind::parent: {
              const std::string* target = nullptr;
              if (s.parent_line < 0)
                target = anchor ? &*anchor : nullptr;
              else if (s.main && cut_line >= 0 && static_cast<std::int32_t>(li) >= cut_line && s.parent_line < cut_line)
                target = &summary_id;
              else
                target = &f.cur_ids[s.arg];
              if (target) {
                buf += '"';
                buf += *target;
                buf += '"';
              } else {
                buf += "null";
              }
              break;
            }
          }
        }
        ++stats.lines;
        if (buf.size() >= (1u << 20)) flush();
      }
      if (done) break;
      if (f.tail_leaf >= 0) anchor = f.cur_ids[static_cast<std::size_t>(f.lines[static_cast<std::size_t>(f.tail_leaf)].uuid_idx)];
    }
  }
  flush();
  stats.nodes = count;
  return stats;
}

}  // namespace ctxfold::gen
