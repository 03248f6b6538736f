// Claude Code session JSONL importer (FORMATS.md §1).
//
// Two passes: pass 1 streams the file through a SAX handler (ScanSax: only the handful of
// depth-1/2 fields linking needs; no JSON tree) and keeps a fixed-size skeleton per line (ids,
// links, flags, byte offset); the plan step merges streamed assistant lines, resolves parents,
// breaks cycles, linearizes parallel tool results and turns compactions into summary view nodes,
// all on the skeleton; pass 2 re-reads each node's lines by offset (one DOM parse per line) and
// appends nodes parents-first.
//
// Memory model. Content is never held beyond the node being written (bounded by the longest
// line). What grows with the file is the skeleton, O(lines) at a small constant:
//   - Line: 64 bytes per record (strings are 32-bit ids into one Interner; tool_result ids in a
//     shared pool);
//   - Interner: each distinct id (uuid, message id, tool id, type name) once, ~50 bytes
//     (bytes in 1 MiB blocks + pointer/length + open-addressing slot);
//   - by_uuid / tool_use_line: 4 bytes per interned id each (freed before pass 2);
//   - node_of_ and session_of_line_ (freed before pass 2): 4 bytes per line each;
//   - Plan: 40 bytes per node; cycles, covers and conflict renames are side maps (rare).
// That is ~150-200 bytes per line (~60 MB at 10^5 lines) instead of ~1 KB. Duplicate detection
// keeps no digests: when a uuid repeats, both records are re-read by offset and their payloads
// compared (a handful of times per file). Not yet flat: a bounded-window streaming design that
// resolves older parents and a compaction's covered chain through the database (parents precede
// children in every sample) would make it so; see bench/README.md.

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "import/import.hpp"
#include "import/jsonl_reader.hpp"
#include "tokens/estimate.hpp"
#include "util/digest.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "claude-code";

enum class LineKind : std::uint8_t { keep, node, skip };

/// What pass 1 keeps of one record: enough to link, merge and place it, never its content.
struct Line {
  std::int64_t line = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  int part = 0;
  LineKind kind = LineKind::keep;
  bool glued = false;  ///< the physical line held several records
  std::string type;
  std::string uuid;
  std::string parent;
  std::string logical_parent;  ///< compact_boundary.logicalParentUuid
  std::string msg_id;          ///< assistant message.id
  bool event = false;          ///< progress/system/unknown: a transparent chain record
  bool sidechain = false;
  bool compact_summary = false;
  bool boundary = false;
  bool conflict = false;  ///< same uuid as an earlier line, different payload
  std::vector<std::string> result_ids;  ///< tool_result.tool_use_id on a user line
  bool result_only = false;             ///< a user line whose content is only tool_result blocks
  std::string text_hash;                ///< sha256 of a string user content (sidechain root matching)
};

struct Skeleton {
  std::vector<Line> lines;
  std::unordered_map<std::string, int> by_uuid;  ///< first kept occurrence
  std::string inner_session;                     ///< first sessionId seen
  std::string first_agent_id;
  std::unordered_map<std::string, int> tool_use_line;           ///< tool_use id -> assistant line
  std::vector<std::pair<std::string, std::string>> task_prompts;  ///< (prompt hash, tool_use id), file order
  std::unordered_map<std::string, std::string> agent_tool_use;  ///< agentId -> Task tool_use id
  std::vector<std::pair<std::int64_t, std::string>> bad;        ///< unparseable bytes to keep
};

bool is_obj(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object();
}

std::string str_at(const Json& j, const char* key) { return json_str(j, key); }

/// Pass 1. warn may be empty (scanning the main file for a subagent's link).
Skeleton scan(const std::string& path, const JsonlReader::Warn& warn, bool keep_bad) {
  Skeleton sk;
  std::unordered_map<std::string, std::string> digest_of;  // uuid -> sha256 of the first payload
  JsonlReader reader(
      path, warn ? warn : JsonlReader::Warn([](std::int64_t, const std::string&, const std::string&) {}),
      [&](std::int64_t line, const std::string& raw) {
        if (keep_bad) sk.bad.emplace_back(line, raw);
      });
  JsonlRecord rec;
  while (reader.next(rec)) {
    Line ln;
    ln.line = rec.line;
    ln.offset = rec.offset;
    ln.length = rec.length;
    ln.part = rec.part;
    if (rec.part > 0) {
      ln.glued = true;
      for (auto it = sk.lines.rbegin(); it != sk.lines.rend() && it->line == rec.line; ++it) it->glued = true;
    }
    const Json& v = rec.value;
    if (!v.is_object()) {
      ln.type = "non-object";
      sk.lines.push_back(std::move(ln));
      continue;
    }
    ln.type = str_at(v, "type");
    if (ln.type.empty()) ln.type = "unknown";
    ln.uuid = str_at(v, "uuid");
    if (sk.inner_session.empty()) sk.inner_session = str_at(v, "sessionId");
    if (sk.first_agent_id.empty()) sk.first_agent_id = str_at(v, "agentId");

    // Links to subagents (2.1.x): progress lines name agentId and the Task call.
    if (ln.type == "progress" && is_obj(v, "data")) {
      std::string agent = str_at(v["data"], "agentId");
      std::string tu = str_at(v, "parentToolUseID");
      if (!agent.empty() && !tu.empty()) sk.agent_tool_use.emplace(agent, tu);
    }
    if (ln.uuid.empty()) {
      sk.lines.push_back(std::move(ln));
      continue;
    }
    ln.kind = LineKind::node;
    ln.parent = str_at(v, "parentUuid");
    ln.sidechain = v.value("isSidechain", false) == true;

    std::string dig = sha256_hex(dump_json(v));
    if (auto it = digest_of.find(ln.uuid); it != digest_of.end()) {
      if (it->second == dig) {
        if (warn)
          warn(rec.line, "id.duplicate",
               fmt::format("record '{}' appears again with an identical payload; counted once", ln.uuid));
        ln.kind = LineKind::skip;
        sk.lines.push_back(std::move(ln));
        continue;
      }
      ln.conflict = true;
    } else {
      digest_of.emplace(ln.uuid, std::move(dig));
    }

    const Json* msg = is_obj(v, "message") ? &v["message"] : nullptr;
    if ((ln.type == "user" || ln.type == "assistant") && msg) {
      const Json* content = msg->contains("content") ? &(*msg)["content"] : nullptr;
      if (ln.type == "assistant") {
        ln.msg_id = str_at(*msg, "id");
        if (content && content->is_array())
          for (const auto& b : *content) {
            if (!b.is_object() || str_at(b, "type") != "tool_use") continue;
            std::string id = str_at(b, "id");
            if (id.empty()) continue;
            sk.tool_use_line.emplace(id, static_cast<int>(sk.lines.size()));
            if (is_obj(b, "input")) {
              auto p = b["input"].find("prompt");
              if (p != b["input"].end() && p->is_string())
                sk.task_prompts.emplace_back(sha256_hex(p->get<std::string>()), id);
            }
          }
      } else {
        ln.compact_summary = v.value("isCompactSummary", false) == true;
        if (content && content->is_string()) ln.text_hash = sha256_hex(content->get<std::string>());
        if (content && content->is_array()) {
          bool only = !content->empty();
          for (const auto& b : *content) {
            if (b.is_object() && str_at(b, "type") == "tool_result")
              ln.result_ids.push_back(str_at(b, "tool_use_id"));
            else
              only = false;
          }
          ln.result_only = only;
        }
        if (is_obj(v, "toolUseResult") && !ln.result_ids.empty()) {
          std::string agent = str_at(v["toolUseResult"], "agentId");
          if (!agent.empty()) sk.agent_tool_use.emplace(agent, ln.result_ids.front());
        }
      }
    } else {
      ln.event = true;
      if (ln.type == "system" && str_at(v, "subtype") == "compact_boundary") {
        ln.boundary = true;
        ln.logical_parent = str_at(v, "logicalParentUuid");
      }
      if (ln.type == "system") {
        // Subagent link via an error/notification is not needed; keep scanning.
      }
    }
    if (!ln.conflict) sk.by_uuid.emplace(ln.uuid, static_cast<int>(sk.lines.size()));
    sk.lines.push_back(std::move(ln));
  }
  return sk;
}

int parent_line(const Skeleton& sk, int i) {
  const std::string& p = sk.lines[i].parent;
  if (p.empty()) return -1;
  auto it = sk.by_uuid.find(p);
  return it == sk.by_uuid.end() ? -1 : it->second;
}

/// True for a user line holding only tool results (its content was checked in pass 1).
bool result_only(const Line& ln) { return ln.type == "user" && ln.result_only; }

/// An earlier line of the streamed assistant message line i continues: consecutive chain lines
/// sharing message.id form one API message (FORMATS §1.4). The walk passes transparent events
/// and tool results, because Claude Code runs tools while the response still streams: a
/// message's later tool_use lines can hang off the result of an earlier one (seen in
/// agent-aac57f5: lines 29-31 continue message fsVEw3 after result line 28).
int merge_target(const Skeleton& sk, int i) {
  const Line& ln = sk.lines[i];
  if (ln.type != "assistant" || ln.msg_id.empty() || ln.conflict) return -1;
  int a = parent_line(sk, i);
  std::size_t steps = 0;
  while (a >= 0 && a < i && (sk.lines[a].event || result_only(sk.lines[a])) && steps++ < sk.lines.size())
    a = parent_line(sk, a);
  if (a < 0 || a >= i) return -1;
  const Line& p = sk.lines[a];
  if (p.type == "assistant" && p.msg_id == ln.msg_id && p.sidechain == ln.sidechain && !p.conflict) return a;
  return -1;
}

/// One node to write: its source lines, its predecessor and how it got there.
struct Plan {
  std::vector<int> parts;  ///< line indices, file order
  int pred = -1;
  int session = 0;
  std::string kind = kind::kMessage;
  bool pred_changed = false;  ///< predecessor differs from the source's parentUuid
  std::optional<std::string> missing_pred;
  std::optional<std::string> cross_session_parent;
  std::vector<std::string> cycle;
  int boundary = -1;      ///< summary: the compact_boundary plan (or -1)
  int cover_last = -1;    ///< summary: last covered plan (the logical parent)
  std::vector<int> covers;
  std::string final_id;
  bool emitted = false;
};

struct SessionSlot {
  SessionInfo info;
  int root_line = -1;
  bool begun = false;
};

std::string base64_clean_ok(const std::string& data) {
  if (data.empty()) return "empty base64 data";
  std::size_t n = 0;
  for (char c : data) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
              c == '=' || c == '-' || c == '_';
    if (c == '\n' || c == '\r' || c == ' ') continue;
    if (!ok) return "base64 data holds characters outside the alphabet";
    ++n;
  }
  if (n % 4 == 1) return "base64 data has an impossible length";
  return {};
}

class Importer {
 public:
  Importer(const std::string& path, ImportSink& sink) : path_(path), sink_(sink) {}

  void run();

 private:
  void setup_sessions();
  void plan_nodes();
  void break_cycles();
  void linearize_results();
  void plan_compactions();
  void compute_covers();
  void emit(int p);
  void write(int p);
  Node build(int p);
  Json convert_block(const Json& b, std::int64_t line, Json& extras, std::size_t index);
  Json convert_image(const Json& b, std::int64_t line);
  std::string raw_bytes(const Line& ln);
  void begin(int s);
  std::string plan_id(int p) const { return sk_.lines[plans_[p].parts.front()].uuid; }
  std::string parent_node_of_tool_use(const Skeleton& sk, const std::string& tool_use_id) const;

  std::string path_;
  ImportSink& sink_;
  Skeleton sk_;
  std::vector<Plan> plans_;
  std::vector<int> node_of_;  // line -> plan
  std::vector<SessionSlot> sessions_;
  std::vector<int> session_of_line_;
  std::string stem_;
  std::string base_;
  bool subagent_ = false;
  std::unique_ptr<JsonlReader> reader_;
  std::ifstream raw_;
};

std::string Importer::raw_bytes(const Line& ln) {
  if (!raw_.is_open()) raw_.open(path_, std::ios::binary);
  raw_.clear();
  raw_.seekg(static_cast<std::streamoff>(ln.offset));
  std::string bytes(ln.length, '\0');
  raw_.read(bytes.data(), static_cast<std::streamsize>(ln.length));
  bytes.resize(static_cast<std::size_t>(raw_.gcount()));
  if (!bytes.empty() && bytes.back() == '\r') bytes.pop_back();
  bytes.erase(std::remove(bytes.begin(), bytes.end(), '\0'), bytes.end());
  return utf8_sanitize(bytes);
}

std::string Importer::parent_node_of_tool_use(const Skeleton& sk, const std::string& tool_use_id) const {
  auto it = sk.tool_use_line.find(tool_use_id);
  if (it == sk.tool_use_line.end()) return {};
  int i = it->second;
  std::size_t steps = 0;
  for (int t = merge_target(sk, i); t >= 0 && steps++ < sk.lines.size(); t = merge_target(sk, i)) i = t;
  return sk.lines[i].uuid;
}

void Importer::setup_sessions() {
  fs::path p(path_);
  stem_ = p.stem().string();
  base_ = p.filename().string();
  std::string dir = p.parent_path().filename().string();
  bool agent_name = stem_.rfind("agent-", 0) == 0;
  subagent_ = dir == "subagents" || (agent_name && !sk_.lines.empty() && !sk_.first_agent_id.empty());

  SessionSlot main;
  main.info.format = kFormat;
  main.info.source = sink_.file();
  if (subagent_) {
    std::string main_stem;
    fs::path main_file;
    if (dir == "subagents") {
      main_stem = p.parent_path().parent_path().filename().string();
      main_file = p.parent_path().parent_path().parent_path() / (main_stem + ".jsonl");
    } else {
      main_stem = sk_.inner_session.empty() ? stem_ : sk_.inner_session;
      main_file = p.parent_path() / (main_stem + ".jsonl");
    }
    std::string agent_id = stem_.substr(6);
    main.info.id = main_stem + "/" + stem_;
    main.info.kind = "sidechain";
    main.info.parent_session = main_stem;
    main.info.metadata["agent_id"] = agent_id;
    if (agent_id.rfind("acompact-", 0) == 0) main.info.metadata["compaction_worker"] = true;
    std::error_code ec;
    if (fs::exists(main_file, ec)) {
      Skeleton msk = scan(main_file.string(), {}, false);
      auto it = msk.agent_tool_use.find(agent_id);
      if (it != msk.agent_tool_use.end()) {
        std::string node = parent_node_of_tool_use(msk, it->second);
        if (!node.empty()) {
          main.info.parent_node = node;
          main.info.metadata["tool_use_id"] = it->second;
        }
      }
    }
  } else {
    main.info.id = stem_;
    main.info.kind = "main";
  }
  if (!sk_.inner_session.empty() && sk_.inner_session != main.info.id && !subagent_)
    main.info.metadata["inner_session_id"] = sk_.inner_session;
  if (subagent_ && !sk_.inner_session.empty()) main.info.metadata["inner_session_id"] = sk_.inner_session;
  sessions_.push_back(std::move(main));

  // Inline 1.0.x sidechains: isSidechain roots inside a main file, one session per root.
  session_of_line_.assign(sk_.lines.size(), 0);
  if (subagent_) return;
  std::map<int, int> session_of_root;
  std::unordered_map<std::string, std::vector<std::string>> prompts;  // hash -> tool_use ids, file order
  for (const auto& [hash, id] : sk_.task_prompts) prompts[hash].push_back(id);
  std::unordered_set<std::string> used_calls;
  std::vector<int> memo(sk_.lines.size(), -2);
  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind != LineKind::node || !ln.sidechain) continue;
    // Walk to the sidechain root (bounded: a cycle ends the walk).
    std::vector<int> path{i};
    int root = i;
    std::size_t steps = 0;
    while (memo[root] == -2 && steps++ < sk_.lines.size()) {
      int par = parent_line(sk_, root);
      if (par < 0 || !sk_.lines[par].sidechain || std::find(path.begin(), path.end(), par) != path.end()) break;
      root = par;
      path.push_back(root);
    }
    int r = memo[root] >= 0 ? memo[root] : root;
    for (int k : path) memo[k] = r;
    auto it = session_of_root.find(r);
    if (it == session_of_root.end()) {
      SessionSlot s;
      s.root_line = r;
      s.info.id = stem_ + "/sidechain-" + sk_.lines[r].uuid.substr(0, 8);
      s.info.kind = "sidechain";
      s.info.parent_session = stem_;
      s.info.format = kFormat;
      s.info.source = sink_.file();
      s.info.metadata["root"] = sk_.lines[r].uuid;
      if (!sk_.lines[r].text_hash.empty()) {
        auto pit = prompts.find(sk_.lines[r].text_hash);
        if (pit != prompts.end()) {
          for (const auto& call : pit->second) {
            if (used_calls.count(call)) continue;
            used_calls.insert(call);
            s.info.parent_node = parent_node_of_tool_use(sk_, call);
            s.info.metadata["tool_use_id"] = call;
            s.info.metadata["link"] = "prompt";
            break;
          }
        }
      }
      sessions_.push_back(std::move(s));
      it = session_of_root.emplace(r, static_cast<int>(sessions_.size()) - 1).first;
    }
    session_of_line_[i] = it->second;
  }
}

void Importer::plan_nodes() {
  node_of_.assign(sk_.lines.size(), -1);
  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind != LineKind::node) continue;
    int t = merge_target(sk_, i);
    if (t >= 0 && node_of_[t] >= 0 && session_of_line_[t] == session_of_line_[i]) {
      node_of_[i] = node_of_[t];
      plans_[node_of_[t]].parts.push_back(i);
      continue;
    }
    Plan p;
    p.parts.push_back(i);
    p.session = session_of_line_[i];
    p.kind = ln.event ? kind::kEvent : kind::kMessage;
    node_of_[i] = static_cast<int>(plans_.size());
    plans_.push_back(std::move(p));
  }
  // Predecessors from the source links.
  for (auto& p : plans_) {
    const Line& ln = sk_.lines[p.parts.front()];
    std::string named = ln.parent;
    if (ln.boundary && named.empty()) {
      // A compaction boundary restarts the chain; its logical parent keeps the raw chain whole.
      named = ln.logical_parent;
      if (!named.empty()) p.pred_changed = true;
    }
    if (named.empty()) continue;
    auto it = sk_.by_uuid.find(named);
    if (it == sk_.by_uuid.end()) {
      p.missing_pred = named;
      sink_.warn(ln.line, "parent.missing",
                 fmt::format("record '{}' names parent '{}', which this file never wrote; kept as a root", ln.uuid,
                             named));
      continue;
    }
    int q = node_of_[it->second];
    if (q < 0) continue;
    if (plans_[q].session != p.session) {
      p.cross_session_parent = named;
      continue;
    }
    p.pred = q;
  }
}

void Importer::break_cycles() {
  const int n = static_cast<int>(plans_.size());
  // A record rewritten under an existing uuid whose parent chain reaches that uuid (C23).
  for (int p = 0; p < n; ++p) {
    const Line& ln = sk_.lines[plans_[p].parts.front()];
    if (!ln.conflict || plans_[p].pred < 0) continue;
    std::vector<std::string> ids{ln.uuid};
    int q = plans_[p].pred;
    for (int steps = 0; q >= 0 && steps <= n; ++steps) {
      ids.push_back(plan_id(q));
      if (plan_id(q) == ln.uuid) {
        std::string joined;
        for (const auto& s : ids) joined += (joined.empty() ? "" : " -> ") + s;
        sink_.warn(ln.line, "cycle", fmt::format("parent links loop: {}; record kept as a root", joined));
        plans_[p].cycle = ids;
        plans_[p].pred = -1;
        plans_[p].pred_changed = true;
        break;
      }
      q = plans_[q].pred;
    }
  }
  // General cycles in the predecessor function graph: break each at its earliest record.
  std::vector<std::uint8_t> state(n, 0);
  for (int s = 0; s < n; ++s) {
    if (state[s]) continue;
    std::vector<int> path;
    int v = s;
    while (v >= 0 && state[v] == 0) {
      state[v] = 1;
      path.push_back(v);
      v = plans_[v].pred;
    }
    if (v >= 0 && state[v] == 1) {
      auto start = std::find(path.begin(), path.end(), v);
      std::vector<int> cyc(start, path.end());
      int first = *std::min_element(cyc.begin(), cyc.end());
      std::vector<std::string> ids;
      for (int c : cyc) ids.push_back(plan_id(c));
      ids.push_back(plan_id(cyc.front()));
      std::string joined;
      for (const auto& id : ids) joined += (joined.empty() ? "" : " -> ") + id;
      sink_.warn(sk_.lines[plans_[first].parts.front()].line, "cycle",
                 fmt::format("parent links loop: {}; '{}' kept as a root", joined, plan_id(first)));
      plans_[first].cycle = ids;
      plans_[first].pred = -1;
      plans_[first].pred_changed = true;
    }
    for (int k : path) state[k] = 2;
  }
}

void Importer::linearize_results() {
  // Parallel tool calls (2.1.x): every result hangs off the assistant message and the
  // conversation continues from the last one. Chain them so the spine meets each (FORMATS §1.5).
  std::unordered_map<int, int> last_result;                          // step -> last result plan
  std::unordered_map<int, std::unordered_set<std::string>> answered;  // step -> answered tool ids
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    Plan& pl = plans_[p];
    const Line& ln = sk_.lines[pl.parts.front()];
    if (pl.kind != kind::kMessage || ln.type != "user" || ln.result_ids.empty() || pl.pred < 0) continue;
    int step = pl.pred;
    if (sk_.lines[plans_[step].parts.front()].type != "assistant") continue;
    auto& seen = answered[step];
    bool again = false;
    for (const auto& id : ln.result_ids)
      if (seen.count(id)) again = true;
    if (again) continue;  // the same call answered on another branch: a real branch, leave it
    for (const auto& id : ln.result_ids) seen.insert(id);
    auto it = last_result.find(step);
    if (it != last_result.end()) {
      pl.pred = it->second;
      pl.pred_changed = true;
    }
    last_result[step] = p;
  }
}

void Importer::plan_compactions() {
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    Plan& pl = plans_[p];
    const Line& ln = sk_.lines[pl.parts.front()];
    if (!ln.compact_summary || pl.kind != kind::kMessage) continue;
    int anchor = -1;
    int last = -1;
    int q = pl.pred;
    if (q >= 0 && sk_.lines[plans_[q].parts.front()].boundary) {
      if (plans_[q].pred >= 0) {
        anchor = q;
        last = plans_[q].pred;
      }
    } else if (q >= 0) {
      anchor = q;
      last = q;
    }
    if (last < 0) {
      sink_.warn(ln.line, "summary.uncovered",
                 fmt::format("compact summary '{}' has no logical parent in this file; kept as a message", ln.uuid));
      continue;
    }
    pl.kind = kind::kSummary;
    pl.boundary = sk_.lines[plans_[q].parts.front()].boundary ? q : -1;
    pl.cover_last = last;
    for (auto& other : plans_)
      if (other.pred == p) {
        other.pred = anchor;
        other.pred_changed = true;
      }
  }
}

void Importer::compute_covers() {
  const int n = static_cast<int>(plans_.size());
  for (int p = 0; p < n; ++p) {
    Plan& pl = plans_[p];
    if (pl.kind != kind::kSummary) continue;
    std::vector<int> chain;
    int q = pl.cover_last;
    for (int steps = 0; q >= 0 && steps <= n; ++steps) {
      if (plans_[q].kind == kind::kSummary) break;  // never cover a summary id
      chain.push_back(q);
      q = plans_[q].pred;
    }
    std::reverse(chain.begin(), chain.end());
    pl.covers = std::move(chain);
    pl.pred = pl.covers.empty() ? -1 : plans_[pl.covers.front()].pred;
    if (pl.covers.empty()) {
      pl.kind = kind::kMessage;
      sink_.warn(sk_.lines[pl.parts.front()].line, "summary.uncovered",
                 fmt::format("compact summary '{}' covers nothing; kept as a message", plan_id(p)));
    }
  }
}

void Importer::begin(int s) {
  SessionSlot& slot = sessions_[s];
  if (slot.begun) return;
  if (s != 0) begin(0);
  sink_.begin_session(slot.info);
  slot.begun = true;
}

Json Importer::convert_image(const Json& b, std::int64_t line) {
  Json out = Json::object();
  out["type"] = "image";
  const Json* src = is_obj(b, "source") ? &b["source"] : nullptr;
  std::string stype = src ? str_at(*src, "type") : "";
  if (src && stype == "base64") {
    out["media_type"] = str_at(*src, "media_type");
    std::string data = str_at(*src, "data");
    std::string why = base64_clean_ok(data);
    std::optional<ImageDims> dims;
    if (why.empty()) {
      dims = image_dimensions_base64(data);
      if (!dims && data.size() < 16) why = "base64 data too short for an image header";
    }
    out["data"] = std::move(data);
    if (dims) {
      out["width"] = dims->width;
      out["height"] = dims->height;
    }
    if (!why.empty()) sink_.warn(line, "image.undecodable", fmt::format("image block kept undecoded: {}", why));
    return out;
  }
  if (src && stype == "url") {
    if (src->contains("media_type")) out["media_type"] = str_at(*src, "media_type");
    out["ref"] = str_at(*src, "url");
    return out;
  }
  if (src && stype == "file") {
    out["ref"] = "file:" + str_at(*src, "file_id");
    return out;
  }
  sink_.warn(line, "image.undecodable", "image block without a readable source kept as opaque");
  return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
}

Json Importer::convert_block(const Json& b, std::int64_t line, Json& extras, std::size_t index) {
  if (!b.is_object()) return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
  std::string type = str_at(b, "type");
  Json out = Json::object();
  std::set<std::string> used{"type"};
  if (type == "text") {
    out["type"] = "text";
    out["text"] = str_at(b, "text");
    used.insert("text");
  } else if (type == "thinking") {
    out["type"] = "thinking";
    out["thinking"] = str_at(b, "thinking");
    if (b.contains("signature")) out["signature"] = str_at(b, "signature");
    used.insert({"thinking", "signature"});
  } else if (type == "tool_use") {
    out["type"] = "tool_use";
    out["id"] = str_at(b, "id");
    out["name"] = str_at(b, "name");
    out["input"] = b.contains("input") ? b["input"] : Json::object();
    used.insert({"id", "name", "input"});
  } else if (type == "tool_result") {
    out["type"] = "tool_result";
    out["tool_use_id"] = str_at(b, "tool_use_id");
    Json content = b.contains("content") ? b["content"] : Json("");
    if (content.is_array()) {
      Json conv = Json::array();
      Json inner_extras = Json::array();
      for (std::size_t k = 0; k < content.size(); ++k) conv.push_back(convert_block(content[k], line, inner_extras, k));
      if (!inner_extras.empty()) {
        Json e = Json::object();
        e["index"] = index;
        e["content"] = std::move(inner_extras);
        extras.push_back(std::move(e));
      }
      content = std::move(conv);
    } else if (content.is_null()) {
      content = "";
    } else if (!content.is_string()) {
      content = dump_json(content);
    }
    out["content"] = std::move(content);
    out["is_error"] = b.value("is_error", false) == true;
    used.insert({"tool_use_id", "content", "is_error"});
  } else if (type == "image") {
    out = convert_image(b, line);
    used.insert("source");
  } else {
    return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
  }
  Json rest = Json::object();
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!used.count(it.key())) rest[it.key()] = it.value();
  if (!rest.empty()) {
    Json e = Json::object();
    e["index"] = index;
    e["fields"] = std::move(rest);
    extras.push_back(std::move(e));
  }
  return out;
}

Node Importer::build(int p) {
  const Plan& pl = plans_[p];
  Node n;
  n.id = plan_id(p);
  n.session = sessions_[pl.session].info.id;
  n.kind = pl.kind;
  const Line& first = sk_.lines[pl.parts.front()];

  Json source = Json::object();
  source["format"] = kFormat;
  source["file"] = base_;
  source["line"] = first.line;
  if (first.glued) source["part"] = first.part;
  source["uuid"] = first.uuid;
  Json meta = Json::object();
  meta["source"] = source;

  Json content = Json::array();
  Json extras = Json::array();
  Json parts = Json::array();
  bool any_result = false;
  bool all_result = true;
  Json usage;
  std::string stop_reason;

  for (int li : pl.parts) {
    const Line& ln = sk_.lines[li];
    Json v = reader_->read_at(ln.offset, ln.length, ln.part);
    if (!v.is_object()) v = Json::object();
    if (parts.empty()) {
      if (v.contains("timestamp")) meta["timestamp"] = v["timestamp"];
    }
    if (n.kind == kind::kEvent) {
      std::string sub = str_at(v, "subtype");
      if (sub.empty() && is_obj(v, "data")) sub = str_at(v["data"], "type");
      meta["event"] = sub.empty() ? ln.type : ln.type + "/" + sub;
      if (ln.type == "system") {
        auto c = v.find("content");
        if (c != v.end() && c->is_string() && !c->get<std::string>().empty())
          content.push_back(Json{{"type", "text"}, {"text", c->get<std::string>()}});
      }
      if (ln.boundary) {
        meta["logical_parent"] = ln.logical_parent.empty() ? Json(nullptr) : Json(ln.logical_parent);
        if (is_obj(v, "compactMetadata")) meta["compact"] = v["compactMetadata"];
      }
      meta["raw"] = std::move(v);
      continue;
    }
    static const Json kNull;
    auto mit = v.find("message");
    const Json& msg = mit == v.end() ? kNull : *mit;
    const Json* c = msg.is_object() && msg.contains("content") ? &msg["content"] : nullptr;
    if (c && c->is_string()) {
      content.push_back(Json{{"type", "text"}, {"text", c->get<std::string>()}});
      all_result = false;
    } else if (c && c->is_array()) {
      for (const auto& b : *c) {
        bool is_result = b.is_object() && str_at(b, "type") == "tool_result";
        any_result = any_result || is_result;
        all_result = all_result && is_result;
        content.push_back(convert_block(b, ln.line, extras, content.size()));
      }
    } else if (c && !c->is_null()) {
      content.push_back(Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", *c}});
      all_result = false;
    }
    if (ln.type == "assistant") {
      if (msg.contains("usage")) usage = msg["usage"];
      std::string sr = str_at(msg, "stop_reason");
      if (!sr.empty()) stop_reason = sr;
      if (!meta.contains("model") && msg.contains("model")) meta["model"] = msg["model"];
      if (!meta.contains("message_id")) meta["message_id"] = ln.msg_id;
      if (!meta.contains("request_id") && v.contains("requestId")) meta["request_id"] = v["requestId"];
    }
    if (v.value("isMeta", false) == true) meta["is_meta"] = true;
    if (v.value("isSidechain", false) == true) meta["is_sidechain"] = true;
    if (v.contains("agentId")) meta["agent_id"] = v["agentId"];
    if (v.contains("toolUseResult")) {
      meta["tool_use_result"] = v["toolUseResult"];
      v.erase("toolUseResult");
    }
    Json env = std::move(v);
    if (env["message"].is_object()) env["message"].erase("content");
    Json part = Json::object();
    part["line"] = ln.line;
    if (ln.glued) part["part"] = ln.part;
    part["record"] = std::move(env);
    parts.push_back(std::move(part));
  }

  if (n.kind != kind::kEvent) {
    meta["source"]["parts"] = std::move(parts);
    if (first.type == "assistant") {
      n.role = role::kAssistant;
      if (!usage.is_null()) meta["usage"] = usage;
      if (!stop_reason.empty()) meta["stop_reason"] = stop_reason;
    } else {
      n.role = any_result && all_result && !content.empty() ? role::kTool : role::kUser;
    }
    if (!extras.empty()) meta["block_extras"] = std::move(extras);
  }

  if (n.kind == kind::kSummary) {
    Json summary = Json::object();
    summary["strategy"] = "rolling";
    summary["origin"] = "import";
    summary["format"] = kFormat;
    if (pl.boundary >= 0) {
      const Line& b = sk_.lines[plans_[pl.boundary].parts.front()];
      Json bv = reader_->read_at(b.offset, b.length, b.part);
      Json cm = is_obj(bv, "compactMetadata") ? bv["compactMetadata"] : Json::object();
      summary["trigger"] = cm.contains("trigger") ? cm["trigger"] : Json(nullptr);
      summary["preTokens"] = cm.contains("preTokens") ? cm["preTokens"] : Json(nullptr);
      summary["compact_metadata"] = cm;
      summary["boundary"] = b.uuid;
    }
    summary["logical_parent"] = plan_id(pl.cover_last);
    for (auto it = meta.begin(); it != meta.end(); ++it) summary[it.key()] = it.value();
    meta = std::move(summary);
    meta["is_compact_summary"] = true;
  }

  if (pl.pred_changed || pl.kind == kind::kSummary)
    meta["source_parent"] = first.parent.empty() ? Json(nullptr) : Json(first.parent);
  if (pl.missing_pred) meta["missing_predecessor"] = *pl.missing_pred;
  if (pl.cross_session_parent) meta["cross_session_parent"] = *pl.cross_session_parent;
  if (!pl.cycle.empty()) meta["cycle"] = pl.cycle;
  n.content = std::move(content);
  n.metadata = std::move(meta);
  if (pl.pred >= 0) n.predecessor = plans_[pl.pred].final_id;
  for (int c : pl.covers) n.covers_ids.push_back(plans_[c].final_id);
  return n;
}

void Importer::write(int p) {
  Plan& pl = plans_[p];
  begin(pl.session);
  Node n = build(p);
  pl.final_id = sink_.add(std::move(n), sk_.lines[pl.parts.front()].line);
  pl.emitted = true;
}

void Importer::emit(int start) {
  // Parents first (the store's predecessor is a foreign key), iteratively.
  std::vector<int> stack{start};
  std::vector<char> on_stack(plans_.size(), 0);
  on_stack[start] = 1;
  while (!stack.empty()) {
    int p = stack.back();
    if (plans_[p].emitted) {
      stack.pop_back();
      continue;
    }
    int dep = -1;
    for (int d : {plans_[p].pred, plans_[p].cover_last})
      if (d >= 0 && !plans_[d].emitted && !on_stack[d]) {
        dep = d;
        break;
      }
    if (dep >= 0) {
      on_stack[dep] = 1;
      stack.push_back(dep);
      continue;
    }
    // A dependency still on the stack would be a cycle; break_cycles removed them all.
    if (plans_[p].pred >= 0 && !plans_[plans_[p].pred].emitted) {
      plans_[p].cycle = {plan_id(p), plan_id(plans_[p].pred)};
      plans_[p].pred = -1;
      plans_[p].pred_changed = true;
    }
    write(p);
    stack.pop_back();
  }
}

void Importer::run() {
  sk_ = scan(
      path_, [&](std::int64_t line, const std::string& code, const std::string& msg) { sink_.warn(line, code, msg); },
      true);
  setup_sessions();
  plan_nodes();
  break_cycles();
  linearize_results();
  plan_compactions();
  break_cycles();
  compute_covers();

  reader_ = std::make_unique<JsonlReader>(path_, JsonlReader::Warn([](std::int64_t, const std::string&,
                                                                      const std::string&) {}));
  begin(0);
  const std::string& main_id = sessions_[0].info.id;
  for (const auto& [line, raw] : sk_.bad) sink_.keep_record(main_id, line, "unparseable", raw);
  sk_.bad.clear();

  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind == LineKind::keep) {
      std::string raw;
      if (!ln.glued) {
        raw = raw_bytes(ln);
      } else {
        raw = dump_json(reader_->read_at(ln.offset, ln.length, ln.part));
      }
      sink_.keep_record(main_id, ln.line, ln.type, raw);
      continue;
    }
    if (ln.kind != LineKind::node) continue;
    int p = node_of_[i];
    if (p >= 0 && plans_[p].parts.front() == i) emit(p);
  }
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p)
    if (!plans_[p].emitted) emit(p);

  // HEAD: per session, the newest leaf in file order (FORMATS §1.5 "walk from the newest leaf").
  std::vector<char> has_child(plans_.size(), 0);
  for (const auto& pl : plans_)
    if (pl.pred >= 0) has_child[pl.pred] = 1;
  std::vector<int> best(sessions_.size(), -1);
  std::vector<int> best_line(sessions_.size(), -1);
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    const Plan& pl = plans_[p];
    if (has_child[p] || pl.kind == kind::kSummary) continue;
    int last = pl.parts.back();
    if (last > best_line[pl.session]) {
      best_line[pl.session] = last;
      best[pl.session] = p;
    }
  }
  for (std::size_t s = 0; s < sessions_.size(); ++s)
    if (best[s] >= 0) sink_.propose_head(sessions_[s].info.id, plans_[best[s]].final_id);
}

}  // namespace

std::vector<std::string> claude_code_subagent_files(const std::string& main_path) {
  std::vector<std::string> out;
  fs::path p(main_path);
  fs::path dir = p.parent_path() / p.stem() / "subagents";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".jsonl" && name.rfind("agent-", 0) == 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void import_claude_code(const std::string& path, ImportSink& sink) {
  Importer imp(path, sink);
  imp.run();
}

}  // namespace ctxfold
