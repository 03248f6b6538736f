// session_lineage over the list of the nodes holding a lineage key (node_marks, schema 013): the
// same lineage as a pass over every node, and work that follows the linked nodes, not the store.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>

#include "forensics/lineage.hpp"
#include "session_fixture.hpp"

namespace ctxfold {
namespace {

class LineageIndexTest : public SessionTest {
 protected:
  /// A root session "s" of `filler` plain nodes, a sub-agent "sub" whose two nodes copy two of
  /// them (duplicate_of), a ctxfold fork "f" with a forked_from node, and a Claude Code resume
  /// "r" whose assistant record names "s" as the session that made its request.
  void build(int filler) {
    for (int i = 0; i < filler; ++i) user("n" + std::to_string(i), "filler text of node " + std::to_string(i));
    ASSERT_TRUE(st().create_session(SessionInfo{"sub", "sidechain", std::string("s")}));
    ASSERT_TRUE(st().create_session(SessionInfo{"f", "fork", std::string("s")}));
    ASSERT_TRUE(st().create_session(SessionInfo{"r"}));
    Txn t(st().db());
    auto put = [&](const std::string& id, const std::string& session, const std::string& role, Json meta,
                   std::optional<std::string> pred) {
      Node n;
      n.id = id;
      n.session = session;
      n.predecessor = std::move(pred);
      n.role = role;
      n.content = Json::array({Json{{"type", "text"}, {"text", "copy"}}});
      n.metadata = std::move(meta);
      ASSERT_EQ(st().append(n), AppendResult::added) << id;
    };
    put("sub0", "sub", role::kUser, Json{{"duplicate_of", "n0"}}, std::nullopt);
    put("sub1", "sub", role::kUser, Json{{"duplicate_of", "n1"}}, std::string("sub0"));
    put("f0", "f", role::kUser, Json{{"forked_from", {{"id", "n2"}, {"session", "s"}}}}, std::nullopt);
    Json parts = Json::array({Json{{"record", {{"requestSessionId", "s"}}}}});
    put("r0", "r", role::kAssistant, Json{{"source", {{"parts", parts}}}}, std::nullopt);
    t.commit();
  }

  /// SQLite virtual-machine steps taken by fn (a progress handler called at every one).
  template <class Fn>
  std::int64_t steps_of(Fn&& fn) {
    std::int64_t steps = 0;
    sqlite3_progress_handler(
        st().db().raw(), 1,
        [](void* p) {
          ++*static_cast<std::int64_t*>(p);
          return 0;
        },
        &steps);
    fn();
    sqlite3_progress_handler(st().db().raw(), 0, nullptr, nullptr);
    return steps;
  }

  /// SQLite virtual-machine steps taken by session_lineage.
  std::int64_t steps_of_lineage(std::map<std::string, SessionLineage>& out) {
    return steps_of([&] { out = session_lineage(st()); });
  }
};

std::string describe(const std::map<std::string, SessionLineage>& all) {
  std::string s;
  for (const auto& [id, l] : all) {
    s += id + " parent=" + l.parent.value_or("-") + " relation=" + l.relation + " state=" + l.parent_state + " shared=";
    for (const auto& [node, orig] : l.shared) s += node + ">" + orig + ",";
    s += " foreign=" + std::to_string(l.foreign_requests) + "\n";
  }
  return s;
}

TEST_F(LineageIndexTest, SameLineageWithAndWithoutTheIndex) {
  build(20);
  ASSERT_TRUE(st().db().has_schema_object("node_marks"));
  std::map<std::string, SessionLineage> with_index, without;
  steps_of_lineage(with_index);
  st().db().exec("DROP TABLE node_marks");
  steps_of_lineage(without);
  EXPECT_EQ(describe(with_index), describe(without));
  // The links were found at all: the copies in the sub-agent, the fork's node, the resume's parent.
  EXPECT_EQ(with_index.at("sub").shared.size(), 2u);
  EXPECT_EQ(with_index.at("f").shared.size(), 1u);
  EXPECT_EQ(with_index.at("r").parent.value_or(""), "s");
  EXPECT_EQ(with_index.at("r").relation, "fork");
}

// node_marks (schema 013) lists, as the store appends or copies a node, exactly the nodes the SQL
// terms it replaces select: the lineage keys anywhere in the metadata text (here also inside a
// string value, as instr finds them), and metadata.event = 'system_prompt'.
TEST_F(LineageIndexTest, NodeMarksListWhatTheTermsSelect) {
  build(5);
  {
    Txn t(st().db());
    auto put = [&](const std::string& id, Json meta) {
      Node n;
      n.id = id;
      n.session = "s";
      n.kind = id == "sp" || id == "ev" ? "event" : "message";
      n.role = n.kind == "event" ? "" : role::kUser;
      n.content = Json::array({Json{{"type", "text"}, {"text", "x"}}});
      n.metadata = std::move(meta);
      ASSERT_EQ(st().append(n), AppendResult::added) << id;
    };
    put("sp", Json{{"event", "system_prompt"}});
    put("ev", Json{{"event", "progress"}, {"note", "requestSessionId in a value"}});
    put("nested", Json{{"x", {{"event", "system_prompt"}}}});
    t.commit();
  }
  ASSERT_TRUE(st().copy_node("f0", "f0copy", "f", [](Json&, std::optional<std::string>&) {}));
  auto rows = [&](const std::string& sql) {
    std::string out;
    auto q = st().db().prepare(sql);
    while (q.step()) out += std::to_string(q.int64(0)) + ":" + std::to_string(q.int64(1)) + " ";
    return out;
  };
  const std::string listed = rows("SELECT seq, mark FROM node_marks ORDER BY seq");
  EXPECT_EQ(listed, rows("SELECT seq, m FROM (SELECT seq, (CASE WHEN instr(metadata, 'requestSessionId') > 0 "
                         "OR instr(metadata, '\"duplicate_of\"') > 0 OR instr(metadata, '\"forked_from\"') > 0 "
                         "THEN 1 ELSE 0 END) | (CASE WHEN json_extract(metadata, '$.event') = 'system_prompt' "
                         "THEN 2 ELSE 0 END) AS m FROM nodes) WHERE m <> 0 ORDER BY seq"));
  EXPECT_EQ(std::count(listed.begin(), listed.end(), ' '), 7) << listed;  // sub0 sub1 f0 r0 sp ev f0copy
  auto sp = st().system_prompt("s", st().max_seq());
  ASSERT_TRUE(sp.has_value());
  EXPECT_EQ(sp->id, "sp");
}

// Before schema 012 each lineage query read every node's metadata (three passes over the largest
// column of the file for grep --all-sessions): ten times the nodes must not cost ten times the steps.
TEST_F(LineageIndexTest, WorkFollowsTheLinkedNodesNotTheStore) {
  build(200);
  std::map<std::string, SessionLineage> small;
  const std::int64_t steps_small = steps_of_lineage(small);
  for (int i = 200; i < 2000; ++i) user("n" + std::to_string(i), "filler text of node " + std::to_string(i));
  std::map<std::string, SessionLineage> large;
  const std::int64_t steps_large = steps_of_lineage(large);
  EXPECT_EQ(describe(small), describe(large));
  EXPECT_LT(steps_large, steps_small + 500) << "small " << steps_small << ", large " << steps_large;
}

// grep --all-sessions asks only for the shared prefix: the same set as the whole lineage gives,
// and no lineage at all when nothing is linked.
TEST_F(LineageIndexTest, SharedPrefixShortcutEqualsTheLineage) {
  for (int i = 0; i < 300; ++i) user("p" + std::to_string(i), "plain node " + std::to_string(i));
  ASSERT_TRUE(st().create_session(SessionInfo{"sub2", "sidechain", std::string("s")}));
  EXPECT_TRUE(shared_prefix_nodes(st()).empty());
  EXPECT_EQ(shared_prefix_nodes(st()), shared_prefix_nodes(session_lineage(st())));
  const std::int64_t steps = steps_of([&] { (void)shared_prefix_nodes(st()); });
  EXPECT_LT(steps, 600) << "no link: two small queries, not a pass over the 300 nodes";
  build(20);
  const std::set<std::string> shared = shared_prefix_nodes(st());
  EXPECT_EQ(shared, shared_prefix_nodes(session_lineage(st())));
  EXPECT_EQ(shared, (std::set<std::string>{"f0", "sub0", "sub1"}));
}

}  // namespace
}  // namespace ctxfold
