#pragma once
#include <string>
#include <string_view>

namespace ctxfold {

/// Message text, read as GitHub-flavoured Markdown (CommonMark with the table, strikethrough,
/// autolink and task-list extensions of cmark-gfm), as an HTML fragment. The text goes through
/// report/escape.hpp visible_text first. Nothing in it becomes markup the page did not choose:
/// raw HTML (a block or inline) is shown as text (a block as a code block), an image becomes a
/// link to its address (a page never fetches anything), and cmark-gfm's safe mode blanks
/// javascript:, vbscript:, file: and non-image data: link targets (docs/report.md "Markdown").
std::string markdown_html(std::string_view text);

}  // namespace ctxfold
