// The hidden commands `ctxfold __man [CMD]` and `ctxfold __complete WORD...`: man pages and shell
// completions generated from the same CLI11 app and command table that parse the command line,
// so a flag declared in cmd/*.cpp reaches --help, the man pages and the completions at once.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "context.hpp"
#include "doc.hpp"
#include "store/db.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

namespace ctxfold {
std::string_view embedded_man(std::string_view name);
}

namespace ctxfold::cli {

namespace {

constexpr const char* kVersion = "ctxfold 0.1.0";

/// Escapes plain text for roff: backslashes, hyphens (so options copy and paste as ASCII), and a
/// leading control character.
std::string roff(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

/// The flag spelling of an option: "-i, --ignore-case".
std::string flag_names(const CLI::Option* o) {
  std::string out;
  for (const auto& s : o->get_snames()) out += (out.empty() ? "" : ", ") + std::string("\\fB\\-") + s + "\\fR";
  for (const auto& l : o->get_lnames()) out += (out.empty() ? "" : ", ") + std::string("\\fB\\-\\-") + roff(l) + "\\fR";
  return out;
}

bool takes_value(const CLI::Option* o) { return o->get_type_size_max() > 0 && o->get_items_expected_max() > 0; }

/// The metavariable of an option's value: its type name without CLI11's decorations ("TEXT", "INT").
std::string value_name(const CLI::Option* o) {
  if (o->get_positional() && o->get_lnames().empty()) return upper(o->get_name(true, false));
  std::string t = o->get_type_name();
  if (auto sp = t.find(' '); sp != std::string::npos) t.resize(sp);
  if (t.empty()) t = "VALUE";
  return roff(t);  // "SEQ|-" (--as-of): the dash stays a dash
}

std::vector<const CLI::Option*> documented_options(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* o : app.get_options()) {
    if (o == app.get_help_ptr() || o == app.get_help_all_ptr()) continue;
    out.push_back(o);
  }
  return out;
}

std::string synopsis_args(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* o : documented_options(app)) {
    if (o->get_positional() && o->get_lnames().empty() && o->get_snames().empty()) continue;
    std::string item = flag_names(o);
    if (auto comma = item.find(", "); comma != std::string::npos) item = item.substr(comma + 2);  // long name
    if (takes_value(o)) item += " \\fI" + value_name(o) + "\\fR";
    out += o->get_required() ? " " + item : " [" + item + "]";
  }
  for (const CLI::Option* o : documented_options(app)) {
    if (!(o->get_positional() && o->get_lnames().empty() && o->get_snames().empty())) continue;
    std::string item = "\\fI" + value_name(o) + "\\fR";
    if (o->get_items_expected_max() > 1) item += "...";
    out += o->get_required() ? " " + item : " [" + item + "]";
  }
  return out;
}

/// One .TP entry per option: names, value, description and default.
std::string options_section(const CLI::App& app, const char* title) {
  auto opts = documented_options(app);
  std::string out = fmt::format(".SH {}\n", title);
  if (opts.empty()) out += "This command has no options of its own.\n";
  for (const CLI::Option* o : opts) {
    out += ".TP\n";
    const bool positional = o->get_lnames().empty() && o->get_snames().empty();
    if (positional)
      out += "\\fI" + value_name(o) + "\\fR";
    else
      out += flag_names(o) + (takes_value(o) ? " \\fI" + value_name(o) + "\\fR" : "");
    out += "\n" + roff(o->get_description());
    if (!o->get_default_str().empty()) out += " (default: " + roff(o->get_default_str()) + ")";
    if (!o->get_envname().empty()) out += " (env " + roff(o->get_envname()) + ")";
    out += "\n";
  }
  return out;
}

/// Splits a hand-written roff file into (section title, text) pairs at its .SH lines.
std::vector<std::pair<std::string, std::string>> sections(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    if (line.starts_with(".SH ")) {
      std::string title(line.substr(4));
      std::erase(title, '"');
      out.emplace_back(title, "");
    }
    if (!out.empty()) out.back().second += std::string(line) + "\n";
    pos = eol + 1;
  }
  return out;
}

/// Assembles a page: the generated NAME and SYNOPSIS, the hand-written DESCRIPTION, the generated
/// sections, then the remaining hand-written sections in their order.
std::string assemble(const std::string& title, const std::string& name_line, const std::string& synopsis,
                     const std::string& generated, std::string_view written) {
  std::string out = fmt::format(".\\\" Generated by `ctxfold __man`: edit man/src/*.roff or the flags in cmd/*.cpp.\n");
  out += fmt::format(".TH {} 1 \"\" \"{}\" \"ctxfold manual\"\n", title, kVersion);
  out += ".SH NAME\n" + name_line + "\n.SH SYNOPSIS\n" + synopsis + "\n";
  auto secs = sections(written);
  bool placed = false;
  for (const auto& [t, body] : secs) {
    out += body;
    if (t == "DESCRIPTION") {
      out += generated;
      placed = true;
    }
  }
  if (!placed) throw Error(Exit::internal, "man.no_description", fmt::format("man/src for {} has no DESCRIPTION", title));
  return out;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : command_table())
    if (name == c.name) return &c;
  return nullptr;
}

std::string man_page(const CLI::App& app, const std::string& cmd) {
  if (cmd.empty() || cmd == "ctxfold") {
    std::string commands = ".SH COMMANDS\n";
    for (const Command& c : command_table())
      commands += fmt::format(".TP\n.BR ctxfold\\-{} (1)\n{}\n", roff(c.name), roff(c.summary));
    std::string synopsis = ".B ctxfold\n" + synopsis_args(app).substr(1) + " \\fICOMMAND\\fR [\\fIOPTIONS\\fR]";
    return assemble("CTXFOLD", "ctxfold \\- " + roff(app.get_description().substr(std::string("ctxfold: ").size())),
                    synopsis, options_section(app, "OPTIONS") + commands, embedded_man("ctxfold"));
  }
  const Command* c = find_command(cmd);
  if (!c) throw Error(Exit::usage, "man.unknown_command", fmt::format("no command '{}'", cmd));
  const CLI::App* sub = app.get_subcommand(cmd);
  std::string_view written = embedded_man(cmd);
  if (written.empty())
    throw Error(Exit::internal, "man.undocumented", fmt::format("no man/src/{}.roff for command '{}'", cmd, cmd));
  std::string synopsis =
      ".B ctxfold\n[\\fIGLOBAL OPTIONS\\fR] \\fB" + roff(cmd) + "\\fR" + synopsis_args(*sub);
  std::string generated = options_section(*sub, "OPTIONS") +
                          ".PP\nThe global options \\fB\\-\\-db\\fR, \\fB\\-\\-session\\fR and \\fB\\-\\-text\\fR "
                          "(see \\fBctxfold\\fR(1)) may also follow the command name.\n";
  return assemble("CTXFOLD\\-" + upper(roff(cmd)), "ctxfold\\-" + roff(cmd) + " \\- " + roff(c->summary), synopsis,
                  generated, written);
}

// ---- completion -------------------------------------------------------------------------------

/// Values named in an option's description: "a | b | c", "a, b, c" or "(a)"; words with
/// placeholders in capitals (openai:MODEL) are left out.
/// The text without its parenthesised asides and their leading space: "json (default) or junit" -> "json or junit".
std::string strip_parens(const std::string& s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '(') {
      ++depth;
      if (!out.empty() && out.back() == ' ') out.pop_back();
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> choices_from_description(const std::string& desc) {
  auto is_word = [](const std::string& w) {
    if (w.empty() || !std::islower(static_cast<unsigned char>(w[0]))) return false;
    return std::all_of(w.begin(), w.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_'; });
  };
  auto split = [&](const std::string& s, char sep) {
    std::vector<std::string> words;
    std::size_t start = 0;
    while (start <= s.size()) {
      std::size_t end = s.find(sep, start);
      if (end == std::string::npos) end = s.size();
      std::string w = s.substr(start, end - start);
      w.erase(0, w.find_first_not_of(" ("));
      if (auto sp = w.find_first_of(" )"); sp != std::string::npos) w.resize(sp);
      words.push_back(w);
      start = end + 1;
    }
    return words;
  };
  std::vector<std::string> out;
  if (desc.find('|') != std::string::npos) {
    std::string list = desc.substr(desc.rfind('(', desc.find('|')) == std::string::npos ? 0 : desc.rfind('(', desc.find('|')) + 1);
    for (auto& w : split(list.substr(0, list.find(')')), '|'))
      if (is_word(w)) out.push_back(w);
  } else if (auto words = split(desc, ','); words.size() > 2 && std::all_of(words.begin(), words.end(), is_word)) {
    out = words;
  } else if (std::string bare = strip_parens(desc); bare.find(" or ") != std::string::npos &&
             is_word(bare.substr(0, bare.find(" or "))) && is_word(bare.substr(bare.find(" or ") + 4))) {
    out = {bare.substr(0, bare.find(" or ")), bare.substr(bare.find(" or ") + 4)};
  } else if (auto open = desc.find('('); open != std::string::npos) {
    std::string inner = desc.substr(open + 1, desc.find(')', open) - open - 1);
    if (is_word(inner)) out.push_back(inner);
  }
  return out;
}

struct CompletionDb {
  std::string path;
  std::optional<std::string> session;

  std::vector<std::string> query(const std::string& sql, bool bind_session) const {
    std::vector<std::string> out;
    try {
      Store st = open_store(path, Store::Mode::read_only);
      std::string s = st.resolve_session(session);
      Stmt q = st.db().prepare(sql);
      if (bind_session) q.bind(1, s);
      while (q.step()) out.push_back(q.text(0));
    } catch (...) {
      // completion never prints errors into the shell: no database, no candidates
    }
    return out;
  }
  std::vector<std::string> sessions() const {
    std::vector<std::string> out;
    try {
      Store st = open_store(path, Store::Mode::read_only);
      for (const auto& s : st.sessions()) out.push_back(s.id);
    } catch (...) {
    }
    return out;
  }
  /// Node ids of the session, newest first; summaries only when `summaries`.
  std::vector<std::string> nodes(bool summaries) const {
    return query(std::string("SELECT id FROM nodes WHERE session = ?1") + (summaries ? " AND kind = 'summary'" : "") +
                     " ORDER BY seq DESC LIMIT 2000",
                 true);
  }
};

/// Candidates for an option's value (or a positional), by what the option names.
std::vector<std::string> value_candidates(const CLI::Option* o, const CompletionDb& db) {
  std::string name = o->get_lnames().empty() ? o->get_name(true, false) : o->get_lnames().front();
  if (name == "session") return db.sessions();
  if (name == "head" || name == "at" || name == "to" || name == "id") {
    auto ids = db.nodes(false);
    ids.insert(ids.begin(), "-");
    return ids;
  }
  if (name == "scope") return db.nodes(true);
  return choices_from_description(o->get_description());
}

bool is_flag_of(const CLI::App& app, const std::string& word, const CLI::Option** found) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->check_lname(word.starts_with("--") ? word.substr(2) : "") ||
        (word.size() == 2 && word[0] == '-' && o->check_sname(word.substr(1)))) {
      *found = o;
      return true;
    }
  }
  return false;
}

}  // namespace

int run_man(const CLI::App& app, const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "--list") {
    emit_text("ctxfold\n");
    for (const Command& c : command_table()) emit_text(std::string(c.name) + "\n");
    return 0;
  }
  emit_text(man_page(app, args.empty() ? std::string() : args[0]));
  return 0;
}

int run_complete(const CLI::App& app, const std::vector<std::string>& words, std::string db_path,
                 std::optional<std::string> session) {
  if (words.empty()) return 0;
  const std::string& cur = words.back();
  const CLI::App* sub = nullptr;
  const CLI::Option* pending = nullptr;  // the option whose value `cur` is
  std::size_t positionals = 0;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& w = words[i];
    if (pending) {
      if (pending->check_lname("db")) db_path = w;
      if (pending->check_lname("session")) session = w;
      pending = nullptr;
      continue;
    }
    const CLI::Option* o = nullptr;
    if (w.starts_with("-") && w != "-") {
      if (w.find('=') != std::string::npos) continue;
      if ((sub && is_flag_of(*sub, w, &o)) || is_flag_of(app, w, &o))
        if (takes_value(o)) pending = o;
      continue;
    }
    if (!sub) {
      if (find_command(w)) sub = app.get_subcommand(w);
      continue;
    }
    ++positionals;
  }
  CompletionDb db{db_path, session};
  std::vector<std::string> cands;
  if (pending) {
    cands = value_candidates(pending, db);
  } else if (cur.starts_with("-") && cur != "-") {
    for (const CLI::App* a : {sub, &app}) {
      if (!a) continue;
      for (const CLI::Option* o : a->get_options()) {
        for (const auto& l : o->get_lnames()) cands.push_back("--" + l);
        for (const auto& s : o->get_snames()) cands.push_back("-" + s);
      }
    }
    if (!sub) cands.push_back("--version");
  } else if (!sub) {
    for (const Command& c : command_table()) cands.push_back(c.name);
  } else {
    std::size_t k = 0;
    for (const CLI::Option* o : sub->get_options()) {
      if (!(o->get_lnames().empty() && o->get_snames().empty())) continue;
      if (k++ == positionals || o->get_items_expected_max() > 1) {
        cands = value_candidates(o, db);
        break;
      }
    }
  }
  std::string out;
  for (const auto& c : cands)
    if (c.starts_with(cur)) out += c + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace ctxfold::cli
