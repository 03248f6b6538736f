#include "eval/probes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "model/identifiers.hpp"
#include "util/error.hpp"
#include "util/lines.hpp"
#include "util/graphemes.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

struct ClassName {
  ProbeClass klass;
  const char* name;
};
constexpr ClassName kClassNames[] = {{ProbeClass::file, "file"},
                                     {ProbeClass::command, "command"},
                                     {ProbeClass::decision, "decision"},
                                     {ProbeClass::next_step, "next_step"}};

[[noreturn]] void bad_line(const std::string& where, const std::string& what) {
  throw Error(Exit::bad_input, "eval.probe", fmt::format("{}: {}", where, what),
              "each line is {\"id\",\"class\",\"question\",\"expect\":[...]} (docs/eval.md \"Probes\")");
}

std::string required_string(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) bad_line(where, fmt::format("missing \"{}\"", key));
  if (!it->is_string()) bad_line(where, fmt::format("\"{}\" must be a string", key));
  std::string v = it->get<std::string>();
  if (v.find_first_not_of(" \t\r\n") == std::string::npos) bad_line(where, fmt::format("\"{}\" is blank", key));
  return v;
}

/// A string or an array of non-blank strings; `allow_empty` for terms.
std::vector<std::string> string_list(const Json& j, const char* key, const std::string& where, bool allow_empty) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end()) {
    if (allow_empty) return out;
    bad_line(where, fmt::format("missing \"{}\"", key));
  }
  if (it->is_string()) {
    out.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    for (const Json& v : *it) {
      if (!v.is_string()) bad_line(where, fmt::format("\"{}\" must hold strings only", key));
      out.push_back(v.get<std::string>());
    }
  } else {
    bad_line(where, fmt::format("\"{}\" must be a string or an array of strings", key));
  }
  if (out.empty() && !allow_empty) bad_line(where, fmt::format("\"{}\" is empty: a probe needs an expected answer", key));
  for (const std::string& s : out)
    if (normalize_for_scoring(s).empty()) bad_line(where, fmt::format("\"{}\" holds a blank string", key));
  return out;
}

Probe probe_from_line(const Json& j, const std::string& where) {
  if (!j.is_object()) bad_line(where, "not a JSON object");
  static const std::set<std::string> kKeys = {"type", "id", "class", "question", "expect", "terms"};
  for (const auto& [k, v] : j.items())
    if (!kKeys.count(k)) bad_line(where, fmt::format("unknown key \"{}\"", k));
  if (j.contains("type") && j["type"] != "probe") bad_line(where, "\"type\" must be \"probe\"");
  Probe p;
  p.where = where;
  p.id = required_string(j, "id", where);
  std::string klass = required_string(j, "class", where);
  std::optional<ProbeClass> c = parse_probe_class(klass);
  if (!c) bad_line(where, fmt::format("unknown class '{}' (file, command, decision or next_step)", klass));
  p.klass = *c;
  p.question = required_string(j, "question", where);
  p.expect = string_list(j, "expect", where, false);
  p.terms = string_list(j, "terms", where, true);
  return p;
}

std::string cut(std::string s, std::size_t max_bytes) {
  s.resize(utf8_safe_prefix(s, max_bytes));
  return s;
}

/// The spans of `q` between two `open`/`close` characters, in order.
std::vector<std::string> quoted_spans(std::string_view q, char mark) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while ((at = q.find(mark, at)) != std::string_view::npos) {
    std::size_t end = q.find(mark, at + 1);
    if (end == std::string_view::npos) break;
    if (end > at + 1) out.emplace_back(q.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return out;
}

std::vector<std::string> long_words(std::string_view q) {
  std::vector<std::string> words;
  std::string w;
  auto flush = [&] {
    if (w.size() >= 6) words.push_back(w);
    w.clear();
  };
  for (char c : q) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80)) w.push_back(c);
    else flush();
  }
  flush();
  std::stable_sort(words.begin(), words.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return words;
}

}  // namespace

const char* probe_class_name(ProbeClass c) {
  for (const ClassName& n : kClassNames)
    if (n.klass == c) return n.name;
  return "file";
}

std::optional<ProbeClass> parse_probe_class(std::string_view name) {
  for (const ClassName& n : kClassNames)
    if (name == n.name) return n.klass;
  return std::nullopt;
}

const std::vector<ProbeClass>& probe_classes() {
  static const std::vector<ProbeClass> all = {ProbeClass::file, ProbeClass::command, ProbeClass::decision,
                                              ProbeClass::next_step};
  return all;
}

void for_each_jsonl_line(std::string_view text, const std::string& label,
                         const std::function<void(const std::string& where, const Json& record)>& fn) {
  std::int64_t line_no = 0;
  for_each_line(text, [&](std::string_view line) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    fn(fmt::format("{}:{}", label, line_no), Json::parse(line, nullptr, false));
  });
}

std::vector<Probe> parse_probes(std::string_view text, const std::string& label) {
  std::vector<Probe> out;
  std::set<std::string> ids;
  for_each_jsonl_line(text, label, [&](const std::string& where, const Json& j) {
    if (j.is_discarded()) bad_line(where, "not valid JSON");
    if (j.is_object() && j.contains("type") && j["type"] == "summary") return;  // `eval --generate`'s closing record
    Probe p = probe_from_line(j, where);
    if (!ids.insert(p.id).second) bad_line(where, fmt::format("probe id '{}' is used twice", p.id));
    out.push_back(std::move(p));
  });
  if (out.empty()) throw Error(Exit::bad_input, "eval.probe", fmt::format("{}: no probes", label));
  return out;
}

Json probe_to_json(const Probe& p) {
  Json j{{"id", p.id}, {"class", probe_class_name(p.klass)}, {"question", p.question}, {"expect", p.expect}};
  if (!p.terms.empty()) j["terms"] = p.terms;
  return j;
}

std::string normalize_for_scoring(std::string_view text) {
  std::string folded = casefold(utf8_sanitize(text));
  std::replace_if(folded.begin(), folded.end(), [](char c) { return c == '\f' || c == '\v'; }, ' ');
  return collapse_space(folded);
}

bool answer_correct(std::string_view answer, const std::vector<std::string>& expect) {
  if (expect.empty()) return false;
  const std::string a = normalize_for_scoring(answer);
  return std::all_of(expect.begin(), expect.end(),
                     [&](const std::string& e) { return a.find(normalize_for_scoring(e)) != std::string::npos; });
}

std::vector<std::string> recall_terms(const Probe& probe) {
  std::vector<std::string> candidates = probe.terms;
  if (candidates.empty()) {
    candidates = quoted_spans(probe.question, '`');
    for (std::string& s : quoted_spans(probe.question, '"')) candidates.push_back(std::move(s));
    if (candidates.empty()) candidates = long_words(probe.question);
  }
  std::vector<std::string> out;
  for (std::string& c : candidates) {
    std::string t = cut(std::move(c), 60);
    if (normalize_for_scoring(t).empty() || std::find(out.begin(), out.end(), t) != out.end()) continue;
    out.push_back(std::move(t));
    if (out.size() == 3) break;
  }
  return out;
}

}  // namespace ctxfold
