#include "summarize/extractive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "model/identifiers.hpp"
#include "summarize/transcript.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

constexpr std::size_t kUserItemBytes = 600;
constexpr std::size_t kItemBytes = 200;
/// The share of an over-budget summary kept for prose (requests, decisions, errors, ...) when
/// file paths and commands would take more; the rest goes to paths and commands.
constexpr std::size_t kProseSharePercent = 40;

// Section names, in output order.
constexpr const char* kRequests = "User requests";
constexpr const char* kFocus = "Focus";
constexpr const char* kFiles = "Files";
constexpr const char* kCommands = "Commands";
constexpr const char* kErrors = "Errors";
constexpr const char* kDecisions = "Decisions and progress";
constexpr const char* kIdents = "Identifiers";
constexpr const char* kEarlier = "Earlier summary";
constexpr const char* kTools = "Tools used";
const std::vector<std::string> kOrder = {kRequests, kFocus, kEarlier, kFiles, kCommands, kErrors, kDecisions, kIdents};

std::string collapse(std::string_view s) { return collapse_space(s); }

std::string shorten(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t n = utf8_safe_prefix(s, max_bytes > 4 ? max_bytes - 4 : 0);
  return std::string(s.substr(0, n)) + " …";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// An ordered list without duplicates, oldest first.
struct Section {
  std::deque<std::string> items;
  std::set<std::string> seen;
  std::size_t bytes = 0;
  void add(std::string item) {
    if (item.empty() || seen.count(item)) return;
    seen.insert(item);
    bytes += item.size() + 3;
    items.push_back(std::move(item));
  }
  void drop(std::size_t i) {
    bytes -= items[i].size() + 3;
    seen.erase(items[i]);
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
  }
};

/// Identifiers (file paths, commands) with a salience weight, in first-mention order. Items are
/// dropped, lowest weight first, only when the summary is over budget.
struct Ranked {
  std::vector<std::string> items;
  std::vector<std::int64_t> weight;
  std::vector<char> shortened;  // a command cut to kItemBytes: not reusable verbatim
  std::vector<char> alive;
  std::map<std::string, std::size_t> index;
  void add(std::string item, std::int64_t w, bool cut = false) {
    if (item.empty()) return;
    auto [it, fresh] = index.emplace(item, items.size());
    if (!fresh) {
      weight[it->second] += w;
      return;
    }
    items.push_back(std::move(item));
    weight.push_back(w);
    shortened.push_back(cut ? 1 : 0);
    alive.push_back(1);
  }
  bool empty() const { return std::find(alive.begin(), alive.end(), 1) == alive.end(); }
};

/// Reads one "## Files" item back into paths: "dir/{a.cpp, b.hpp}" -> dir/a.cpp, dir/b.hpp;
/// anything else is one path.
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

// Salience weights: a path a tool call names (Read/Edit/Write input, a command's argument) or a
// command the agent ran outweighs a path merely listed in a tool's output.
constexpr std::int64_t kMentionWeight = 1;
constexpr std::int64_t kToolInputWeight = 3;

struct Extract {
  std::map<std::string, Section> sections;
  Ranked files;
  Ranked commands;
  std::vector<std::string> extra_order;  // headings from a previous summary we do not know
  std::map<std::string, std::int64_t> tools;
  std::vector<std::string> focus_words;

  Section& at(const std::string& name) {
    if (!sections.count(name) && std::find(kOrder.begin(), kOrder.end(), name) == kOrder.end() && name != kTools)
      extra_order.push_back(name);
    return sections[name];
  }
};

/// Scans a line for file paths, URLs and `backticked` identifiers.
void scan_names(std::string_view line, Extract& ex, std::int64_t weight = kMentionWeight) {
  scan_paths_and_urls(
      line, [&](std::string_view p) { ex.files.add(std::string(p), weight); },
      [&](std::string_view u) { ex.at(kIdents).add(std::string(u)); });
  // `identifiers`
  std::size_t p = 0;
  while ((p = line.find('`', p)) != std::string_view::npos) {
    std::size_t q = line.find('`', p + 1);
    if (q == std::string_view::npos) break;
    std::string_view span = line.substr(p + 1, q - p - 1);
    if (!span.empty() && span.size() <= 80 && span.find('`') == std::string_view::npos) ex.at(kIdents).add(std::string(span));
    p = q + 1;
  }
}

void add_command(std::string cmd, Extract& ex, std::int64_t weight) {
  if (cmd.empty()) return;
  bool cut = cmd.size() > kItemBytes;
  ex.commands.add(shorten(cmd, kItemBytes), weight, cut);
}

/// "[tool call NAME id=ID] INPUT"
void scan_tool_call(std::string_view line, Extract& ex) {
  std::string_view rest = line.substr(std::string_view("[tool call ").size());
  std::size_t sp = rest.find(' ');
  std::size_t close = rest.find("] ");
  if (sp == std::string_view::npos) return;
  std::string name(rest.substr(0, sp));
  ex.tools[name] += 1;
  if (close == std::string_view::npos) return;
  std::string_view input = rest.substr(close + 2);
  try {
    add_command(tool_command(parse_json(input)), ex, kToolInputWeight);
  } catch (const std::exception&) {
    // a shortened input is not valid JSON any more; its names are still scanned below
  }
  scan_names(input, ex, kToolInputWeight);
}

void merge_previous(std::string_view prev, Extract& ex);

/// A child summary's header in a condensation input (lcm.cpp: "[summary ID of rows A … B]"):
/// the lines after it, up to the next header, are a summary, merged like a previous summary.
bool is_summary_header(std::string_view line) {
  return starts_with(line, "[summary ") && !line.empty() && line.back() == ']';
}

void scan_transcript(std::string_view text, Extract& ex) {
  enum class Mode { none, user, assistant, tool, other, summary };
  Mode mode = Mode::none;
  std::string user_text;
  std::string summary_text;
  bool assistant_first = false;
  auto flush_user = [&] {
    if (mode == Mode::user) {
      std::string t = collapse(user_text);
      if (!t.empty()) ex.at(kRequests).add(shorten(t, kUserItemBytes));
    }
    if (mode == Mode::summary) merge_previous(summary_text, ex);
    user_text.clear();
    summary_text.clear();
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line == "[user]" || line == "[assistant]" || line == "[system]" || line == "[earlier summary]" ||
        starts_with(line, "[tool result id=") || is_summary_header(line)) {
      flush_user();
      if (line == "[user]") mode = Mode::user;
      else if (is_summary_header(line)) mode = Mode::summary;
      else if (line == "[assistant]") {
        mode = Mode::assistant;
        assistant_first = true;
      } else if (starts_with(line, "[tool result")) mode = Mode::tool;
      else mode = Mode::other;
      if (nl == text.size()) break;
      continue;
    }
    if (mode == Mode::summary) {
      summary_text += std::string(line) + "\n";
    } else if (starts_with(line, "[tool call ")) {
      scan_tool_call(line, ex);
    } else {
      if (mode == Mode::user) user_text += std::string(line) + "\n";
      if (mode == Mode::assistant && assistant_first && !collapse(line).empty()) {
        ex.at(kDecisions).add(shorten(collapse(line), kItemBytes));
        assistant_first = false;
      }
      if ((mode == Mode::tool || mode == Mode::assistant) && is_error_line(line))
        ex.at(kErrors).add(shorten(collapse(line), kItemBytes));
      std::string_view trimmed = line;
      while (!trimmed.empty() && trimmed.front() == ' ') trimmed.remove_prefix(1);
      if (starts_with(trimmed, "$ ") && trimmed.size() > 2)
        add_command(collapse(trimmed.substr(2)), ex, kMentionWeight);
      if (!ex.focus_words.empty() && line.size() < 2000) {
        std::string l = lower(line);
        for (const auto& w : ex.focus_words)
          if (l.find(w) != std::string::npos) {
            ex.at(kFocus).add(shorten(collapse(line), kItemBytes));
            break;
          }
      }
      scan_names(line, ex);
    }
    if (nl == text.size()) break;
  }
  flush_user();
}

void merge_previous(std::string_view prev, Extract& ex) {
  bool structured = starts_with(prev, "## ") || prev.find("\n## ") != std::string_view::npos;
  std::string heading = kEarlier;
  std::size_t pos = 0;
  while (pos <= prev.size()) {
    std::size_t nl = prev.find('\n', pos);
    if (nl == std::string_view::npos) nl = prev.size();
    std::string_view line = prev.substr(pos, nl - pos);
    pos = nl + 1;
    if (structured && starts_with(line, "## ")) {
      heading = collapse(line.substr(3));
    } else {
      std::string_view item = line;
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      if (starts_with(item, "- ") || starts_with(item, "* ")) item.remove_prefix(2);
      std::string c = collapse(item);
      if (!c.empty()) {
        if (heading == kTools) {
          // "NAME: N"
          std::size_t colon = c.rfind(": ");
          std::int64_t count = 0;
          if (colon != std::string::npos) {
            try {
              count = std::stoll(c.substr(colon + 2));
            } catch (const std::exception&) {
              count = 0;
            }
          }
          if (count > 0) ex.tools[c.substr(0, colon)] += count;
        } else if (heading == kFiles) {
          for_each_grouped_path(c, [&](std::string path) { ex.files.add(std::move(path), kMentionWeight); });
        } else if (heading == kCommands) {
          bool cut = c.size() >= 4 && c.compare(c.size() - 4, 4, " \xE2\x80\xA6") == 0;
          ex.commands.add(c, kMentionWeight, cut);
        } else {
          ex.at(heading).add(shorten(c, heading == kRequests ? kUserItemBytes : 400));
        }
      }
    }
    if (nl == prev.size()) break;
  }
}

/// A relative path or bare name that is the tail of a longer path ("lib/a.ex" of
/// "/home/u/p/lib/a.ex", "a.ex" of either) names the same file: it is folded into the longest
/// such path, its weight added there.
void merge_path_suffixes(Ranked& files) {
  std::map<std::string_view, std::size_t> owner;  // '/'-boundary tail -> longest path ending so
  for (std::size_t i = 0; i < files.items.size(); ++i) {
    std::string_view p = files.items[i];
    for (std::size_t s = p.find('/', 0); s != std::string_view::npos && s + 1 < p.size(); s = p.find('/', s + 1)) {
      std::string_view tail = p.substr(s + 1);
      auto [it, fresh] = owner.emplace(tail, i);
      if (!fresh && files.items[it->second].size() < p.size()) it->second = i;
    }
  }
  for (std::size_t i = 0; i < files.items.size(); ++i) {
    const std::string& p = files.items[i];
    if (p.front() == '/' || p.front() == '~') continue;
    auto it = owner.find(p);
    if (it == owner.end() || it->second == i || !files.alive[it->second]) continue;
    files.weight[it->second] += files.weight[i];
    files.alive[i] = 0;
  }
}

/// "dir/" of a path (empty for a bare name) and the name after it.
std::pair<std::string_view, std::string_view> split_dir(std::string_view path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == path.size()) return {std::string_view(), path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

/// The "## Files" items: paths grouped by folder, "dir/{a.cpp, b.hpp}" for two or more files of
/// one folder, the plain path for one; folders in first-mention order.
std::vector<std::string> file_lines(const Ranked& files) {
  std::vector<std::string> dirs;
  std::map<std::string, std::vector<std::string_view>, std::less<>> names;
  for (std::size_t i = 0; i < files.items.size(); ++i) {
    if (!files.alive[i]) continue;
    auto [dir, name] = split_dir(files.items[i]);
    auto it = names.find(dir);
    if (it == names.end()) {
      dirs.emplace_back(dir);
      it = names.emplace(std::string(dir), std::vector<std::string_view>{}).first;
    }
    it->second.push_back(name);
  }
  std::vector<std::string> out;
  for (const auto& dir : dirs) {
    const auto& ns = names[dir];
    if (ns.size() == 1 || dir.empty()) {
      for (auto n : ns) out.push_back(dir + std::string(n));
      continue;
    }
    std::string line = dir + "{";
    for (std::size_t k = 0; k < ns.size(); ++k) line += (k ? ", " : "") + std::string(ns[k]);
    out.push_back(line + "}");
  }
  return out;
}

std::vector<std::string> command_lines(const Ranked& cmds) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < cmds.items.size(); ++i)
    if (cmds.alive[i]) out.push_back(cmds.items[i]);
  return out;
}

std::size_t section_bytes(const std::string& name, const std::vector<std::string>& lines) {
  if (lines.empty()) return 0;
  std::size_t b = name.size() + 5;
  for (const auto& l : lines) b += l.size() + 3;
  return b;
}

std::size_t ident_bytes(const Extract& ex) {
  return section_bytes(kFiles, file_lines(ex.files)) + section_bytes(kCommands, command_lines(ex.commands));
}

std::string render(const Extract& ex, const std::vector<std::string>& order) {
  std::string out;
  auto emit = [&](const std::string& name, const auto& items) {
    if (items.empty()) return;
    if (!out.empty()) out += "\n";
    out += "## " + name + "\n";
    for (const auto& item : items) out += "- " + item + "\n";
  };
  for (const auto& name : order) {
    if (name == kFiles) emit(name, file_lines(ex.files));
    else if (name == kCommands) emit(name, command_lines(ex.commands));
    else if (auto it = ex.sections.find(name); it != ex.sections.end()) emit(name, it->second.items);
  }
  return out;
}

/// Drops files and commands until both sections fit in `cap` bytes: shortened commands first
/// (longest first), then the lowest weight, the oldest first among equals. The section sizes
/// only shrink as items go, so the number to drop is found by bisection.
void fit_identifiers(Extract& ex, std::size_t cap) {
  if (ident_bytes(ex) <= cap) return;
  struct Cand {
    bool command;
    std::size_t i;
  };
  std::vector<Cand> order;
  for (std::size_t i = 0; i < ex.files.items.size(); ++i)
    if (ex.files.alive[i]) order.push_back({false, i});
  for (std::size_t i = 0; i < ex.commands.items.size(); ++i)
    if (ex.commands.alive[i]) order.push_back({true, i});
  auto cut = [&](const Cand& c) { return c.command && ex.commands.shortened[c.i]; };
  auto weight = [&](const Cand& c) { return c.command ? ex.commands.weight[c.i] : ex.files.weight[c.i]; };
  std::stable_sort(order.begin(), order.end(), [&](const Cand& a, const Cand& b) {
    if (cut(a) != cut(b)) return cut(a);
    if (cut(a)) return ex.commands.items[a.i].size() > ex.commands.items[b.i].size();
    return weight(a) < weight(b);  // stable: the oldest of equal weight first
  });
  auto apply = [&](std::size_t k) {
    for (std::size_t j = 0; j < order.size(); ++j) {
      Ranked& r = order[j].command ? ex.commands : ex.files;
      r.alive[order[j].i] = j < k ? 0 : 1;
    }
  };
  std::size_t lo = 0, hi = order.size();  // fits with hi dropped
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    apply(mid);
    if (ident_bytes(ex) <= cap) hi = mid;
    else lo = mid + 1;
  }
  apply(lo);
}

/// The instruction words of four letters or more (trailing punctuation dropped) become the focus.
void add_focus_words(const std::string& instructions, Extract& ex) {
  for (std::size_t i = 0; i < instructions.size();) {
    std::size_t j = i;
    while (j < instructions.size() && !std::isspace(static_cast<unsigned char>(instructions[j]))) ++j;
    std::string w = lower(std::string_view(instructions).substr(i, j - i));
    while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.back()))) w.pop_back();
    if (w.size() >= 4) ex.focus_words.push_back(w);
    i = j + 1;
  }
}

/// `names` and URLs already listed as a file or command are not repeated under Identifiers.
void drop_listed_identifiers(Extract& ex) {
  if (auto it = ex.sections.find(kIdents); it != ex.sections.end()) {
    std::set<std::string, std::less<>> listed;
    for (const auto& f : ex.files.items) {
      listed.insert(f);
      listed.insert(std::string(split_dir(f).second));
    }
    for (const auto& c : ex.commands.items) listed.insert(c);
    Section& ids = it->second;
    for (std::size_t i = ids.items.size(); i-- > 0;)
      if (listed.count(ids.items[i])) ids.drop(i);
  }
}

/// The tools section: each tool with its use count.
void add_tool_counts(Extract& ex) {
  if (!ex.tools.empty()) {
    // Most used first, then by name: deterministic.
    std::vector<std::pair<std::string, std::int64_t>> t(ex.tools.begin(), ex.tools.end());
    std::stable_sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    Section& s = ex.sections[kTools];
    for (const auto& [name, n] : t) s.add(fmt::format("{}: {}", name, n));
  }
}

/// Prose sections: everything but files and commands.
std::size_t prose_total(const Extract& ex, const std::vector<std::string>& order) {
  std::size_t b = 0;
  for (const auto& name : order)
    if (auto it = ex.sections.find(name); it != ex.sections.end() && !it->second.items.empty())
      b += it->second.bytes + name.size() + 5;
  return b;
}

/// Shortens the longest item over kItemBytes to it (dropped when the shortened form is already
/// there); false when none is that long.
bool shorten_longest(Extract& ex) {
  Section* best = nullptr;
  std::size_t best_i = 0;
  for (auto& [name, s] : ex.sections)
    for (std::size_t i = 0; i < s.items.size(); ++i)
      if (s.items[i].size() > kItemBytes && (!best || s.items[i].size() > best->items[best_i].size())) {
        best = &s;
        best_i = i;
      }
  if (!best) return false;
  std::string cut = shorten(best->items[best_i], kItemBytes);
  if (best->seen.count(cut)) {
    best->drop(best_i);
  } else {
    best->seen.erase(best->items[best_i]);
    best->bytes -= best->items[best_i].size() - cut.size();
    best->seen.insert(cut);
    best->items[best_i] = std::move(cut);
  }
  return true;
}

/// The largest section drops an item: with keep_newest its oldest (the newest and the first
/// request kept), else its last (the requests keep all); false when none can.
bool drop_largest(Extract& ex, bool keep_newest) {
  Section* largest = nullptr;
  std::string largest_name;
  for (auto& [name, s] : ex.sections) {
    std::size_t keep = keep_newest ? (name == kRequests ? std::min<std::size_t>(2, s.items.size()) : 1)
                                   : (name == kRequests ? s.items.size() : 0);
    if (s.items.size() <= keep) continue;
    if (!largest || s.bytes > largest->bytes) {
      largest = &s;
      largest_name = name;
    }
  }
  if (!largest) return false;
  largest->drop(!keep_newest ? largest->items.size() - 1 : largest_name == kRequests ? 1 : 0);
  return true;
}

/// Over budget, in this order, until the prose fits: (1) the longest item over kItemBytes is
/// shortened to it; (2) the largest section drops its oldest item, but every section keeps its
/// newest and the requests also their first (so condensing children keeps the latest request and
/// the newest decisions); (3) the largest section other than the requests drops its last item;
/// (4) the requests drop their oldest, the newest stays.
void fit_prose(Extract& ex, const std::vector<std::string>& order, std::size_t prose_budget) {
  std::size_t size = prose_total(ex, order);
  while (size > prose_budget) {
    if (!shorten_longest(ex) && !drop_largest(ex, true) && !drop_largest(ex, false)) {
      auto it = ex.sections.find(kRequests);
      if (it == ex.sections.end() || it->second.items.size() <= 1) break;
      it->second.drop(0);
    }
    size = prose_total(ex, order);
  }
}

/// The rendered summary within the budget, never empty for non-empty input and smaller than it.
std::string bounded_summary(const Extract& ex, const std::vector<std::string>& order, const SummaryRequest& req,
                            std::size_t budget, std::size_t input_bytes) {
  std::string out = render(ex, order);
  if (out.size() > budget) out = shorten(out, budget);  // one request alone larger than the budget
  if (collapse(out).empty() || out == " \xE2\x80\xA6") {
    // Nothing survived the budget (or nothing was recognised: a chunk of one redacted reply, a
    // tool result without names): an excerpt of the input, never an empty summary for non-empty
    // input. The caller judges its size (lcm retries, then stores a source pointer).
    std::string excerpt = collapse(req.transcript.empty() ? req.previous_summary : req.transcript);
    if (excerpt.empty()) excerpt = collapse(req.previous_summary);
    out = shorten(excerpt, std::max<std::size_t>(budget, 32));
  }
  if (out.size() >= input_bytes)
    if (std::size_t keep = utf8_safe_prefix(out, input_bytes / 2); keep > 0) out.resize(keep);
  return out;
}

}  // namespace

SummaryResult ExtractiveSummarizer::summarize(const SummaryRequest& req) {
  const std::size_t input_bytes = req.previous_summary.size() + req.transcript.size();
  if (collapse(req.previous_summary).empty() && collapse(req.transcript).empty())
    throw Error(Exit::environment, "summarizer.empty", "nothing to summarize: the input is empty");
  Extract ex;
  add_focus_words(req.instructions, ex);
  merge_previous(req.previous_summary, ex);
  scan_transcript(req.transcript, ex);
  merge_path_suffixes(ex.files);
  drop_listed_identifiers(ex);
  add_tool_counts(ex);

  std::vector<std::string> order = kOrder;
  order.insert(order.end(), ex.extra_order.begin(), ex.extra_order.end());
  order.push_back(kTools);

  std::size_t budget = std::min<std::size_t>(static_cast<std::size_t>(std::max<std::int64_t>(req.max_output_tokens, 16)) * 4,
                                             input_bytes / 2);
  // Identifiers first: file paths and commands get the budget the prose leaves, and at least
  // 1 - kProseShare of it when the prose needs more; the prose then gets what they leave.
  const std::size_t prose = prose_total(ex, order);
  if (prose + ident_bytes(ex) > budget) {
    const std::size_t prose_reserve = std::min(prose, budget * kProseSharePercent / 100);
    fit_identifiers(ex, budget - prose_reserve);
  }
  const std::size_t prose_budget = budget - std::min(budget, ident_bytes(ex));
  fit_prose(ex, order, prose_budget);
  SummaryResult r;
  r.text = bounded_summary(ex, order, req, budget, input_bytes);
  r.model = "extractive";
  return r;
}

}  // namespace ctxfold
