#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the seeds of fuzz-vhost (tests/fuzz_vhost.c) to tests/corpus-vhost/:
a UML-style handshake that sets up the sync queue and kicks it with a FUSE
INIT and a GETATTR in guest memory, the same over a request queue, and a
few hostile variants (a region past its file, short messages)."""
import os
import struct
import sys

MEM = 0x10000            # guest memory: gpa = uva = MEM, memfd offset 0
DESC, AVAIL, USED = 0x0, 0x100, 0x200
QN = 8
NEED_REPLY = 1 << 3


def msg(req, payload=b"", flags=1 | NEED_REPLY, size=None):
    return struct.pack("<III", req, flags, len(payload) if size is None else size) + payload


def u64(v):
    return struct.pack("<Q", v)


def state(i, n):
    return struct.pack("<II", i, n)


def memory(nbytes_region=0x10000, off=0):
    return struct.pack("<II", 1, 0) + struct.pack("<QQQQ", MEM, nbytes_region, MEM, off)


def addr(q):
    return struct.pack("<IIQQQQ", q, 0, MEM + DESC, MEM + USED, MEM + AVAIL, 0)


def guest_memory():
    """Two chains: FUSE_INIT (desc 0, 1) and GETATTR of the root (2, 3)."""
    mem = bytearray(0x3b0)
    init_in = struct.pack("<IIII", 7, 38, 65536, 0) + bytes(48)
    ih = struct.pack("<IIQQIIII", 40 + len(init_in), 26, 1, 0, 0, 0, 0, 0)
    mem[0x300:0x300 + 40 + len(init_in)] = ih + init_in
    gi = struct.pack("<IIQ", 0, 0, 0)
    ih2 = struct.pack("<IIQQIIII", 40 + len(gi), 3, 2, 1, 0, 0, 0, 0)
    mem[0x380:0x380 + 40 + len(gi)] = ih2 + gi
    # replies land past the input's bytes, in zeroed guest memory
    descs = [(MEM + 0x300, 40 + len(init_in), 1, 1), (MEM + 0x1000, 0x400, 2, 0),
             (MEM + 0x380, 40 + len(gi), 1, 3), (MEM + 0x2000, 0x400, 2, 0)]
    for i, (a, ln, fl, nx) in enumerate(descs):
        mem[DESC + 16 * i:DESC + 16 * i + 16] = struct.pack("<QIHH", a, ln, fl, nx)
    mem[AVAIL:AVAIL + 8] = struct.pack("<HHHH", 0, 2, 0, 2)
    return bytes(mem)


def handshake(q, region=0x10000):
    feats = (1 << 32) | (1 << 30) | (1 << 29) | (1 << 1)
    pf = (1 << 0) | (1 << 3) | (1 << 5) | (1 << 9) | (1 << 14)
    out = msg(3) + msg(1, flags=1) + msg(15, flags=1) + msg(16, u64(pf))
    out += msg(21, b"") + msg(2, u64(feats))
    out += msg(5, memory(region))
    out += msg(8, state(q, QN)) + msg(10, state(q, 0)) + msg(9, addr(q))
    out += msg(13, u64(q)) + msg(18, state(q, 1))
    return out


def seed(mem, msgs):
    return struct.pack("<H", len(mem)) + mem + msgs


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus-vhost")
    os.makedirs(out, exist_ok=True)
    mem = guest_memory()
    seeds = {
        "sync-kick": seed(mem, handshake(2) + msg(35, state(2, 0)) + msg(11, state(2, 0), flags=1)),
        "request-kick": seed(mem, handshake(1) + msg(35, state(1, 0)) + msg(11, state(1, 0), flags=1)),
        "config": seed(b"", msg(15, flags=1) + msg(16, u64(1 << 9)) +
                       msg(24, struct.pack("<III", 0, 48, 0) + bytes(48), flags=1)),
        # the second chain's request lies past the end of the 64 KiB memfd
        "region-past-file": seed(mem[:DESC + 32] + struct.pack("<QIHH", MEM + 0x18000, 48, 1, 3) +
                                 mem[DESC + 48:], handshake(2, region=0x20000) + msg(35, state(2, 0))),
        "short-messages": seed(mem, handshake(2) + msg(8, b"") + msg(9, state(2, 0)) +
                               msg(35, b"\x02") + msg(11, b"", flags=1)),
        "kick-fd": seed(mem, handshake(1) + msg(12, u64(1)) + msg(12, u64(1 | 1 << 8))),
        "reset": seed(mem, handshake(2) + msg(4) + msg(35, state(2, 0))),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
