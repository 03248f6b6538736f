// The id model-visible text quotes for a node (model/quoted_id.hpp): a fork's copy is quoted by
// the id its source was first written under, through any number of forks.
#include <gtest/gtest.h>

#include "model/quoted_id.hpp"

namespace ctxfold {
namespace {

Node node(const std::string& id, Json metadata = Json::object()) {
  Node n;
  n.id = id;
  n.metadata = std::move(metadata);
  return n;
}

TEST(QuotedId, ANodeNoForkCopiedIsQuotedByItsOwnId) {
  EXPECT_EQ(quoted_id(node("u1")), "u1");
  // A session-level "forked_from" string (not a copy record) is not a copy.
  EXPECT_EQ(quoted_id(node("u1", Json{{"forked_from", "s"}})), "u1");
}

TEST(QuotedId, ACopyIsQuotedByItsSourceThroughForksOfForks) {
  const Node original = node("u1", Json{{"source", {{"line", 3}}}});
  const Node copy = node("f:u1", Json{{"forked_from", forked_from_record("s", original.id, original.metadata)}});
  EXPECT_EQ(copy.metadata["forked_from"], (Json{{"session", "s"}, {"id", "u1"}}));
  EXPECT_EQ(quoted_id(copy), "u1");
  const Node copy2 = node("g:f:u1", Json{{"forked_from", forked_from_record("f", copy.id, copy.metadata)}});
  EXPECT_EQ(copy2.metadata["forked_from"], (Json{{"session", "f"}, {"id", "f:u1"}, {"origin", "u1"}}));
  EXPECT_EQ(quoted_id(copy2), "u1");
  const Node copy3 = node("h:g:f:u1", Json{{"forked_from", forked_from_record("g", copy2.id, copy2.metadata)}});
  EXPECT_EQ(quoted_id(copy3), "u1");
}

}  // namespace
}  // namespace ctxfold
