// Returning freed heap memory to the system.
#pragma once

namespace ctxfold {

/// Gives the pages of freed heap memory back to the system (glibc's malloc_trim(0): the top of
/// the heap and whole free pages inside it), so a phase that frees a large structure lowers the
/// process's RSS instead of keeping it for later allocations. Costs a walk of the free lists
/// (milliseconds); a no-op on other C libraries.
void return_free_memory();

}  // namespace ctxfold
