#include "summarize/extractive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "forensics/identifiers.hpp"
#include "summarize/transcript.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

constexpr std::size_t kUserItemBytes = 600;
constexpr std::size_t kItemBytes = 200;

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

struct Extract {
  std::map<std::string, Section> sections;
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
void scan_names(std::string_view line, Extract& ex) {
  scan_paths_and_urls(
      line, [&](std::string_view p) { ex.at(kFiles).add(std::string(p)); },
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

void add_command(const Json& input, Extract& ex) {
  std::string cmd = tool_command(input);
  if (!cmd.empty()) ex.at(kCommands).add(shorten(cmd, kItemBytes));
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
    add_command(parse_json(input), ex);
  } catch (const std::exception&) {
    // a shortened input is not valid JSON any more; its names are still scanned below
  }
  scan_names(input, ex);
}

void scan_transcript(std::string_view text, Extract& ex) {
  enum class Mode { none, user, assistant, tool, other };
  Mode mode = Mode::none;
  std::string user_text;
  bool assistant_first = false;
  auto flush_user = [&] {
    if (mode == Mode::user) {
      std::string t = collapse(user_text);
      if (!t.empty()) ex.at(kRequests).add(shorten(t, kUserItemBytes));
    }
    user_text.clear();
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line == "[user]" || line == "[assistant]" || line == "[system]" || line == "[earlier summary]" ||
        starts_with(line, "[tool result id=")) {
      flush_user();
      if (line == "[user]") mode = Mode::user;
      else if (line == "[assistant]") {
        mode = Mode::assistant;
        assistant_first = true;
      } else if (starts_with(line, "[tool result")) mode = Mode::tool;
      else mode = Mode::other;
      if (nl == text.size()) break;
      continue;
    }
    if (starts_with(line, "[tool call ")) {
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
        ex.at(kCommands).add(shorten(collapse(trimmed.substr(2)), kItemBytes));
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
        } else {
          ex.at(heading).add(shorten(c, heading == kRequests ? kUserItemBytes : 400));
        }
      }
    }
    if (nl == prev.size()) break;
  }
}

std::string render(const Extract& ex, const std::vector<std::string>& order) {
  std::string out;
  for (const auto& name : order) {
    auto it = ex.sections.find(name);
    if (it == ex.sections.end() || it->second.items.empty()) continue;
    if (!out.empty()) out += "\n";
    out += "## " + name + "\n";
    for (const auto& item : it->second.items) out += "- " + item + "\n";
  }
  return out;
}

}  // namespace

SummaryResult ExtractiveSummarizer::summarize(const SummaryRequest& req) {
  const std::size_t input_bytes = req.previous_summary.size() + req.transcript.size();
  if (collapse(req.previous_summary).empty() && collapse(req.transcript).empty())
    throw Error(Exit::environment, "summarizer.empty", "nothing to summarize: the input is empty");
  Extract ex;
  for (std::size_t i = 0; i < req.instructions.size();) {
    std::size_t j = i;
    while (j < req.instructions.size() && !std::isspace(static_cast<unsigned char>(req.instructions[j]))) ++j;
    std::string w = lower(std::string_view(req.instructions).substr(i, j - i));
    while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.back()))) w.pop_back();
    if (w.size() >= 4) ex.focus_words.push_back(w);
    i = j + 1;
  }
  merge_previous(req.previous_summary, ex);
  scan_transcript(req.transcript, ex);
  if (!ex.tools.empty()) {
    // Most used first, then by name: deterministic.
    std::vector<std::pair<std::string, std::int64_t>> t(ex.tools.begin(), ex.tools.end());
    std::stable_sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    Section& s = ex.sections[kTools];
    for (const auto& [name, n] : t) s.add(fmt::format("{}: {}", name, n));
  }

  std::vector<std::string> order = kOrder;
  order.insert(order.end(), ex.extra_order.begin(), ex.extra_order.end());
  order.push_back(kTools);

  std::size_t budget = std::min<std::size_t>(static_cast<std::size_t>(std::max<std::int64_t>(req.max_output_tokens, 16)) * 4,
                                             input_bytes / 2);
  auto total = [&] {
    std::size_t b = 0;
    for (const auto& name : order)
      if (auto it = ex.sections.find(name); it != ex.sections.end() && !it->second.items.empty())
        b += it->second.bytes + name.size() + 5;
    return b;
  };
  // Drop the oldest item of the largest section until it fits; the first user request goes last.
  std::size_t size = total();
  while (size > budget) {
    Section* largest = nullptr;
    std::string largest_name;
    for (auto& [name, s] : ex.sections) {
      std::size_t droppable = s.items.size() - (name == kRequests ? 1 : 0);
      if (droppable == 0 || s.items.empty()) continue;
      if (!largest || s.bytes > largest->bytes) {
        largest = &s;
        largest_name = name;
      }
    }
    if (!largest) break;
    largest->drop(largest_name == kRequests ? 1 : 0);
    size = total();
  }
  std::string out = render(ex, order);
  if (out.size() > budget) out = shorten(out, budget);  // one request alone larger than the budget
  if (out.size() >= input_bytes) out.resize(utf8_safe_prefix(out, input_bytes / 2));
  SummaryResult r;
  r.text = std::move(out);
  r.model = "extractive";
  return r;
}

}  // namespace ctxfold
