# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU scripts: make libcupti.so.13 findable for LIB (libcuclimb.so) when its
# RUNPATH does not reach it — the toolkit's copy first, else one a Python package ships (PyTorch's
# CUDA wheels put it under site-packages/nvidia/).
#   . scripts/lib-cupti.sh; find_cupti "$CUCLIMB_LIB"
find_cupti() {
  local lib=$1 d
  ldd "$lib" | grep -q 'libcupti.so.13 => not found' || return 0
  for d in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64 \
           /usr/local/cuda/targets/x86_64-linux/lib \
           $(find /usr/local /opt /usr/lib/python3* -name 'libcupti.so.13' -printf '%h\n' 2>/dev/null); do
    if [ -e "$d/libcupti.so.13" ]; then
      export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      return 0
    fi
  done
  echo "libcupti.so.13 not found for $lib" >&2
  return 1
}
