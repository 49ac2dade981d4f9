#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cuclimb export --format proto` read back by an independent decoder: protoc compiles the public
schema's field numbers and types (perfetto_trace_subset.proto) for python3-protobuf, which parses
every packet we write (compressed bundles inflated as trace_processor does). Then the file must
hold what Perfetto's importer needs: one sequence whose first packet clears incremental state,
interned ids defined before use, every event on a described track, counters with numbers on
counter tracks, and slices that the importer pairs (sorted by timestamp, ties in file order) the
same way we wrote them. The NVTX ranges, kernels, CUDA calls and iterations are those of the JSON
export of the same trace and window.

Usage: perfetto_proto_test.py CUCLIMB MAKE_REPORT_TRACES GOLDEN_DIR SUBSET_PROTO
"""
import collections
import gzip
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zlib

try:
    from google.protobuf import message as _pb_message  # noqa: F401
except ImportError:
    # A Python of its own (pyenv, a venv) may lack Debian's python3-protobuf: use the system one.
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("python3-protobuf is missing (scripts/deps.txt)")

CUCLIMB, MAKE_TRACES, GOLDEN, SUBSET = sys.argv[1:5]
del sys.argv[1:5]
WORK = tempfile.TemporaryDirectory(prefix="cuclimb-pftrace-")
pb = None  # the compiled schema subset

BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
CLEARED, NEEDS = 1, 2
BOOTTIME = 6
GPU_PID_BASE = 1 << 30


def setUpModule():
    global pb
    protoc = shutil.which("protoc")
    if protoc is None:
        raise RuntimeError("protoc is missing (protobuf-compiler, scripts/deps.txt)")
    src = os.path.dirname(os.path.abspath(SUBSET))
    subprocess.run([protoc, f"--proto_path={src}", f"--python_out={WORK.name}",
                    os.path.abspath(SUBSET)], check=True)
    sys.path.insert(0, WORK.name)
    pb = importlib.import_module(os.path.basename(SUBSET)[:-len(".proto")] + "_pb2")
    subprocess.run([MAKE_TRACES, WORK.name, "--iterations", "120"], check=True, timeout=120)


def tearDownModule():
    WORK.cleanup()


def run(*args):
    return subprocess.run([CUCLIMB, *args], capture_output=True, text=True, timeout=600)


def parse_strict(cls, raw, what):
    """Parses `raw` as `cls`, failing on any field the schema subset does not declare."""
    msg = cls()
    msg.ParseFromString(raw)
    known = cls()
    known.CopyFrom(msg)
    known.DiscardUnknownFields()
    if known.ByteSize() != len(raw):
        raise AssertionError(f"{what}: fields outside the Perfetto schema: "
                             f"{len(raw) - known.ByteSize()} of {len(raw)} bytes")
    return msg


def read_packets(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    out = []
    trace = parse_strict(pb.Trace, raw, path)
    for i, p in enumerate(trace.packet):
        if p.HasField("compressed_packets"):
            # One zlib stream per bundle, as trace_processor inflates it.
            inner = zlib.decompress(p.compressed_packets)
            if len(p.SerializeToString()) >= 512 * 1024:
                raise AssertionError(f"bundle {i} is over trace_processor's 512 KiB")
            bundle = parse_strict(pb.Trace, inner, f"bundle {i}")
            for q in bundle.packet:
                if q.HasField("compressed_packets"):
                    raise AssertionError("a bundle inside a bundle")
            out.extend(bundle.packet)
        else:
            out.append(p)
    return out


class Model:
    """What Perfetto's importer makes of the packets; asserts the rules on the way."""

    def __init__(self, packets):
        self.tracks = {}
        self.names = {}
        self.arg_names = {}
        self.strings = {}
        self.events = collections.defaultdict(list)  # uuid -> [(ts, file index, type, name)]
        self.counter_values = collections.defaultdict(list)
        self.flows_out, self.flows_in = set(), set()
        self.args = []
        clock = None  # the sequence's incremental clock: its time, once defined
        default_clock = None
        for index, p in enumerate(packets):
            assert p.trusted_packet_sequence_id == 1, f"packet {index}: sequence"
            if index == 0:
                assert p.sequence_flags & CLEARED, "the first packet must clear incremental state"
            else:
                assert not p.sequence_flags & CLEARED, f"packet {index} clears the state again"
            self.intern(p.interned_data, index)
            if p.HasField("trace_packet_defaults"):
                assert index == 0, "defaults only where the state is cleared"
                default_clock = p.trace_packet_defaults.timestamp_clock_id
            if p.HasField("clock_snapshot"):
                clock = self.clock(p.clock_snapshot)
                continue
            if p.HasField("track_descriptor"):
                self.describe(p.track_descriptor, index)
            elif p.HasField("track_event"):
                assert p.HasField("timestamp"), f"packet {index}: an event without a time"
                if p.HasField("timestamp_clock_id"):
                    assert p.timestamp_clock_id == BOOTTIME, f"packet {index}: clock"
                    ts = p.timestamp
                else:
                    # A delta on the sequence's incremental clock, the default for the sequence.
                    assert clock is not None and default_clock == clock["id"], f"packet {index}"
                    clock["now"] += p.timestamp
                    ts = clock["now"]
                self.event(p, ts, index)
            else:
                raise AssertionError(f"packet {index}: neither a track nor an event")

    @staticmethod
    def clock(snapshot):
        """The incremental clock of the snapshot; it must be sequence-scoped (ids 64-127) and
        tied to the trace clock, BOOTTIME, at the same instant."""
        clocks = {c.clock_id: c for c in snapshot.clocks}
        assert snapshot.primary_trace_clock == BOOTTIME and BOOTTIME in clocks
        incremental = [c for c in snapshot.clocks if c.is_incremental]
        assert len(incremental) == 1 and 64 <= incremental[0].clock_id < 128
        assert clocks[BOOTTIME].timestamp == incremental[0].timestamp
        return {"id": incremental[0].clock_id, "now": incremental[0].timestamp}

    def intern(self, data, index):
        for table, entries in ((self.names, data.event_names),
                               (self.arg_names, data.debug_annotation_names),
                               (self.strings, data.debug_annotation_string_values)):
            for e in entries:
                text = e.name if hasattr(e, "name") else e.str.decode("utf-8", "replace")
                assert e.iid > 0, f"packet {index}: iid 0"
                assert table.get(e.iid, text) == text, f"packet {index}: iid {e.iid} redefined"
                table[e.iid] = text

    def describe(self, d, index):
        assert d.uuid not in self.tracks, f"packet {index}: track {d.uuid} described twice"
        assert d.uuid != 0
        if d.HasField("parent_uuid"):
            assert d.parent_uuid in self.tracks, f"packet {index}: unknown parent"
        self.tracks[d.uuid] = d

    def event(self, p, ts, index):
        e = p.track_event
        assert e.track_uuid in self.tracks, f"packet {index}: event on unknown track {e.track_uuid}"
        track = self.tracks[e.track_uuid]
        uses_interning = e.HasField("name_iid") or len(e.debug_annotations) > 0
        if uses_interning:
            assert p.sequence_flags & NEEDS, f"packet {index}: interned ids without the flag"
        name = None
        if e.HasField("name_iid"):
            assert e.name_iid in self.names, f"packet {index}: name iid {e.name_iid} undefined"
            name = self.names[e.name_iid]
        elif e.HasField("name"):
            name = e.name
        args = {}
        for a in e.debug_annotations:
            assert a.name_iid in self.arg_names, f"packet {index}: arg name iid undefined"
            value = a.WhichOneof("value")
            assert value is not None, f"packet {index}: an argument without a value"
            if value == "string_value_iid":
                assert a.string_value_iid in self.strings, f"packet {index}: string iid undefined"
                args[self.arg_names[a.name_iid]] = self.strings[a.string_value_iid]
            else:
                args[self.arg_names[a.name_iid]] = getattr(a, value)
        if args:
            self.args.append((e.type, name, args))
        assert len(e.extra_counter_track_uuids) == len(e.extra_counter_values)
        for uuid, v in zip(e.extra_counter_track_uuids, e.extra_counter_values):
            assert self.tracks[uuid].HasField("counter"), f"packet {index}: extra on a non-counter"
            self.counter_values[uuid].append((ts, v))
        if e.type == COUNTER:
            assert track.HasField("counter"), f"packet {index}: counter value on a slice track"
            assert e.WhichOneof("counter_value_field") is not None, f"packet {index}: no value"
            self.counter_values[e.track_uuid].append(
                (ts, getattr(e, e.WhichOneof("counter_value_field"))))
        else:
            assert e.type in (BEGIN, END, INSTANT), f"packet {index}: type {e.type}"
            assert not track.HasField("counter"), f"packet {index}: slice on a counter track"
            if e.type != END:
                assert name, f"packet {index}: a slice without a name"
        self.flows_out.update(e.flow_ids)
        self.flows_in.update(e.terminating_flow_ids)
        self.events[e.track_uuid].append((ts, index, e.type, name))

    def slices(self):
        """Slices per track as the importer pairs them; asserts it is the pairing we wrote."""
        out = collections.defaultdict(list)
        for uuid, events in self.events.items():
            last = -1
            for ts, index, _, _ in events:
                assert ts >= last, f"track {uuid}: time goes back at packet {index}"
                last = ts
            written, imported = self.pair(uuid, events), self.pair(uuid, sorted(events))
            assert written == imported, f"track {uuid}: the importer would nest differently"
            out[uuid] = written
        return out

    @staticmethod
    def pair(uuid, events):
        stack, done = [], []
        for ts, index, kind, name in events:
            if kind == BEGIN:
                stack.append((ts, index, name))
            elif kind == END:
                assert stack, f"track {uuid}: an end without a begin (packet {index})"
                start, begin_index, begin_name = stack.pop()
                done.append((start, ts, begin_index, begin_name, False))
            elif kind == INSTANT:
                done.append((ts, ts, index, name, True))
        assert not stack, f"track {uuid}: {len(stack)} slices never end"
        return sorted(done, key=lambda s: s[2])

    # The tracks, by what they hold.
    def parent(self, uuid):
        d = self.tracks[uuid]
        return self.tracks.get(d.parent_uuid) if d.HasField("parent_uuid") else None

    def kind(self, uuid):
        d = self.tracks[uuid]
        if d.HasField("thread"):
            return "calls"
        parent = self.parent(uuid)
        if parent is not None and parent.HasField("process") and parent.process.pid >= GPU_PID_BASE:
            return "kernels"
        if d.name.startswith("NVTX"):
            return "nvtx"
        return {"CUDA calls": "calls", "iterations": "iterations"}.get(d.name, d.name)


def json_export(trace, window=None):
    out = os.path.join(WORK.name, "export.json")
    args = ["export", trace, "--perfetto", out, "--quiet"] + (["--iterations", window] if window else [])
    r = run(*args)
    assert r.returncode in (0, 3), r.stderr
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    names = collections.defaultdict(collections.Counter)
    for e in events:
        if e["ph"] in ("X", "b") and e.get("cat") in ("nvtx", "kernel", "cuda", "iteration"):
            kind = {"cuda": "calls"}.get(e["cat"], e["cat"])
            names["nvtx" if kind == "nvtx" else "kernels" if kind == "kernel" else kind][e["name"]] += 1
    return names


class ProtoExportTest(unittest.TestCase):
    def export(self, trace, out_name="t.pftrace", window=None, extra=()):
        out = os.path.join(WORK.name, out_name)
        args = ["export", trace, "--perfetto", out] + (["--iterations", window] if window else [])
        r = run(*args, *extra)
        self.assertIn(r.returncode, (0, 3), r.stderr)
        return out, r

    def check_against_json(self, trace, window=None, out_name="t.pftrace", extra=()):
        out, r = self.export(trace, out_name, window, extra)
        model = Model(read_packets(out))
        slices = model.slices()
        got = collections.defaultdict(collections.Counter)
        for uuid, items in slices.items():
            kind = model.kind(uuid)
            for _, _, _, name, instant in items:
                # Instants: NVTX marks, heap and region events, drops (not compared).
                got["instants" if instant else kind][name] += 1
        want = json_export(trace, window)
        self.assertEqual(got["nvtx"], want["nvtx"], "NVTX ranges differ from the JSON export")
        self.assertEqual(got["kernels"], want["kernels"], "kernels differ from the JSON export")
        self.assertEqual(sum(got["calls"].values()), sum(want["calls"].values()))
        self.assertEqual(got["iterations"], want["iteration"])
        return model, got, r

    def test_simulated_climb(self):
        trace = os.path.join(WORK.name, "climb.trace")
        model, got, r = self.check_against_json(trace)
        self.assertIn("Perfetto packets", r.stdout)
        self.assertEqual(sum(got["iterations"].values()), 120)
        self.assertTrue(got["kernels"]["adam_update_kernel"] > 0)
        self.assertTrue(got["nvtx"], "NVTX ranges")
        # Launches and kernels are linked by flows.
        self.assertTrue(model.flows_in and model.flows_in <= model.flows_out)
        # The step time counter has one value per iteration, each a positive duration.
        step = [u for u, d in model.tracks.items() if d.name == "step time"]
        self.assertEqual(len(step), 1)
        self.assertEqual(len(model.counter_values[step[0]]), 120)
        self.assertTrue(all(v > 0 for _, v in model.counter_values[step[0]]))
        # Live allocations of the pool end where the leak leaves them: 2 per iteration + set-up.
        pool = [u for u, d in model.tracks.items() if d.name == "live allocations: pool"]
        self.assertEqual(len(pool), 1)
        self.assertGreaterEqual(model.counter_values[pool[0]][-1][1], 240)
        for d in model.tracks.values():
            if d.HasField("counter") and d.name.startswith("live bytes"):
                self.assertEqual(d.counter.unit, pb.CounterDescriptor.UNIT_SIZE_BYTES)
        # Allocation slices carry their size and address.
        allocs = [a for _, name, a in model.args if name and " B" in name and "bytes" in a]
        self.assertTrue(allocs)
        self.assertTrue(all(isinstance(a["addr"], int) for a in allocs))

    def test_window_clips_like_the_json_export(self):
        model, got, _ = self.check_against_json(os.path.join(WORK.name, "climb.trace"), "30:40")
        self.assertEqual(sum(got["iterations"].values()), 10)

    def test_hostile_names_and_threads(self):
        self.check_against_json(os.path.join(WORK.name, "hostile.trace"))

    def test_h200_recording(self):
        # 60 of its 1500 iterations: the whole file decodes in Python in minutes, not seconds.
        model, got, _ = self.check_against_json(os.path.join(GOLDEN, "h200-cubecl-climb.trace"),
                                                "700:760")
        self.assertEqual(sum(got["iterations"].values()), 60)
        self.assertIn("cuclimb-adam::iter", got["nvtx"])
        threads = [d for d in model.tracks.values() if d.HasField("thread")]
        self.assertTrue(threads and all(t.thread.pid == 634 for t in threads))

    def test_tangled_timeline(self):
        # Interleaved NVTX domains, a runtime call around its driver call from the same
        # nanosecond, late out-of-order kernels, overlapping start/end ranges, a push never popped.
        model, got, _ = self.check_against_json(os.path.join(WORK.name, "tangled.trace"))
        self.assertEqual(got["nvtx"]["torch::forward"], 120)
        self.assertEqual(got["nvtx"]["prefetch batch"], 119)
        self.assertEqual(got["nvtx"]["teardown"], 1)  # closed at the end, unfinished
        self.assertEqual(got["kernels"]["gemm"], 119)  # the last iteration's never arrive
        names = collections.Counter(d.name for d in model.tracks.values())
        self.assertGreaterEqual(names["CUDA calls"], 1, "the wrapping runtime call needs a lane")
        self.assertGreaterEqual(names["stream 0x10"], 2, "late kernels need a second lane")
        self.assertGreaterEqual(names["NVTX start/end ranges"], 2, "overlapping ranges")
        self.assertEqual(names["NVTX torch"], 1)
        self.assertTrue(model.flows_in and model.flows_in <= model.flows_out)

    def test_every_record_kind(self):
        # The golden trace with one of each record kind: VMM, handles, heaps and regions, drops.
        model, got, _ = self.check_against_json(os.path.join(GOLDEN, "every_kind.trace"))
        names = {d.name for d in model.tracks.values()}
        self.assertTrue(any(n.startswith("live handles: ") for n in names), names)
        self.assertTrue(got["instants"], "marks, heap events or drops as instants")

    def test_cut_recording_closes_what_was_open(self):
        with open(os.path.join(GOLDEN, "h200-cubecl-climb.trace"), "rb") as f:
            whole = f.read()
        cut = os.path.join(WORK.name, "cut.trace")
        with open(cut, "wb") as f:
            f.write(whole[: len(whole) // 3])
        out, r = self.export(cut, "cut.pftrace", "10:30")
        self.assertEqual(r.returncode, 3, r.stderr)  # exported what was readable, said so
        model = Model(read_packets(out))
        model.slices()
        self.assertEqual(sum(1 for d in model.tracks.values() if d.name == "iterations"), 1)

    def test_gzip_output_is_the_same_packets_uncompressed(self):
        trace = os.path.join(WORK.name, "flat.trace")
        bundled, _ = self.export(trace, "b.pftrace", "0:20")
        packed, _ = self.export(trace, "p.pftrace.gz", "0:20")
        with open(bundled, "rb") as f:
            self.assertTrue(pb.Trace.FromString(f.read()).packet[0].HasField("compressed_packets"))
        with gzip.open(packed, "rb") as f:
            self.assertFalse(pb.Trace.FromString(f.read()).packet[0].HasField("compressed_packets"))
        a = [p.SerializeToString() for p in read_packets(bundled)]
        b = [p.SerializeToString() for p in read_packets(packed)]
        self.assertEqual(a, b)

    def test_format_choice(self):
        trace = os.path.join(WORK.name, "flat.trace")
        for name, extra, is_json in (("a.json", (), True), ("a.json.gz", (), True),
                                     ("a.pftrace", (), False), ("a.perfetto-trace", (), False),
                                     ("a.out", (), False), ("b.json", ("--format", "proto"), False),
                                     ("b.pftrace", ("--format", "json"), True)):
            out, _ = self.export(trace, name, "0:3", extra)
            with open(out, "rb") as f:
                head = f.read()
            if name.endswith(".gz"):
                head = gzip.decompress(head)
            self.assertEqual(head.startswith(b"{"), is_json, name)
        r = run("export", trace, "--perfetto", os.path.join(WORK.name, "c.pftrace"),
                "--format", "xml")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--format", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(WORK.name, "c.pftrace")))
        r = run("export", trace, "--perfetto", "/nonexistent-dir/t.pftrace", "--quiet")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn("/nonexistent-dir/t.pftrace", r.stderr)
        r = subprocess.run([CUCLIMB, "export", trace, "--perfetto", "-", "--iterations", "0:2"],
                           capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(pb.Trace.FromString(r.stdout).packet)


if __name__ == "__main__":
    unittest.main()
