#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ctxfold::cli {

/// `ctxfold __man [CMD]`: prints the roff man page of CMD (ctxfold(1) without one), its NAME,
/// SYNOPSIS and OPTIONS generated from `app` and the command table, the other sections from
/// man/src/CMD.roff (embedded); `--list` prints the page names. Not listed in --help.
int run_man(const CLI::App& app, const std::vector<std::string>& args);

/// `ctxfold __complete WORD... CUR`: the words after `ctxfold` on a shell's command line, the last
/// one being completed. Prints the candidates starting with CUR, one per line: subcommands,
/// flags, or values (session and node ids read from the database read-only, choices named in an
/// option's description). Prints nothing, and never an error, when it has nothing to offer.
int run_complete(const CLI::App& app, const std::vector<std::string>& words, std::string db_path,
                 std::optional<std::string> session);

}  // namespace ctxfold::cli
