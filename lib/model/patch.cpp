#include "model/patch.hpp"

#include "util/lines.hpp"

namespace ctxfold {
namespace {


std::string_view chomp(std::string_view l) {
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

struct Header {
  const char* action;
  std::string_view prefix;
};
constexpr Header kHeaders[] = {{"add", "*** Add File: "},
                               {"update", "*** Update File: "},
                               {"delete", "*** Delete File: "},
                               {"move_to", "*** Move to: "}};

/// The header a line is, with its path; nullptr when it is none.
const char* header_of(std::string_view line, std::string_view* path) {
  for (const Header& h : kHeaders)
    if (line.starts_with(h.prefix)) {
      *path = line.substr(h.prefix.size());
      return h.action;
    }
  return nullptr;
}

struct PatchParser {
  std::vector<PatchFile> files;
  bool begun = false, ended = false, bad = false;

  void append_line(std::string& hunk, std::string_view l) {
    if (!hunk.empty()) hunk += '\n';
    hunk += l;
  }

  void body_line(std::string_view l) {
    if (files.empty() || files.back().action == "delete") {
      bad = !l.empty() || files.empty();
      return;
    }
    PatchFile& f = files.back();
    if (f.action == "add") {
      if (l.empty() || l[0] != '+') {
        bad = true;
        return;
      }
      if (f.hunks.empty()) f.hunks.emplace_back();
      else f.hunks.back() += '\n';
      f.hunks.back() += l.substr(1);
      ++f.added;
      return;
    }
    if (l.starts_with("@@")) {
      f.hunks.emplace_back(l);
      return;
    }
    if (l == "*** End of File") {
      if (!f.hunks.empty()) append_line(f.hunks.back(), l);
      return;
    }
    if (!l.empty() && l[0] != ' ' && l[0] != '-' && l[0] != '+') {
      bad = true;
      return;
    }
    if (f.hunks.empty()) f.hunks.emplace_back();  // a first hunk may omit its "@@"
    append_line(f.hunks.back(), l);
    if (!l.empty() && l[0] == '+') ++f.added;
    if (!l.empty() && l[0] == '-') ++f.removed;
  }

  bool line(std::string_view l) {
    l = chomp(l);
    if (!begun) {
      begun = l == "*** Begin Patch";
      return true;
    }
    if (l == "*** End Patch") {
      ended = true;
      return false;
    }
    std::string_view path;
    if (const char* action = header_of(l, &path)) {
      if (path.empty()) bad = true;
      else if (std::string_view(action) == "move_to") {
        if (files.empty() || files.back().action != "update") bad = true;
        else files.back().move_to = std::string(path);
      } else {
        files.push_back(PatchFile{action, std::string(path), std::nullopt, {}, 0, 0});
      }
    } else {
      body_line(l);
    }
    return !bad;
  }
};

}  // namespace

void for_each_patch_header(std::string_view text,
                           const std::function<void(std::string_view action, std::string_view path)>& fn) {
  if (text.find("*** Begin Patch") == std::string_view::npos) return;
  for_each_line(text, [&](std::string_view l) {
    std::string_view path;
    l = chomp(l);
    if (const char* action = header_of(l, &path); action && !path.empty()) fn(action, path);
  });
}

std::optional<std::vector<PatchFile>> parse_apply_patch(std::string_view text) {
  std::size_t at = text.find("*** Begin Patch");
  if (at == std::string_view::npos) return std::nullopt;
  PatchParser p;
  for_each_line(text.substr(at), [&](std::string_view l) { return p.line(l); });
  if (p.bad || !p.ended || p.files.empty()) return std::nullopt;
  return std::move(p.files);
}

}  // namespace ctxfold
