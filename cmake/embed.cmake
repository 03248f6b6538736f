# Writes OUT: a C++ source defining ctxfold::embedded_schema(), the share/schema/*.sql files in order.
set(body "#include <string_view>\n#include <vector>\nnamespace ctxfold {\nstd::vector<std::string_view> embedded_schema() {\n  return {\n")
foreach(f ${FILES})
  file(READ ${f} content)
  string(APPEND body "    R\"CTXFOLD_SQL(${content})CTXFOLD_SQL\",\n")
endforeach()
string(APPEND body "  };\n}\n}  // namespace ctxfold\n")
file(WRITE ${OUT}.tmp "${body}")
file(RENAME ${OUT}.tmp ${OUT})
