// ctxfold-export-text: writes the searchable text of every node of a ctxfold database, one node
// per line in seq order, for the grep benchmark (bench/grep.sh) to run ripgrep over the same
// history. Within a line, "\" is written as "\\", a newline as "\n" and NUL as "\0", so a line
// is exactly one node and `rg -c` counts matching nodes.
#include <cstdio>
#include <string>

#include "recall/text_index.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ctxfold-export-text DB OUT.txt\n");
    return 2;
  }
  try {
    ctxfold::Store st = ctxfold::open_store(argv[1], ctxfold::Store::Mode::read_only);
    std::FILE* out = std::fopen(argv[2], "wb");
    if (!out) {
      std::perror(argv[2]);
      return 4;
    }
    auto q = st.db().prepare("SELECT content, seq FROM nodes ORDER BY seq");
    std::string line;
    while (q.step()) {
      const std::string text = ctxfold::searchable_text(q.view(0), st.path(), q.int64(1));
      line.clear();
      for (char c : text) {
        if (c == '\\') line += "\\\\";
        else if (c == '\n') line += "\\n";
        else if (c == '\0') line += "\\0";
        else line.push_back(c);
      }
      line.push_back('\n');
      if (std::fwrite(line.data(), 1, line.size(), out) != line.size()) {
        std::perror(argv[2]);
        return 4;
      }
    }
    if (std::fclose(out) != 0) return 4;
  } catch (const ctxfold::Error& e) {
    std::fprintf(stderr, "ctxfold-export-text: %s\n", e.what());
    return 3;
  }
  return 0;
}
