#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Format 1.2 traces whose address history is damaged, with intact checksums (a buggy or
hostile writer, not a bad disk): every command stops with exit 3 and names the chunk, the event
and the column, and nothing decodes into a wrong address.

usage: address_history_test.py CUCLIMB
"""
import os
import struct
import subprocess
import sys
import tempfile
import unittest

CUCLIMB = os.path.abspath(sys.argv.pop(1))

ALLOC, FREE = 5, 6
ALLOC_ADDR, FREE_ADDR = 5, 5  # field index of `addr` in the alloc and free schemas
MAX_COLUMN_KEY = 2 + (32 * 32 + 31) * 8 + 7


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def column_key(t, field, plane, escape=False):
    key = 2 + (t * 32 + field) * 8 + plane
    return key + MAX_COLUMN_KEY - 1 if escape else key


def trace(types, streams):
    """A 1.2 file: the header and one type-4 chunk of `types` with (key, bytes) streams."""
    header = struct.pack("<8sHHIIIqq20s", b"CUCLIMB\0", 1, 2, 64, 1, 0, 0, 0, b"hostile")
    header += struct.pack("<I", crc32c(header))
    streams = [(1, bytes(types))] + streams
    data = b"".join(s for _, s in streams)
    payload = varint(len(types)) + varint(0) + varint(len(streams))
    for key, s in streams:
        payload += varint(key) + varint(len(s))
    payload += varint(1) + b"\0" + varint(len(data)) + varint(len(data)) + data
    head = struct.pack("<IBBHIII", 0x4B484343, 4, 0, 0, len(payload), len(data), len(types))
    return header + head + struct.pack("<I", crc32c(payload, crc32c(head))) + payload


class AddressHistoryDamage(unittest.TestCase):
    def check(self, content, *expected):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "damaged.trace")
            with open(path, "wb") as f:
                f.write(content)
            for args in (["info", path], ["convert", path, os.path.join(tmp, "out.jsonl")],
                         ["analyze", path, "--json", os.path.join(tmp, "r.json")]):
                p = subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 3, (args, p.stdout, p.stderr))
                said = " ".join((p.stdout + p.stderr).split())  # reports wrap long lines
                for text in expected:
                    self.assertIn(text, said, args)

    def test_intact_chunk_reads(self):
        # alloc 0x1000 (an escape), its free (live #1), the address allocated again (freed #1).
        content = trace([ALLOC, FREE, ALLOC],
                        [(column_key(FREE, FREE_ADDR, 0), b"\x01"),
                         (column_key(ALLOC, ALLOC_ADDR, 0), b"\x00\x01"),
                         (column_key(ALLOC, ALLOC_ADDR, 1, escape=True), b"\x20")])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ok.trace")
            with open(path, "wb") as f:
                f.write(content)
            p = subprocess.run([CUCLIMB, "convert", path, "-"], capture_output=True, text=True)
            # No trailer: the file ends cleanly after its chunk (exit 0, not damage).
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.count('"addr":"0x1000"'), 3, p.stdout)

    def test_index_past_the_history(self):
        self.check(trace([FREE], [(column_key(FREE, FREE_ADDR, 0), b"\x05")]),
                   "column 'free.addr'", "names address 5 of a history of 0")

    def test_missing_escape_word(self):
        self.check(trace([ALLOC, ALLOC],
                         [(column_key(ALLOC, ALLOC_ADDR, 0, escape=True), b"\x02")]),
                   "needs escape word 2 of a column of 1")

    def test_unused_escape_words(self):
        self.check(trace([ALLOC, FREE, ALLOC],
                         [(column_key(FREE, FREE_ADDR, 0), b"\x01"),
                          (column_key(ALLOC, ALLOC_ADDR, 0), b"\x00\x01"),
                          (column_key(ALLOC, ALLOC_ADDR, 0, escape=True), b"\x02\x04")]),
                   "escape column alloc.addr holds 2 words, its events used 1")

    def test_escape_column_longer_than_its_events(self):
        self.check(trace([ALLOC], [(column_key(ALLOC, ALLOC_ADDR, 0, escape=True), b"\x02" * 9)]),
                   "holds 9 words for 1 events")


if __name__ == "__main__":
    unittest.main()
