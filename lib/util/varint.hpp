#pragma once
#include <cstdint>
#include <string>

namespace ctxfold {

/// Appends v as an LEB128 varint (7 bits a byte, low bits first, high bit set on all but the
/// last): the posting format of grep_gram and grep_tri (schema 008, 010).
inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

}  // namespace ctxfold
