// A string interner: short strings (ids, type names) as dense 32-bit ids.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ctxfold {

/// Interns short strings (uuids, message and tool ids, type names) as dense 32-bit ids; 0 is the
/// empty string. Bytes live in 1 MiB blocks (never moved), the index is open addressing over ids.
class Interner {
 public:
  Interner() : ptr_{""}, len_{0}, slots_(1024, 0) {}
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;
  Interner(Interner&&) = default;
  Interner& operator=(Interner&&) = default;

  std::uint32_t intern(std::string_view s) {
    if (s.empty()) return 0;
    if ((ptr_.size() + 1) * 2 > slots_.size()) grow();
    std::size_t mask = slots_.size() - 1;
    for (std::size_t h = std::hash<std::string_view>{}(s) & mask;; h = (h + 1) & mask) {
      std::uint32_t id = slots_[h];
      if (id == 0) {
        id = static_cast<std::uint32_t>(ptr_.size());
        ptr_.push_back(store(s));
        len_.push_back(static_cast<std::uint32_t>(s.size()));
        slots_[h] = id;
        return id;
      }
      if (view(id) == s) return id;
    }
  }
  std::string_view view(std::uint32_t id) const { return {ptr_[id], len_[id]}; }
  std::string str(std::uint32_t id) const { return std::string(view(id)); }
  std::size_t size() const { return ptr_.size(); }

 private:
  static constexpr std::size_t kBlock = 1 << 20;
  const char* store(std::string_view s) {
    if (s.size() > kBlock / 4) {  // a long id gets its own block
      blocks_.emplace_back(new char[s.size()]);
      std::memcpy(blocks_.back().get(), s.data(), s.size());
      return blocks_.back().get();
    }
    if (blocks_.empty() || used_ + s.size() > kBlock) {
      blocks_.emplace_back(new char[kBlock]);
      cur_ = blocks_.back().get();
      used_ = 0;
    }
    char* p = cur_ + used_;
    std::memcpy(p, s.data(), s.size());
    used_ += s.size();
    return p;
  }
  void grow() {
    std::vector<std::uint32_t> slots(slots_.size() * 2, 0);
    std::size_t mask = slots.size() - 1;
    for (std::uint32_t id = 1; id < ptr_.size(); ++id) {
      std::size_t h = std::hash<std::string_view>{}(view(id)) & mask;
      while (slots[h] != 0) h = (h + 1) & mask;
      slots[h] = id;
    }
    slots_ = std::move(slots);
  }
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cur_ = nullptr;
  std::size_t used_ = 0;
  std::vector<const char*> ptr_;
  std::vector<std::uint32_t> len_;
  std::vector<std::uint32_t> slots_;
};

}  // namespace ctxfold
