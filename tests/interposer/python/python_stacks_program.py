# SPDX-License-Identifier: Apache-2.0
"""Calls a native library (py_nvtx_probe) from Python in the ways real programs do: with the GIL
released (ctypes.CDLL) and held (ctypes.PyDLL), from a thread, a generator, a coroutine, a method,
deep recursion and a native callback into Python. Each call registers one NVTX region whose size
names the case; python_stacks_test.py reads the stacks libcuclimb.so recorded for them. The
lines marked "# site:NAME" are where the test expects each stack's first Python frame."""
import asyncio
import ctypes
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
lib_gil = ctypes.PyDLL(sys.argv[1])
for library in (lib, lib_gil):
    library.py_probe_region.argtypes = [ctypes.c_uint64]
    library.py_probe_region.restype = None
HOOK = ctypes.CFUNCTYPE(None)
lib.py_probe_call.argtypes = [HOOK]
lib.py_probe_call.restype = None


def allocate_plain():
    lib.py_probe_region(1001)  # site:plain


def allocate_with_gil():
    lib_gil.py_probe_region(1002)  # site:gil


class Worker(threading.Thread):
    def run(self):
        lib.py_probe_region(1003)  # site:thread


def produce():
    yield lib.py_probe_region(1004)  # site:generator


async def fetch():
    await asyncio.sleep(0)
    lib.py_probe_region(1005)  # site:async


def recurse(n):
    if n == 0:
        lib.py_probe_region(1006)  # site:deep
        return
    recurse(n - 1)


def inner_hook():
    lib.py_probe_region(1007)  # site:inner


def outer_hook():
    lib.py_probe_call(HOOK(inner_hook))  # site:outer


class Model:
    def forward(self):
        lib.py_probe_region(1008)  # site:method


def main():
    allocate_plain()
    allocate_with_gil()
    worker = Worker()
    worker.start()
    worker.join()
    for _ in produce():
        pass
    asyncio.run(fetch())
    recurse(200)
    outer_hook()
    Model().forward()


if __name__ == "__main__":
    main()
