// libFuzzer entry point of target stdin_snapshot (body in fuzz/targets.cpp).
#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ctxfold::fuzz::stdin_snapshot(data, size);
}
