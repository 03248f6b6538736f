// The MCP server of `ctxfold mcp` (lib/mcp): JSON-RPC framing and errors, the lifecycle and its
// protocol revisions, the tool table's schemas and argument checks, and the recall tools over a
// small session with a summary, read through a fresh read-only snapshot per call.
#include <gtest/gtest.h>

#include <string>

#include "mcp/server.hpp"
#include "mcp/tools.hpp"
#include "model/node.hpp"
#include "recall/expand.hpp"
#include "session/open.hpp"
#include "session_fixture.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

using mcp::Server;

class McpTest : public SessionTest {
 protected:
  void SetUp() override {
    SessionTest::SetUp();
    user("u1", "please look at the file alpha_config.yaml");
    assistant("a1", "reading alpha_config.yaml now");
    user("u2", "and now something else entirely");
    assistant("a2", "done with the second thing");
    Node s;
    s.id = "sum1";
    s.session = "s";
    s.kind = kind::kSummary;
    s.role = role::kUser;
    s.predecessor = std::nullopt;
    s.covers_ids = {"u1", "a1"};
    s.metadata = Json{{"strategy", "rolling"}};
    s.content = Json::array({Json{{"type", "text"}, {"text", "The user asked about a configuration file."}}});
    Txn t(st().db());
    EXPECT_EQ(st().append(s), AppendResult::added);
    t.commit();
  }

  Server server(std::int64_t max_tokens = 4000) {
    mcp::ServerOptions o;
    o.limits.max_tokens = max_tokens;
    o.max_message_bytes = 4096;
    const std::string p = path_;
    return Server([p] { return open_store(p, Store::Mode::read_only); }, o);
  }

  /// Sends one message; the parsed answer, or null when none came.
  static Json send(Server& s, const std::string& text) {
    auto r = s.handle(text);
    if (!r) return nullptr;
    EXPECT_EQ(r->find('\n'), std::string::npos) << "an answer is one line";
    return parse_json(*r);
  }
  static Json send(Server& s, const Json& msg) { return send(s, dump_json(msg)); }
  static Json req(std::int64_t id, const std::string& method, Json params = Json::object()) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
  }
  static void init(Server& s, const std::string& version = "2025-11-25") {
    Json r = send(s, req(1, "initialize", {{"protocolVersion", version}, {"capabilities", Json::object()},
                                           {"clientInfo", {{"name", "test"}, {"version", "1"}}}}));
    ASSERT_TRUE(r.contains("result")) << r.dump();
    EXPECT_TRUE(send(s, Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).is_null());
  }
  static Json call(Server& s, const std::string& tool, Json args, std::int64_t id = 7) {
    Json r = send(s, req(id, "tools/call", {{"name", tool}, {"arguments", std::move(args)}}));
    EXPECT_TRUE(r.contains("result")) << r.dump();
    return r["result"];
  }
  static int error_code(const Json& r) { return r.contains("error") ? r["error"]["code"].get<int>() : 0; }
};

TEST_F(McpTest, MalformedJsonIsAParseErrorWithNullId) {
  Server s = server();
  for (const char* bad : {"{\"jsonrpc\":\"2.0\",", "not json", "{\"a\":1}}", "\xff\xfe"}) {
    Json r = send(s, std::string(bad));
    EXPECT_EQ(error_code(r), mcp::code::kParseError) << bad;
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_EQ(r["jsonrpc"], "2.0");
  }
  EXPECT_TRUE(send(s, std::string("   ")).is_null()) << "a blank line is no message";
}

TEST_F(McpTest, InvalidRequestsAreRefusedWithTheRightId) {
  Server s = server();
  init(s);
  EXPECT_EQ(error_code(send(s, std::string("42"))), mcp::code::kInvalidRequest);
  Json r = send(s, Json{{"id", 5}, {"method", "ping"}});  // no jsonrpc
  EXPECT_EQ(error_code(r), mcp::code::kInvalidRequest);
  EXPECT_EQ(r["id"], 5);
  r = send(s, Json{{"jsonrpc", "2.0"}, {"id", 1.5}, {"method", "ping"}});
  EXPECT_EQ(error_code(r), mcp::code::kInvalidRequest);
  EXPECT_TRUE(r["id"].is_null()) << "an id that is not a string or integer is not echoed";
  r = send(s, Json{{"jsonrpc", "2.0"}, {"id", "x"}, {"method", 3}});
  EXPECT_EQ(error_code(r), mcp::code::kInvalidRequest);
  EXPECT_EQ(r["id"], "x");
  r = send(s, Json{{"jsonrpc", "2.0"}, {"id", 9}, {"method", "tools/list"}, {"params", Json::array({1})}});
  EXPECT_EQ(error_code(r), mcp::code::kInvalidParams);
}

TEST_F(McpTest, UnknownMethodsShutdownAndExitAreMethodNotFoundAndTheServerGoesOn) {
  Server s = server();
  init(s);
  EXPECT_EQ(error_code(send(s, req(2, "resources/list"))), mcp::code::kMethodNotFound);
  Json r = send(s, req(3, "shutdown"));
  EXPECT_EQ(error_code(r), mcp::code::kMethodNotFound);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("closes stdin"), std::string::npos);
  EXPECT_EQ(error_code(send(s, req(4, "exit"))), mcp::code::kMethodNotFound);
  r = send(s, req(5, "tools/list"));
  EXPECT_EQ(r["result"]["tools"].size(), mcp::tool_table().size()) << "requests after shutdown are still served";
}

TEST_F(McpTest, NotificationsAndResponsesGetNoAnswer) {
  Server s = server();
  init(s);
  EXPECT_TRUE(send(s, Json{{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 3}}}}).is_null());
  EXPECT_TRUE(send(s, Json{{"jsonrpc", "2.0"}, {"method", "no/such/notification"}}).is_null());
  EXPECT_TRUE(send(s, Json{{"jsonrpc", "2.0"}, {"method", "tools/list"}, {"params", "bad"}}).is_null());
  EXPECT_TRUE(send(s, Json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", Json::object()}}).is_null());
}

TEST_F(McpTest, InitializeAnswersTheClientsRevisionWhenSupportedElseTheLatest) {
  for (const std::string& v : mcp::kHandshakeRevisions) {
    Server s = server();
    Json r = send(s, req(1, "initialize", {{"protocolVersion", v}, {"capabilities", Json::object()}}));
    EXPECT_EQ(r["result"]["protocolVersion"], v);
    EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
    EXPECT_EQ(r["result"]["serverInfo"]["name"], "ctxfold");
    EXPECT_FALSE(r["result"].contains("resultType")) << "no 2026-07-28 field before 2026-07-28";
  }
  for (const char* v : {"1999-01-01", "2026-07-28", "2099-01-01"}) {
    Server s = server();
    Json r = send(s, req(1, "initialize", {{"protocolVersion", v}}));
    EXPECT_EQ(r["result"]["protocolVersion"], mcp::kHandshakeRevisions.front()) << v;
  }
  Server s = server();
  EXPECT_EQ(error_code(send(s, req(1, "initialize", Json::object()))), mcp::code::kInvalidParams);
  init(s);
  EXPECT_EQ(error_code(send(s, req(2, "initialize", {{"protocolVersion", "2025-11-25"}}))), mcp::code::kInvalidRequest);
}

TEST_F(McpTest, RequestsBeforeInitializeAreRefusedButPingAndDiscoverAnswer) {
  Server s = server();
  EXPECT_EQ(error_code(send(s, req(1, "tools/list"))), mcp::code::kInvalidRequest);
  EXPECT_EQ(error_code(send(s, req(2, "tools/call", {{"name", "grep"}}))), mcp::code::kInvalidRequest);
  EXPECT_TRUE(send(s, req(3, "ping"))["result"].is_object());
  Json d = send(s, req(4, "server/discover"));
  EXPECT_EQ(d["result"]["resultType"], "complete");
  EXPECT_EQ(d["result"]["supportedVersions"][0], mcp::kStatelessRevision);
  EXPECT_EQ(d["result"]["supportedVersions"].size(), 1 + mcp::kHandshakeRevisions.size());
  EXPECT_TRUE(d["result"].contains("ttlMs"));
  EXPECT_EQ(d["result"]["cacheScope"], "private");
}

TEST_F(McpTest, StatelessRevisionServesRequestsThatNameItInMeta) {
  Server s = server();
  const Json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  Json r = send(s, req(1, "tools/list", {{"_meta", meta}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_TRUE(r["result"]["ttlMs"].is_number_integer());
  EXPECT_EQ(r["result"]["cacheScope"], "private");
  r = send(s, req(2, "tools/call", {{"_meta", meta}, {"name", "grep"}, {"arguments", {{"pattern", "alpha_config"}}}}));
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_EQ(r["result"]["isError"], false);
  EXPECT_TRUE(r["result"].contains("structuredContent"));

  r = send(s, req(3, "tools/list", {{"_meta", {{"io.modelcontextprotocol/protocolVersion", "2030-01-01"}}}}));
  EXPECT_EQ(error_code(r), mcp::code::kUnsupportedVersion);
  EXPECT_EQ(r["error"]["data"]["requested"], "2030-01-01");
  EXPECT_EQ(r["error"]["data"]["supported"][0], "2026-07-28");
  r = send(s, req(4, "tools/list", {{"_meta", {{"io.modelcontextprotocol/protocolVersion", 7}}}}));
  EXPECT_EQ(error_code(r), mcp::code::kInvalidParams);
}

TEST_F(McpTest, BatchesOnlyUnder20250326) {
  Server s = server();
  const std::string batch = R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])";
  EXPECT_EQ(error_code(send(s, batch)), mcp::code::kInvalidRequest) << "before initialize";
  init(s, "2025-06-18");
  EXPECT_EQ(error_code(send(s, batch)), mcp::code::kInvalidRequest) << "2025-06-18 removed batches";

  Server b = server();
  init(b, "2025-03-26");
  Json r = send(b, std::string(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)"
                               R"({"jsonrpc":"2.0","method":"notifications/initialized"},)"
                               R"({"jsonrpc":"2.0","id":2,"method":"nope"},)"
                               R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}])"));
  ASSERT_TRUE(r.is_array()) << r.dump();
  ASSERT_EQ(r.size(), 3u) << "the notification gets no element";
  EXPECT_EQ(r[0]["id"], 1);
  EXPECT_TRUE(r[0].contains("result"));
  EXPECT_EQ(error_code(r[1]), mcp::code::kMethodNotFound);
  EXPECT_EQ(error_code(r[2]), mcp::code::kInvalidRequest) << "initialize must not be in a batch";
  EXPECT_EQ(error_code(send(b, std::string("[]"))), mcp::code::kInvalidRequest);
  EXPECT_TRUE(send(b, std::string(R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])")).is_null());
}

TEST_F(McpTest, ToolsCallProtocolErrorsAndToolErrors) {
  Server s = server();
  init(s);
  EXPECT_EQ(error_code(send(s, req(1, "tools/call", {{"name", "rm"}}))), mcp::code::kInvalidParams);
  EXPECT_EQ(error_code(send(s, req(2, "tools/call", Json::object()))), mcp::code::kInvalidParams);
  EXPECT_EQ(error_code(send(s, req(3, "tools/call", {{"name", "grep"}, {"arguments", "x"}}))), mcp::code::kInvalidParams);
  struct Case {
    Json args;
    const char* says;
  };
  const std::string huge(5000, 'a');
  for (const Case& c : {Case{Json::object(), "'pattern' is required"},
                        Case{{{"pattern", "x"}, {"limit", "ten"}}, "'limit' must be an integer"},
                        Case{{{"pattern", "x"}, {"limit", 0}}, "outside 1..200"},
                        Case{{{"pattern", "x"}, {"colour", true}}, "unknown argument 'colour'"},
                        Case{{{"pattern", "x"}, {"in", "everywhere"}}, "not one of raw, summaries, both, thinking"},
                        Case{{{"pattern", huge}}, "5000 bytes"}}) {
    Json r = call(s, "grep", c.args);
    EXPECT_EQ(r["isError"], true) << c.args.dump().substr(0, 200);
    const std::string text = r["content"][0]["text"];
    EXPECT_NE(text.find(c.says), std::string::npos) << text;
  }
}

TEST_F(McpTest, ToolErrorsCarryTheCliMessage) {
  Server s = server();
  init(s);
  std::string cli;
  try {
    Store ro = open_store(path_, Store::Mode::read_only);
    expand(ro, "no-such-node", 0, 10);
  } catch (const Error& e) {
    cli = e.what();
  }
  ASSERT_FALSE(cli.empty());
  Json r = call(s, "expand", {{"id", "no-such-node"}});
  EXPECT_EQ(r["isError"], true);
  EXPECT_NE(r["content"][0]["text"].get<std::string>().find(cli), std::string::npos) << r.dump();
  r = call(s, "grep", {{"pattern", "x"}, {"session", "nobody"}});
  EXPECT_EQ(r["isError"], true);
  EXPECT_NE(r["content"][0]["text"].get<std::string>().find("nobody"), std::string::npos);
}

TEST_F(McpTest, GrepFindsTheHitAndTheSummaryThatCoversIt) {
  Server s = server();
  init(s);
  Json r = call(s, "grep", {{"pattern", "alpha_config"}});
  ASSERT_EQ(r["isError"], false) << r.dump();
  const Json& doc = r["structuredContent"];
  EXPECT_EQ(doc["raw_matches"], 2);
  ASSERT_EQ(doc["matches"].size(), 2u);
  EXPECT_EQ(doc["matches"][0]["id"], "u1");
  EXPECT_EQ(doc["matches"][0]["covered_by"], "sum1");
  EXPECT_TRUE(doc["next_offset"].is_null());
  EXPECT_EQ(parse_json(r["content"][0]["text"].get<std::string>()), doc) << "the text is the same document";
  // paging
  r = call(s, "grep", {{"pattern", "alpha_config"}, {"limit", 1}});
  EXPECT_EQ(r["structuredContent"]["matches"].size(), 1u);
  EXPECT_EQ(r["structuredContent"]["next_offset"], 1);
  r = call(s, "grep", {{"pattern", "alpha_config"}, {"limit", 1}, {"offset", 1}});
  EXPECT_EQ(r["structuredContent"]["matches"][0]["id"], "a1");
  EXPECT_TRUE(r["structuredContent"]["next_offset"].is_null());
}

TEST_F(McpTest, ResultsStayWithinTheTokenBoundAndSayWhereToGoOn) {
  for (int i = 0; i < 60; ++i) {
    user("x" + std::to_string(i), "needle number " + std::to_string(i) + " " + words(200));
  }
  Server s = server(600);
  init(s);
  Json r = call(s, "grep", {{"pattern", "needle number"}, {"limit", 200}});
  ASSERT_EQ(r["isError"], false) << r.dump();
  const Json& doc = r["structuredContent"];
  EXPECT_EQ(doc["raw_matches"], 60);
  EXPECT_LT(doc["limit"].get<int>(), 60) << "the page was shortened";
  EXPECT_EQ(doc["matches"].size(), doc["limit"].get<std::size_t>());
  EXPECT_EQ(doc["next_offset"], doc["limit"]);
  EXPECT_LE(mcp::result_tokens(doc), 600);

  // expand: pages under the bound, concatenated, are the whole expansion
  Json e = call(s, "expand", {{"id", "sum1"}, {"limit", 200000}});
  ASSERT_EQ(e["isError"], false) << e.dump();
  EXPECT_LE(mcp::result_tokens(e["structuredContent"]), 600);
}

TEST_F(McpTest, ExpandPagesJoinToTheWholeExpansion) {
  Server s = server();
  init(s);
  Store ro = open_store(path_, Store::Mode::read_only);
  const ExpandPage whole = expand(ro, "sum1", 0, 1000000);
  std::string all;
  for (const auto& row : whole.rows) all += (all.empty() ? "" : "\n\n") + row.text;
  std::string got;
  Json offset = 0;
  int pages = 0;
  std::string last_id;
  while (!offset.is_null() && pages < 100) {
    Json r = call(s, "expand", {{"id", "sum1"}, {"offset", offset}, {"limit", 7}});
    ASSERT_EQ(r["isError"], false) << r.dump();
    const Json& doc = r["structuredContent"];
    for (const Json& row : doc["rows"]) {
      if (!got.empty() && row["id"] != last_id) got += "\n\n";
      got += row["text"].get<std::string>();
      last_id = row["id"];
    }
    offset = doc["next_offset"];
    ++pages;
  }
  EXPECT_GT(pages, 3);
  EXPECT_EQ(got, all);
}

TEST_F(McpTest, EachCallReadsAFreshSnapshot) {
  Server s = server();
  init(s);
  EXPECT_EQ(call(s, "grep", {{"pattern", "zebra_late"}})["structuredContent"]["raw_matches"], 0);
  user("late", "a zebra_late arrives after the server started");
  EXPECT_EQ(call(s, "grep", {{"pattern", "zebra_late"}})["structuredContent"]["raw_matches"], 1);
}

TEST_F(McpTest, DescribeListSessionsAndDroppedAnswer) {
  Server s = server();
  init(s, "2025-03-26");
  Json d = call(s, "describe", {{"id", "sum1"}});
  EXPECT_FALSE(d.contains("structuredContent")) << "no structuredContent before 2025-06-18";
  Json doc = parse_json(d["content"][0]["text"].get<std::string>());
  EXPECT_EQ(doc["coverage"]["count"], 2);
  Json l = parse_json(call(s, "list", Json::object())["content"][0]["text"].get<std::string>());
  EXPECT_EQ(l["items"][0]["id"], "sum1");
  Json ss = parse_json(call(s, "sessions", Json::object())["content"][0]["text"].get<std::string>());
  EXPECT_EQ(ss["sessions"][0]["id"], "s");
  EXPECT_EQ(ss["total"], 1);
  Json dr = call(s, "dropped", Json::object());
  ASSERT_EQ(dr["isError"], false) << dr.dump();
  Json drop = parse_json(dr["content"][0]["text"].get<std::string>());
  EXPECT_EQ(drop["summary_id"], "sum1");
  bool named = false;
  for (const Json& item : drop["dropped"]) named = named || item["value"] == "alpha_config.yaml";
  EXPECT_TRUE(named) << "the summary does not name the file the history did: " << drop.dump();
}

TEST_F(McpTest, TheCallingAgentsSessionIsTheDefaultWhenArchived) {
  {
    Txn t(st().db());
    st().create_session(SessionInfo{"agent-1"});
    Node n;
    n.id = "g1";
    n.session = "agent-1";
    n.role = role::kUser;
    n.content = Json::array({Json{{"type", "text"}, {"text", "only in the agent's session: quokka"}}});
    EXPECT_EQ(st().append(n), AppendResult::added);
    st().move_head("agent-1", "g1", "append");
    t.commit();
  }
  auto with_agent = [&](const std::string& agent) {
    mcp::ServerOptions o;
    o.limits.agent_session = agent;
    const std::string p = path_;
    return Server([p] { return open_store(p, Store::Mode::read_only); }, o);
  };
  Server s = with_agent("agent-1");
  init(s);
  EXPECT_EQ(call(s, "grep", {{"pattern", "quokka"}})["structuredContent"]["raw_matches"], 1);
  EXPECT_EQ(call(s, "grep", {{"pattern", "quokka"}, {"session", "s"}})["structuredContent"]["raw_matches"], 0)
      << "a session argument wins";
  Server other = with_agent("not-imported-yet");
  init(other);
  Json r = call(other, "list", Json::object());
  EXPECT_EQ(r["isError"], false) << "an agent session the archive lacks falls back to the default rule: " << r.dump();
}

TEST_F(McpTest, EveryToolSchemaIsAnObjectSchemaWhoseDefaultsPassItsOwnCheck) {
  for (const mcp::Tool& t : mcp::tool_table()) {
    Json sch = mcp::input_schema(t);
    EXPECT_EQ(sch["type"], "object") << t.name;
    EXPECT_EQ(sch["additionalProperties"], false) << t.name;
    Json args = Json::object();
    for (const mcp::ToolArg& a : t.args) {
      ASSERT_TRUE(sch["properties"].contains(a.name)) << t.name << " " << a.name;
      if (a.required) args[a.name] = a.type == mcp::ArgType::string ? Json("x") : Json(1);
    }
    for (const Json& r : sch.value("required", Json::array())) EXPECT_TRUE(sch["properties"].contains(r.get<std::string>()));
    EXPECT_NO_THROW(mcp::check_arguments(t, args)) << t.name;
  }
}

TEST(LineFramer, SplitsLinesDropsCrAndSkipsOversizedLines) {
  mcp::LineFramer f(10);
  auto m = f.push("abc\r\nde");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].text, "abc");
  m = f.push("f\n0123456789ABCDEF");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].text, "def");
  m = f.push("GHI\nok\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[0].oversized);
  EXPECT_EQ(m[0].bytes, 19u);
  EXPECT_TRUE(m[0].text.empty());
  EXPECT_EQ(m[1].text, "ok");
  EXPECT_FALSE(f.finish());
  f.push("tail");
  auto last = f.finish();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->text, "tail");
}

TEST_F(McpTest, OversizedMessageIsAnInvalidRequest) {
  Server s = server();
  Json r = parse_json(s.refuse_oversized(99999));
  EXPECT_EQ(error_code(r), mcp::code::kInvalidRequest);
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_NE(r["error"]["message"].get<std::string>().find("99999"), std::string::npos);
}

}  // namespace
}  // namespace ctxfold
