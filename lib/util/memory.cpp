// Returning freed heap memory to the system (memory.hpp).

#include "util/memory.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ctxfold {

void return_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace ctxfold
