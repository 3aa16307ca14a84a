#pragma once
// Factories of the built-in backends (one file each under backends/).
#include "manager/backend.h"

namespace crossdev::manager {

std::unique_ptr<DeviceBackend> make_cpu_backend();
std::unique_ptr<DeviceBackend> make_cuda_backend();
std::unique_ptr<DeviceBackend> make_mps_backend();
std::unique_ptr<DeviceBackend> make_xpu_backend();
std::unique_ptr<DeviceBackend> make_xla_backend();

}  // namespace crossdev::manager
