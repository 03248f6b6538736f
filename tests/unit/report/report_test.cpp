// The report: hostile text renders as text, Markdown renders with raw HTML escaped, anchors are
// stable, tool calls sit with their results, summaries are capsules over their covered turns,
// and the bounds hold.
#include <gtest/gtest.h>

#include <regex>

#include "forensics/redact.hpp"
#include "report/escape.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"
#include "session_fixture.hpp"

namespace ctxfold {
namespace {

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

const std::string kRlo = "\xE2\x80\xAE";  // U+202E RIGHT-TO-LEFT OVERRIDE

TEST(ReportEscape, HostileTextBecomesVisibleEscapedText) {
  std::string hostile = std::string("a<script>alert(1)</script></textarea></details>&\"'") + kRlo + "gpj.exe" +
                        std::string(1, '\0') + "z\xC3(\xFF";
  std::string h = html_text(hostile);
  EXPECT_EQ(h.find('<'), std::string::npos) << h;
  EXPECT_EQ(h.find('>'), std::string::npos) << h;
  EXPECT_EQ(h.find('"'), std::string::npos) << h;
  EXPECT_NE(h.find("&lt;script&gt;"), std::string::npos) << h;
  EXPECT_NE(h.find("&lt;/textarea&gt;&lt;/details&gt;&amp;&quot;&#39;"), std::string::npos) << h;
  EXPECT_EQ(h.find(kRlo), std::string::npos) << "the override is shown, never applied";
  EXPECT_NE(h.find("[U+202E]gpj.exe"), std::string::npos) << h;
  EXPECT_NE(h.find("[U+0000]z"), std::string::npos) << "NUL is shown";
  EXPECT_EQ(h.find('\0'), std::string::npos);
  EXPECT_NE(h.find("\xEF\xBF\xBD"), std::string::npos) << "invalid UTF-8 becomes U+FFFD";
  EXPECT_EQ(visible_text("tab\tnew\nline"), "tab\tnew\nline");
}

TEST(ReportEscape, AnchorsAreStableAndSafe) {
  EXPECT_EQ(node_anchor("0b7c1d2e-aaaa-4bbb-8ccc-123456789abc"), "node-0b7c1d2e-aaaa-4bbb-8ccc-123456789abc");
  EXPECT_EQ(node_anchor("fork:x.1_y"), "node-fork:x.1_y");
  EXPECT_EQ(node_anchor("a b\"<"), "node-a~20b~22~3C");
  EXPECT_EQ(session_anchor("s"), "session-s");
}

TEST(ReportMarkdown, RendersMarkdownAndShowsRawHtmlAsText) {
  std::string h = markdown_html("# Title\n\n**bold** and ~~gone~~\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                                "<script>alert(1)</script>\n\ninline <img src=x onerror=alert(2)> tag\n\n"
                                "![pic](http://example.invalid/p.png) [bad](javascript:alert(3)) https://example.org\n");
  EXPECT_NE(h.find("<h1>Title</h1>"), std::string::npos) << h;
  EXPECT_NE(h.find("<strong>bold</strong>"), std::string::npos) << h;
  EXPECT_NE(h.find("<del>gone</del>"), std::string::npos) << h;
  EXPECT_NE(h.find("<table>"), std::string::npos) << h;
  EXPECT_EQ(h.find("<script"), std::string::npos) << h;
  EXPECT_NE(h.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << h;
  EXPECT_EQ(h.find("<img"), std::string::npos) << h;
  EXPECT_NE(h.find("&lt;img src=x onerror=alert(2)&gt;"), std::string::npos) << h;
  EXPECT_NE(h.find("<a href=\"http://example.invalid/p.png\">image: pic</a>"), std::string::npos) << h;
  EXPECT_EQ(h.find("javascript:"), std::string::npos) << h;
  EXPECT_NE(h.find("<a href=\"https://example.org\">"), std::string::npos) << "autolink extension: " << h;
  std::string rlo = markdown_html("abc" + kRlo + "def");
  EXPECT_EQ(rlo.find(kRlo), std::string::npos) << rlo;
}

class ReportTest : public SessionTest {
 protected:
  /// u1, a1 (calls c1), t1 (answers c1), u2, a2; then summary S over u1..t1 when `compact`.
  void build(const std::string& hostile, bool compact) {
    user("u1", "first **prompt** " + hostile);
    assistant("a1", "calling", {"c1"});
    tool("t1", {"c1"}, "RESULT-OF-C1 " + hostile);
    user("u2", "second prompt");
    assistant("a2", "done");
    if (!compact) return;
    Node s;
    s.id = "S";
    s.session = "s";
    s.kind = kind::kSummary;
    s.role = role::kUser;
    s.content = Json::array({Json{{"type", "text"}, {"text", "SUMMARY-TEXT of the start"}}});
    s.covers_ids = {"u1", "a1", "t1"};
    s.metadata = {{"strategy", "rolling"}};
    Txn t(st().db());
    ASSERT_EQ(st().append(s), AppendResult::added);
    t.commit();
  }
  std::string html(ReportLimits limits = {}, Redactor* r = nullptr) {
    ReportRequest req;
    req.session = "s";
    req.limits = limits;
    req.redactor = r;
    ReportStats stats;
    std::string page = html_report(st(), req, stats);
    stats_ = stats;
    return page;
  }
  ReportStats stats_;
};

TEST_F(ReportTest, HostileTranscriptTextNeverBecomesMarkup) {
  std::string line(1 << 20, 'x');  // a 1 MB line
  build("<script>alert(1)</script></textarea></details><!-- " + kRlo + std::string(1, '\0') + "\xFF " + line, false);
  std::string page = html();
  EXPECT_EQ(count(page, "<script"), 1u) << "only the page's own script";
  EXPECT_EQ(count(page, "</textarea>"), 0u);
  EXPECT_EQ(count(page, "<details"), count(page, "</details>")) << "details stay balanced";
  EXPECT_EQ(page.find(kRlo), std::string::npos);
  EXPECT_EQ(page.find('\0'), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/textarea&gt;&lt;/details&gt;"), std::string::npos);
  EXPECT_LT(page.size(), 200000u) << "the 1 MB line is cut at the block bound";
  EXPECT_GE(stats_.truncated_blocks, 2);
  EXPECT_NE(page.find("ctxfold show u1]"), std::string::npos) << "the cut names the node";
}

TEST_F(ReportTest, StableAnchorsToolPairingAndCapsule) {
  build("", true);
  std::string page = html();
  for (const char* id : {"u1", "a1", "t1", "u2", "a2", "S"})
    EXPECT_EQ(count(page, std::string("id=\"node-") + id + "\""), 1u) << id;
  EXPECT_EQ(count(page, "id=\"session-s\""), 1u);
  // The capsule: the summary text, then a <details class="covered"> holding the covered turns.
  std::size_t cap = page.find("<section class=\"node capsule");
  std::size_t covered = page.find("<details class=\"covered\">");
  ASSERT_NE(cap, std::string::npos);
  ASSERT_NE(covered, std::string::npos);
  EXPECT_LT(cap, page.find("SUMMARY-TEXT"));
  EXPECT_LT(page.find("SUMMARY-TEXT"), covered);
  EXPECT_LT(covered, page.find("id=\"node-u1\""));
  EXPECT_LT(page.find("id=\"node-u1\""), page.find("id=\"node-u2\"")) << "covered turns inside, tail after";
  EXPECT_NE(page.find("<strong>prompt</strong>"), std::string::npos) << "message text is Markdown";
  // The call holds its result: the result node's anchor sits inside the call's details.
  std::size_t call = page.find("<details class=\"tool\">");
  ASSERT_NE(call, std::string::npos);
  std::size_t result = page.find("RESULT-OF-C1");
  EXPECT_LT(call, page.find("id=\"node-t1\""));
  EXPECT_LT(page.find("id=\"node-t1\""), result);
  EXPECT_LT(result, page.find("</details>", call + 1) + 1000000) << "inside the same details";
  EXPECT_EQ(stats_.capsules, 1);
}

TEST_F(ReportTest, PageAdmitsOnlyItsOwnScriptAndStyle) {
  build("", false);
  std::string page = html();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, std::regex("Content-Security-Policy\" content=\"([^\"]*)\"")));
  std::string csp = m[1];
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("img-src data:"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'sha256-"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
  EXPECT_EQ(page.find("http://"), std::string::npos) << "no external asset";
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  // Deterministic.
  EXPECT_EQ(page, html());
}

TEST_F(ReportTest, BoundsTurnNodesIntoStubsThatKeepTheirAnchors) {
  build("", true);
  ReportLimits l;
  l.read_bytes = 0;
  l.covered_bytes = 0;
  std::string page = html(l);
  for (const char* id : {"u1", "a1", "t1", "u2", "a2", "S"})
    EXPECT_EQ(count(page, std::string("id=\"node-") + id + "\""), 1u) << id;
  EXPECT_EQ(page.find("second prompt"), std::string::npos);
  EXPECT_EQ(page.find("SUMMARY-TEXT"), std::string::npos);
  EXPECT_EQ(stats_.stubs, 6);
  EXPECT_NE(page.find("size bound was reached"), std::string::npos);
}

TEST_F(ReportTest, RedactionAppliesToEveryTranscriptString) {
  const std::string key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
  build(key, true);
  Redactor r;
  std::string page = html({}, &r);
  EXPECT_EQ(page.find(key), std::string::npos);
  EXPECT_NE(page.find("[REDACTED:api_key:1]"), std::string::npos);
  EXPECT_NE(html().find(key), std::string::npos) << "without --redact the text is as stored";
}

TEST_F(ReportTest, MarkdownDigestKeepsTranscriptTextInsideFences) {
  build("```\n# not a heading\n<script>x</script>\n````", false);
  ReportRequest req;
  req.session = "s";
  ReportStats stats;
  std::string md = markdown_report(st(), req, stats);
  EXPECT_NE(md.find("`````text\nfirst **prompt** ```\n# not a heading\n<script>x</script>\n````\n`````"), std::string::npos)
      << md;
  EXPECT_NE(md.find("**user** ` u1 `"), std::string::npos) << md;
  req.limits.markdown_bytes = 10;
  ReportStats small;
  std::string cut = markdown_report(st(), req, small);
  EXPECT_NE(cut.find("more nodes past the digest's size bound"), std::string::npos) << cut;
}

}  // namespace
}  // namespace ctxfold
