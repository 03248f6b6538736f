#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace ctxfold {

/// Per-node flags of a text pack (share/schema/006_text_packs.sql, column `flags`): what a scan
/// must know about a node without reading it.
namespace pack_flag {
inline constexpr std::uint8_t kView = 1;          ///< a view node (summary, archive, notes)
inline constexpr std::uint8_t kNonAscii = 2;      ///< the text holds a byte >= 0x80
inline constexpr std::uint8_t kFoldsToAscii = 4;  ///< any_folds_to_ascii(text)
inline constexpr std::uint8_t kCjkCompat = 8;     ///< any_cjk_compat(text)
}  // namespace pack_flag

/// Whether `s` holds a code point >= U+0080 whose casefold (utf8proc CASEFOLD|COMPOSE) holds an
/// ASCII character: ß İ ŉ ſ GREEK QUESTION MARK ẚ ẞ GREEK VARIA KELVIN SIGN ﬀ-ﬆ (tests enumerate
/// every code point). Where none is present, ASCII case-insensitive search for an ASCII needle
/// finds every place casefold(s) could hold it.
bool any_folds_to_ascii(std::string_view s);

/// Whether `s` holds a CJK compatibility ideograph (U+F900-FAFF, U+2F800-2FA1F): NFC maps them
/// to unified ideographs, so casefold(s) may hold a unified ideograph that s does not.
bool any_cjk_compat(std::string_view s);

/// The pack_flag bits of a node's searchable text.
std::uint8_t text_pack_flags(std::string_view text, bool view);

/// Version tag of the pack layout and of searchable_text's format: packs written under another
/// tag are not read, and the next writer repacks.
inline constexpr const char* kTextPackFormat = "pack1";

/// How far the packs reach, as a reader finds them: every node with seq <= through_seq is in
/// exactly one pack (0: none is, also for a database from before schema 6 or packs of another
/// format). Read-only.
std::int64_t text_pack_through(Store& st);

struct PackReport {
  std::int64_t packed = 0;       ///< nodes added by this run
  std::int64_t packs = 0;        ///< packs written by this run
  std::int64_t text_bytes = 0;   ///< bytes of searchable text written
  std::int64_t through_seq = 0;  ///< packs now reach this seq
  bool repacked = false;         ///< old packs were cleared first (rebuild, or another format)
};

/// Packs the searchable text of the nodes after text_pack_through() (import, append and `ctxfold
/// index` call it). Nodes are read in seq order and grouped by session; a session's pack is
/// written when it holds `pack_bytes` of text, and every open pack at the end of each batch of
/// about 64 MiB of text, in one transaction that also advances text_pack_state, so an
/// interrupted run keeps what it committed. Does nothing when fewer than `min_tail` nodes are
/// unpacked (a scan reads a short tail from the nodes themselves). `rebuild` clears all packs
/// first. Requires a writable store (Error(usage,"index.read_only") otherwise).
PackReport update_text_packs(Store& st, std::int64_t min_tail = 0, bool rebuild = false,
                             std::int64_t pack_bytes = 4 << 20);

/// One pack as read: the searchable texts of `size()` nodes of one session, ascending seq.
struct TextPack {
  std::size_t n = 0;
  std::string_view seqs, ends, flag_bytes, text;
  std::size_t size() const { return n; }
  std::int64_t seq(std::size_t k) const {
    std::int64_t v;
    std::memcpy(&v, seqs.data() + 8 * k, 8);
    return v;
  }
  std::size_t end(std::size_t k) const {
    std::uint32_t v;
    std::memcpy(&v, ends.data() + 4 * k, 4);
    return v;
  }
  std::size_t begin(std::size_t k) const { return k == 0 ? 0 : end(k - 1); }
  std::uint8_t flags(std::size_t k) const { return static_cast<std::uint8_t>(flag_bytes[k]); }
  std::string_view node_text(std::size_t k) const { return text.substr(begin(k), end(k) - begin(k)); }
};

/// Calls fn for every pack holding a node with seq > `after`, of one session (in seq order) or of
/// every session (`session` empty; in pack order, which interleaves sessions: callers sort).
/// The pack's views are valid during the call only. Throws Error(bad_input,"pack.corrupt") for a
/// pack whose arrays disagree with its node count or text size.
void for_each_text_pack(Store& st, const std::optional<std::string>& session, std::int64_t after,
                        const std::function<void(const TextPack&)>& fn);

}  // namespace ctxfold
