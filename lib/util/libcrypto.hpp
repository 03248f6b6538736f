#pragma once
#include <openssl/evp.h>

namespace ctxfold {

/// The OpenSSL libcrypto functions ctxfold calls (base64 of snapcompact frames), resolved from
/// CTXFOLD_LIBCRYPTO_SONAME on first use (util/dynlib.hpp: only a command that reads or writes a
/// frame loads libcrypto). SHA-256 comes from Nettle instead (util/libnettle.hpp). Throws
/// Error(Exit::environment) when the library cannot be loaded.
struct LibCrypto {
  decltype(&::EVP_EncodeBlock) encode_block;
  decltype(&::EVP_DecodeBlock) decode_block;
};
const LibCrypto& libcrypto();

}  // namespace ctxfold
