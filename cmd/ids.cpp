#include <iostream>
#include <string>

#include "context.hpp"
#include "util/id_lines.hpp"

namespace ctxfold::cli {

std::vector<std::string> ids_from_arg(const std::string& arg) {
  if (arg != "-") return {arg};
  return ids_from_lines(std::cin);
}

}  // namespace ctxfold::cli
