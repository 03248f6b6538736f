#include "summarize/extractive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "model/identifiers.hpp"
#include "summarize/history.hpp"
#include "summarize/transcript.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

// Section names, in output order (docs/strategies.md "The extractive summary").
constexpr const char* kTasks = "Tasks";
constexpr const char* kState = "Current state";
constexpr const char* kFocus = "Focus";
constexpr const char* kEarlier = "Earlier summary";
constexpr const char* kFiles = "Files";
constexpr const char* kIdents = "Identifiers";
constexpr const char* kTools = "Tools used";
constexpr const char* kLeftOut = "Left out";

/// The detail levels tried, most detailed first: items per list and bytes per statement. The
/// statements shorten before the lists do: identifiers are what a summary cannot paraphrase.
constexpr std::size_t kListCaps[] = {120, 80, 60, 60, 60, 40, 40, 24, 16, 12, 8, 6, 4, 3, 2, 1, 0};
constexpr std::size_t kTextCaps[] = {600, 400, 400, 240, 160, 160, 100, 100, 100, 100, 80, 80, 60, 60, 60, 60, 60};
constexpr std::size_t kLevels = sizeof(kListCaps) / sizeof(kListCaps[0]);
static_assert(sizeof(kTextCaps) == sizeof(kListCaps));

/// At most max_bytes, cut at a space when one is in the second half (a path or name is not cut in
/// the middle), " …" marking the cut.
std::string shorten(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t n = utf8_safe_prefix(s, max_bytes > 4 ? max_bytes - 4 : 0);
  if (std::size_t sp = s.substr(0, n + 1).rfind(' '); sp != std::string_view::npos && sp > n / 2) n = sp;
  return std::string(s.substr(0, n)) + " …";
}


/// An ordered list without duplicates, first-seen order.
struct Ordered {
  std::vector<std::string> items;
  std::set<std::string> seen;
  bool add(std::string item) {
    if (item.empty() || !seen.insert(item).second) return false;
    items.push_back(std::move(item));
    return true;
  }
};

/// A task carried over from a previous summary: its heading and its lines, as written.
struct PriorTask {
  std::string title;
  std::vector<std::string> lines;
};

/// What earlier summaries (the previous summary, child summaries of a condensation) hand on.
struct Prior {
  std::vector<PriorTask> tasks;
  std::vector<std::string> state;   // the newest summary's "Current state" lines
  std::string root;
  Ordered files;
  std::map<std::string, Ordered> sections;  // headings of another layout, kept item by item
  std::vector<std::string> section_order;
  std::map<std::string, std::int64_t> tools;
  Ordered identifiers, focus;
  std::size_t left_out = 0;
};

/// Reads one "## Files" item back into paths: "dir/{a.cpp, b.hpp}" -> dir/a.cpp, dir/b.hpp.
void for_each_grouped_path(std::string_view item, const std::function<void(std::string)>& on_path) {
  std::size_t open = item.find('{');
  if (open == std::string_view::npos || item.back() != '}' || (open > 0 && item[open - 1] != '/')) {
    on_path(std::string(item));
    return;
  }
  std::string_view dir = item.substr(0, open), list = item.substr(open + 1, item.size() - open - 2);
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(", ", pos);
    if (comma == std::string_view::npos) comma = list.size();
    if (comma > pos) on_path(std::string(dir) + std::string(list.substr(pos, comma - pos)));
    pos = comma + 2;
  }
}

/// The number a "## Left out" line starts with ("12 items ..."), 0 when none.
std::size_t leading_count(std::string_view s) {
  std::size_t n = 0, i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) n = n * 10 + static_cast<std::size_t>(s[i++] - '0');
  return n;
}

void merge_item(const std::string& heading, std::string c, Prior& p) {
  if (heading == kTools) {
    std::size_t colon = c.rfind(": ");
    std::int64_t count = 0;
    if (colon != std::string::npos) {
      try {
        count = std::stoll(c.substr(colon + 2));
      } catch (const std::exception&) {
        count = 0;
      }
    }
    if (count > 0 && c.front() != '(') p.tools[c.substr(0, colon)] += count;  // "(N other tools): M" is not a tool
  } else if (heading == kFiles) {
    for (std::string_view pre : {"Root: ", "Read: ", "Mentioned: "})
      if (c.starts_with(pre)) {
        if (pre == "Root: ") {
          p.root = c.substr(pre.size());
          return;
        }
        c = c.substr(pre.size());
      }
    for_each_grouped_path(c, [&](std::string path) { p.files.add(std::move(path)); });
  } else if (heading == kIdents) {
    p.identifiers.add(std::move(c));
  } else if (heading == kFocus) {
    p.focus.add(std::move(c));
  } else if (heading == kLeftOut) {
    p.left_out += leading_count(c);
  } else if (heading == kState) {
    p.state.push_back(std::move(c));
  } else {
    if (!p.sections.count(heading)) p.section_order.push_back(heading);
    p.sections[heading].add(shorten(c, 600));
  }
}

/// Merges one earlier summary: this layout section by section (tasks appended, the newest state
/// replacing an older one), another layout's headings kept as they are, prose as "Earlier summary".
void merge_previous(std::string_view prev, Prior& p) {
  bool structured = prev.starts_with("## ") || prev.find("\n## ") != std::string_view::npos;
  std::string heading = kEarlier;
  bool state_reset = false;
  std::size_t pos = 0;
  while (pos <= prev.size()) {
    std::size_t nl = prev.find('\n', pos);
    if (nl == std::string_view::npos) nl = prev.size();
    std::string_view line = prev.substr(pos, nl - pos);
    pos = nl + 1;
    if (structured && line.starts_with("## ")) {
      heading = collapse_space(line.substr(3));
      if (heading == kState && !state_reset) p.state.clear(), state_reset = true;
    } else if (structured && heading == kTasks && line.starts_with("### ")) {
      std::string title = collapse_space(line.substr(4));
      std::size_t dot = title.find(". ");
      if (dot != std::string::npos && dot > 0 && dot < 6 &&
          std::all_of(title.begin(), title.begin() + static_cast<std::ptrdiff_t>(dot),
                      [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; }))
        title = title.substr(dot + 2);
      p.tasks.push_back({title, {}});
    } else if (structured && heading == kTasks && !p.tasks.empty()) {
      std::string c = collapse_space(line);
      if (c.starts_with("- ")) c = c.substr(2);
      if (!c.empty()) p.tasks.back().lines.push_back(c);
    } else {
      std::string_view item = line;
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      if (item.starts_with("- ") || item.starts_with("* ")) item.remove_prefix(2);
      std::string c = collapse_space(item);
      if (!c.empty()) merge_item(heading, std::move(c), p);
    }
    if (nl == prev.size()) break;
  }
}

bool writes_files(const std::string& tool) {
  static const std::set<std::string> w = {"Write",       "Edit",    "MultiEdit",  "NotebookEdit", "apply_patch",
                                          "write_file",  "replace", "edit_file",  "create_file",  "str_replace_editor",
                                          "str_replace_based_edit_tool"};
  return w.count(tool) > 0;
}
bool creates_files(const std::string& tool) { return tool == "Write" || tool == "write_file" || tool == "create_file"; }

/// The folder (ending in '/', three components or more) holding at least 60% of the distinct
/// absolute tool-argument paths, when there are four or more, that saves the most bytes (paths under it times its length):
/// written once as "Root:", the paths under it relative.
std::string common_root(const History& h) {
  std::map<std::string, std::size_t> under;
  std::set<std::string_view> distinct;
  for (const auto& c : h.calls)
    for (const auto& p : c.paths)
      if (!p.empty() && p.front() == '/') distinct.insert(p);
  const std::size_t total = distinct.size();
  if (total < 4) return {};
  for (std::string_view p : distinct) {
    {
      for (std::size_t s = p.find('/', 1); s != std::string_view::npos; s = p.find('/', s + 1))
        under[std::string(p.substr(0, s + 1))]++;
    }
  }
  std::string best;
  std::size_t saved = 0;  // bytes the root saves: paths under it times its length
  for (const auto& [dir, n] : under)
    if (n >= 2 && n * 10 >= total * 6 && std::count(dir.begin(), dir.end(), '/') >= 4 && n * dir.size() > saved) {
      best = dir;
      saved = n * dir.size();
    }
  return best;
}

/// One level's caps.
struct Caps {
  std::size_t list;
  std::size_t text;
};

/// Everything the summary says, before it is written at a detail level.
struct Doc {
  History h;
  Prior prior;
  std::string root;
  std::vector<std::string> order;  // extra headings of an earlier layout, after ours
  std::size_t left_out = 0;        // counted while rendering

  std::string rel(const std::string& p) const {
    if (!root.empty() && p.starts_with(root) && p.size() > root.size()) return p.substr(root.size());
    return p;
  }
};

/// "a, b (+N more)" of the last `cap` items (the newest kept), counting what is left out.
std::string bounded_list(const std::vector<std::string>& items, std::size_t cap, std::string_view sep, Doc& d,
                         bool keep_newest = true) {
  if (items.empty()) return {};
  std::size_t keep = std::min(items.size(), std::max<std::size_t>(cap, 1));
  std::size_t from = keep_newest ? items.size() - keep : 0;
  std::string out;
  for (std::size_t i = from; i < from + keep; ++i) out += (out.empty() ? "" : std::string(sep)) + items[i];
  if (keep < items.size()) {
    out += fmt::format(" (+{} more)", items.size() - keep);
    d.left_out += items.size() - keep;
  }
  return out;
}

std::string call_label(const HistoryCall& c, const Doc& d, std::size_t text) {
  if (!c.command.empty()) return "`" + shorten(c.command, std::min<std::size_t>(text, 160)) + "`";
  if (!c.paths.empty()) return c.name + " " + d.rel(c.paths.front());
  return c.name;
}

std::string status_of(const HistoryCall& c) {
  if (!c.answered) return "no result";
  if (c.exit_code) return fmt::format("exit {}", *c.exit_code);
  return c.error ? "failed" : "ok";
}

/// The "- Created/Edited/Ran/Committed/Errors/Outcome" lines of one turn.
std::vector<std::string> turn_lines(const HistoryTurn& t, Doc& d, Caps caps) {
  std::vector<std::string> lines;
  std::vector<std::string> created, edited, ran, commits, errors;
  std::map<std::string, std::vector<std::pair<std::string, int>>> edits;  // path -> (tool, calls), first use first
  std::vector<std::string> edit_order;
  std::vector<std::string> ran_cmds;
  for (std::size_t ci : t.calls) {
    const HistoryCall& c = d.h.calls[ci];
    if (writes_files(c.name) && c.command.empty())
      for (const auto& p : c.paths) {
        auto [it, fresh] = edits.emplace(p, std::vector<std::pair<std::string, int>>{});
        if (fresh) edit_order.push_back(p);
        auto tool = std::find_if(it->second.begin(), it->second.end(), [&](const auto& e) { return e.first == c.name; });
        if (tool == it->second.end()) it->second.emplace_back(c.name, 1);
        else tool->second += 1;
      }
    if (!c.command.empty()) {
      // A command run again is listed once, where it last ran, with its last status.
      auto again = std::find_if(ran_cmds.begin(), ran_cmds.end(), [&](const auto& e) { return e == c.command; });
      if (again != ran_cmds.end()) {
        ran.erase(ran.begin() + (again - ran_cmds.begin()));
        ran_cmds.erase(again);
      }
      ran_cmds.push_back(c.command);
      ran.push_back(call_label(c, d, caps.text) + " → " + status_of(c));
    }
    if (!c.commit.empty() && c.answered && !c.error) commits.push_back(shorten(c.commit, caps.text));
    if (c.error && !c.error_line.empty()) {
      std::string item = "`" + shorten(c.error_line, std::min<std::size_t>(caps.text, 160)) + "` (" +
                         shorten(call_label(c, d, 60), 80) + ") → " + (c.resolved ? "resolved later" : "unresolved");
      if (std::find(errors.begin(), errors.end(), item) == errors.end()) errors.push_back(std::move(item));
    }
  }
  for (const auto& p : edit_order) {
    const auto& tools = edits[p];
    std::string item = d.rel(p) + " (";
    for (std::size_t k = 0; k < tools.size(); ++k)
      item += (k ? ", " : "") + tools[k].first + (tools[k].second > 1 ? fmt::format(" ×{}", tools[k].second) : "");
    (creates_files(tools.front().first) ? created : edited).push_back(item + ")");
  }
  if (caps.list > 0) {
    if (!created.empty()) lines.push_back("Created: " + bounded_list(created, caps.list, ", ", d));
    if (!edited.empty()) lines.push_back("Edited: " + bounded_list(edited, caps.list, ", ", d));
    if (!ran.empty()) lines.push_back("Ran: " + bounded_list(ran, caps.list, "; ", d));
    if (!errors.empty()) lines.push_back("Errors: " + bounded_list(errors, std::max<std::size_t>(caps.list / 2, 1), "; ", d));
  } else {
    d.left_out += created.size() + edited.size() + ran.size() + errors.size();
  }
  if (!commits.empty()) lines.push_back("Committed: " + bounded_list(commits, std::max<std::size_t>(caps.list, 2), "; ", d));
  if (t.completed) lines.push_back("Outcome: " + shorten(t.outcome, caps.text));
  else if (&t == &d.h.turns.back())
    lines.push_back("Outcome: not finished in this history (see Current state)");
  else if (!t.last_text.empty())
    lines.push_back("Outcome: not finished in this history; last statement: " + shorten(t.last_text, caps.text));
  else lines.push_back("Outcome: not finished in this history");
  return lines;
}

std::string plan_text(const std::vector<PlanItem>& plan, std::size_t text) {
  std::string out;
  for (const auto& it : plan) {
    const char* mark = it.status == "completed" ? "[x]" : it.status == "in_progress" ? "[~]" : "[ ]";
    out += (out.empty() ? "" : "; ") + std::string(mark) + " " + shorten(it.text, std::min<std::size_t>(text, 120));
  }
  return out;
}

/// The "## Current state" lines: the state at the end of the covered history.
std::vector<std::string> state_lines(Doc& d, Caps caps) {
  const History& h = d.h;
  std::vector<std::string> out;
  if (h.turns.empty() && h.calls.empty()) return d.prior.state;
  std::size_t n_tasks = d.prior.tasks.size() + h.turns.size();
  if (!d.prior.tasks.empty() && h.turns.front().request.empty() && n_tasks > 1) --n_tasks;  // joined to the last
  if (!h.turns.empty() && !h.turns.back().completed)
    out.push_back(fmt::format("In progress: task {} ({})", n_tasks,
                              h.turns.back().request.empty() ? std::string("continued from before this history")
                                                             : shorten(h.turns.back().request, 120)));
  if (!h.plan.empty()) out.push_back("Plan: " + plan_text(h.plan, caps.text));
  // Files edited after the last commit: work not committed yet.
  std::size_t last_commit = h.calls.size();
  for (std::size_t i = h.calls.size(); i-- > 0;)
    if (!h.calls[i].commit.empty() && h.calls[i].answered && !h.calls[i].error) {
      last_commit = i;
      break;
    }
  if (last_commit < h.calls.size()) {
    Ordered since;
    for (std::size_t i = last_commit + 1; i < h.calls.size(); ++i)
      if (writes_files(h.calls[i].name) && h.calls[i].command.empty())
        for (const auto& p : h.calls[i].paths) since.add(d.rel(p));
    if (!since.items.empty()) out.push_back("Edited since the last commit: " + bounded_list(since.items, caps.list * 2, ", ", d));
  }
  Ordered open;
  for (const auto& c : h.calls)
    if (c.error && !c.resolved && !c.error_line.empty())
      open.add("`" + shorten(c.error_line, std::min<std::size_t>(caps.text, 140)) + "`");
  if (!open.items.empty())
    out.push_back("Unresolved errors: " + bounded_list(open.items, std::max<std::size_t>(caps.list / 2, 1), "; ", d));
  if (!h.calls.empty()) {
    const HistoryCall& c = h.calls.back();
    out.push_back("Last action: " + call_label(c, d, caps.text) + " → " + status_of(c));
  }
  const PlanItem* next = nullptr;
  for (const auto& it : h.plan)
    if (it.status == "in_progress" || (!next && it.status != "completed")) {
      next = &it;
      if (it.status == "in_progress") break;
    }
  if (next) out.push_back("Next step: " + shorten(next->text, caps.text));
  else if (!h.last_statement.empty())
    out.push_back("Next step (the agent's last statement): " + shorten(h.last_statement, caps.text));
  return out;
}

/// Paths grouped by folder: "dir/{a.cpp, b.hpp}" for two or more of one folder, first-seen order.
std::vector<std::string> group_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> dirs;
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& p : paths) {
    std::size_t slash = p.rfind('/');
    std::string dir = slash == std::string::npos || slash + 1 == p.size() ? std::string() : p.substr(0, slash + 1);
    std::string name = dir.empty() ? p : p.substr(slash + 1);
    auto [it, fresh] = names.emplace(dir, std::vector<std::string>{});
    if (fresh) dirs.push_back(dir);
    it->second.push_back(name);
  }
  std::vector<std::string> out;
  for (const auto& dir : dirs) {
    const auto& ns = names[dir];
    if (ns.size() == 1 || dir.empty()) {
      for (const auto& n : ns) out.push_back(dir + n);
      continue;
    }
    std::string line = dir + "{";
    for (std::size_t k = 0; k < ns.size(); ++k) line += (k ? ", " : "") + ns[k];
    out.push_back(line + "}");
  }
  return out;
}

/// The "## Files" lines: the root, then the real paths the tasks do not list (read, searched,
/// written in prose), the most recent kept when capped; then the earlier summaries' files.
std::vector<std::string> file_lines(Doc& d, Caps caps) {
  std::vector<std::string> out;
  if (!d.root.empty()) out.push_back("Root: " + d.root);
  if (!d.prior.root.empty() && d.prior.root != d.root) out.push_back("Root: " + d.prior.root);
  std::set<std::string> in_tasks;
  if (caps.list > 0)
    for (const auto& c : d.h.calls)
      if (writes_files(c.name) && c.command.empty())
        for (const auto& p : c.paths) in_tasks.insert(p);
  // Every path known whole: a relative path or bare name that is the '/'-tail of one names the
  // same file and is not listed again.
  std::vector<const std::string*> known;
  for (const auto& c : d.h.calls)
    for (const auto& p : c.paths) known.push_back(&p);
  for (const auto& p : d.h.prose_paths) known.push_back(&p);
  auto tail_of_known = [&](const std::string& p) {
    if (p.front() == '/' || p.front() == '~') return false;
    for (const std::string* q : known)
      if (q->size() > p.size() && q->compare(q->size() - p.size(), p.size(), p) == 0 && (*q)[q->size() - p.size() - 1] == '/')
        return true;
    return false;
  };
  Ordered shown;
  std::vector<std::string> all;
  auto consider = [&](const std::string& p, bool check_tail) {
    if (in_tasks.count(p) || (check_tail && tail_of_known(p))) return;
    if (shown.add(d.rel(p))) all.push_back(d.rel(p));
  };
  for (const auto& c : d.h.calls)
    for (const auto& p : c.paths) consider(p, true);
  for (const auto& p : d.h.prose_paths) consider(p, true);
  for (const auto& p : d.prior.files.items) consider(p, false);
  std::size_t cap = caps.list * 3;
  if (all.size() > cap) {
    d.left_out += all.size() - cap;
    all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(cap));
  }
  for (auto& g : group_paths(all)) out.push_back(std::move(g));
  return out;
}

/// The identifiers worth a line: names a word is not (an '_', '.', ':', '/', '(', '?', '<', '#',
/// '-' or digit in it, or a capital after the first letter: `start_session/2`, `ActiveRecord`, not
/// `if` or `touch`), URLs, and no path the summary lists already.
std::vector<std::string> identifier_items(const Doc& d) {
  std::set<std::string> paths;
  for (const auto& c : d.h.calls)
    for (const auto& p : c.paths) paths.insert(p), paths.insert(d.rel(p));
  for (const auto& p : d.h.prose_paths) paths.insert(p);
  std::vector<std::string> out = d.prior.identifiers.items;
  std::set<std::string> seen(out.begin(), out.end());
  for (const auto& id : d.h.identifiers) {
    if (seen.count(id)) continue;
    if (paths.count(id) || id.front() == '<') continue;  // a listed path; markup
    bool marked = id.find_first_of("_.:/(?<#-0123456789") != std::string::npos ||
                  std::any_of(id.begin() + 1, id.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; });
    if (marked) out.push_back(id);
  }
  return out;
}

void emit(std::string& out, const std::string& name, const std::vector<std::string>& items) {
  if (items.empty()) return;
  if (!out.empty()) out += "\n";
  out += "## " + name + "\n";
  for (const auto& item : items) out += "- " + item + "\n";
}

/// The tasks: the earlier summaries' first, then this history's turns; with `keep` set, only the
/// first task and the newest keep-1 are written, the rest counted.
std::string tasks_text(Doc& d, Caps caps, std::size_t keep) {
  struct Entry {
    std::string title;
    std::vector<std::string> lines;
  };
  std::vector<Entry> all;
  for (const auto& t : d.prior.tasks) {
    Entry e{shorten(t.title, caps.text * 2), {}};
    // An earlier task keeps its outcome and, while the level allows, its other lines.
    std::size_t room = caps.list;
    for (const auto& l : t.lines)
      if (l.starts_with("Outcome: ") || l.starts_with("Committed: ") || room-- > 0) e.lines.push_back(shorten(l, caps.text * 2));
      else ++d.left_out;
    all.push_back(std::move(e));
  }
  for (const auto& t : d.h.turns) {
    if (t.request.empty() && t.calls.empty() && t.outcome.empty()) continue;
    std::vector<std::string> lines = turn_lines(t, d, caps);
    if (t.request.empty() && &t == &d.h.turns.front() && !all.empty()) {
      // The history continues the earlier summary's last task (a chunk of one long turn): its
      // lines join that task, whose "not finished" outcome they supersede.
      auto& prev = all.back().lines;
      prev.erase(std::remove_if(prev.begin(), prev.end(),
                                [](const std::string& l) { return l.starts_with("Outcome: not finished"); }),
                 prev.end());
      prev.insert(prev.end(), lines.begin(), lines.end());
      continue;
    }
    all.push_back({t.request.empty() ? std::string("(a request made before this history)")
                                     : shorten(t.request, std::max<std::size_t>(caps.text * 2, 200)),
                   std::move(lines)});
  }
  std::string out;
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (keep > 0 && i > 0 && i + keep <= all.size()) {
      ++skipped;
      continue;
    }
    if (skipped) {
      out += fmt::format("- ({} tasks left out here)\n", skipped);
      d.left_out += skipped;
      skipped = 0;
    }
    out += fmt::format("### {}. {}\n", i + 1, all[i].title);
    // At the tightest level only the three newest tasks keep their lines: the others their request.
    if (caps.list == 0 && i + 3 < all.size()) {
      d.left_out += all[i].lines.size();
      continue;
    }
    for (const auto& l : all[i].lines) out += "- " + l + "\n";
  }
  return out;
}

/// The whole summary at one detail level.
std::string render(Doc& d, Caps caps, std::size_t keep_tasks) {
  d.left_out = d.prior.left_out;
  std::string out;
  std::string tasks = tasks_text(d, caps, keep_tasks);
  if (!tasks.empty()) out += "## " + std::string(kTasks) + "\n" + tasks;
  emit(out, kState, state_lines(d, caps));
  if (!d.h.focus.empty() || !d.prior.focus.items.empty()) {
    std::vector<std::string> f;
    for (const auto& l : d.prior.focus.items) f.push_back(shorten(l, caps.text));
    for (const auto& l : d.h.focus) f.push_back(shorten(l, caps.text));
    std::size_t cap = std::max<std::size_t>(caps.list, 2);
    if (f.size() > cap) d.left_out += f.size() - cap, f.erase(f.begin(), f.end() - static_cast<std::ptrdiff_t>(cap));
    emit(out, kFocus, f);
  }
  for (const auto& name : d.order) {
    const auto& items = d.prior.sections.at(name).items;
    std::vector<std::string> kept;
    std::size_t cap = std::max<std::size_t>(caps.list, 2);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items.size() <= cap || i == 0 || i + cap > items.size()) kept.push_back(shorten(items[i], caps.text * 2));
    d.left_out += items.size() - kept.size();
    emit(out, name, kept);
  }
  emit(out, kFiles, file_lines(d, caps));
  std::vector<std::string> named = identifier_items(d);
  std::vector<std::string> ids;
  std::size_t id_cap = caps.list * 2;
  for (std::size_t i = 0; i < named.size(); ++i)
    if (i + id_cap >= named.size()) ids.push_back(shorten(named[i], 100));
  d.left_out += named.size() - ids.size();
  emit(out, kIdents, ids);
  std::map<std::string, std::int64_t> tools = d.h.tools;
  for (const auto& [k, v] : d.prior.tools) tools[k] += v;
  std::vector<std::pair<std::string, std::int64_t>> t(tools.begin(), tools.end());
  std::stable_sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> tl;
  const std::size_t tool_cap = std::max<std::size_t>(caps.list * 2, 3);
  for (const auto& [name, n] : t)
    if (tl.size() < tool_cap) tl.push_back(fmt::format("{}: {}", name, n));
  if (t.size() > tl.size()) {
    std::int64_t rest = 0;
    for (std::size_t i = tl.size(); i < t.size(); ++i) rest += t[i].second;
    tl.push_back(fmt::format("({} other tools): {}", t.size() - tl.size(), rest));
  }
  emit(out, kTools, tl);
  if (d.left_out > 0)
    emit(out, kLeftOut,
         {fmt::format("{} items not listed here: `ctxfold grep TEXT` finds any of them in the covered turns; "
                      "`ctxfold expand` with this summary's id shows those turns whole",
                      d.left_out)});
  return out;
}

/// The instruction words of four letters or more (trailing punctuation dropped) become the focus.
std::vector<std::string> focus_words(const std::string& instructions) {
  std::vector<std::string> words;
  for (std::size_t i = 0; i < instructions.size();) {
    std::size_t j = i;
    while (j < instructions.size() && !std::isspace(static_cast<unsigned char>(instructions[j]))) ++j;
    std::string w = ascii_lower(std::string_view(instructions).substr(i, j - i));
    while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.back()))) w.pop_back();
    if (w.size() >= 4) words.push_back(w);
    i = j + 1;
  }
  return words;
}

/// The most detailed rendering within budget: the detail levels first, then fewer tasks (the first
/// and the newest kept) at the tightest level; found by bisection over the task count.
std::string fit(Doc& d, std::size_t budget) {
  for (std::size_t l = 0; l < kLevels; ++l) {
    std::string out = render(d, {kListCaps[l], kTextCaps[l]}, 0);
    if (out.size() <= budget) return out;
  }
  const Caps tight{kListCaps[kLevels - 1], kTextCaps[kLevels - 1]};
  std::size_t lo = 1, hi = d.prior.tasks.size() + d.h.turns.size();
  if (hi <= 1) return render(d, tight, 0);
  while (lo < hi) {  // the largest keep that fits
    std::size_t mid = lo + (hi - lo + 1) / 2;
    if (render(d, tight, mid).size() <= budget) lo = mid;
    else hi = mid - 1;
  }
  return render(d, tight, lo);
}

/// Within the budget, never empty for non-empty input and smaller than it.
std::string bounded_summary(std::string out, const SummaryRequest& req, std::size_t budget, std::size_t input_bytes) {
  if (out.size() > budget) out = shorten(out, budget);
  if (collapse_space(out).empty() || out == " \xE2\x80\xA6") {
    // Nothing survived the budget (or nothing was recognised: a chunk of one redacted reply, a
    // tool result without names): an excerpt of the input, never an empty summary for non-empty
    // input. The caller judges its size (lcm retries, then stores a source pointer).
    std::string excerpt = collapse_space(req.transcript.empty() ? req.previous_summary : req.transcript);
    if (excerpt.empty()) excerpt = collapse_space(req.previous_summary);
    out = shorten(excerpt, std::max<std::size_t>(budget, 32));
  }
  if (out.size() >= input_bytes)
    if (std::size_t keep = utf8_safe_prefix(out, input_bytes / 2); keep > 0) out.resize(keep);
  return out;
}

}  // namespace

SummaryResult ExtractiveSummarizer::summarize(const SummaryRequest& req) {
  const std::size_t input_bytes = req.previous_summary.size() + req.transcript.size();
  if (collapse_space(req.previous_summary).empty() && collapse_space(req.transcript).empty())
    throw Error(Exit::environment, "summarizer.empty", "nothing to summarize: the input is empty");
  Doc d;
  d.h = parse_history(req.transcript, focus_words(req.instructions));
  merge_previous(req.previous_summary, d.prior);
  for (const auto& s : d.h.summaries) merge_previous(s, d.prior);
  d.order = d.prior.section_order;
  d.root = common_root(d.h);
  if (d.root.empty()) d.root = d.prior.root;
  const std::size_t budget = std::min<std::size_t>(
      static_cast<std::size_t>(std::max<std::int64_t>(req.max_output_tokens, 16)) * 4, input_bytes / 2);
  SummaryResult r;
  r.text = bounded_summary(fit(d, budget), req, budget, input_bytes);
  r.model = "extractive";
  return r;
}

}  // namespace ctxfold
