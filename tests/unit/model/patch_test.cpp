// The apply_patch envelope parser (model/patch.hpp).
#include <gtest/gtest.h>

#include "model/identifiers.hpp"
#include "model/patch.hpp"

namespace ctxfold {
namespace {

const char* kPatch =
    "*** Begin Patch\n"
    "*** Add File: docs/new.md\n"
    "+# New\n"
    "+two\n"
    "*** Update File: src/a.rs\n"
    "*** Move to: src/b.rs\n"
    "@@ fn main() {\n"
    " let x = 1;\n"
    "-let y = 2;\n"
    "+let y = 3;\n"
    "+let z = 4;\n"
    "*** End of File\n"
    "*** Delete File: old.txt\n"
    "*** End Patch\n";

TEST(ApplyPatch, ParsesAddUpdateMoveAndDelete) {
  auto files = parse_apply_patch(std::string("apply_patch <<'EOF'\n") + kPatch + "EOF\n");
  ASSERT_TRUE(files.has_value());
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].action, "add");
  EXPECT_EQ((*files)[0].path, "docs/new.md");
  EXPECT_EQ((*files)[0].hunks, std::vector<std::string>{"# New\ntwo"});
  EXPECT_EQ((*files)[0].added, 2);
  EXPECT_EQ((*files)[1].action, "update");
  EXPECT_EQ((*files)[1].move_to, std::optional<std::string>("src/b.rs"));
  ASSERT_EQ((*files)[1].hunks.size(), 1u);
  EXPECT_EQ((*files)[1].hunks[0], "@@ fn main() {\n let x = 1;\n-let y = 2;\n+let y = 3;\n+let z = 4;\n*** End of File");
  EXPECT_EQ((*files)[1].added, 2);
  EXPECT_EQ((*files)[1].removed, 1);
  EXPECT_EQ((*files)[2].action, "delete");
  EXPECT_EQ((*files)[2].path, "old.txt");
}

TEST(ApplyPatch, RefusesWhatDoesNotParse) {
  EXPECT_FALSE(parse_apply_patch("[REDACTED_INPUT len=2571 sha=adb0568c]"));
  EXPECT_FALSE(parse_apply_patch("*** Begin Patch\n*** Update File: a.c\n@@\n-x\n"));  // no End Patch
  EXPECT_FALSE(parse_apply_patch("*** Begin Patch\n*** Add File: a.c\nno plus\n*** End Patch\n"));
  EXPECT_FALSE(parse_apply_patch("*** Begin Patch\n*** Update File: \n*** End Patch\n"));
  EXPECT_FALSE(parse_apply_patch("*** Begin Patch\n*** End Patch\n"));
  EXPECT_FALSE(parse_apply_patch("*** Begin Patch\nstray line\n*** Update File: a.c\n*** End Patch\n"));
}

TEST(ApplyPatch, HeadersAreFoundEvenWhenTheBodyDoesNotParse) {
  std::vector<std::string> seen;
  for_each_patch_header("*** Begin Patch\n*** Update File: a.c\nnonsense\n*** Delete File: b.c\n",
                        [&](std::string_view action, std::string_view path) {
                          seen.push_back(std::string(action) + ":" + std::string(path));
                        });
  EXPECT_EQ(seen, (std::vector<std::string>{"update:a.c", "delete:b.c"}));
  // tool_argument_paths reads the same headers.
  std::vector<std::string> paths;
  tool_argument_paths(Json{{"raw", kPatch}}, [&](std::string_view p) { paths.emplace_back(p); });
  EXPECT_EQ(paths, (std::vector<std::string>{"docs/new.md", "src/a.rs", "src/b.rs", "old.txt"}));
}

}  // namespace
}  // namespace ctxfold
