// libFuzzer entry point of target compact_config (body in fuzz/targets.cpp).
#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ctxfold::fuzz::compact_config(data, size);
}
