// A growable array in fixed-size chunks: no reallocation, so no copy and no 3x transient peak
// when it grows, and at most one chunk of unused capacity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

namespace ctxfold {

/// A sequence of T indexed like a vector, stored in chunks of 2^kShift elements that never move
/// (references stay valid while it grows). Growing allocates one chunk; nothing is copied, so the
/// memory held is size() * sizeof(T) plus at most one partly used chunk and 8 bytes per chunk.
/// T must be default-constructible (a chunk is allocated whole).
template <typename T, unsigned kShift = 14>
class Chunked {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << kShift;

  T& operator[](std::size_t i) { return chunks_[i >> kShift][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> kShift][i & (kChunk - 1)]; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& v) {
    if ((size_ >> kShift) == chunks_.size()) chunks_.emplace_back(new T[kChunk]);
    (*this)[size_++] = v;
  }
  void push_back(T&& v) {
    if ((size_ >> kShift) == chunks_.size()) chunks_.emplace_back(new T[kChunk]);
    (*this)[size_++] = std::move(v);
  }
  /// Frees every chunk.
  void clear() {
    std::vector<std::unique_ptr<T[]>>().swap(chunks_);
    size_ = 0;
  }

  template <typename C, typename V>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    Iter(C* c, std::size_t i) : c_(c), i_(i) {}
    V& operator*() const { return (*c_)[i_]; }
    V* operator->() const { return &(*c_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }

   private:
    C* c_;
    std::size_t i_;
  };
  using iterator = Iter<Chunked, T>;
  using const_iterator = Iter<const Chunked, const T>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace ctxfold
