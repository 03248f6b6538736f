#pragma once
// Forced compaction options for tests that compact the real transcripts, shared so that they
// compact the same way.
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "fake_environment.hpp"

namespace ctxfold::testing_env {

/// Rolling, forced, at `window` tokens. The real sessions' requests measured ~38.6k tokens beyond
/// their transcripts (system prompt, tool definitions) and compaction is calibrated on them, so a
/// window below ~40k leaves no room for a second compaction.
inline RollingOptions forced_rolling(std::int64_t window) {
  RollingOptions o;
  o.env = &shared_environment();
  o.force = true;
  o.window = window;
  return o;
}

/// lcm, forced, with a 16k window, 2k-token leaves and fanout 2: a short real session becomes a
/// tree of several levels.
inline LcmOptions forced_small_lcm() {
  LcmOptions o;
  o.env = &shared_environment();
  o.force = true;
  o.window = 16000;
  o.leaf_chunk_tokens = 2000;
  o.fanout = 2;
  return o;
}

}  // namespace ctxfold::testing_env
