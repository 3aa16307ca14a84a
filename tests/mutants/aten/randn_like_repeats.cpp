// Test-only ATen mutant: aten::randn_like on the sim device (PrivateUse1) returns N(0, 1) values drawn from a
// private CPU generator seeded with the same constant on every call: each draw is right on its own, but every
// call returns the same one, whatever the seed (a device generator whose state is never advanced or seeded).
// Its values are a random op's, each draw a fine N(0, 1) sample; the suite must fail it by "random ops by their
// law (a draw repeated across calls)" (random_laws.py's repeat check: two draws in a row must differ;
// catalog.json).
// Registered for PrivateUse1, it takes precedence over randn_like's CompositeExplicitAutograd kernel.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/library.h>

namespace {

constexpr uint64_t kFixedSeed = 1234;

at::Tensor randn_like_repeats(const at::Tensor& self, c10::optional<at::ScalarType> dtype,
                              c10::optional<at::Layout> /*layout*/, c10::optional<at::Device> device,
                              c10::optional<bool> /*pin_memory*/, c10::optional<at::MemoryFormat> memory_format) {
  const auto options = at::TensorOptions().dtype(dtype.value_or(self.scalar_type()));
  // empty_like's layout: Preserve keeps a dense tensor's strides, else its suggested memory format.
  at::MemoryFormat format = memory_format.value_or(at::MemoryFormat::Preserve);
  at::Tensor draw;
  if (format == at::MemoryFormat::Preserve && self.is_non_overlapping_and_dense()) {
    draw = at::empty_strided(self.sizes(), self.strides(), options);
  } else {
    if (format == at::MemoryFormat::Preserve) format = self.suggest_memory_format();
    draw = at::empty(self.sizes(), options.memory_format(format));
  }
  draw.normal_(0, 1, at::make_generator<at::CPUGeneratorImpl>(kFixedSeed));  // a fresh generator: the same draw
  return draw.to(device.value_or(self.device()));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("randn_like", randn_like_repeats); }
