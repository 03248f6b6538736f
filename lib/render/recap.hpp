#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "store/store.hpp"

// The rolling projection's recap (docs/strategies.md "rolling": system prompt, summary, recap, tail): part
// of what a render shows after a rolling summary. rolling reads user_prompt_text to choose the
// recap_ids it records at compaction.
namespace ctxfold {

/// Bounds of the recap.
struct RecapOptions {
  int max_messages = 3;
  std::int64_t max_tokens = 1000;  ///< quoted text budget (local estimate)
  int max_scan = 200;              ///< covered nodes read backwards when the summary names none
};

/// The recap a rolling render places right after the summary: the first user message the summary
/// covers (the session's task statement when it starts at the root: the first user message is
/// always kept; at most half of max_tokens, read from the first max_scan covered rows)
/// and the last few user messages it covers, quoted verbatim and bounded, each in
/// <user-message id="ID"> with ID its model/quoted_id.hpp quoted_id (in a fork, the source's id, so
/// the fork's recap is its source's byte for byte). `node` is a synthetic user message (id
/// "<summary id>#recap", kind message, metadata {"view":"recap","summary","quotes"}) that is
/// never stored; `quoted_ids` are the ids whose text it quotes (for render's "recap" section and
/// its reads) and `estimated_tokens` its local estimate. A summary carrying
/// metadata.replacement_history (the client's own new history) gets none. The quoted ids come from
/// the summary's metadata.recap_ids (written by compact), else from a backward scan of at most
/// max_scan covered nodes (imported summaries). Harness noise (Claude Code <command-name>,
/// <local-command-stdout>, "Caveat: The messages below" records) is not quoted. nullopt when
/// there is nothing to quote.
struct Recap {
  std::vector<std::string> quoted_ids;
  std::int64_t estimated_tokens = 0;
  Node node;
};
std::optional<Recap> rolling_recap(Store& store, const Node& summary, const RecapOptions& opts = {});

/// The user-visible text of a user turn (text blocks only), empty when it is noise (Claude Code
/// <command-name>, <local-command-stdout>, "Caveat: The messages below" records) or a harness
/// injection (metadata.is_meta: Claude Code's isMeta records, hook output and caveats the user
/// never typed; docs/formats/claude-code.md).
std::string user_prompt_text(const Node& n);

/// True for the synthetic recap node above (strategies skip it when reading a render).
bool is_recap_node(const Node& n);

}  // namespace ctxfold
