// MPS: no float64 or complex128 (Metal has no 64-bit floats; pytorch/pytorch#122602 closes the
// cast error as expected behaviour), float16 as the low-precision dtype.
#include "manager/backends/accelerator_backend.h"
#include "manager/backend_registry.h"

namespace crossdev::manager {
namespace {

DeviceBackend* make_backend() {
  BackendTraits traits{
      {{c10::ScalarType::Double, c10::ScalarType::Float,
        "MPS has no float64 (\"the MPS framework doesn't support float64. Please use float32 instead.\")"},
       {c10::ScalarType::ComplexDouble, c10::ScalarType::ComplexFloat, "MPS has no complex128 (no float64 parts)"}},
      c10::ScalarType::Half,
      "float16: the half type Metal supports natively",
      "seed 003 (MPS float64 errors), pytorch/pytorch#122602, aten/src/ATen/mps/MPSDevice"};
  return new AcceleratorBackend(DeviceKind::MPS, std::move(traits));
}

CROSSDEV_REGISTER_BACKEND(make_backend());

}  // namespace

}  // namespace crossdev::manager
