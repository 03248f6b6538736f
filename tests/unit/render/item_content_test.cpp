// render_moved (render/moved.hpp; docs/render.md "Memory", docs/invariants.md "Memory"): the
// render verify-invariants makes moves each item's content into the messages instead of copying
// it. On every real transcript (read in place), rolling, raw and lcm renders at HEAD and at nodes
// along the spine, and after rolling and lcm compactions, everything but the items' content is the
// same as the whole render's: messages, repairs, reads, sections, estimates, token figure,
// warnings, and the openai and anthropic documents and request bodies byte for byte (and their
// streamed digests, util/json.hpp dump_json_sha256), and render_stream gives the request body's
// messages one at a time and the document's digest.
#include <gtest/gtest.h>

#include "import/import.hpp"
#include "render/moved.hpp"
#include "render/render.hpp"
#include "render_sweep.hpp"
#include "session/open.hpp"
#include "temp_dir.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "summarize/extractive.hpp"
#include "util/digest.hpp"
#include "util/json_digest.hpp"

namespace ctxfold {
namespace {

using render_sweep::kDir;

Json messages_json(const Rendered& r) {
  Json out = Json::array();
  for (const auto& m : r.messages)
    out.push_back(Json{{"role", m.role}, {"kind", m.kind}, {"ids", m.ids}, {"content", m.content}, {"part", m.part}});
  return out;
}

Json repairs_json(const Rendered& r) {
  Json out = Json::array();
  for (const auto& rp : r.repairs) out.push_back(Json{{"kind", rp.kind}, {"node", rp.node}, {"id", rp.tool_use_id}});
  return out;
}

/// Compares the render without item content with the whole one at the same options; returns the
/// number of differing fields (each reported).
int compare_render(Store& st, const std::string& session, RenderOptions o, const std::string& what) {
  o.lean_metadata = true;
  const Rendered whole = render_context(st, session, o);
  const Rendered moved = render_moved(st, session, o);
  int bad = 0;
  auto check = [&](bool same, const std::string& field) {
    if (!same) {
      ++bad;
      ADD_FAILURE() << what << ": " << field;
    }
  };
  check(dump_json(messages_json(moved)) == dump_json(messages_json(whole)), "messages");
  check(dump_json(repairs_json(moved)) == dump_json(repairs_json(whole)), "repairs");
  check(moved.reads == whole.reads, "reads");
  check(moved.item_tokens == whole.item_tokens && moved.item_prior_thinking == whole.item_prior_thinking,
        "item estimates");
  check(moved.estimated_tokens == whole.estimated_tokens, "estimated_tokens");
  check(dump_json(moved.tokens.to_json()) == dump_json(whole.tokens.to_json()),
        "token figure " + dump_json(moved.tokens.to_json()) + " vs " + dump_json(whole.tokens.to_json()));
  check(moved.warnings == whole.warnings, "warnings");
  check(moved.items.size() == whole.items.size(), "item count");
  for (std::size_t i = 0; i < std::min(moved.items.size(), whole.items.size()); ++i) {
    const Node& a = moved.items[i];
    const Node& b = whole.items[i];
    check(a.id == b.id && a.kind == b.kind && a.role == b.role && a.seq == b.seq, "item " + b.id);
    check(dump_json(a.metadata) == dump_json(b.metadata), "metadata of " + b.id);
    check(a.content == Json::array(), "content of " + b.id + " left behind");
  }
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const std::string name = f == RenderFormat::openai ? "openai" : "anthropic";
    const std::string doc = dump_json(render_to_json(whole, f));
    const Json moved_doc = render_to_json(moved, f);
    check(dump_json(moved_doc) == doc, name + " document");
    check(dump_json_sha256(moved_doc) == sha256_hex(doc), name + " document digest");
    const Json body = render_request_body(moved, f);
    check(dump_json(body) == dump_json(render_request_body(whole, f)), name + " body");
    for (const auto& m : body["messages"])
      if (dump_json_sha256(m) != sha256_hex(dump_json(m))) {
        check(false, name + " message digest");
        break;
      }
    // render_stream (verify's bounded pass): the body's messages one at a time, in order, and the
    // document's digest, from the moved render as verify makes it.
    std::size_t at = 0;
    bool same = true;
    const std::string streamed_digest = render_stream(
        moved, f,
        [&](const Json& m) {
          if (at >= body["messages"].size() || dump_json(m) != dump_json(body["messages"][at])) same = false;
          ++at;
        },
        true);
    check(same && at == body["messages"].size(), name + " streamed messages");
    check(streamed_digest == sha256_hex(doc), name + " streamed document digest");
    check(render_stream(moved, f, [](const Json&) {}, false).empty(), name + " digest when not asked");
  }
  return bad;
}

TEST(ItemContent, MovedContentRendersTheSameOnEveryRealTranscript) {
  if (render_sweep::transcript_files().empty()) GTEST_SKIP() << "no transcripts at " << kDir;
  TempDir dir("itemcontent");
  EXPECT_GT(render_sweep::sweep_transcripts(dir.root(), 17, compare_render), 40);
}

TEST(ItemContent, MovedContentRendersTheSameAfterRollingAndLcmCompactions) {
  TempDir dir("itemcontent");
  render_sweep::sweep_compactions(dir.root(), 29, compare_render);
}

TEST(DumpJsonSha256, IsTheDigestOfTheDumpedText) {
  Json j = Json::parse(R"({"b":[1,2.5,"x\u0001y",null,true],"a":{"k":"\u00e9"}})");
  j["big"] = std::string(200000, 'q');  // longer than the adapter's buffer
  j["bad"] = std::string("\xff\xfe ok");  // invalid UTF-8: replaced, as dump_json does
  EXPECT_EQ(dump_json_sha256(j), sha256_hex(dump_json(j)));
  EXPECT_EQ(dump_json_sha256(Json::array()), sha256_hex("[]"));
}

}  // namespace
}  // namespace ctxfold
