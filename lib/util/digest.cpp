#include "util/digest.hpp"

#include <stdexcept>

#include "util/dynlib.hpp"
#include "util/libcrypto.hpp"

namespace ctxfold {

const LibCrypto& libcrypto() {
  static const LibCrypto api = [] {
    static const DynLib lib(CTXFOLD_LIBCRYPTO_SONAME, "libssl3");
    LibCrypto a{};
    lib.get(a.md_ctx_new, "EVP_MD_CTX_new");
    lib.get(a.md_ctx_free, "EVP_MD_CTX_free");
    lib.get(a.sha256, "EVP_sha256");
    lib.get(a.digest_init_ex, "EVP_DigestInit_ex");
    lib.get(a.digest_update, "EVP_DigestUpdate");
    lib.get(a.digest_final_ex, "EVP_DigestFinal_ex");
    lib.get(a.encode_block, "EVP_EncodeBlock");
    lib.get(a.decode_block, "EVP_DecodeBlock");
    decltype(&::EVP_MD_fetch) md_fetch = nullptr;
    lib.get(md_fetch, "EVP_MD_fetch");
    a.sha256_md = md_fetch(nullptr, "SHA256", nullptr);  // kept for the process's life
    if (!a.sha256_md) a.sha256_md = a.sha256();
    return a;
  }();
  return api;
}

Sha256::Sha256() : ctx_(libcrypto().md_ctx_new()) {
  if (!ctx_) throw std::runtime_error("cannot initialise sha256");
  reset();
}

void Sha256::reset() {
  if (libcrypto().digest_init_ex(static_cast<EVP_MD_CTX*>(ctx_), libcrypto().sha256_md, nullptr) != 1)
    throw std::runtime_error("cannot initialise sha256");
}

Sha256::~Sha256() { libcrypto().md_ctx_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view bytes) {
  libcrypto().digest_update(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

std::string Sha256::hex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  libcrypto().digest_final_ex(static_cast<EVP_MD_CTX*>(ctx_), out, &len);
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    s.push_back(kHex[out[i] >> 4]);
    s.push_back(kHex[out[i] & 15]);
  }
  return s;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex();
}

}  // namespace ctxfold
