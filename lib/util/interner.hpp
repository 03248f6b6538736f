// A string interner: short strings (ids, type names) as dense 32-bit ids.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ctxfold {

/// Interns short strings (uuids, message and tool ids, type names) as dense 32-bit ids; 0 is the
/// empty string. Bytes live in 1 MiB blocks (never moved), each string behind its length (a
/// varint); an id's place is one 32-bit word (block << 20 | offset), the index is open
/// addressing over ids, at most 3/4 full. Memory per distinct string: its bytes + 1-3, 4 for its place,
/// 5.3-10.7 of index. Throws Error(internal) past 4096 blocks (4 GiB of distinct strings).
class Interner {
 public:
  Interner() : at_{kEmpty}, slots_(1024, 0) {}
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;
  Interner(Interner&&) = default;
  Interner& operator=(Interner&&) = default;

  std::uint32_t intern(std::string_view s) {
    if (s.empty()) return 0;
    if ((at_.size() + 1) * 4 > slots_.size() * 3) grow();  // at most 3/4 full
    std::size_t mask = slots_.size() - 1;
    for (std::size_t h = std::hash<std::string_view>{}(s) & mask;; h = (h + 1) & mask) {
      std::uint32_t id = slots_[h];
      if (id == 0) {
        id = static_cast<std::uint32_t>(at_.size());
        at_.push_back(store(s));
        slots_[h] = id;
        return id;
      }
      if (view(id) == s) return id;
    }
  }
  /// The id of s when it was interned, else 0 (nothing is added).
  std::uint32_t find(std::string_view s) const {
    if (s.empty() || slots_.empty()) return 0;
    std::size_t mask = slots_.size() - 1;
    for (std::size_t h = std::hash<std::string_view>{}(s) & mask;; h = (h + 1) & mask) {
      std::uint32_t id = slots_[h];
      if (id == 0 || view(id) == s) return id;
    }
  }
  std::string_view view(std::uint32_t id) const {
    if (at_[id] == kEmpty) return {};
    const auto* p = reinterpret_cast<const unsigned char*>(blocks_[at_[id] >> kShift].get()) + (at_[id] & (kBlock - 1));
    std::size_t n = 0;
    for (unsigned sh = 0;; sh += 7) {
      n |= static_cast<std::size_t>(*p & 0x7f) << sh;
      if (!(*p++ & 0x80)) break;
    }
    return {reinterpret_cast<const char*>(p), n};
  }
  std::string str(std::uint32_t id) const { return std::string(view(id)); }
  std::size_t size() const { return at_.size(); }

 private:
  static constexpr unsigned kShift = 20;
  static constexpr std::size_t kBlock = std::size_t{1} << kShift;
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  static constexpr std::size_t kMaxBlocks = std::size_t{1} << (32 - kShift);
  std::uint32_t store(std::string_view s) {
    unsigned char len[10];
    std::size_t k = 0;
    for (std::size_t n = s.size(); ; n >>= 7) {
      len[k++] = static_cast<unsigned char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      if (n < 0x80) break;
    }
    const std::size_t need = k + s.size();
    char* p = nullptr;
    std::size_t block = 0;
    if (need > kBlock / 4) {  // a long string gets its own block
      new_block(need);
      block = blocks_.size() - 1;
      p = blocks_.back().get();
    } else {
      if (cur_ == nullptr || used_ + need > kBlock) {
        new_block(kBlock);
        cur_ = blocks_.back().get();
        cur_block_ = blocks_.size() - 1;
        used_ = 0;
      }
      block = cur_block_;
      p = cur_ + used_;
      used_ += need;
    }
    std::memcpy(p, len, k);
    std::memcpy(p + k, s.data(), s.size());
    return static_cast<std::uint32_t>((block << kShift) | static_cast<std::size_t>(p - blocks_[block].get()));
  }
  void new_block(std::size_t bytes) {
    if (blocks_.size() >= kMaxBlocks)
      throw Error(Exit::internal, "interner.full", "more than 4 GiB of distinct ids in one file");
    blocks_.emplace_back(new char[bytes]);
  }
  void grow() {
    std::vector<std::uint32_t> slots(slots_.size() * 2, 0);
    std::size_t mask = slots.size() - 1;
    for (std::uint32_t id = 1; id < at_.size(); ++id) {
      std::size_t h = std::hash<std::string_view>{}(view(id)) & mask;
      while (slots[h] != 0) h = (h + 1) & mask;
      slots[h] = id;
    }
    slots_ = std::move(slots);
  }
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cur_ = nullptr;
  std::size_t cur_block_ = 0;
  std::size_t used_ = 0;
  std::vector<std::uint32_t> at_;  ///< id -> block << kShift | offset of its length prefix
  std::vector<std::uint32_t> slots_;
};

}  // namespace ctxfold
