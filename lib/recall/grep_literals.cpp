// The literal runs a regular expression requires (regex_required_literals): what the index and
// the raw-content prefilter look for on behalf of a --regex pattern.
#include <algorithm>
#include <cctype>

#include "recall/grep.hpp"
#include "recall/grep_detail.hpp"

namespace ctxfold {

namespace {

using grep_detail::cp_len;

/// The literal runs read so far and the one being read.
struct Runs {
  std::vector<std::string> runs;
  std::string cur;

  void flush() {
    if (!cur.empty()) runs.push_back(cur);
    cur.clear();
  }
  void drop_last() {  // a quantifier that allows zero repetitions applies to the last character
    if (cur.empty()) return;
    std::size_t i = cur.size() - 1;
    while (i > 0 && (static_cast<unsigned char>(cur[i]) & 0xC0) == 0x80) --i;
    cur.resize(i);
  }
};

/// Skips a bracket expression starting at re[i] == '['; returns the index after its ']'. RE2: a
/// ']' right after '[' or '[^' is a member, and [:alpha:] names a class inside the brackets.
std::size_t skip_class(std::string_view re, std::size_t i) {
  ++i;
  if (i < re.size() && re[i] == '^') ++i;
  if (i < re.size() && re[i] == ']') ++i;
  while (i < re.size() && re[i] != ']') {
    if (re[i] == '[' && i + 1 < re.size() && re[i + 1] == ':') {
      const std::size_t close = re.find(":]", i + 2);
      i = close == std::string_view::npos ? re.size() : close + 2;
    } else {
      i += re[i] == '\\' ? 2 : 1;
    }
  }
  return std::min(i + 1, re.size());
}

/// Skips the group starting at re[i] == '(' (escapes, classes and nested groups inside it);
/// returns the index after its ')'.
std::size_t skip_group(std::string_view re, std::size_t i) {
  int depth = 0;
  while (i < re.size()) {
    if (re[i] == '\\') {
      i += 2;
      continue;
    }
    if (re[i] == '[') {
      i = skip_class(re, i);
      continue;
    }
    if (re[i] == '(') ++depth;
    if (re[i] == ')' && --depth == 0) break;
    ++i;
  }
  return i + 1;
}

/// Whether the group at re[i] == '(' is a flag group "(?flags)" or "(?flags:" whose flags name
/// i (case-insensitive from there on, or its negation): its literals are then not byte for byte.
bool sets_case_flag(std::string_view re, std::size_t i) {
  if (i + 2 >= re.size() || re[i + 1] != '?' || re[i + 2] == 'P') return false;  // (?P<name>...) names a group
  for (std::size_t k = i + 2; k < re.size() && re[k] != ')' && re[k] != ':'; ++k)
    if (re[k] == 'i') return true;
  return false;
}

/// The index after the argument of \p or \P (one letter, or {Name}) or \x (two hex digits, or
/// {hex}) that starts at re[i].
std::size_t skip_braced_or(std::string_view re, std::size_t i, std::size_t plain) {
  if (i < re.size() && re[i] == '{') {
    const std::size_t close = re.find('}', i);
    return close == std::string_view::npos ? re.size() : close + 1;
  }
  return std::min(i + plain, re.size());
}

/// Reads the escape starting at re[i] == '\\' into r (RE2 syntax, docs/commands.md "grep");
/// returns the index after it.
std::size_t read_escape(std::string_view re, std::size_t i, Runs& r) {
  if (i + 1 >= re.size()) {
    r.flush();
    return i + 1;
  }
  const unsigned char e = static_cast<unsigned char>(re[i + 1]);
  if (e < 0x80 && !std::isalnum(e)) {  // an escaped punctuation character stands for itself
    r.cur.push_back(static_cast<char>(e));
    return i + 2;
  }
  if (e == 'Q') {  // \Q...\E: every character up to \E (or the end) stands for itself
    const std::size_t end = re.find("\\E", i + 2);
    r.cur.append(re.substr(i + 2, end == std::string_view::npos ? std::string_view::npos : end - (i + 2)));
    return end == std::string_view::npos ? re.size() : end + 2;
  }
  r.flush();  // \d \w \b \n \pL \x41 \123 ...: not a literal run
  if (e == 'p' || e == 'P') return skip_braced_or(re, i + 2, 1);
  if (e == 'x') return skip_braced_or(re, i + 2, 2);
  std::size_t k = i + 2;
  if (std::isdigit(e))  // an octal code: up to three digits (skip every digit that follows)
    while (k < re.size() && std::isdigit(static_cast<unsigned char>(re[k]))) ++k;
  return k;
}

}  // namespace

std::vector<std::string> regex_required_literals(std::string_view re) {
  Runs r;
  std::size_t i = 0;
  while (i < re.size()) {
    const char c = re[i];
    switch (c) {
      case '|':
        return {};  // an alternative: nothing is required by every match
      case '*':
      case '?':
        r.drop_last();
        r.flush();
        ++i;
        break;
      case '{': {
        r.drop_last();
        r.flush();
        while (i < re.size() && re[i] != '}') ++i;
        ++i;
        break;
      }
      case '+':
        r.flush();
        ++i;
        break;
      case '(':  // a group is skipped whole (it may be optional or repeated)
        if (sets_case_flag(re, i)) return {};
        r.flush();
        i = skip_group(re, i);
        break;
      case '[':
        r.flush();
        i = skip_class(re, i);
        break;
      case '\\':
        i = read_escape(re, i, r);
        break;
      case '.':
      case '^':
      case '$':
      case ')':
      case ']':
      case '}':
        r.flush();
        ++i;
        break;
      default: {
        const std::size_t n = cp_len(static_cast<unsigned char>(c));
        r.cur.append(re.substr(i, n));
        i += n;
      }
    }
  }
  r.flush();
  return r.runs;
}

}  // namespace ctxfold
