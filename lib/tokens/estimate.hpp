#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "model/node.hpp"
#include "util/image.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Which provider's request framing a node is estimated for. Derived from the node's
/// metadata.source.format: claude-code and anthropic -> anthropic; codex, openai and openhands ->
/// openai; gemini -> gemini; anything else (appended nodes, ctxfold's own summaries) -> generic,
/// which uses the anthropic constants, the only ones measured (see kAnthropicFraming).
enum class Provider { generic, anthropic, openai, gemini };

/// The estimator a figure comes from: `content` is ctxfold's (content classes, provider framing,
/// the default everywhere); `bytes4` is the old UTF-8 bytes / 4 rule, kept only as the baseline
/// the fidelity benchmark and `ctxfold tokens` compare against.
enum class Estimator { content, bytes4 };

/// Names the estimator and its constants; recorded with every stored calibration so a figure is
/// never combined with one made by different constants.
inline constexpr const char* kEstimatorVersion = "ctxfold-est/4";

/// Per-character-class token weights of estimate_text_tokens. Source: a weighted least-squares
/// fit (minimising relative error) of the growth of provider-measured input tokens between
/// consecutive requests (distinct message.id, deltas under 200 tokens and model switches
/// skipped: 266 pairs) of the four real Claude Code sessions in shared/data/transcripts
/// (auto-compaction, manual-compaction, tool-heavy and async-agents files), against the content
/// each delta added; leave-one-session-out median error 6.5%. `bench/tokens_fidelity.sh`
/// re-measures it. The data is code, JSON and tool output with some English prose and no CJK:
/// the CJK and other-script weights come from elsewhere (named on each).
struct TextWeights {
  double word = 1.25;         ///< per run of ASCII letters (an English word or identifier part)
  double long_letter = 0.40;  ///< per letter past the 6th of a run (long identifiers split)
  double camel = 0.36;        ///< per lower->upper boundary inside a run (camelCase splits)
  double digit = 0.31;        ///< per ASCII digit (numbers split into short groups)
  double punct = 0.65;        ///< per ASCII punctuation, symbol or control character
  double newline = 0.44;      ///< per '\n'
  /// per run of two or more spaces/tabs (indentation), and per further 16 of a longer run (the
  /// measured runs are indentation; a tokenizer's whitespace tokens are bounded in length)
  double space_run = 1.63;
  double symbol = 0.68;       ///< per non-ASCII symbol (U+0080..U+2E7F outside letters: arrows, box
                              ///< drawing, dashes; "→" of Read output dominates the measured data)
  /// per CJK ideograph, kana or hangul syllable. Not in the measured data: o200k_base counts
  /// 0.53-0.69 tokens per character on Chinese, Japanese and Korean samples and Claude counts
  /// 1.14x o200k on the measured deltas; rounded up to 1.0 to err toward over-counting.
  double cjk = 1.0;
  /// per letter of other scripts (Latin-1 accents, Greek, Cyrillic, Hebrew, Arabic, Indic...):
  /// o200k_base counts 0.23-0.31 per character on Russian, Greek and Arabic samples; x1.14 and
  /// rounded up.
  double other_script = 0.40;
  double astral = 1.0;        ///< per code point above U+FFFF (emoji): o200k_base ~1 each
  double invalid_byte = 1.0;  ///< per byte that is not valid UTF-8 (byte-level fallback tokens)
};
inline constexpr TextWeights kTextWeights{};

/// Request framing a provider adds around messages and blocks, in tokens.
struct Framing {
  std::int64_t message = 4;      ///< per message (role markers)
  std::int64_t block = 3;        ///< per text, image or other content block
  std::int64_t tool_use = 24;    ///< per tool call (call markup, its id)
  std::int64_t tool_key = 15;    ///< per top-level argument of a tool call (parameter markup)
  std::int64_t tool_result = 23; ///< per tool result (result markup, the id it answers)
};
/// Anthropic (and generic): tool_use + tool_result = 47 and 15 per argument, fitted with the text
/// weights on the same 266 Claude Code deltas (the pair is split evenly: every measured call has
/// its result). It includes what Claude Code adds per call that the transcript does not record.
/// message = 4 is not identifiable from the deltas (each holds about two messages) and kept
/// from the first estimator; block = 3 likewise.
inline constexpr Framing kAnthropicFraming{};
/// OpenAI chat and Responses: 3 tokens per message ("every message follows
/// <|start|>{role}/{name}\n{content}<|end|>", OpenAI cookbook "How to count tokens with tiktoken");
/// tool framing has no measured data here (the shipped Codex rollout's text is redacted) and
/// reuses the Anthropic constants.
inline constexpr Framing kOpenAIFraming{3, 3, 24, 15, 23};

/// Legacy constants of the bytes/4 baseline (Estimator::bytes4).
inline constexpr std::int64_t kBlockOverhead = 3;
inline constexpr std::int64_t kMessageOverhead = 4;
inline constexpr std::int64_t kUnknownImageTokens = 1600;
inline constexpr double kImageMaxEdge = 1568.0;

/// Token estimate of one text: the weighted class counts of TextWeights, rounded up; one pass
/// over the bytes, no allocation. Invalid UTF-8 counts per byte and never throws.
std::int64_t estimate_text_tokens(std::string_view text);
/// The baseline: UTF-8 bytes / 4 rounded up.
std::int64_t estimate_text_tokens_bytes4(std::string_view text);

/// Image tokens by pixel dimensions, never by base64 length, per provider rule:
///  anthropic/generic: width*height/750 after scaling the long edge down to 1568 px (Anthropic
///    docs "Vision", image costs);
///  openai: high detail, fit in 2048x2048, then the short side down to 768, 170 per 512-px tile
///    plus 85 (OpenAI docs "Images and vision", calculating costs);
///  gemini: 258 when both sides are at most 384 px, else 258 per 768x768 tile (Gemini docs
///    "Image understanding", token calculation).
/// A non-positive side: kUnknownImageTokens.
std::int64_t estimate_image_tokens(int width, int height, Provider p = Provider::anthropic);

/// One content block, including its framing. An image block's own "width"/"height" fields win
/// over its data; an image whose size cannot be read counts kUnknownImageTokens. tool_result
/// content (string or nested blocks) is recursed; a tool_use counts its name, then each
/// top-level argument's key and value (a string value as its text, others as compact JSON) plus
/// framing.tool_key; opaque blocks count only their framing; thinking counts its text except for
/// openai and gemini (never resent: Gemini CLI keeps only the parts without `thought` in the
/// history it sends, gemini-cli packages/core/src/core/geminiChat.ts) and anthropic thinking
/// without a signature (the renderer drops it);
/// unknown blocks count their string fields except "data".
std::int64_t estimate_block_tokens(const Json& block, Provider p = Provider::generic,
                                   Estimator e = Estimator::content);

/// A node's estimate. `prior_turn_thinking` is the part of `total` that the provider does not
/// resend once the node lies before the latest user turn: Anthropic drops earlier turns' thinking
/// blocks except for Claude Opus 4.5+ and Sonnet 4.6+ (Anthropic docs "Extended thinking",
/// thinking across turns; Haiku through 4.5 keeps only the last turn's). The node's
/// metadata.model decides; an unknown model keeps them (over-count rather than under-count).
struct NodeEstimate {
  std::int64_t total = 0;
  std::int64_t prior_turn_thinking = 0;
};
/// Sum over the node's blocks plus the provider's message framing; 0 for event nodes (never
/// model input). A Claude Code tool result whose metadata.hook_blocked names calls a PreToolUse
/// hook blocked also counts, per call, the <system-reminder> Claude Code 2.1.x sends beside it
/// and does not write to the session file: "PreToolUse:<tool> hook blocking error from command:
/// "<command>": " and the result's text again (see hook_reminder_tokens).
/// Source: the auto-compaction worker of the real session fa812bfe (auto_compaction_v2.1_full,
/// subagents/agent-acompact-70d8e7.jsonl line 8), which replays that reminder after main line
/// 1358's blocked call; on the manual-compaction session's seven blocked commits the measured
/// growth is about twice the result's estimate.
NodeEstimate estimate_node(const Node& n, Estimator e = Estimator::content);
/// The reminder tokens of estimate_node's hook_blocked rule alone (0 without such calls): per
/// call one block's framing, the reminder's fixed text with the longest recorded PreToolUse
/// command (which hook blocked is not recorded; the longest errs toward over-counting) and the
/// result's text.
std::int64_t hook_reminder_tokens(const Node& n);
/// estimate_node(n).total: what the store records as a node's tokens.
std::int64_t estimate_node_tokens(const Node& n);
/// The provider whose framing applies to n (see Provider).
Provider provider_of(const Node& n);

}  // namespace ctxfold
