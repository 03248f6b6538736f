// grep's scan of the text packs (lib/recall/text_packs.hpp): the unindexed tail searched a pack
// at a time instead of a node at a time.
#include <algorithm>
#include <utility>
#include <vector>

#include "recall/grep_detail.hpp"
#include "recall/text_packs.hpp"
#include "util/graphemes.hpp"
#include "util/literal_search.hpp"

namespace ctxfold::grep_detail {

namespace {

/// The pack flags of nodes that must be matched on their text even without a hit of f's literal:
/// folding could create the literal where it is absent.
std::uint8_t must_check_flags(const RawFilter& f) {
  std::uint8_t must_check = 0;
  // Only ASCII comes out of folding a kFoldsToAscii character (and no CJK unified ideograph).
  const bool has_ascii = std::any_of(f.literal.begin(), f.literal.end(),
                                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (f.ignore_case && has_ascii) must_check |= pack_flag::kFoldsToAscii;
  if (f.needs_cjk_check) must_check |= pack_flag::kCjkCompat;
  return must_check;
}

/// The node of p holding byte `at`, searching from node k: the first whose end is past it.
std::size_t node_holding(const TextPack& p, std::size_t k, std::size_t at) {
  if (p.end(k) > at) return k;
  std::size_t lo = k + 1, hi = p.size() - 1;  // p.end(n - 1) is the text's size, > at
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (p.end(mid) <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// Calls on_match for the placed matches `found` and the counted ones (seq * 2 + view) in one
/// seq order. Each list is in pack order, which is seq order for one session; packs of different
/// sessions interleave, and a list that is then out of order is sorted first.
void emit_in_seq_order(std::vector<PackMatch>& found, std::vector<std::int64_t>& counted,
                       const std::function<void(const PackMatch&)>& on_match) {
  auto by_seq = [](const PackMatch& a, const PackMatch& b) { return a.seq < b.seq; };
  if (!std::is_sorted(found.begin(), found.end(), by_seq)) std::sort(found.begin(), found.end(), by_seq);
  if (!std::is_sorted(counted.begin(), counted.end())) std::sort(counted.begin(), counted.end());
  PackMatch unplaced;
  std::size_t i = 0;
  for (const std::int64_t c : counted) {
    for (; i < found.size() && found[i].seq < c / 2; ++i) on_match(found[i]);
    unplaced.seq = c / 2;
    unplaced.view = (c & 1) != 0;
    on_match(unplaced);
  }
  for (; i < found.size(); ++i) on_match(found[i]);
}

}  // namespace

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
                GrepTotals& totals, const std::function<void(const PackMatch&)>& on_match) {
  const std::optional<RawFilter> f = m.text_filter();
  std::uint8_t must_check = 0;
  std::optional<LiteralSearch> finder;
  if (f) {
    must_check = must_check_flags(*f);
    finder.emplace(f->literal, f->ignore_case);
  }
  constexpr std::uint8_t kVerify = 1, kSure = 2;  // values of hit[k]
  // Matches placed with their offset and snippet, and the others as seq * 2 + view (8 bytes each:
  // a common literal's thousands of counted matches stay one small allocation).
  std::vector<PackMatch> found;
  std::vector<std::int64_t> counted;
  std::int64_t found_raw = 0, found_views = 0;
  // A match is placed (offset, snippet) while its node's text is at hand when it may fall in the
  // page: for one session the pack order is the report order, so the count is exact; across
  // sessions it is a bound that can only leave matches unplaced (grep then reads them).
  auto add = [&](const TextPack& p, std::size_t k, bool view) {
    std::int64_t& count = view ? found_views : found_raw;
    if (o.limit < 0 || count < o.offset + o.limit) {
      PackMatch pm;
      pm.seq = p.seq(k);
      pm.view = view;
      const std::string_view text = p.node_text(k);
      const std::size_t g = m.find_grapheme(text).value_or(0);
      pm.located = true;
      pm.offset = static_cast<std::int64_t>(g);
      pm.snippet = grep_snippet(text, g);
      found.push_back(std::move(pm));
    } else {
      counted.push_back(p.seq(k) * 2 + (view ? 1 : 0));
    }
    ++count;
  };
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
        if (wanted(k) && m.matches(p.node_text(k))) add(p, k, (p.flags(k) & pack_flag::kView) != 0);
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
      k = node_holding(p, k, at);
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
      if (exact || m.matches(p.node_text(k))) add(p, k, (fl & pack_flag::kView) != 0);
    };
    if (must_check) {
      // Most nodes have neither a hit nor a flag: test both bytes before calling check.
      const auto* fl = reinterpret_cast<const unsigned char*>(p.flag_bytes.data());
      for (k = first; k < n; ++k)
        if (hit[k] | (fl[k] & must_check)) check(k);
    } else {
      for (const std::size_t h : hit_at) check(h);  // the nodes with a hit, ascending
    }
  });
  emit_in_seq_order(found, counted, on_match);
}

}  // namespace ctxfold::grep_detail
