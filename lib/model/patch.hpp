#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The patch envelope of Codex CLI's apply_patch tool (docs/formats/codex.md "apply_patch"):
//   *** Begin Patch
//   *** Add File: PATH      then the new file's lines, each prefixed "+"
//   *** Update File: PATH   then optionally "*** Move to: NEW", then hunks: a "@@" line (with
//                           optional context text) and lines prefixed " ", "-" or "+";
//                           "*** End of File" may close a hunk
//   *** Delete File: PATH
//   *** End Patch
namespace ctxfold {

/// One file operation of a patch.
struct PatchFile {
  std::string action;               ///< "add", "update" or "delete"
  std::string path;                 ///< as written after the header
  std::optional<std::string> move_to;  ///< update only: "*** Move to: NEW"
  std::vector<std::string> hunks;   ///< update: each hunk's lines from its "@@" on ("\n"-joined);
                                    ///< add: one hunk, the new content without the "+" prefixes
  int added = 0;                    ///< "+" lines
  int removed = 0;                  ///< "-" lines
};

/// Calls fn(action, path) for each file header of the patch text ("add", "update", "delete" and
/// "move_to" for "*** Move to: P"), whether or not the rest of the patch parses. Nothing when the
/// text holds no "*** Begin Patch".
void for_each_patch_header(std::string_view text,
                           const std::function<void(std::string_view action, std::string_view path)>& fn);

/// Parses a patch from its "*** Begin Patch" line (text before it, such as a shell heredoc
/// opening "apply_patch <<'EOF'", is skipped) to "*** End Patch". nullopt when the text does not
/// parse: no Begin or End line, a line that belongs to no file or hunk, an Add File line without
/// "+", a header without a path, or no file at all.
std::optional<std::vector<PatchFile>> parse_apply_patch(std::string_view text);

}  // namespace ctxfold
