// Claude Code session JSONL importer (docs/import.md "Claude Code"): the entry point. The
// importer's parts are in lib/import/claude_code/ (skeleton.hpp describes the two passes and the
// memory model).

#include "import/claude_code/skeleton.hpp"
#include "import/import.hpp"
#include "util/memory.hpp"

namespace ctxfold {

void import_claude_code(const std::string& path, ImportSink& sink) {
  {
    cc_import::Importer imp(path, sink);
    imp.run();
  }
  return_free_memory();  // the skeleton's pages, before the next file or the text packs
}

}  // namespace ctxfold
