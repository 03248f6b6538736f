#include "recall/grep.hpp"
#include "model/view_kinds.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <regex>
#include <set>
#include <unordered_set>

#include "recall/expand.hpp"
#include "recall/text_index.hpp"
#include "recall/text_packs.hpp"
#include "recall/tri_index.hpp"
#include "store/map_vfs.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "util/literal_search.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {
constexpr std::size_t kSnippetBefore = 30;
constexpr std::size_t kSnippetGraphemes = 80;

/// Folds the non-ASCII characters of a regular expression (they cannot be syntax) and leaves
/// ASCII to std::regex::icase, so `\W` or `\S` keep their meaning.
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


/// Length in bytes of the UTF-8 sequence starting with lead byte c (1 for anything unexpected).
std::size_t cp_len(unsigned char c) { return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

std::uint32_t cp_at(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t n = cp_len(p[i]);
  if (n == 1 || i + n > s.size()) return p[i];
  std::uint32_t cp = p[i] & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
  return cp;
}

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

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

std::vector<std::string> regex_required_literals(std::string_view re) {
  std::vector<std::string> runs;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) runs.push_back(cur);
    cur.clear();
  };
  auto drop_last = [&] {  // a quantifier that allows zero repetitions applies to the last character
    if (cur.empty()) return;
    std::size_t i = cur.size() - 1;
    while (i > 0 && (static_cast<unsigned char>(cur[i]) & 0xC0) == 0x80) --i;
    cur.resize(i);
  };
  // Skips a bracket expression starting at re[i] == '['; returns the index after its ']'.
  auto skip_class = [&](std::size_t i) {
    ++i;
    if (i < re.size() && re[i] == '^') ++i;
    if (i < re.size() && re[i] == ']') return i + 1;  // ECMAScript: [] is an empty class
    while (i < re.size() && re[i] != ']') i += re[i] == '\\' ? 2 : 1;
    return std::min(i + 1, re.size());
  };
  std::size_t i = 0;
  while (i < re.size()) {
    const char c = re[i];
    switch (c) {
      case '|':
        return {};  // an alternative: nothing is required by every match
      case '*':
      case '?':
        drop_last();
        flush();
        ++i;
        break;
      case '{': {
        drop_last();
        flush();
        while (i < re.size() && re[i] != '}') ++i;
        ++i;
        break;
      }
      case '+':
        flush();
        ++i;
        break;
      case '(': {  // a group is skipped whole (it may be optional, repeated or a lookahead)
        flush();
        int depth = 0;
        while (i < re.size()) {
          if (re[i] == '\\') {
            i += 2;
            continue;
          }
          if (re[i] == '[') {
            i = skip_class(i);
            continue;
          }
          if (re[i] == '(') ++depth;
          if (re[i] == ')' && --depth == 0) break;
          ++i;
        }
        ++i;
        break;
      }
      case '[':
        flush();
        i = skip_class(i);
        break;
      case '\\': {
        if (i + 1 >= re.size()) {
          flush();
          ++i;
          break;
        }
        const unsigned char e = static_cast<unsigned char>(re[i + 1]);
        if (e < 0x80 && !std::isalnum(e)) {  // an escaped punctuation character stands for itself
          cur.push_back(static_cast<char>(e));
        } else {
          flush();  // \d \w \b \n \x41 \u0041 \1 ...: not a literal run
        }
        i += 2;
        break;
      }
      case '.':
      case '^':
      case '$':
      case ')':
      case ']':
      case '}':
        flush();
        ++i;
        break;
      default: {
        const std::size_t n = cp_len(static_cast<unsigned char>(c));
        cur.append(re.substr(i, n));
        i += n;
      }
    }
  }
  flush();
  return runs;
}

struct Matcher::Impl {
  bool regex = false;
  bool ignore_case = false;
  std::string needle;  // literal (folded under ignore_case)
  std::string compiled;  // the regular expression as compiled
  std::regex re;

  std::optional<std::size_t> find_in(std::string_view text) const {
    if (!regex) {
      std::size_t p = text.find(needle);
      if (p == std::string_view::npos) return std::nullopt;
      return p;
    }
    std::size_t line = 0;
    while (line <= text.size()) {
      std::size_t nl = text.find('\n', line);
      std::size_t e = nl == std::string_view::npos ? text.size() : nl;
      std::cmatch m;
      if (std::regex_search(text.data() + line, text.data() + e, m, re)) return line + static_cast<std::size_t>(m.position(0));
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
  try {
    auto flags = std::regex::ECMAScript | std::regex::optimize;
    if (ignore_case) flags |= std::regex::icase;
    impl_->compiled = ignore_case ? fold_regex(p) : p;
    impl_->re = std::regex(impl_->compiled, flags);
  } catch (const std::regex_error& e) {
    throw Error(Exit::usage, "grep.bad_pattern", fmt::format("invalid regular expression '{}': {}", pattern, e.what()),
                "drop --regex to search for the text literally");
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
    for (const std::string& v : lasts) q += (q.empty() ? "" : " OR ") + phrase(head + v);
    return IndexQuery{std::move(q), false, {}, {}};
  }
  if (cp_count(best) < 3) return std::nullopt;  // no trigram to look up
  IndexQuery q{phrase(best), exact, {}, {}};
  if (!m.regex && m.ignore_case && tri_answerable(m.needle)) q.tri = m.needle;
  return q;
}

std::optional<std::string> covering_summary(Store& st, const std::string& id) {
  auto& q = st.db().cached(
      "SELECT s.id FROM covers c JOIN nodes s ON s.seq=c.summary_seq WHERE c.node_id=?1 "
      "ORDER BY c.summary_seq DESC LIMIT 1");
  ResetOnExit reset(q);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

std::string grep_snippet(std::string_view text, std::size_t grapheme) {
  std::size_t g0 = grapheme > kSnippetBefore ? grapheme - kSnippetBefore : 0;
  std::size_t b0 = grapheme_byte_offset(text, g0);
  std::string_view rest = text.substr(b0);
  std::size_t b1 = grapheme_byte_offset(rest, kSnippetGraphemes);
  return std::string(rest.substr(0, b1));
}

namespace {

/// The scan over text packs of the nodes with seq > `after` (of o.session, or all): calls
/// on_match(seq, view) for every matching node in seq order and counts the nodes read in
/// totals.nodes_scanned. With a text filter each pack's text is searched for the filter's literal
/// (ASCII case ignored under -i: LiteralSearch, the same as a search of the ASCII-lowered text),
/// one hit per node: the first hit is mapped to its node by the end offsets (a binary search) and
/// the search goes on at that node's end. A hit is a match without reading the node for a literal
/// pattern when case matters, when the node's text is ASCII, or when the hit is followed by the
/// end of the node's text or a fold anchor (is_fold_anchor; the -i literal is anchors folding to
/// themselves, RawFilter::anchored): then casefold(text) splits around the hit and holds the
/// literal there. Any other hit, a regex, and a node whose flags say folding could create the
/// literal where it is absent (kFoldsToAscii for a literal with ASCII, kCjkCompat) are matched
/// on the node's text.
void scan_packs(Store& st, const Matcher& m, const GrepOptions& o, std::int64_t after, bool want_raw, bool want_views,
                GrepTotals& totals, const std::function<void(std::int64_t, bool)>& on_match) {
  const std::optional<RawFilter> f = m.text_filter();
  std::uint8_t must_check = 0;
  std::optional<LiteralSearch> finder;
  if (f) {
    // Only ASCII comes out of folding a kFoldsToAscii character (and no CJK unified ideograph).
    const bool has_ascii = std::any_of(f->literal.begin(), f->literal.end(),
                                       [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (f->ignore_case && has_ascii) must_check |= pack_flag::kFoldsToAscii;
    if (f->needs_cjk_check) must_check |= pack_flag::kCjkCompat;
    finder.emplace(f->literal, f->ignore_case);
  }
  constexpr std::uint8_t kVerify = 1, kSure = 2;  // values of hit[k]
  std::vector<std::pair<std::int64_t, bool>> found;
  std::vector<std::uint8_t> hit;
  std::vector<std::size_t> hit_at;  // the k with hit[k] set, ascending
  for_each_text_pack(st, o.session, after, [&](const TextPack& p) {
    const std::size_t n = p.size();
    std::size_t first = 0;
    while (first < n && p.seq(first) <= after) ++first;
    auto wanted = [&](std::size_t k) { return (p.flags(k) & pack_flag::kView) ? want_views : want_raw; };
    if (want_raw && want_views) {
      totals.nodes_scanned += static_cast<std::int64_t>(n - first);
    } else {
      for (std::size_t k = first; k < n; ++k) totals.nodes_scanned += wanted(k) ? 1 : 0;
    }
    if (!f) {
      for (std::size_t k = first; k < n; ++k)
        if (wanted(k) && m.matches(p.node_text(k))) found.emplace_back(p.seq(k), (p.flags(k) & pack_flag::kView) != 0);
      return;
    }
    const std::string_view hay = p.text;
    constexpr std::size_t kSample = 64 << 10;  // bytes of text the finder learns byte frequencies from
    if (finder->learned() < kSample) finder->learn(hay.substr(0, kSample - finder->learned()));
    hit.assign(n, 0);
    hit_at.clear();
    const std::size_t len = f->literal.size();
    // Whether the hit ending at `end` in node k is a match of casefold(node text) (see above).
    auto sure = [&](std::size_t k, std::size_t end) {
      if (!f->ignore_case || !(p.flags(k) & pack_flag::kNonAscii)) return true;
      if (!f->anchored) return false;
      const std::size_t node_end = p.end(k);
      return end == node_end || static_cast<unsigned char>(hay[end]) < 0x80 ||
             is_fold_anchor(cp_at(hay.substr(0, node_end), end));
    };
    std::size_t pos = first < n ? p.begin(first) : hay.size();
    std::size_t k = first;
    for (std::size_t at; (at = finder->find(hay, pos)) != std::string_view::npos;) {
      if (p.end(k) <= at) {  // the node holding byte `at`: the first whose end is past it
        std::size_t lo = k + 1, hi = n - 1;  // p.end(n - 1) is the text's size, > at
        while (lo < hi) {
          const std::size_t mid = lo + (hi - lo) / 2;
          if (p.end(mid) <= at) lo = mid + 1;
          else hi = mid;
        }
        k = lo;
      }
      if (at + len <= p.end(k)) {
        hit[k] = sure(k, at + len) ? kSure : kVerify;
        hit_at.push_back(k);
        pos = p.end(k);
        if (++k == n) break;
      } else {
        pos = at + 1;  // straddles two nodes: not a match of either
      }
    }
    auto check = [&](std::size_t k) {
      const std::uint8_t fl = p.flags(k);
      if (!wanted(k) || (!hit[k] && !(fl & must_check))) return;
      const bool exact = hit[k] == kSure && m.literal() && f->whole;
      if (exact || m.matches(p.node_text(k))) found.emplace_back(p.seq(k), (fl & pack_flag::kView) != 0);
    };
    if (must_check) {
      for (k = first; k < n; ++k) check(k);
    } else {
      for (const std::size_t h : hit_at) check(h);  // the nodes with a hit, ascending
    }
  });
  if (!o.session) std::sort(found.begin(), found.end());  // packs of different sessions interleave
  for (const auto& [seq, view] : found) on_match(seq, view);
}

}  // namespace

GrepTotals grep(Store& st, const GrepOptions& o, const std::function<void(const GrepMatch&)>& on_match) {
  const auto t0 = std::chrono::steady_clock::now();
  Matcher m(o.pattern, o.regex, o.ignore_case);
  GrepTotals totals;
  const bool want_raw = o.in != GrepIn::summaries;
  const bool want_views = o.in != GrepIn::raw;

  // The index answers for seq <= through; everything after it (the unindexed tail) is scanned.
  std::optional<IndexQuery> iq;
  std::int64_t through = 0;
  if (!o.no_index && !o.exhaustive) {
    TextIndexState ix = text_index_state(st);
    if (ix.fts || ix.gram_through > 0 || ix.tri_through > 0) iq = m.index_query();
    if (iq && ix.tri_through == 0) iq->tri.clear();
    if (iq && iq->tri.empty() && (iq->gram.empty() ? !ix.fts : ix.gram_through == 0)) iq.reset();
    if (iq) through = !iq->tri.empty() ? ix.tri_through : iq->gram.empty() ? ix.through_seq : ix.gram_through;
    if (!ix.fts_unusable.empty()) totals.index_note = ix.fts_unusable;
  }
  // Hits the index cannot count exactly are read and matched one by one (a node read and JSON
  // parse each, ~10^5 instructions); past a share of the nodes a scan of the text packs (a few
  // hundred instructions per node) is cheaper: then scan.
  if (iq && !iq->exact) {
    const std::int64_t cap = o.max_verified >= 0 ? o.max_verified : std::max<std::int64_t>(1000, through / 512);
    std::int64_t hits = 0;
    if (iq->gram.empty()) {
      auto q = st.db().prepare(
          "SELECT count(*) FROM (SELECT rowid FROM grep_fts WHERE grep_fts MATCH ?1 AND rowid <= ?2 LIMIT ?3)");
      q.bind(1, iq->match).bind(2, through).bind(3, cap + 1);
      if (q.step()) hits = q.int64(0);
    } else {
      for_each_gram_hit(st, iq->gram, through, [&](std::int64_t) { ++hits; });
    }
    if (hits > cap) {
      iq.reset();
      through = 0;
    }
  }
  totals.index = !iq ? "scan" : !iq->tri.empty() ? "trigrams" : iq->gram.empty() ? "fts5" : "grams";
  // The index's hits with seq <= through, ascending.
  auto index_hits = [&](const std::function<void(std::int64_t)>& fn) {
    if (!iq->tri.empty()) return for_each_tri_hit(st, iq->tri, through, [&](std::int64_t seq, bool) { fn(seq); });
    if (!iq->gram.empty()) return for_each_gram_hit(st, iq->gram, through, fn);
    auto q = st.db().prepare("SELECT rowid FROM grep_fts WHERE grep_fts MATCH ?1 AND rowid <= ?2 ORDER BY rowid");
    q.bind(1, iq->match).bind(2, through);
    while (q.step()) fn(q.int64(0));
  };
  // A full scan reads most of the file once: map it instead of copying every page through
  // read(2). Index lookups touch few pages, where setting up the mapping costs more than it saves.
  if (!iq) {
    st.db().exec("PRAGMA mmap_size=4294967296");
    // SQLite maps at most 2 GB (SQLITE_MAX_MMAP_SIZE); the rest of a larger file is read one
    // page per pread(2) unless the whole file is mapped (read-only connections only).
    if (st.read_only()) map_whole_file(st.db().raw());
  }
  totals.indexed_through = through;
  // One read transaction for the rest: every statement below (a lookup per index hit) then
  // shares it instead of opening and closing its own (WAL lock calls each).
  struct ReadTxn {
    Db& db;
    bool began;
    explicit ReadTxn(Db& d) : db(d), began(sqlite3_get_autocommit(d.raw()) != 0) {
      if (began) db.exec("BEGIN");
    }
    ~ReadTxn() {
      if (began) sqlite3_exec(db.raw(), "COMMIT", nullptr, nullptr, nullptr);
    }
    ReadTxn(const ReadTxn&) = delete;
    ReadTxn& operator=(const ReadTxn&) = delete;
  } read_txn(st.db());

  auto in_page = [&](std::int64_t index) {
    return index >= o.offset && (o.limit < 0 || index < o.offset + o.limit);
  };
  // A match known to be one (from the scan, or an exact index hit): counted, and reported when it
  // falls inside the page. `text` is computed from `content` when empty.
  auto report = [&](std::int64_t seq, std::string_view id, std::string_view session, std::string_view k,
                    std::string_view role, std::string_view content, std::string text) {
    const bool raw = !kind::is_view(k);
    std::int64_t& count = raw ? totals.raw_matches : totals.summary_matches;
    const std::int64_t index = count++;
    if (!in_page(index)) return;  // outside the page: counted only
    if (text.empty()) text = searchable_text(std::string(content));
    auto g = m.find_grapheme(text);
    if (!g) g = 0;  // folding one grapheme at a time found no match where the whole text did
    GrepMatch r;
    r.session = std::string(session);
    r.id = std::string(id);
    r.kind = std::string(k);
    r.role = std::string(role);
    r.seq = seq;
    r.raw = raw;
    r.offset = static_cast<std::int64_t>(*g);
    r.snippet = grep_snippet(text, *g);
    r.covered_by = covering_summary(st, r.id);
    on_match(r);
  };
  // A node whose text must be read and matched (unless its raw JSON proves there is no match).
  const std::optional<RawFilter> prefilter = o.exhaustive ? std::nullopt : m.raw_filter();
  auto consider = [&](std::int64_t seq, std::string_view id, std::string_view session, std::string_view k,
                      std::string_view role, std::string_view content) {
    const bool raw = !kind::is_view(k);
    if (raw ? !want_raw : !want_views) return;
    ++totals.nodes_scanned;
    if (prefilter && !prefilter->may_match(content)) return;
    std::string text = searchable_text(std::string(content));
    if (!m.matches(text)) return;
    report(seq, id, session, k, role, content, std::move(text));
  };
  const char* kRow = "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes WHERE seq=?1";
  // An index hit: exact ones are reported without reading the text unless they are in the page.
  auto on_hit = [&](std::int64_t seq, bool view, bool exact, bool from_pack = false) {
    if (view ? !want_views : !want_raw) return;
    if (exact) {
      std::int64_t& count = view ? totals.summary_matches : totals.raw_matches;
      if (!in_page(count)) {
        ++count;
        return;
      }
    }
    auto& q = st.db().cached(kRow);
    ResetOnExit reset(q);
    q.bind(1, seq);
    if (!q.step()) return;
    if (exact) {
      if (!from_pack) ++totals.nodes_scanned;  // scan_packs counted it
      report(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), q.view(5), {});
    } else {
      consider(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), q.view(5));
    }
  };

  if (o.scope) {
    Coverage cov = resolve_coverage(st, *o.scope);
    std::vector<std::string> ids = cov.views;
    ids.insert(ids.end(), cov.rows.begin(), cov.rows.end());
    // Seq order, as for a full scan.
    std::vector<std::pair<std::int64_t, std::string>> ordered;
    for (const std::string& id : ids) {
      auto& q = st.db().cached("SELECT seq FROM nodes WHERE id=?1");
      ResetOnExit reset(q);
      q.bind(1, id);
      if (q.step()) ordered.emplace_back(q.int64(0), id);
    }
    std::sort(ordered.begin(), ordered.end());
    std::vector<std::int64_t> hits;  // index hits with seq <= through, ascending
    if (iq) index_hits([&](std::int64_t seq) { hits.push_back(seq); });
    for (const auto& [seq, id] : ordered) {
      if (seq <= through) {
        if (!std::binary_search(hits.begin(), hits.end(), seq)) continue;
        auto& q = st.db().cached("SELECT view FROM node_text WHERE seq=?1");
        ResetOnExit reset(q);
        q.bind(1, seq);
        if (!q.step()) continue;
        const bool view = q.int64(0) != 0;
        q.reset();
        on_hit(seq, view, iq->exact);
        continue;
      }
      auto q = st.db().prepare(kRow);
      q.bind(1, seq);
      if (q.step()) consider(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), q.view(5));
    }
  } else {
    if (iq && !o.session && !iq->tri.empty()) {
      // Trigram hits carry their view flag and are exact: outside the page they are only counted.
      for_each_tri_hit(st, iq->tri, through, [&](std::int64_t seq, bool view) {
        if (view ? !want_views : !want_raw) return;
        std::int64_t& count = view ? totals.summary_matches : totals.raw_matches;
        if (!in_page(count)) {
          ++count;
          return;
        }
        on_hit(seq, view, true);
      });
    } else if (iq && !o.session) {
      // Hits in seq order straight from the index (no per-hit join), split into raw and view
      // nodes by the view seqs: read at once from the partial index node_text_views (schema
      // 010). Without it (a database not yet indexed at schema 010, opened read-only), few hits
      // are looked up in node_text one by one and many through nodes(session, kind, seq): three
      // index seeks per session (CROSS JOIN and INDEXED BY: without statistics the planner walks
      // every node).
      std::vector<std::int64_t> hits;
      index_hits([&](std::int64_t seq) { hits.push_back(seq); });
      std::vector<std::int64_t> views;
      const bool have_views = st.db().has_schema_object("node_text_views");
      if (have_views && !hits.empty()) {
        auto v = st.db().prepare("SELECT seq FROM node_text INDEXED BY node_text_views WHERE view = 1 AND seq <= ?1");
        v.bind(1, through);
        while (v.step()) views.push_back(v.int64(0));
        std::sort(views.begin(), views.end());
      } else if (!hits.empty()) {
        std::int64_t sessions = 0;
        {
          auto c = st.db().prepare("SELECT count(*) FROM sessions");
          if (c.step()) sessions = c.int64(0);
        }
        if (static_cast<std::int64_t>(hits.size()) <= 3 * sessions) {
          auto& t = st.db().cached("SELECT view FROM node_text WHERE seq=?1");
          for (const std::int64_t seq : hits) {
            bool view = false;
            {
              ResetOnExit reset(t);
              t.bind(1, seq);
              view = t.step() && t.int64(0) != 0;
            }
            on_hit(seq, view, iq->exact);
          }
          hits.clear();
        } else {
          auto v = st.db().prepare(
              "SELECT n.seq FROM sessions s CROSS JOIN nodes n INDEXED BY nodes_session_kind "
              "WHERE n.session = s.id AND n.kind IN " + std::string(kViewKindsSql) + " AND n.seq <= ?1");
          v.bind(1, through);
          while (v.step()) views.push_back(v.int64(0));
          std::sort(views.begin(), views.end());
        }
      }
      for (const std::int64_t seq : hits) on_hit(seq, std::binary_search(views.begin(), views.end(), seq), iq->exact);
    } else if (iq && (!iq->gram.empty() || !iq->tri.empty())) {
      // Gram or trigram hits of one session: session and --in from node_text, one lookup per hit.
      auto& t = st.db().cached("SELECT session, view FROM node_text WHERE seq=?1");
      std::vector<std::pair<std::int64_t, bool>> mine;
      index_hits([&](std::int64_t seq) {
        ResetOnExit reset(t);
        t.bind(1, seq);
        if (t.step() && t.view(0) == *o.session) mine.emplace_back(seq, t.int64(1) != 0);
      });
      for (const auto& [seq, view] : mine) on_hit(seq, view, iq->exact);
    } else if (iq) {
      // Hits in seq order, filtered by session and --in from node_text (no node read for them).
      auto q = st.db().prepare(
          "SELECT t.seq, t.view FROM grep_fts f JOIN node_text t ON t.seq = f.rowid "
          "WHERE grep_fts MATCH ?1 AND f.rowid <= ?2 AND (?3 = '' OR t.session = ?3) "
          "AND (CASE WHEN t.view THEN ?5 ELSE ?4 END) ORDER BY f.rowid");
      q.bind(1, iq->match).bind(2, through).bind(3, o.session.value_or(""));
      q.bind(4, std::int64_t{want_raw}).bind(5, std::int64_t{want_views});
      while (q.step()) on_hit(q.int64(0), q.int64(1) != 0, iq->exact);
    }
    // Then the text packs (import, append and `ctxfold index` keep them) from there on: a few
    // large reads and one substring search per pack instead of a JSON parse per node.
    std::int64_t scanned = through;
    if (!o.exhaustive && !o.no_packs) {
      const std::int64_t packed = text_pack_through(st);
      if (packed > through) {
        scan_packs(st, m, o, through, want_raw, want_views, totals, [&](std::int64_t seq, bool view) {
          on_hit(seq, view, true, true);
        });
        scanned = packed;
        totals.packed_through = packed;
      }
    }
    // Nodes are streamed from one statement; kinds outside --in are filtered in SQL.
    const std::string where =
        std::string("seq > ?4 AND (CASE WHEN kind IN ") + kViewKindsSql + " THEN ?3 ELSE ?2 END)";
    auto q = st.db().prepare(o.session ? "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes "
                                         "WHERE session = ?1 AND " + where + " ORDER BY seq"
                                       : "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes "
                                         "WHERE ?1 = '' AND " + where + " ORDER BY seq");
    q.bind(1, o.session.value_or("")).bind(2, std::int64_t{want_raw}).bind(3, std::int64_t{want_views});
    q.bind(4, scanned);
    while (q.step()) consider(q.int64(0), q.view(1), q.view(2), q.view(3), q.view(4), q.view(5));
  }
  totals.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  return totals;
}

}  // namespace ctxfold
