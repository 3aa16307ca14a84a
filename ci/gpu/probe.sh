#!/usr/bin/env bash
# Probe a lent GPU machine (no registry access there): toolchain, PyTorch, and whether the
# Debian build deps carried in .gpu-deps/ (apt-get download'ed .debs) unpack into /opt/deps.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
  cat /etc/os-release | head -2; uname -r; nproc; free -g | head -2
  gcc --version | head -1; ldd --version | head -1; cmake --version | head -1; ninja --version
  which nvcc && nvcc --version | tail -2; ls -d /usr/local/cuda* 2>/dev/null
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(sys.version);print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.utils.cmake_prefix_path)"
  python3 -c "import torch;print(torch.cuda.get_device_properties(0))"
  python3 -c "import pybind11,pytest,yaml,numpy,scipy;print('pyok', pytest.__version__)" 2>&1
  python3 -c "import html5lib" 2>&1 | tail -1
  python3 -c "import hypothesis;print('hypothesis', hypothesis.__version__)" 2>&1 | tail -1
  ls /usr/include/gtest /usr/include/benchmark /usr/include/yaml-cpp 2>&1 | head -3
  ls $(python3 -c "import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))")/nvidia 2>&1 | head -30
  which chromium chromium-browser google-chrome 2>&1 | head -3
} > "$OUT/probe.txt" 2>&1
cat "$OUT/probe.txt"
