#pragma once
// The one --as-of of every command that reads a past state: log, render, sessions, show, snapshot
// (docs/commands.md "Reading never writes").
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "context.hpp"

namespace ctxfold::cli {

/// --as-of SEQ|-: a seq (a snapshot's boundary_seq), or "-" for a snapshot JSON on stdin (what
/// `ctxfold snapshot` prints). Declared, parsed and checked the same way by every command
/// (lib/session/snapshot.hpp parse_as_of_arg and resolve_as_of: usage.as_of for a malformed
/// value, as_of.out_of_range for a boundary the state did not exist at).
class AsOfOption {
 public:
  /// Declares --as-of on sub; `what` says what the command reads there ("list the sessions"), and
  /// the help text adds the shared value syntax.
  void add_to(CLI::App& sub, const std::string& what);
  /// True when --as-of was given.
  bool given() const { return arg_.has_value(); }
  /// True when --as-of - reads stdin.
  bool reads_stdin() const { return arg_ && *arg_ == "-"; }

  /// For a command over one session (log, render, snapshot): the boundary checked against that
  /// session, kLatest when --as-of was not given. A piped snapshot also names its session, which
  /// replaces `session` when --session was not given, and its HEAD, which fills `head` (when
  /// given and still empty) for that same session.
  std::int64_t for_session(Context& ctx, std::string& session, std::optional<std::string>* head = nullptr) const;
  /// For a command over the whole database (sessions, show): the boundary checked against
  /// 0..max_seq, kLatest when --as-of was not given.
  std::int64_t for_database(Context& ctx) const;

 private:
  std::optional<std::string> arg_;
};

}  // namespace ctxfold::cli
