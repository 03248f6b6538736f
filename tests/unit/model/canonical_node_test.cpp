// canonical_node (model/node.hpp) builds the bytes every node digest hashes from content and
// metadata already serialized, and must print exactly what dump_json(node_to_json(n, false))
// prints: a stored digest is compared with a recomputed one by verify-invariants I1, so any byte
// that drifts between the two forms makes every existing database fail I1.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/node.hpp"
#include "util/json.hpp"

namespace ctxfold {
namespace {

/// canonical_node of n, from its content and metadata serialized as the store serializes them.
std::string canonical(const Node& n) { return canonical_node(n, dump_json(n.content), metadata_json(n)); }

Node message(std::string id, std::string role) {
  Node n;
  n.id = std::move(id);
  n.session = "s1";
  n.kind = "message";
  n.role = std::move(role);
  n.content = Json::array({Json{{"type", "text"}, {"text", "hello"}}});
  n.metadata = Json{{"model", "m"}};
  return n;
}

TEST(CanonicalNode, EqualsTheDumpOfTheCanonicalFormForPlainNodes) {
  Node root = message("u1", "user");
  EXPECT_EQ(canonical(root), dump_json(node_to_json(root, false)));
  Node child = message("a1", "assistant");
  child.predecessor = "u1";
  EXPECT_EQ(canonical(child), dump_json(node_to_json(child, false)));
  Node event = message("e1", "");  // no role: written as null
  event.kind = "event";
  event.predecessor = "a1";
  EXPECT_EQ(canonical(event), dump_json(node_to_json(event, false)));
  EXPECT_NE(canonical(event).find("\"role\":null"), std::string::npos);
}

TEST(CanonicalNode, EscapesItsStringsAsTheDumpDoes) {
  // Quotes, backslashes, control bytes, non-ASCII text and bytes that are not UTF-8 in the
  // fields canonical_node writes itself (id, session, predecessor, kind, role).
  const std::vector<std::string> texts = {"plain", "quo\"te", "back\\slash", std::string("nul\0x", 5),
                                          "tab\tnew\nline\x1f", "\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80",
                                          "bad \xff\xfe utf8", "cut \xe4\xb8"};
  for (const auto& t : texts) {
    Node n = message(t, t);
    n.session = t;
    n.predecessor = t;
    EXPECT_EQ(canonical(n), dump_json(node_to_json(n, false))) << t;
  }
}

TEST(CanonicalNode, AViewNodeEndsWithItsCoveredIds) {
  Node s = message("sum1", "user");
  s.kind = "summary";
  s.predecessor = "u0";
  s.covers_ids = {"u1", "a\"1", "t1"};
  ASSERT_TRUE(s.is_view());
  EXPECT_EQ(canonical(s), dump_json(node_to_json(s, false)));
  EXPECT_NE(canonical(s).find(",\"covers_ids\":[\"u1\",\"a\\\"1\",\"t1\"]}"), std::string::npos);
}

}  // namespace
}  // namespace ctxfold
