#include <iostream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "context.hpp"
#include "util/error.hpp"
#include "util/id_lines.hpp"
#include "util/json.hpp"

namespace ctxfold::cli {

namespace {
/// stdin with every JSON Lines summary record ({"type":"summary",...}, flat or grep/1's nested
/// one) blanked: a summary names no node to work on, even when it carries a "head" (log's). The
/// line count stays, so errors still name the input line.
std::istringstream without_summaries(std::istream& in) {
  std::string text, line;
  while (std::getline(in, line)) {
    if (line.starts_with("{")) {
      Json j = Json::parse(line, nullptr, false);
      if (j.is_object() && json_str(j, "type") == "summary") line.clear();
    }
    text += line;
    text += '\n';
  }
  return std::istringstream(text);
}
}  // namespace

std::vector<std::string> ids_from_arg(const std::string& arg) {
  if (arg != "-") return {arg};
  std::istringstream in = without_summaries(std::cin);
  return ids_from_lines(in);
}

int for_each_id(const std::string& arg, const std::function<void(const std::string&)>& fn) {
  if (arg != "-") {
    fn(arg);
    return 0;
  }
  int rc = 0;
  std::istringstream in = without_summaries(std::cin);
  for (const IdLine& l : id_lines_from(in)) {
    try {
      fn(l.id);
    } catch (const Error& e) {
      fmt::print(stderr, "ctxfold: error: stdin:{}: {}\n", l.line, e.what());
      if (rc == 0) rc = static_cast<int>(e.exit());
    }
  }
  return rc;
}

}  // namespace ctxfold::cli
