#include "summarize/history.hpp"
#include "util/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "model/identifiers.hpp"

namespace ctxfold {
namespace {


/// The number after `marker` in text (spaces and one ':' skipped), when there is one.
std::optional<int> number_after(std::string_view text, std::string_view marker) {
  std::size_t at = text.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + marker.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '"')) ++i;
  bool neg = i < text.size() && text[i] == '-';
  if (neg) ++i;
  std::size_t j = i;
  int v = 0;
  while (j < text.size() && j - i < 6 && std::isdigit(static_cast<unsigned char>(text[j]))) v = v * 10 + (text[j++] - '0');
  if (j == i) return std::nullopt;
  return neg ? -v : v;
}

std::optional<int> exit_code_of(std::string_view result) {
  std::string_view head = result.substr(0, 400);
  for (std::string_view m : {"Exit code", "exit code", "exit_code", "Process exited with code", "exited with code"})
    if (auto v = number_after(head, m)) return v;
  if (result.size() > 400)
    if (auto v = number_after(result.substr(result.size() - 300), "exit_code")) return v;
  return std::nullopt;
}

/// The first line of a result that reports the error: "Exit code N" lines skipped, an error-looking
/// line preferred, else the first non-empty one.
std::string error_line_of(std::string_view result) {
  std::string first;
  std::size_t pos = 0;
  for (int n = 0; pos < result.size() && n < 60; ++n) {
    std::size_t nl = result.find('\n', pos);
    if (nl == std::string_view::npos) nl = result.size();
    std::string c = collapse_space(result.substr(pos, nl - pos));
    pos = nl + 1;
    if (c.empty() || c.starts_with("Exit code") || c.starts_with("<tool_use_error>")) {
      if (c.starts_with("<tool_use_error>")) c = c.substr(16);
      if (c.empty() || c.starts_with("Exit code")) continue;
    }
    // A result holding an escaped JSON string ("failed:\\n\\n[CREDO]..."): its first line.
    if (std::size_t esc = c.find("\\n"); esc != std::string::npos && esc > 0) c.resize(esc);
    if (first.empty()) first = c;
    if (is_error_line(c)) return c;
  }
  return first;
}

std::vector<PlanItem> plan_of(const HistoryCall& c) {
  std::vector<PlanItem> out;
  if (!c.input.is_object()) return out;
  for (const char* key : {"todos", "plan"}) {
    auto it = c.input.find(key);
    if (it == c.input.end() || !it->is_array()) continue;
    for (const auto& item : *it) {
      if (!item.is_object()) continue;
      std::string text = json_str(item, "content");
      if (text.empty()) text = json_str(item, "step");
      if (text.empty()) text = json_str(item, "text");
      if (!text.empty()) out.push_back({collapse_space(text), json_str(item, "status")});
    }
    return out;
  }
  return out;
}

/// Values of "key":"..." in a JSON text cut past parsing (a shortened tool input): the path and
/// command arguments survive in its kept head and tail.
std::string raw_string_field(std::string_view text, std::string_view key) {
  std::string needle = "\"" + std::string(key) + "\":\"";
  std::size_t at = text.find(needle);
  if (at == std::string_view::npos) return {};
  std::string out;
  for (std::size_t i = at + needle.size(); i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      char e = text[++i];
      out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
    } else if (text[i] == '"') {
      return out;
    } else if (text[i] == '\n') {
      return {};  // ran into the omission marker
    } else {
      out.push_back(text[i]);
    }
  }
  return {};
}

struct Parser {
  History h;
  const std::vector<std::string>& focus_words;
  std::map<std::string, std::size_t> call_of_id;
  std::set<std::string> seen_paths, seen_idents;
  enum class Mode { none, user, assistant, tool, harness, other, summary } mode = Mode::none;
  std::string buf;              // the user text, assistant text chunk, result or summary being read
  std::optional<std::size_t> result_for;
  bool text_last = false;       // the current turn's last assistant event is text

  explicit Parser(const std::vector<std::string>& f) : focus_words(f) {}

  HistoryTurn& turn() {
    if (h.turns.empty()) h.turns.emplace_back();
    return h.turns.back();
  }

  void end_turn() {
    if (h.turns.empty()) return;
    HistoryTurn& t = h.turns.back();
    t.completed = text_last && !t.outcome.empty();
    if (!t.completed) t.outcome.clear();
  }

  void add_ident(std::string v) {
    if (!v.empty() && v.size() <= 80 && seen_idents.insert(v).second) h.identifiers.push_back(std::move(v));
  }

  void scan_prose(std::string_view line) {
    scan_prose_paths(
        line,
        [&](std::string_view p) {
          if (seen_paths.insert(std::string(p)).second) h.prose_paths.emplace_back(p);
        },
        [&](std::string_view u) { add_ident(std::string(u)); });
    std::size_t p = 0;
    while ((p = line.find('`', p)) != std::string_view::npos) {
      std::size_t q = line.find('`', p + 1);
      if (q == std::string_view::npos) break;
      std::string_view span = line.substr(p + 1, q - p - 1);
      if (!span.empty() && span.find(' ') == std::string_view::npos) add_ident(std::string(span));
      p = q + 1;
    }
  }

  void flush() {
    if (mode == Mode::user) {
      std::string t = collapse_space(buf);
      if (!t.empty()) {
        end_turn();
        h.turns.emplace_back();
        h.turns.back().request = t;
        text_last = false;
      }
    } else if (mode == Mode::assistant) {
      std::string t = collapse_space(buf);
      if (!t.empty()) {
        turn().outcome = t;
        turn().last_text = t;
        h.last_statement = t;
        text_last = true;
      }
    } else if (mode == Mode::tool && result_for) {
      HistoryCall& c = h.calls[*result_for];
      c.answered = true;
      c.exit_code = exit_code_of(buf);
      if (c.exit_code && *c.exit_code != 0) c.error = true;
      if (c.error) c.error_line = error_line_of(buf);
      if (c.error) c.commit.clear();  // a commit that failed committed nothing
    } else if (mode == Mode::summary) {
      if (!collapse_space(buf).empty()) h.summaries.push_back(buf);
    }
    buf.clear();
    result_for.reset();
  }

  void tool_call(std::string_view line) {
    std::string_view rest = line.substr(std::string_view("[tool call ").size());
    std::size_t sp = rest.find(' ');
    if (sp == std::string_view::npos) return;
    HistoryCall c;
    c.name = std::string(rest.substr(0, sp));
    std::size_t close = rest.find("] ");
    std::string_view idpart = rest.substr(sp + 1, close == std::string_view::npos ? std::string_view::npos : close - sp - 1);
    if (idpart.starts_with("id=")) c.id = std::string(idpart.substr(3));
    std::string raw_command;
    if (close != std::string_view::npos) {
      std::string_view input = rest.substr(close + 2);
      try {
        c.input = parse_json(input);
        if (c.input.is_object())
          if (auto it = c.input.find("command"); it != c.input.end() && it->is_string()) raw_command = it->get<std::string>();
      } catch (const std::exception&) {
        Json partial = Json::object();
        for (const char* k : {"file_path", "path", "notebook_path", "command", "cmd"})
          if (std::string v = raw_string_field(input, k); !v.empty()) partial[k] = v;
        raw_command = json_str(partial, "command");
        c.input = partial;
      }
    }
    c.command = tool_command(c.input);
    std::set<std::string> mine;
    tool_argument_paths(c.input, [&](std::string_view p) {
      if (mine.insert(std::string(p)).second) c.paths.emplace_back(p);
    });
    if (raw_command.find("git commit") != std::string::npos) c.commit = commit_message(raw_command);
    h.tools[c.name] += 1;
    std::vector<PlanItem> plan = plan_of(c);
    if (!plan.empty()) h.plan = std::move(plan);
    call_of_id[c.id] = h.calls.size();
    turn().calls.push_back(h.calls.size());
    h.calls.push_back(std::move(c));
    text_last = false;
  }

  void focus_line(std::string_view line) {
    if (focus_words.empty() || line.size() >= 2000) return;
    std::string l = ascii_lower(line);
    for (const auto& w : focus_words)
      if (l.find(w) != std::string::npos) {
        std::string c = collapse_space(line);
        if (!c.empty() && std::find(h.focus.begin(), h.focus.end(), c) == h.focus.end()) h.focus.push_back(c);
        return;
      }
  }

  bool label(std::string_view line) {
    if (line == "[user]" || line == "[assistant]" || line == "[system]" || line == "[earlier summary]" ||
        line.starts_with("[tool result id=") || (line.starts_with("[harness ") && line.back() == ']') ||
        (line.starts_with("[summary ") && line.back() == ']')) {
      flush();
      if (line == "[user]") mode = Mode::user;
      else if (line == "[assistant]") mode = Mode::assistant;
      else if (line == "[earlier summary]" || line.starts_with("[summary ")) mode = Mode::summary;
      else if (line.starts_with("[harness ")) mode = Mode::harness, ++h.harness_texts;
      else if (line.starts_with("[tool result id=")) {
        mode = Mode::tool;
        std::string_view id = line.substr(16, line.size() - 17);
        bool err = false;
        if (std::size_t comma = id.find(", error"); comma != std::string_view::npos) id = id.substr(0, comma), err = true;
        if (auto it = call_of_id.find(std::string(id)); it != call_of_id.end()) {
          result_for = it->second;
          h.calls[it->second].error = err;
        }
      } else mode = Mode::other;
      return true;
    }
    return false;
  }

  void line(std::string_view line) {
    if (label(line)) return;
    if (mode == Mode::summary) {
      buf += std::string(line) + "\n";
      return;
    }
    if (mode == Mode::assistant && line.starts_with("[tool call ")) {
      flush();
      tool_call(line);
      return;
    }
    if (mode == Mode::harness) return;
    focus_line(line);
    if (mode == Mode::user || mode == Mode::assistant) {
      scan_prose(line);
      buf += std::string(line) + "\n";
    } else if (mode == Mode::tool && result_for && buf.size() < 8192) {
      buf += std::string(line) + "\n";
    }
  }
};

}  // namespace

std::string HistoryCall::key() const {
  if (!command.empty()) {
    std::string_view c = command;
    while (c.starts_with("cd ")) {
      std::size_t amp = c.find(" && ");
      if (amp == std::string_view::npos) break;
      c = c.substr(amp + 4);
    }
    std::size_t sp = c.find(' ');
    std::size_t sp2 = sp == std::string_view::npos ? sp : c.find(' ', sp + 1);
    std::string_view two = c.substr(0, sp2);
    if (sp != std::string_view::npos && sp + 1 < c.size() && c[sp + 1] == '-') two = c.substr(0, sp);
    return "$ " + std::string(two);
  }
  if (!paths.empty()) return name + ":" + paths.front();
  return name;
}

std::string commit_message(std::string_view command) {
  std::size_t at = command.find("git commit");
  if (at == std::string_view::npos) return {};
  std::string_view rest = command.substr(at);
  auto first_line = [](std::string_view t) {
    std::size_t b = t.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return std::string();
    t = t.substr(b);
    return collapse_space(t.substr(0, t.find('\n')));
  };
  if (std::size_t h = rest.find("<<"); h != std::string_view::npos) {
    std::size_t nl = rest.find('\n', h);
    if (nl != std::string_view::npos) return first_line(rest.substr(nl + 1));
  }
  for (std::string_view m : {"-m \"", "-m '", "--message=\"", "--message='"}) {
    std::size_t p = rest.find(m);
    if (p == std::string_view::npos) continue;
    char q = m.back();
    std::size_t s = p + m.size();
    std::size_t e = s;
    while (e < rest.size() && !(rest[e] == q && rest[e - 1] != '\\')) ++e;
    return first_line(rest.substr(s, e - s));
  }
  return {};
}

History parse_history(std::string_view text, const std::vector<std::string>& focus_words) {
  Parser p(focus_words);
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    p.line(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (nl == text.size()) break;
  }
  p.flush();
  p.end_turn();
  // Resolution: an error is resolved when a later call with the same key succeeded.
  std::map<std::string, std::size_t> last_ok;
  for (std::size_t i = p.h.calls.size(); i-- > 0;) {
    HistoryCall& c = p.h.calls[i];
    const std::string k = c.key();
    if (c.error) c.resolved = last_ok.count(k) > 0;
    else if (c.answered) last_ok[k] = i;
  }
  return std::move(p.h);
}

}  // namespace ctxfold
