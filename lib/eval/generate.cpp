#include "eval/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "eval/eval.hpp"
#include "model/identifiers.hpp"
#include "render/blocks.hpp"
#include "summarize/history.hpp"
#include "util/graphemes.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

std::string cut(std::string_view s, std::size_t max_bytes) { return std::string(s.substr(0, utf8_safe_prefix(s, max_bytes))); }

/// s cut to at most max_bytes at a word boundary (at a UTF-8 boundary when it has no space).
std::string cut_at_word(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::string c = cut(s, max_bytes);
  std::size_t sp = c.rfind(' ');
  if (sp != std::string::npos && sp > max_bytes / 2) c.resize(sp);
  return c;
}

std::string base_name(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  for (char c : text) {
    if (word_char(c)) {
      w.push_back(c);
      continue;
    }
    if (!w.empty()) out.push_back(std::move(w));
    w.clear();
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

/// A word that reads as code: 8+ characters, starting with a letter or '_', holding '_', a digit
/// or a capital after the first character.
bool code_like(const std::string& w) {
  if (w.size() < 8 || std::isdigit(static_cast<unsigned char>(w[0]))) return false;
  for (std::size_t i = 1; i < w.size(); ++i)
    if (w[i] == '_' || std::isdigit(static_cast<unsigned char>(w[i])) || std::isupper(static_cast<unsigned char>(w[i])))
      return true;
  return false;
}

/// The up to `n` longest words of `text` of at least `min` letters that `exclude` (folded) does not
/// hold, longest first, earlier first among equals; no duplicates.
std::vector<std::string> longest_words(std::string_view text, std::size_t min, std::size_t n, std::string_view exclude) {
  const std::string ex = casefold(exclude);
  std::vector<std::string> ws;
  for (std::string& w : words_of(text)) {
    if (w.size() < min || ex.find(casefold(w)) != std::string::npos) continue;
    if (std::find(ws.begin(), ws.end(), w) == ws.end()) ws.push_back(std::move(w));
  }
  std::stable_sort(ws.begin(), ws.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  if (ws.size() > n) ws.resize(n);
  return ws;
}

/// The new text and the replaced text of a file-writing call's input.
struct Written {
  std::string added, replaced;
};

Written written_text(const Json& input) {
  Written w;
  if (!input.is_object()) return w;
  for (const char* k : {"new_string", "new_str", "content", "file_text", "new_source"})
    if (auto it = input.find(k); it != input.end() && it->is_string()) w.added += it->get<std::string>() + "\n";
  for (const char* k : {"old_string", "old_str"})
    if (auto it = input.find(k); it != input.end() && it->is_string()) w.replaced += it->get<std::string>() + "\n";
  if (auto it = input.find("edits"); it != input.end() && it->is_array())
    for (const Json& e : *it) {
      w.added += json_str(e, "new_string") + "\n";
      w.replaced += json_str(e, "old_string") + "\n";
    }
  if (auto it = input.find("input"); it != input.end() && it->is_string() && it->get<std::string>().find("*** ") != std::string::npos) {
    for (std::string_view line : split_lines(it->get<std::string>())) {
      if (line.starts_with("+") && !line.starts_with("+++")) w.added += std::string(line.substr(1)) + "\n";
      if (line.starts_with("-") && !line.starts_with("---")) w.replaced += std::string(line.substr(1)) + "\n";
    }
  }
  return w;
}

/// Keeps n of `all` spread evenly over it, the first and the last included.
template <class T>
std::vector<T> spread(const std::vector<T>& all, std::size_t n) {
  if (all.size() <= n) return all;
  std::vector<T> out;
  if (n == 0) return out;
  if (n == 1) return {all.back()};
  for (std::size_t i = 0; i < n; ++i) out.push_back(all[i * (all.size() - 1) / (n - 1)]);
  return out;
}

Probe make_probe(ProbeClass c, std::string question, std::vector<std::string> expect, std::vector<std::string> terms = {}) {
  Probe p;
  p.klass = c;
  p.question = std::move(question);
  p.expect = std::move(expect);
  p.terms = std::move(terms);
  p.where = "generated";
  return p;
}

std::vector<Probe> file_probes(const History& h) {
  std::map<std::string, std::set<std::string>> files_of_word;  // word -> files whose calls write it
  struct Candidate {
    std::string word, path;
    bool created;
  };
  std::vector<Candidate> found;
  for (const HistoryCall& c : h.calls) {
    if (c.paths.empty() || c.error) continue;
    Written w = written_text(c.input);
    if (w.added.empty()) continue;
    const std::vector<std::string> old_words = words_of(w.replaced);
    const std::set<std::string> old(old_words.begin(), old_words.end());
    bool picked = false;
    for (const std::string& word : words_of(w.added)) {
      if (!code_like(word) || old.count(word)) continue;
      files_of_word[word].insert(c.paths.front());
      if (!picked) found.push_back({word, c.paths.front(), w.replaced.empty()});
      picked = true;
    }
  }
  std::vector<Probe> out;
  std::set<std::string> seen;
  for (const Candidate& f : found) {
    if (files_of_word[f.word].size() != 1 || !seen.insert(f.word).second) continue;
    out.push_back(make_probe(ProbeClass::file,
                             fmt::format("Which file was {} to add `{}`?", f.created ? "created" : "edited", f.word),
                             {base_name(f.path)}));
  }
  return out;
}

std::vector<Probe> command_probes(const History& h, const std::map<std::string, std::string>& results) {
  std::map<std::string, int> runs;
  for (const HistoryCall& c : h.calls)
    if (!c.command.empty()) ++runs[c.command];
  std::vector<Probe> out;
  for (const HistoryCall& c : h.calls) {
    if (c.command.empty() || runs[c.command] != 1 || !c.answered) continue;
    auto r = results.find(c.id);
    if (r == results.end()) continue;
    std::string first;
    for (std::string_view line : split_lines(r->second)) {
      first = collapse_space(line);
      if (!first.empty()) break;
    }
    if (first.size() < 12 || c.command.find(first) != std::string::npos) continue;
    std::string shown = cut(c.command, 100);
    out.push_back(make_probe(ProbeClass::command, fmt::format("What was the first line of output of the command `{}`?", shown),
                             {cut(first, 60)}));
  }
  return out;
}

std::vector<Probe> decision_probes(const History& h) {
  std::vector<Probe> out;
  for (const HistoryTurn& t : h.turns) {
    if (t.request.empty()) continue;
    const std::string req = cut_at_word(t.request, 80);
    std::vector<std::string> terms = longest_words(t.request, 6, 2, "");
    std::set<std::string> commits;  // a turn with several commits has no one answer
    for (std::size_t i : t.calls)
      if (!h.calls[i].commit.empty()) commits.insert(h.calls[i].commit);
    if (commits.size() == 1) {
      const std::string& commit = *commits.begin();
      out.push_back(make_probe(ProbeClass::decision,
                               fmt::format("Which commit message did the agent write for the work on the request \"{}\"?", req),
                               {cut(commit, 50)}, terms));
      continue;
    }
    if (!t.completed || t.outcome.empty()) continue;
    std::string q = fmt::format("What did the agent conclude at the end of the work on the request \"{}\"?", req);
    std::vector<std::string> expect = longest_words(t.outcome, 7, 2, q);
    if (expect.empty()) continue;
    out.push_back(make_probe(ProbeClass::decision, std::move(q), std::move(expect), terms));
  }
  return out;
}

std::vector<Probe> next_step_probe(const History& h) {
  std::string step;
  for (const char* status : {"in_progress", "pending"}) {
    for (const PlanItem& p : h.plan)
      if (p.status == status && step.empty()) step = p.text;
  }
  if (step.empty()) step = h.last_statement;
  std::string q = "What is the next step at the end of this history?";
  std::vector<std::string> expect = longest_words(step, 7, 2, q);
  if (expect.empty()) return {};
  return {make_probe(ProbeClass::next_step, std::move(q), std::move(expect))};
}

/// The text of every tool result of `history`, by tool_use id.
std::map<std::string, std::string> tool_results(const std::vector<Node>& history) {
  std::map<std::string, std::string> out;
  for (const Node& n : history) {
    if (!n.content.is_array()) continue;
    for (const Json& b : n.content)
      if (render_detail::is_type(b, "tool_result")) {
        // block_text writes "[tool_result ID]" on a line of its own before the result's text.
        std::string text = render_detail::block_text(b);
        std::size_t nl = text.find('\n');
        out[json_str(b, "tool_use_id")] = nl == std::string::npos ? std::string() : text.substr(nl + 1);
      }
  }
  return out;
}

}  // namespace

std::vector<Probe> generate_probes(const std::vector<Node>& history, const GenerateOptions& opts) {
  const History h = parse_history(context_text(history), {});
  std::vector<Probe> out;
  auto take = [&](std::vector<Probe> ps, std::size_t n) {
    std::size_t k = 0;
    for (Probe& p : spread(ps, n)) {
      p.id = fmt::format("gen-{}-{}", probe_class_name(p.klass), ++k);
      out.push_back(std::move(p));
    }
  };
  take(file_probes(h), opts.per_class);
  take(command_probes(h, tool_results(history)), opts.per_class);
  take(decision_probes(h), opts.per_class);
  take(next_step_probe(h), std::min<std::size_t>(opts.per_class, 1));
  return out;
}

}  // namespace ctxfold
