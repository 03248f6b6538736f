#pragma once
// Probes generated from a session's history (`ctxfold eval --generate`, docs/eval.md "Generated
// probes"): questions whose answers the history itself states, so a context that kept the fact
// can answer them and one that lost it cannot.
#include <cstddef>
#include <vector>

#include "eval/probes.hpp"
#include "model/node.hpp"

namespace ctxfold {

/// How many probes of each class to generate at most (next_step has at most one).
struct GenerateOptions {
  std::size_t per_class = 3;
};

/// Generates probes from `history`, the nodes of HEAD's spine in order (a raw render's items),
/// read as the extractive summarizer reads them (summarize/history.hpp parse_history). Each class
/// takes its candidates in history order and keeps per_class of them spread evenly over it (the
/// first and the last included); the same history gives the same probes:
/// - file: a file-writing call (Edit, Write, MultiEdit, apply_patch, ... : a call with path
///   arguments and new text) whose new text adds a code-like word (8+ characters holding '_', a
///   digit or an inner capital, absent from the text it replaces, written in no other file's
///   calls): "Which file was edited to add `WORD`?" (created, for a call with no text replaced),
///   expecting the file's name (its last path component);
/// - command: a command run once whose result's first non-blank line has 12+ characters and is
///   not part of the command: "What was the first line of output of the command `CMD`?"
///   (CMD cut to 100 bytes), expecting that line (whitespace collapsed, cut to 60 bytes);
/// - decision: a turn with successful `git commit`s of one message, "Which commit message did the
///   agent write for the work on the request "REQ"?", expecting the message's first line (cut to
///   50 bytes); else a completed turn's outcome, "What did the agent conclude at the end of the
///   work on the request "REQ"?", expecting the outcome's two longest words of seven letters or
///   more that the question does not hold; REQ is the request cut to 80 bytes at a word boundary,
///   and the probe's terms are the request's two longest words;
/// - next_step: "What is the next step at the end of this history?", expecting the two longest
///   words (as above) of the plan's in-progress item, else its first pending one, else the last
///   assistant statement.
/// Probe ids are "gen-CLASS-N" (N from 1); `where` is "generated". A class with no candidate
/// gives no probe.
std::vector<Probe> generate_probes(const std::vector<Node>& history, const GenerateOptions& opts = {});

}  // namespace ctxfold
