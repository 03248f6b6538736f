// RenderOptions::lean_metadata (docs/render.md "Memory"): the items keep only the metadata a render
// reads, and everything a render prints is the same as without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "render/render.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

TEST(LeanMetadata, ItemsDropSourceRecordsAndToolResultsCopiesButRenderTheSame) {
  const fs::path dir = fs::temp_directory_path() / ("ctxfold-lean-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    Store st = open_store((dir / "t.db").string(), Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    const Json source = {{"format", "claude-code"}, {"file", "s.jsonl"}, {"line", 3},
                         {"parts", Json::array({Json{{"line", 3}, {"record", {{"type", "user"}}}}})}};
    Node call;
    call.id = "a1";
    call.session = "s";
    call.role = role::kAssistant;
    call.content = Json::array({Json{{"type", "tool_use"}, {"id", "t1"}, {"name", "Edit"}, {"input", Json::object()}}});
    call.metadata = {{"source", source}, {"message_id", "m1"}, {"usage", {{"input_tokens", 12}}}};
    Node result;
    result.id = "r1";
    result.session = "s";
    result.predecessor = "a1";
    result.role = role::kUser;
    result.content = Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "updated"}}});
    result.metadata = {{"source", source}, {"tool_use_result", {{"structuredPatch", Json::array({"-a", "+b"})}}},
                       {"raw", "verbatim"}, {"is_meta", false}};
    ASSERT_EQ(st.append(call), AppendResult::added);
    ASSERT_EQ(st.append(result), AppendResult::added);
    st.move_head("s", "r1", "append");

    RenderOptions whole, lean;
    lean.lean_metadata = true;
    const Rendered a = render_context(st, "s", whole);
    const Rendered b = render_context(st, "s", lean);
    ASSERT_EQ(b.items.size(), 2u);
    EXPECT_EQ(b.items[1].metadata, (Json{{"source", {{"format", "claude-code"}}}, {"is_meta", false}}));
    EXPECT_EQ(b.items[0].metadata["message_id"], "m1");
    EXPECT_EQ(b.items[0].metadata["usage"], a.items[0].metadata["usage"]);
    EXPECT_TRUE(a.items[1].metadata.contains("tool_use_result"));  // the stored node is whole
    for (RenderFormat f : {RenderFormat::ctxfold, RenderFormat::openai, RenderFormat::anthropic, RenderFormat::text})
      EXPECT_EQ(dump_json(render_to_json(a, f)), dump_json(render_to_json(b, f)));
    EXPECT_EQ(a.item_tokens, b.item_tokens);  // the provider the estimator reads is kept
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ctxfold
