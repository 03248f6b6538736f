#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "forensics/lineage.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// Token counts in one provider-neutral shape. input excludes cached input; cache_write splits
/// into the 5-minute and 1-hour rates where the provider says (Claude cache_creation), else all
/// 5-minute; output includes reasoning (reasoning is the part of output spent thinking, for
/// information only).
struct UsageTokens {
  std::int64_t input = 0, cache_write_5m = 0, cache_write_1h = 0, cache_read = 0, output = 0, reasoning = 0;
  std::int64_t total() const { return input + cache_write_5m + cache_write_1h + cache_read + output; }
  UsageTokens& operator+=(const UsageTokens& o);
};

/// The usage one model response recorded, normalized from the provider's own fields:
/// Claude message.usage (input_tokens, cache_creation_input_tokens with cache_creation.ephemeral_5m/1h,
/// cache_read_input_tokens, output_tokens), Codex token_count.last_token_usage (input_tokens
/// includes cached_input_tokens, output_tokens includes reasoning_output_tokens), Gemini tokens
/// (input includes cached; thoughts are billed as output; tool is prompt input), OpenAI
/// chat-completions usage as OpenHands records it through LiteLLM (prompt_tokens includes the cached
/// and cache-creation parts; completion_tokens includes reasoning).
UsageTokens normalize_usage(const std::string& format, const Json& usage);

/// One model response: Claude streamed lines that share message.id are one response
/// (docs/import.md "Claude Code": usage from the last line, never summed per line); the usage of
/// the node holding the message's last source line is taken.
struct UsageMessage {
  /// The session it is counted in: of the sessions holding the response (a fork, resumed copy or
  /// sub-agent replays its parent's), the first in lineage order (docs/forensics.md "Lineage").
  std::string session;
  std::string model;   ///< "" when the record names none
  std::string day;     ///< YYYY-MM-DD of the record timestamp (UTC), "" when absent
  UsageTokens tokens;
  /// The other sessions holding the same response in their shared prefix (not counted there).
  std::vector<std::string> replayed_in;
};

/// Every provider-measured response of the store exactly once (docs/forensics.md "Lineage"): one
/// response is one Claude message.id, one Codex response_id, or else one node together with the
/// nodes of descendant sessions that replay it (lineage.hpp SessionLineage::shared). In the order
/// the responses were stored.
std::vector<UsageMessage> usage_messages(Store& store);
/// The same over a lineage already read (session_lineage).
std::vector<UsageMessage> usage_messages(Store& store, const std::map<std::string, SessionLineage>& lineage);

/// A price table (share/prices.json): per model, USD micro-units (1e-6 USD) per million tokens
/// for input, cache_write_5m, cache_write_1h, cache_read and output, each entry with its source
/// and the date it was read. A model matches an entry by equal name, or by the entry's name
/// followed by "-" and a date/version suffix ("claude-haiku-4-5-20251001" → "claude-haiku-4-5").
struct Price {
  std::string model;
  std::int64_t input = 0, cache_write_5m = 0, cache_write_1h = 0, cache_read = 0, output = 0;
  std::string source, date;
};
struct PriceTable {
  std::string currency = "USD";
  std::vector<Price> prices;
  /// The entry for a model, or nullptr (cost unknown, never zero).
  const Price* find(const std::string& model) const;
};
/// Parses a price table document; Error(bad_input, "prices.malformed") naming the entry on a
/// missing or mistyped field.
PriceTable parse_price_table(const std::string& text, const std::string& label);
/// The table shipped in share/prices.json (embedded in the binary).
PriceTable builtin_price_table();

/// Cost of tokens of one model in micro-units: Σ tokens × price per million / 10^6, rounded half
/// up once at the end (128-bit intermediate).
std::int64_t cost_micro(const UsageTokens& t, const Price& p);

}  // namespace ctxfold
