#pragma once
// Probes of `ctxfold eval` (docs/eval.md): a question about a session's history, the strings a
// correct answer contains, and the class of what it asks. Parsing a probe file (JSON Lines) and
// scoring an answer. Pure: no database, no model.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace ctxfold {

/// What a probe asks (docs/eval.md "Probes"): which file defines or was edited to do X (`file`),
/// what a command printed or exited with (`command`), what was decided or concluded about Z
/// (`decision`), what the next step is at the end of the history (`next_step`).
enum class ProbeClass { file, command, decision, next_step };

/// The class's name as probe files and eval's output write it: "file", "command", "decision",
/// "next_step".
const char* probe_class_name(ProbeClass c);
/// The class named `name`, or nullopt.
std::optional<ProbeClass> parse_probe_class(std::string_view name);
/// Every class, in the order eval's output lists them.
const std::vector<ProbeClass>& probe_classes();

/// One probe. `expect` is never empty and holds no blank string.
struct Probe {
  std::string id;                   ///< unique within its file
  ProbeClass klass = ProbeClass::file;
  std::string question;
  std::vector<std::string> expect;  ///< every one must be in a correct answer (answer_correct)
  /// The words the recall context greps for (docs/eval.md "The recall context"); empty: taken
  /// from the question (recall_terms).
  std::vector<std::string> terms;
  /// Where the probe file has it: "FILE:LINE", for messages ("generated" for a generated probe).
  std::string where;
};

/// Calls fn(where, record) for each non-blank line of the JSON Lines `text` read from `label`,
/// `where` being "LABEL:LINE" (1-based) for the caller's error; a line that does not parse is
/// passed as a discarded Json (is_discarded()), for the caller to report as its format says.
void for_each_jsonl_line(std::string_view text, const std::string& label,
                         const std::function<void(const std::string& where, const Json& record)>& fn);

/// Parses a probe file: one JSON object per line, {"id", "class", "question", "expect":[...],
/// "terms"?:[...]} ("expect" may also be one string), optionally with "type":"probe" first (the
/// records `eval --generate` prints); blank lines and a {"type":"summary",...} record (that
/// stream's closing record) are skipped. Any other key is an
/// error, so a typo never silently drops a field. `label` names the file in errors. Throws
/// Error(bad_input,"eval.probe") "LABEL:LINE: ..." for a line that is not a JSON object, a missing
/// or mistyped field, an unknown class, an empty expect list or a blank expected string, or an id
/// used twice; Error(bad_input,"eval.probe") "LABEL: no probes" for a file without one.
std::vector<Probe> parse_probes(std::string_view text, const std::string& label);

/// {"id","class","question","expect",["terms" when given]}: the fields of one line of a probe file.
Json probe_to_json(const Probe& p);

/// The text an answer is compared in (docs/eval.md "Scoring"): Unicode case folding
/// (util/graphemes.hpp casefold), every run of whitespace made one space, the ends trimmed.
std::string normalize_for_scoring(std::string_view text);

/// True when normalize_for_scoring(answer) contains normalize_for_scoring(e) for every e of
/// expect (and expect is not empty): the one scoring rule of eval, the same for every class.
bool answer_correct(std::string_view answer, const std::vector<std::string>& expect);

/// The terms the recall context greps for: probe.terms when given, else the `backticked` spans
/// of the question, then its "double-quoted" spans, else its three longest words of six letters
/// or more; at most three, each cut to 60 bytes (at a UTF-8 boundary), duplicates dropped.
std::vector<std::string> recall_terms(const Probe& probe);

}  // namespace ctxfold
