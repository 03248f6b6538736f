#include "util/libcrypto.hpp"

#include "util/dynlib.hpp"

namespace ctxfold {

const LibCrypto& libcrypto() {
  static const LibCrypto api = [] {
    static const DynLib lib(CTXFOLD_LIBCRYPTO_SONAME, "libssl3");
    LibCrypto a{};
    lib.get(a.encode_block, "EVP_EncodeBlock");
    lib.get(a.decode_block, "EVP_DecodeBlock");
    return a;
  }();
  return api;
}

}  // namespace ctxfold
