// libFuzzer entry point of target jsonl_reader (body in fuzz/targets.cpp).
#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ctxfold::fuzz::jsonl_reader(data, size);
}
