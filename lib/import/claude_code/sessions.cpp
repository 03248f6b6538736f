// Claude Code importer, sessions: the main session, sub-agent files and inline sidechains.

#include "import/claude_code/skeleton.hpp"

namespace ctxfold::cc_import {

std::string Importer::parent_node_of_tool_use(const Skeleton& sk, const std::string& tool_use_id) const {
  // Looked up without interning (sk may be a const scan of another file); a hash probe, not a
  // walk over every id (this runs once per inline sidechain root: a walk made it quadratic).
  int i = Skeleton::get(sk.tool_use_line, sk.ids.find(tool_use_id));
  if (i < 0) return {};
  std::size_t steps = 0;
  for (int t = merge_target(sk, i); t >= 0 && steps++ < sk.lines.size(); t = merge_target(sk, i)) i = t;
  return sk.str(sk.lines[i].uuid);
}

std::string Importer::root_text_hash(int line) {
  // sha256 of a user line's string content (sidechain root matching), re-read on demand: only
  // sidechain roots need it.
  const Line& ln = sk_.lines[line];
  if (ln.type != sk_.t_user || ln.kind != LineKind::node) return {};
  Json v = reader_->read_at(ln.offset, ln.length, ln.part);
  if (!v.is_object() || !is_obj(v, "message")) return {};
  const Json& msg = v["message"];
  auto c = msg.find("content");
  if (c == msg.end() || !c->is_string()) return {};
  return sha256_hex(c->get<std::string>());
}

void Importer::setup_sessions() {
  fs::path p(path_);
  stem_ = p.stem().string();
  // Large tool outputs (CC >= 2.1.2) live in <session dir>/tool-results/<tool_use_id>.txt; a
  // sub-agent file shares its main session's folder.
  results_dir_ = p.parent_path().filename() == "subagents" ? p.parent_path().parent_path() / "tool-results"
                                                           : p.parent_path() / stem_ / "tool-results";
  base_ = p.filename().string();
  std::string dir = p.parent_path().filename().string();
  bool agent_name = stem_.rfind("agent-", 0) == 0;
  subagent_ = dir == "subagents" || (agent_name && !sk_.lines.empty() && !sk_.first_agent_id.empty());

  SessionSlot main;
  main.info.format = kFormat;
  main.info.source = sink_.file();
  if (subagent_) {
    link_subagent(main, p);
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
  assign_sidechains();
}

void Importer::link_subagent(SessionSlot& main, const fs::path& p) {
  const std::string dir = p.parent_path().filename().string();
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
  // A resumed import continues a session the first run linked already: the main file is not
  // scanned again (the stored session keeps its parent).
  if (!(resume_ && sink_.store().session(main.info.id)) && fs::exists(main_file, ec)) {
    Skeleton msk = scan(main_file.string(), {}, false, std::nullopt, sink_.max_record_bytes());
    auto it = msk.agent_tool_use.find(agent_id);
    if (it != msk.agent_tool_use.end()) {
      std::string node = parent_node_of_tool_use(msk, it->second);
      if (!node.empty()) {
        main.info.parent_node = node;
        main.info.metadata["tool_use_id"] = it->second;
      }
    }
  }
}

void Importer::assign_sidechains() {
  std::map<int, int> session_of_root;
  PromptCalls prompts;  // hash -> tool_use ids, file order
  for (const auto& [hash, id] : sk_.task_prompts) prompts[hash].push_back(id);
  std::unordered_set<std::string> used_calls;
  std::vector<int> memo(sk_.lines.size(), -2);
  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind != LineKind::node || !ln.sidechain) continue;
    int r = sidechain_root(i, memo);
    auto it = session_of_root.find(r);
    if (it == session_of_root.end()) {
      sessions_.push_back(sidechain_session(r, prompts, used_calls));
      it = session_of_root.emplace(r, static_cast<int>(sessions_.size()) - 1).first;
    }
    session_of_line_[i] = it->second;
  }
}

int Importer::sidechain_root(int i, std::vector<int>& memo) const {
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
  return r;
}

SessionSlot Importer::sidechain_session(int r, const PromptCalls& prompts,
                                        std::unordered_set<std::string>& used_calls) {
  SessionSlot s;
  s.root_line = r;
  const std::string root_uuid = sk_.str(sk_.lines[r].uuid);
  s.info.id = stem_ + "/sidechain-" + root_uuid.substr(0, 8);
  s.info.kind = "sidechain";
  s.info.parent_session = stem_;
  s.info.format = kFormat;
  s.info.source = sink_.file();
  s.info.metadata["root"] = root_uuid;
  if (std::string text_hash = prompts.empty() ? std::string() : root_text_hash(r); !text_hash.empty()) {
    auto pit = prompts.find(text_hash);
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
  return s;
}

void Importer::begin(int s) {
  SessionSlot& slot = sessions_[s];
  if (slot.begun) return;
  if (s != 0) begin(0);
  sink_.begin_session(slot.info);
  slot.begun = true;
}

}  // namespace ctxfold::cc_import

namespace ctxfold {

std::vector<std::string> claude_code_subagent_files(const std::string& main_path) {
  namespace fs = std::filesystem;
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

}  // namespace ctxfold
