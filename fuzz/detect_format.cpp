// libFuzzer entry point of target detect_format (body in fuzz/targets.cpp).
#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ctxfold::fuzz::detect_format(data, size);
}
