#!/usr/bin/env python3
"""Writes stack-bomb.trace (~3 MB): 6 zstd chunks of 64 MiB raw, 1.5 M stack definitions of 256
frames each = 2.9 GiB of decoded frames. `cuclimb info stack-bomb.trace` peaks at ~4.3 GB RSS, 33 s.
Needs libzstd.so.1 (ctypes). Usage: make_stack_bomb.py OUT [CHUNKS] (default 6; one is already
past the reader's 16 Mi-frame cap)"""
import ctypes, struct, sys
z = ctypes.CDLL("libzstd.so.1")
z.ZSTD_compressBound.restype = ctypes.c_size_t; z.ZSTD_compress.restype = ctypes.c_size_t
z.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
T = []
for i in range(256):
    c = i
    for _ in range(8): c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    T.append(c)
def crc(d, c=0):
    c ^= 0xFFFFFFFF
    for b in d: c = T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
def V(v):
    o = bytearray()
    while True:
        b = v & 0x7F; v >>= 7
        if v: o.append(b | 0x80)
        else: o.append(b); return bytes(o)
h = struct.pack("<8sHHIIIqq20s", b"CUCLIMB\0", 1, 0, 64, 3, 0, 0, 0, b"bomb")
out = bytearray(h + struct.pack("<I", crc(h)))
sid = 1
for c in range(int(sys.argv[2]) if len(sys.argv) > 2 else 6):
    p = bytearray(); k = 0
    while True:
        body = V(sid) + V(256) + bytes(256)
        r = b"\x71" + V(len(body)) + body
        if len(p) + len(r) > (64 << 20): break
        p += r; sid += 1; k += 1
    cap = z.ZSTD_compressBound(len(p)); buf = ctypes.create_string_buffer(cap)
    n = z.ZSTD_compress(buf, cap, bytes(p), len(p), 3); stored = buf.raw[:n]
    ch = struct.pack("<IBBHIII", 0x4B484343, 1, 1, 0, len(stored), len(p), k)
    out += ch + struct.pack("<I", crc(stored, crc(ch))) + stored
open(sys.argv[1], "wb").write(out)
