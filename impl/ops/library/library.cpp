// The `crossdev` operator namespace. Every op adds its schemas with a TORCH_LIBRARY_FRAGMENT from
// its own folder (register_op.h); this block claims the namespace, so a second library that
// tries to define `crossdev` ops fails loudly at load instead of silently mixing with these.
#include "ops/library/op_schemas.h"
#include "ops/library/register_op.h"

TORCH_LIBRARY(crossdev, m) {
  (void)m;  // the ops are defined by their fragments
}

namespace crossdev::ops::library {

void define_schemas(torch::Library& m, const OpDefinition& definition) {
  // pt2_compliant_tag: the overload passes torch.library.opcheck on every device
  // (tests/python/ops/test_opcheck.py, which also checks that the tags are exactly these).
  const std::vector<at::Tag> compliant = {at::Tag::pt2_compliant_tag};
  const std::vector<at::Tag> none;
  const bool random = has_training_mode(definition);  // op_schemas.h: what fails opcheck in training mode
  m.def(definition.schema, random ? none : compliant);
  m.def(out_schema(definition).c_str(), compliant);
  m.def(backward_schema(definition).c_str(), random ? none : compliant);
}

}  // namespace crossdev::ops::library
