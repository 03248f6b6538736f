// A grep pattern compiled (Matcher) and what it requires of a text: the index lookup
// (index_query) and the literal prefilters (raw_filter, text_filter).
#include "recall/grep.hpp"

#include <fmt/format.h>
#include <re2/re2.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

#include "recall/grep_detail.hpp"
#include "recall/text_index.hpp"
#include "recall/text_packs.hpp"
#include "recall/tri_index.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "util/literal_search.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

using grep_detail::cp_at;
using grep_detail::cp_len;

/// Folds the non-ASCII characters of a regular expression (they cannot be syntax) and leaves
/// ASCII to RE2's case-insensitive mode, so `\W` or `\S` keep their meaning.
std::string fold_regex(std::string_view pattern) {
  std::string out;
  std::size_t i = 0;
  while (i < pattern.size()) {
    std::size_t j = i;
    while (j < pattern.size() && static_cast<unsigned char>(pattern[j]) >= 0x80) ++j;
    if (j > i) {
      out += casefold(pattern.substr(i, j - i));
      i = j;
    } else {
      out.push_back(pattern[i++]);
    }
  }
  return out;
}

/// The number of code points in s.
std::size_t cp_count(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); i += cp_len(static_cast<unsigned char>(s[i]))) ++n;
  return n;
}

/// The part of s from its first fold anchor up to (not including) its last one: wherever s occurs
/// in a text, casefold(core) occurs in casefold(text) (is_fold_anchor). Empty when s has fewer
/// than two anchors.
std::string_view anchored_core(std::string_view s) {
  std::optional<std::size_t> first;
  std::size_t last = 0;
  for (std::size_t i = 0; i < s.size(); i += cp_len(static_cast<unsigned char>(s[i]))) {
    if (!is_fold_anchor(cp_at(s, i))) continue;
    if (!first) first = i;
    last = i;
  }
  if (!first || last <= *first) return {};
  return s.substr(*first, last - *first);
}

/// For an ASCII character c: every character that c followed by combining marks can become in
/// casefold(text) (folding composes, e.g. "c\u0301" -> "ć", "<\u0338" -> "≮"): each BMP code
/// point whose canonical decomposition starts with c, and its casefold. No code point outside
/// the BMP decomposes to an ASCII start.
const std::vector<std::string>& composed_from(char c) {
  static const auto table = [] {
    std::array<std::vector<std::string>, 128> t;
    for (utf8proc_int32_t cp = 0x80; cp <= 0xFFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      utf8proc_int32_t buf[16];
      int boundclass = 0;
      const auto n = utf8proc_decompose_char(cp, buf, 16, UTF8PROC_DECOMPOSE, &boundclass);
      if (n < 2 || n > 16 || buf[0] < 0 || buf[0] >= 0x80) continue;
      utf8proc_uint8_t enc[4];
      const auto len = utf8proc_encode_char(cp, enc);
      const std::string ch(reinterpret_cast<const char*>(enc), static_cast<std::size_t>(len));
      auto& v = t[static_cast<std::size_t>(buf[0])];
      v.push_back(ch);
      const std::string folded = casefold(ch);
      if (folded != ch) v.push_back(folded);
    }
    return t;
  }();
  return table[static_cast<unsigned char>(c) & 0x7F];
}

/// The memory budget of one compiled expression (RE2::Options::max_mem): the compiled program
/// and its DFA caches. A pattern whose program does not fit is refused when compiled; a DFA that
/// fills its share flushes its cache and, when that repeats, RE2 matches with its NFA (slower,
/// still linear in the text, no recursion).
constexpr std::int64_t kRegexMaxMem = std::int64_t{32} << 20;

std::unique_ptr<re2::RE2> compile_re2(const std::string& expr, bool ignore_case) {
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_never_capture(true);
  opts.set_case_sensitive(!ignore_case);
  opts.set_max_mem(kRegexMaxMem);
  return std::make_unique<re2::RE2>(expr, opts);
}

/// Why RE2 refused `re` (compiled from the user's `pattern`), as an Error(usage,
/// "grep.bad_pattern") naming the problem and the character where it starts.
Error bad_pattern(const std::string& pattern, const std::string& compiled, const re2::RE2& re) {
  const std::string& arg = re.error_arg();
  std::string where;
  // RE2 names the whole expression for a missing ) or ]: no position to point at then.
  const bool whole = arg == pattern || arg == compiled;
  std::size_t at = arg.empty() || whole ? std::string::npos : pattern.find(arg);
  if (at == std::string::npos && !arg.empty() && !whole) {
    at = compiled.find(arg);  // under -i the fragment is the folded one
    if (at != std::string::npos) where = fmt::format(" at character {}", cp_count(compiled.substr(0, at)) + 1);
  } else if (at != std::string::npos) {
    where = fmt::format(" at character {}", cp_count(pattern.substr(0, at)) + 1);
  }
  std::string hint = "RE2 syntax (no backreferences, no lookaround); drop --regex to search for the text literally";
  if (re.error_code() == re2::RE2::ErrorPatternTooLarge)
    hint = fmt::format("the compiled expression needs more than {} MiB: use a smaller repetition count or a shorter "
                       "pattern", kRegexMaxMem >> 20);
  else if (re.error_code() == re2::RE2::ErrorBadEscape && arg.size() >= 2 && arg[1] >= '1' && arg[1] <= '9')
    hint = "backreferences (\\1...) are not supported: RE2 syntax matches in linear time";
  else if (re.error_code() == re2::RE2::ErrorBadPerlOp && (arg == "(?=" || arg == "(?!" || arg.rfind("(?<", 0) == 0))
    hint = "lookaround ((?=...), (?!...), (?<=...)) is not supported: RE2 syntax matches in linear time";
  return Error(Exit::usage, "grep.bad_pattern",
               fmt::format("invalid regular expression '{}'{}: {}", pattern, where, re.error()), hint);
}

/// Whether a whole-text search with ^ and $ at line edges ("(?m)" + re) finds every match the
/// line-by-line search finds, at the same offset: not when `re` holds \\A or \\z (they anchor at
/// a line's edges line by line, at the text's edges otherwise) or a flag group such as (?-m)
/// (conservatively: any backslash before A or z, any "(?" but "(?:" and "(?P").
bool whole_search_sound(std::string_view re) {
  for (std::size_t i = 0; i + 1 < re.size(); ++i) {
    if (re[i] == '\\' && (re[i + 1] == 'A' || re[i + 1] == 'z')) return false;
    const bool flags = re[i] == '(' && re[i + 1] == '?' && (i + 2 >= re.size() || (re[i + 2] != ':' && re[i + 2] != 'P'));
    if (flags) return false;
  }
  return true;
}

}  // namespace

struct Matcher::Impl {
  bool regex = false;
  bool ignore_case = false;
  std::string needle;  // literal (folded under ignore_case)
  std::string compiled;  // the regular expression as compiled
  std::unique_ptr<re2::RE2> re;
  /// "(?m)" + compiled: ^ and $ at every line's edges. Every line-by-line match is a match of
  /// this one over the whole text at the same offset, so its first match (or none) says from
  /// which line on to look; null where that does not hold (whole_search_sound).
  std::unique_ptr<re2::RE2> whole;

  std::optional<std::size_t> find_in(std::string_view text) const {
    if (!regex) {
      std::size_t p = text.find(needle);
      if (p == std::string_view::npos) return std::nullopt;
      return p;
    }
    const re2::StringPiece all(text.data(), text.size());
    re2::StringPiece m;
    std::size_t line = 0;
    if (whole) {
      if (!whole->Match(all, 0, text.size(), re2::RE2::UNANCHORED, &m, 1)) return std::nullopt;
      const std::size_t at = static_cast<std::size_t>(m.data() - text.data());
      const std::size_t nl = text.rfind('\n', at == 0 ? 0 : at - 1);
      line = at == 0 || nl == std::string_view::npos ? 0 : nl + 1;
    }
    while (line <= text.size()) {
      std::size_t nl = text.find('\n', line);
      std::size_t e = nl == std::string_view::npos ? text.size() : nl;
      const re2::StringPiece ln(text.data() + line, e - line);
      if (re->Match(ln, 0, ln.size(), re2::RE2::UNANCHORED, &m, 1))
        return static_cast<std::size_t>(m.data() - text.data());
      if (nl == std::string_view::npos) break;
      line = nl + 1;
    }
    return std::nullopt;
  }
};

Matcher::Matcher(const std::string& pattern, bool regex, bool ignore_case) : impl_(std::make_unique<Impl>()) {
  if (pattern.empty())
    throw Error(Exit::usage, "grep.empty_pattern", "empty pattern", "give the text to search for");
  const std::string p = utf8_sanitize(pattern);
  impl_->regex = regex;
  impl_->ignore_case = ignore_case;
  if (!regex) {
    impl_->needle = ignore_case ? casefold(p) : p;
    return;
  }
  impl_->compiled = ignore_case ? fold_regex(p) : p;
  impl_->re = compile_re2(impl_->compiled, ignore_case);
  if (!impl_->re->ok()) throw bad_pattern(p, impl_->compiled, *impl_->re);
  if (whole_search_sound(impl_->compiled)) {
    impl_->whole = compile_re2("(?m)" + impl_->compiled, ignore_case);
    if (!impl_->whole->ok()) impl_->whole.reset();  // the shortcut is an optimisation only
  }
}
Matcher::~Matcher() = default;
Matcher::Matcher(Matcher&&) noexcept = default;

bool Matcher::matches(std::string_view text) const {
  if (!impl_->ignore_case) return impl_->find_in(text).has_value();
  return impl_->find_in(casefold(text)).has_value();
}

std::optional<std::size_t> Matcher::find_grapheme(std::string_view text) const {
  if (!impl_->ignore_case) {
    auto b = impl_->find_in(text);
    if (!b) return std::nullopt;
    std::size_t at = *b;
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;  // a regex may start mid-sequence
    return grapheme_count(text.substr(0, at));
  }
  FoldedText f = casefold_mapped(text);
  auto q = impl_->find_in(f.text);
  if (!q) return std::nullopt;
  return f.grapheme_at(*q);
}

namespace {

/// A \u or \/ escape: the decoded text differs from the raw bytes by more than control
/// characters, quotes and backslashes.
bool has_text_changing_escape(std::string_view raw) {
  const char* p = raw.data();
  const char* end = p + raw.size();
  while ((p = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p))))) {
    if (p + 1 >= end) return false;
    if (p[1] == 'u' || p[1] == '/') return true;
    p += 2;  // skip the escaped character (it may be a backslash)
  }
  return false;
}

}  // namespace

std::optional<RawFilter> Matcher::raw_filter() const { return filter(true); }
std::optional<RawFilter> Matcher::text_filter() const { return filter(false); }
bool Matcher::literal() const { return !impl_->regex; }

std::optional<RawFilter> Matcher::filter(bool json) const {
  const Impl& m = *impl_;
  std::string lit;
  if (!m.regex) {
    lit = m.needle;
  } else {
    for (const std::string& run : regex_required_literals(m.compiled)) {
      std::string l = m.ignore_case ? ascii_lower(run) : run;
      if (l.size() > lit.size()) lit = std::move(l);
    }
  }
  if (lit.empty()) return std::nullopt;
  RawFilter f;
  f.ignore_case = m.ignore_case;
  if (m.ignore_case) {
    // Under -i only characters that casefold(text) holds where the text holds them (up to ASCII
    // case) are safe: ASCII, and CJK unified ideographs (only compatibility ideographs fold into
    // them). Any other character (ü, Σ, kana or Hangul, which composition can produce) splits the
    // literal: its longest safe run is then what every match holds, and hits are verified.
    std::size_t best = 0, best_len = 0, run = 0;
    bool whole = true;
    for (std::size_t i = 0; i <= lit.size();) {
      const std::size_t n = i < lit.size() ? cp_len(static_cast<unsigned char>(lit[i])) : 1;
      const std::uint32_t cp = i < lit.size() ? cp_at(lit, i) : 0;
      const bool safe = i < lit.size() && (cp < 0x80 || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF));
      if (!safe) {
        if (i < lit.size()) whole = false;
        if (i - run > best_len) {
          best = run;
          best_len = i - run;
        }
        run = i + n;
      }
      i += n;
    }
    if (!whole) {
      lit = lit.substr(best, best_len);
      f.whole = false;
      if (lit.empty()) return std::nullopt;
    }
    f.needs_cjk_check = std::any_of(lit.begin(), lit.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
  }
  if (json) {
    for (unsigned char c : lit)
      if (c < 0x20 || c == '"' || c == '\\') return std::nullopt;  // escaped in JSON: not verbatim in the raw column
    if (lit.find("\xEF\xBF\xBD") != std::string::npos) return std::nullopt;  // U+FFFD: may stand for replaced bytes
  }
  bool anchored = true;
  for (std::size_t i = 0; i < lit.size() && anchored; i += cp_len(static_cast<unsigned char>(lit[i])))
    anchored = is_fold_anchor(cp_at(lit, i));
  f.anchored = anchored && casefold(lit) == lit;
  f.literal = std::move(lit);
  return f;
}

bool RawFilter::may_match(std::string_view raw) const {
  auto has = [&](std::string_view s) { return raw.find(s) != std::string_view::npos; };
  const bool found = ignore_case ? LiteralSearch(literal, true).find(raw) != std::string_view::npos : has(literal);
  if (found) return true;
  // Not in the raw JSON. That proves no match only where node_text is the raw strings verbatim:
  // no \u or \/ escape, no tool_use (node_text re-serializes its input after "name "), and under
  // -i no character that folds into the literal's characters.
  if (has("\"tool_use\"") || has_text_changing_escape(raw)) return true;
  if (ignore_case && any_folds_to_ascii(raw)) return true;
  if (needs_cjk_check && any_cjk_compat(raw)) return true;
  return false;
}

std::optional<IndexQuery> Matcher::index_query() const {
  const Impl& m = *impl_;
  std::string best;
  auto consider = [&](std::string lit) {
    if (cp_count(lit) > cp_count(best)) best = std::move(lit);
  };
  bool exact = false;
  if (!m.regex && cp_count(m.needle) <= 2) {
    auto unified = [](std::uint32_t cp) { return (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF); };
    bool all_unified = true;
    for (std::size_t i = 0; i < m.needle.size(); i += cp_len(static_cast<unsigned char>(m.needle[i])))
      all_unified = all_unified && unified(cp_at(m.needle, i));
    if (is_short_gram(m.needle) && (m.ignore_case || all_unified)) {
      IndexQuery q;
      q.gram = m.needle;  // casefold(pattern) under -i; the ideographs themselves otherwise
      q.exact = m.ignore_case;
      return q;
    }
    return std::nullopt;
  }
  if (!m.regex) {
    if (m.ignore_case) {
      // The needle is casefold(pattern) and the index holds casefold(text): a trigram phrase
      // match is exactly "the needle occurs in the folded text".
      best = m.needle;
      exact = true;
    } else {
      consider(casefold(anchored_core(m.needle)));
    }
  } else {
    for (const std::string& run : regex_required_literals(m.compiled)) {
      // Under -i the expression runs over casefold(text) with ASCII compared case-insensitively,
      // and casefold(text) holds no upper-case ASCII.
      consider(m.ignore_case ? ascii_lower(run) : casefold(anchored_core(run)));
    }
  }
  auto phrase = [](std::string_view lit) {
    std::string q = "\"";
    for (char c : lit) {
      if (c == '"') q += '"';
      q += c;
    }
    return q + '"';
  };
  if (cp_count(best) < 3 && !m.regex && !m.ignore_case && m.needle.size() == 3 &&
      std::all_of(m.needle.begin(), m.needle.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    // Three ASCII characters, case-sensitive: the text holds them, so its fold holds the first two
    // lower-cased and then the third lower-cased or composed with the marks after it. Every hit
    // is verified.
    const std::string head = ascii_lower(m.needle.substr(0, 2));
    const char last = ascii_lower(m.needle.substr(2))[0];
    std::set<std::string> lasts = {std::string(1, last)};
    for (char c : {m.needle[2], last})
      for (const std::string& v : composed_from(c)) lasts.insert(v);
    std::string q;
    std::vector<std::string> literals;
    for (const std::string& v : lasts) {
      q += (q.empty() ? "" : " OR ") + phrase(head + v);
      literals.push_back(head + v);
    }
    return IndexQuery{std::move(q), false, {}, {}, std::move(literals)};
  }
  if (cp_count(best) < 3) return std::nullopt;  // no trigram to look up
  IndexQuery q{phrase(best), exact, {}, {}, {best}};
  if (!m.regex && m.ignore_case && tri_answerable(m.needle)) q.tri = m.needle;
  return q;
}

GrepIn parse_grep_in(const std::string& in) {
  if (in == "raw") return GrepIn::raw;
  if (in == "summaries") return GrepIn::summaries;
  if (in == "both") return GrepIn::both;
  if (in == "thinking") return GrepIn::thinking;
  throw Error(Exit::usage, "grep.in", fmt::format("unknown --in '{}'", in), "use raw, summaries, both or thinking");
}

Json grep_match_record(const GrepMatch& m, GrepIn in) {
  return {{"session", m.session},
          {"id", m.id},
          {"seq", m.seq},
          {"kind", m.kind},
          {"role", m.role.empty() ? Json(nullptr) : Json(m.role)},
          {"raw", m.raw},
          {"in", in == GrepIn::thinking ? "thinking" : "text"},
          {"covered_by", m.covered_by ? Json(*m.covered_by) : Json(nullptr)},
          {"offset", m.offset},
          {"snippet", m.snippet}};
}

}  // namespace ctxfold
