#include <iostream>
#include <string>

#include <fmt/format.h>

#include "context.hpp"
#include "util/error.hpp"
#include "util/id_lines.hpp"

namespace ctxfold::cli {

std::vector<std::string> ids_from_arg(const std::string& arg) {
  if (arg != "-") return {arg};
  return ids_from_lines(std::cin);
}

int for_each_id(const std::string& arg, const std::function<void(const std::string&)>& fn) {
  if (arg != "-") {
    fn(arg);
    return 0;
  }
  int rc = 0;
  for (const IdLine& l : id_lines_from(std::cin)) {
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
