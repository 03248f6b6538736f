#pragma once
#include <string>
#include <string_view>

namespace ctxfold {

/// Transcript text made safe to show as text (docs/report.md "Hostile text"): ill-formed UTF-8
/// becomes U+FFFD; C0 controls other than tab, line feed and carriage return, DEL, and the
/// bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)
/// become a visible "[U+XXXX]" so they can neither hide text nor reorder what follows.
std::string visible_text(std::string_view text);

/// Appends text escaped for HTML element content and quoted attribute values: & < > " ' become
/// character references; nothing else changes (call visible_text first for transcript text).
void append_html_escaped(std::string& out, std::string_view text);

/// The HTML-escaped form of text, after visible_text.
std::string html_text(std::string_view text);

/// The fragment of a node's stable anchor: "node-" + id, where each byte outside
/// [A-Za-z0-9._:-] is written "~XX" (upper-case hex), so the same id always gives the same
/// anchor and the anchor is a valid id attribute and URL fragment as it stands.
std::string node_anchor(std::string_view id);

/// A session's anchor, "session-" + id encoded as node_anchor encodes it.
std::string session_anchor(std::string_view id);

}  // namespace ctxfold
