// libFuzzer entry point of target stdin_append (body in fuzz/targets.cpp).
#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ctxfold::fuzz::stdin_append(data, size);
}
