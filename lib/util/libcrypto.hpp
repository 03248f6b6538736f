#pragma once
#include <openssl/evp.h>

namespace ctxfold {

/// The OpenSSL libcrypto functions ctxfold calls (SHA-256 node digests, base64 of snapcompact
/// frames), resolved from CTXFOLD_LIBCRYPTO_SONAME on first use (util/dynlib.hpp: read commands
/// never load libcrypto). Throws Error(Exit::environment) when the library cannot be loaded.
struct LibCrypto {
  decltype(&::EVP_MD_CTX_new) md_ctx_new;
  decltype(&::EVP_MD_CTX_free) md_ctx_free;
  decltype(&::EVP_sha256) sha256;
  /// SHA-256 fetched once from the default provider (EVP_MD_fetch): an EVP_DigestInit_ex with
  /// EVP_sha256() fetches it again on every call (OpenSSL 3 "Performance" in crypto(7)).
  const EVP_MD* sha256_md;
  decltype(&::EVP_DigestInit_ex) digest_init_ex;
  decltype(&::EVP_DigestUpdate) digest_update;
  decltype(&::EVP_DigestFinal_ex) digest_final_ex;
  decltype(&::EVP_EncodeBlock) encode_block;
  decltype(&::EVP_DecodeBlock) decode_block;
};
const LibCrypto& libcrypto();

}  // namespace ctxfold
