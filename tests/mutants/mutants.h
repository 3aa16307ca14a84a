#pragma once
// Test-only: deliberately broken kernels that override crossdev's CPU kernels through the
// dispatcher while one is active, so the parity checks can prove they go red. Nothing in the
// production library knows about them. libcrossdev_mutants is loaded only when a mutant is
// wanted: linked into the test binaries, or loaded at run time (`crossdev run --load-library`,
// torch.ops.load_library), where CROSSDEV_MUTANT=<name> activates one at load.
// From Python: torch.ops.crossdev_mutants.set_active(name), .active(), .names().
#include <string>
#include <vector>

namespace crossdev::mutants {

struct MutantInfo {
  const char* name;         // "<op>.<defect>"
  const char* description;  // what the broken kernel does, and which inputs expose it
  bool backward;            // overrides crossdev::<op>_backward (the gradients), not crossdev::<op>
};
const std::vector<MutantInfo>& mutant_table();
std::vector<std::string> mutant_names();

// Registers the named mutant's kernel over crossdev::<op>'s (or, for a backward mutant,
// crossdev::<op>_backward's) CPU kernel ("" = none: the
// production kernel is back). An unknown name throws std::invalid_argument listing the valid ones.
void set_active_mutant(const std::string& name);
std::string active_mutant();

}  // namespace crossdev::mutants
