// GNU Nettle resolved at run time (libnettle.hpp).
#include "util/libnettle.hpp"

#include "util/dynlib.hpp"

namespace ctxfold {

const LibNettle& libnettle() {
  static const LibNettle api = [] {
    static const DynLib lib(CTXFOLD_LIBNETTLE_SONAME, "libnettle8");
    LibNettle a{};
    lib.get(a.sha256_init, "nettle_sha256_init");
    lib.get(a.sha256_update, "nettle_sha256_update");
    lib.get(a.sha256_digest, "nettle_sha256_digest");
    lib.get(a.base64_encode_raw, "nettle_base64_encode_raw");
    lib.get(a.base64_decode_init, "nettle_base64_decode_init");
    lib.get(a.base64_decode_update, "nettle_base64_decode_update");
    lib.get(a.base64_decode_final, "nettle_base64_decode_final");
    return a;
  }();
  return api;
}

}  // namespace ctxfold
