#pragma once
#include <nettle/sha2.h>

namespace ctxfold {

/// The GNU Nettle functions ctxfold calls (SHA-256: node digests, snapshot and input digests),
/// resolved from CTXFOLD_LIBNETTLE_SONAME on first use (util/dynlib.hpp). Nettle picks its SHA-NI
/// code at run time where the processor has it. Loading it costs a command ~1 ms where OpenSSL's
/// libcrypto, which ctxfold used for this before, cost ~5 ms (its relocations and provider set-up):
/// every command that appends a node paid that. Throws Error(Exit::environment) when the library
/// cannot be loaded.
struct LibNettle {
  decltype(&::nettle_sha256_init) sha256_init;
  decltype(&::nettle_sha256_update) sha256_update;
  decltype(&::nettle_sha256_digest) sha256_digest;
};
const LibNettle& libnettle();

}  // namespace ctxfold
