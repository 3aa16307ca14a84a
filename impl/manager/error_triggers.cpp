#include "manager/error_triggers.h"

#include "util/named_table.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "manager/checkpoint.h"

namespace crossdev::manager {
namespace {

void device_mismatch_meta() {
  const at::Tensor cpu = at::ones({2, 3});
  const at::Tensor meta = at::ones({2, 3}, at::TensorOptions().device(c10::kMeta));
  (void)at::add(cpu, meta);
}

void dtype_mismatch_mm() { (void)at::mm(at::ones({2, 3}), at::ones({3, 2}, at::kDouble)); }

void dtype_mismatch_index_put() {
  at::Tensor dst = at::zeros({2, 3});
  dst.index_put_({at::tensor({0}, at::kLong)}, at::ones({1, 3}, at::kDouble));
}

void cpu_out_of_memory() {
  // 2^60 bytes: refused by the allocator at once, nothing is touched.
  (void)at::empty({static_cast<int64_t>(1) << 60}, at::kByte);
}

void meta_copy_not_implemented() { (void)at::ones({2}, at::TensorOptions().device(c10::kMeta)).to(c10::kCPU); }

void inference_version_counter() {
  at::Tensor t;
  {
    c10::InferenceMode guard;
    t = at::ones({2});
  }
  t.unsafeGetTensorImpl()->set_version_counter(c10::VariableVersion(0));
}

void checkpoint_not_a_zip() {
  char name[] = "/tmp/crossdev_not_a_checkpoint_XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  const char junk[] = "this is not a zip archive";
  (void)!write(fd, junk, sizeof junk);
  close(fd);
  struct Remove {
    const char* path;
    ~Remove() { std::remove(path); }
  } remove{name};
  DeviceManager manager{HostProfile()};
  (void)load_checkpoint(manager, name, MapLocation::parse("cpu"));
}

void view_shape_invalid() { (void)at::ones({2, 3}).view({4}); }

const std::vector<ErrorTrigger> kTriggers = {
    {"device_mismatch_meta", "at::add(cpu tensor, meta tensor)", device_mismatch_meta},
    {"dtype_mismatch_mm", "at::mm(float32, float64)", dtype_mismatch_mm},
    {"dtype_mismatch_index_put", "index_put_ of float64 values into a float32 tensor", dtype_mismatch_index_put},
    {"cpu_out_of_memory", "at::empty of 2^60 bytes on the cpu", cpu_out_of_memory},
    {"meta_copy_not_implemented", "copy a meta tensor to the cpu", meta_copy_not_implemented},
    {"inference_version_counter", "set a version counter on an inference tensor (what XLA's views do)",
     inference_version_counter},
    {"checkpoint_not_a_zip", "load_checkpoint of a file that is not a zip archive", checkpoint_not_a_zip},
    {"view_shape_invalid", "view a 2x3 tensor as [4] (an error no category claims)", view_shape_invalid},
};

}  // namespace

const std::vector<ErrorTrigger>& error_triggers() { return kTriggers; }

const ErrorTrigger* find_error_trigger(const std::string& name) {
  return named::find(kTriggers, name);
}

std::string error_trigger_list() {
  return named::names(kTriggers);
}

}  // namespace crossdev::manager
