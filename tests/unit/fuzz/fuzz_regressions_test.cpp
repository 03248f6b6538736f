// Replays saved fuzz inputs through the same target bodies libFuzzer runs (fuzz/targets.cpp):
// every file under tests/fixtures/fuzz-regressions/<target>/ (inputs that once crashed, leaked,
// tripped UBSan or broke a target's property; fuzz/README.md lists each and its fix) and every
// seed under fuzz/seeds/<target>/. A regression aborts the test process (the target's oracle), so
// the test fails; under -DCTXFOLD_SANITIZE=ON the sanitizers check the same runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "../../../fuzz/common.hpp"

namespace fs = std::filesystem;
using ctxfold::fuzz::targets;

namespace {

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Runs every file under dir/<target>/ through its target; returns how many ran. Fails the test
/// for a directory named after no target.
int replay(const fs::path& dir) {
  int ran = 0;
  if (!fs::is_directory(dir)) return 0;
  std::set<std::string> names;
  for (const auto& [name, fn] : targets()) names.insert(name);
  for (const auto& sub : fs::directory_iterator(dir)) {
    if (!sub.is_directory()) continue;
    std::string name = sub.path().filename().string();
    EXPECT_TRUE(names.count(name)) << "no fuzz target named " << name << " (" << sub.path() << ")";
    for (const auto& [tname, fn] : targets()) {
      if (tname != name) continue;
      std::vector<fs::path> files;
      for (const auto& f : fs::directory_iterator(sub.path()))
        if (f.is_regular_file()) files.push_back(f.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        SCOPED_TRACE(f.string());
        std::string bytes = read_bytes(f);
        EXPECT_EQ(fn(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
        ++ran;
      }
    }
  }
  return ran;
}

}  // namespace

TEST(FuzzRegressions, SavedFindingsStayFixed) {
  replay(CTXFOLD_FUZZ_REGRESSIONS_DIR);  // empty until the fuzzers find something
}

TEST(FuzzRegressions, EverySeedRunsThroughItsTarget) {
  int ran = replay(fs::path(CTXFOLD_FUZZ_DIR) / "seeds");
  EXPECT_GE(ran, static_cast<int>(targets().size()));
  for (const auto& [name, fn] : targets())
    EXPECT_TRUE(fs::is_directory(fs::path(CTXFOLD_FUZZ_DIR) / "seeds" / name)) << "no seeds for " << name;
}
