#pragma once
#include <nettle/base64.h>
#include <nettle/sha2.h>

namespace ctxfold {

/// The GNU Nettle functions ctxfold calls (SHA-256: node digests, snapshot and input digests;
/// base64: snapcompact's frames), resolved from CTXFOLD_LIBNETTLE_SONAME on first use (util/dynlib.hpp). Nettle picks its SHA-NI
/// code at run time where the processor has it. Loading it costs a command ~1 ms where OpenSSL's
/// libcrypto, which ctxfold used for this before, cost ~5 ms (its relocations and provider set-up):
/// every command that appends a node paid that. Throws Error(Exit::environment) when the library
/// cannot be loaded.
struct LibNettle {
  decltype(&::nettle_sha256_init) sha256_init;
  decltype(&::nettle_sha256_update) sha256_update;
  decltype(&::nettle_sha256_digest) sha256_digest;
  decltype(&::nettle_base64_encode_raw) base64_encode_raw;
  decltype(&::nettle_base64_decode_init) base64_decode_init;
  decltype(&::nettle_base64_decode_update) base64_decode_update;
  decltype(&::nettle_base64_decode_final) base64_decode_final;
};
const LibNettle& libnettle();

}  // namespace ctxfold
