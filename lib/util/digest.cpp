#include "util/digest.hpp"

#include <cstdint>
#include <new>

#include "util/libnettle.hpp"

namespace ctxfold {

namespace {
sha256_ctx* nettle_ctx(unsigned char* state) { return std::launder(reinterpret_cast<sha256_ctx*>(state)); }
}  // namespace

static_assert(sizeof(sha256_ctx) <= sizeof(Sha256::State) && alignof(sha256_ctx) <= alignof(Sha256::State));

Sha256::Sha256() {
  new (state_.bytes) sha256_ctx;
  reset();
}

void Sha256::reset() { libnettle().sha256_init(nettle_ctx(state_.bytes)); }

Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  libnettle().sha256_update(nettle_ctx(state_.bytes), bytes.size(), reinterpret_cast<const std::uint8_t*>(bytes.data()));
}

std::string Sha256::hex() {
  std::uint8_t out[SHA256_DIGEST_SIZE];
  libnettle().sha256_digest(nettle_ctx(state_.bytes), sizeof out, out);
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(sizeof out * 2);
  for (std::uint8_t b : out) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex();
}

}  // namespace ctxfold
