#include "report/markdown.hpp"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "report/escape.hpp"

namespace ctxfold {

namespace {

/// CMARK_OPT_DEFAULT leaves CMARK_OPT_UNSAFE unset: cmark-gfm's safe mode (dangerous link
/// targets blanked). Raw HTML never reaches the renderer anyway: neutralize turns it to text.
constexpr int kOptions = CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8;

struct ParserFree {
  void operator()(cmark_parser* p) const { cmark_parser_free(p); }
};
struct NodeFree {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
};

cmark_node* literal_node(cmark_node_type type, const char* literal) {
  cmark_node* n = cmark_node_new(type);
  cmark_node_set_literal(n, literal ? literal : "");
  return n;
}

/// An image's replacement: a link to the same address holding "image: " and the alt text.
cmark_node* image_as_link(cmark_node* image) {
  cmark_node* link = cmark_node_new(CMARK_NODE_LINK);
  cmark_node_set_url(link, cmark_node_get_url(image));
  cmark_node_set_title(link, cmark_node_get_title(image));
  cmark_node_append_child(link, literal_node(CMARK_NODE_TEXT, "image: "));
  while (cmark_node* child = cmark_node_first_child(image)) {
    cmark_node_unlink(child);
    cmark_node_append_child(link, child);
  }
  return link;
}

/// Raw HTML shown as text, images as links (see markdown_html).
void neutralize(cmark_node* doc) {
  std::vector<cmark_node*> found;
  cmark_iter* it = cmark_iter_new(doc);
  for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
    cmark_node* n = cmark_iter_get_node(it);
    cmark_node_type t = cmark_node_get_type(n);
    if (ev == CMARK_EVENT_ENTER &&
        (t == CMARK_NODE_HTML_BLOCK || t == CMARK_NODE_HTML_INLINE || t == CMARK_NODE_IMAGE))
      found.push_back(n);
  }
  cmark_iter_free(it);
  for (cmark_node* n : found) {
    cmark_node* repl = nullptr;
    switch (cmark_node_get_type(n)) {
      case CMARK_NODE_HTML_BLOCK: repl = literal_node(CMARK_NODE_CODE_BLOCK, cmark_node_get_literal(n)); break;
      case CMARK_NODE_HTML_INLINE: repl = literal_node(CMARK_NODE_TEXT, cmark_node_get_literal(n)); break;
      default: repl = image_as_link(n); break;
    }
    cmark_node_replace(n, repl);
    cmark_node_free(n);
  }
}

}  // namespace

std::string markdown_html(std::string_view text) {
  static const bool registered = (cmark_gfm_core_extensions_ensure_registered(), true);
  (void)registered;
  std::string clean = visible_text(text);
  std::unique_ptr<cmark_parser, ParserFree> parser(cmark_parser_new(kOptions));
  for (const char* name : {"table", "strikethrough", "autolink", "tasklist"})
    if (cmark_syntax_extension* ext = cmark_find_syntax_extension(name))
      cmark_parser_attach_syntax_extension(parser.get(), ext);
  cmark_parser_feed(parser.get(), clean.data(), clean.size());
  std::unique_ptr<cmark_node, NodeFree> doc(cmark_parser_finish(parser.get()));
  neutralize(doc.get());
  char* html = cmark_render_html(doc.get(), kOptions, cmark_parser_get_syntax_extensions(parser.get()));
  std::string out = html ? html : "";
  std::free(html);
  return out;
}

}  // namespace ctxfold
