#include "recall/grep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <unordered_set>

#include "recall/expand.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
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

bool is_view_kind(const std::string& k) { return k == kind::kSummary || k == kind::kArchive || k == kind::kNotes; }
}  // namespace

struct Matcher::Impl {
  bool regex = false;
  bool ignore_case = false;
  std::string needle;  // literal (folded under ignore_case)
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
    impl_->re = std::regex(ignore_case ? fold_regex(p) : p, flags);
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

std::optional<std::string> covering_summary(Store& st, const std::string& id) {
  auto& q = st.db().cached(
      "SELECT s.id FROM covers c JOIN nodes s ON s.seq=c.summary_seq WHERE c.node_id=?1 "
      "ORDER BY c.summary_seq DESC LIMIT 1");
  ResetOnExit reset(q);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

namespace {
std::string snippet_at(std::string_view text, std::size_t grapheme) {
  std::size_t g0 = grapheme > kSnippetBefore ? grapheme - kSnippetBefore : 0;
  std::size_t b0 = grapheme_byte_offset(text, g0);
  std::string_view rest = text.substr(b0);
  std::size_t b1 = grapheme_byte_offset(rest, kSnippetGraphemes);
  return std::string(rest.substr(0, b1));
}
}  // namespace

GrepTotals grep(Store& st, const GrepOptions& o, const std::function<void(const GrepMatch&)>& on_match) {
  const auto t0 = std::chrono::steady_clock::now();
  Matcher m(o.pattern, o.regex, o.ignore_case);
  GrepTotals totals;
  const bool want_raw = o.in != GrepIn::summaries;
  const bool want_views = o.in != GrepIn::raw;

  auto in_page = [&](std::int64_t index) {
    return index >= o.offset && (o.limit < 0 || index < o.offset + o.limit);
  };
  auto consider = [&](std::int64_t seq, std::string id, std::string session, std::string k, std::string role,
                      const std::string& content) {
    const bool raw = !is_view_kind(k);
    if (raw ? !want_raw : !want_views) return;
    ++totals.nodes_scanned;
    Node n;
    n.content = parse_stored_content(content);
    std::string text = node_text(n);
    if (!utf8_valid(text)) text = utf8_sanitize(text);
    std::int64_t& count = raw ? totals.raw_matches : totals.summary_matches;
    if (!m.matches(text)) return;
    const std::int64_t index = count++;
    if (!in_page(index)) return;  // outside the page: counted only
    auto g = m.find_grapheme(text);
    if (!g) g = 0;  // folding one grapheme at a time found no match where the whole text did
    GrepMatch r;
    r.session = std::move(session);
    r.id = std::move(id);
    r.kind = std::move(k);
    r.role = std::move(role);
    r.seq = seq;
    r.raw = raw;
    r.offset = static_cast<std::int64_t>(*g);
    r.snippet = snippet_at(text, *g);
    r.covered_by = covering_summary(st, r.id);
    on_match(r);
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
    for (const auto& [seq, id] : ordered) {
      auto q = st.db().prepare("SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes WHERE seq=?1");
      q.bind(1, seq);
      if (q.step()) consider(q.int64(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5));
    }
  } else {
    // Nodes are streamed from one statement; kinds outside --in are filtered in SQL.
    const std::string where =
        "(CASE WHEN kind IN ('summary','archive','notes') THEN ?3 ELSE ?2 END)";
    auto q = st.db().prepare(o.session ? "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes "
                                         "WHERE session = ?1 AND " + where + " ORDER BY seq"
                                       : "SELECT seq, id, session, kind, coalesce(role,''), content FROM nodes "
                                         "WHERE ?1 = '' AND " + where + " ORDER BY seq");
    q.bind(1, o.session.value_or("")).bind(2, std::int64_t{want_raw}).bind(3, std::int64_t{want_views});
    while (q.step()) consider(q.int64(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5));
  }
  totals.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  return totals;
}

}  // namespace ctxfold
