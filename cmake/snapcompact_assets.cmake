# Writes OUT: a C++ source defining ctxfold::embedded_font_bdf(), the BDF text of the X11
# misc-fixed 8x13 ISO10646 font (converted at build time from xfonts-base's 8x13.pcf.gz with
# pcf2bdf; the font is public domain and never committed), and ctxfold::embedded_model_catalog(),
# share/models/catalog.json. Both are parsed once at run time (lib/snapcompact, lib/catalog).
file(READ ${BDF} bdf)
file(READ ${CATALOG} catalog)
set(body "#include <string_view>\nnamespace ctxfold {\n")
string(APPEND body "std::string_view embedded_font_bdf() {\n  static const char text[] = R\"CTXFOLD_BDF(${bdf})CTXFOLD_BDF\";\n  return {text, sizeof text - 1};\n}\n")
string(APPEND body "std::string_view embedded_model_catalog() {\n  return R\"CTXFOLD_MODELS(${catalog})CTXFOLD_MODELS\";\n}\n}  // namespace ctxfold\n")
file(WRITE ${OUT}.tmp "${body}")
file(RENAME ${OUT}.tmp ${OUT})
