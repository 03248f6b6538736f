#pragma once
#include <string>
#include <vector>

#include "invariants/verify.hpp"

namespace ctxfold {

/// One verified database, for the multi-database renderings.
struct VerifiedDb {
  std::string path;
  VerifyReport report;
  /// Set when the database could not be verified (not ctxfold, newer schema, missing, locked):
  /// the Error's code ("db.not_ctxfold") and message; report is then empty.
  std::string error_code;
  std::string error;
};

/// Escapes text for XML character data and attribute values (& < > " '); characters XML 1.0
/// cannot hold (C0 controls other than tab, newline, carriage return; ill-formed UTF-8) become
/// U+FFFD so the document always parses.
std::string xml_escape(const std::string& s);

/// JUnit XML over one or more databases: <testsuites> holding one <testsuite name="DB path"
/// tests= failures= skipped=> per database, and in it one <testcase classname="SESSION"
/// name="I3 summary coverage"> per invariant per checked session; a database-wide check (I1's
/// seq continuity, I11) is a testcase of classname "(database)". A testcase fails (<failure
/// message="first violation">every violation, one a line</failure>) when the invariant has a
/// violation for that session; warnings go to <system-out>; --quick's skipped checks carry
/// <skipped message=.../>. A database with an error is one testcase "open PATH" holding
/// <error>. Each testcase carries the invariant's source as a <properties> entry.
std::string verify_to_junit(const std::vector<VerifiedDb>& dbs);

/// The human view (--text) of one database's report; colour adds SGR colour to ok / FAILED /
/// violation / warning (callers pass colour_wanted(stdout): a terminal without NO_COLOR).
std::string verify_to_text(const VerifiedDb& db, bool colour = false);

}  // namespace ctxfold
