#!/usr/bin/env python3
"""gopclntab-seeds.py — write the gopclntab fuzz target's seeds: a small
.gopclntab of each layout (Go 1.16, 1.18, 1.20), two functions, main.a at
0x401000 (0x40 bytes) and main.b at 0x401040 (0x40), in /src/a.go, lines
10-11 and 20.  Usage: python3 tests/fuzz/gopclntab-seeds.py OUTDIR"""
import struct
import sys

TEXT = 0x401000


def table(magic, new_layout, start_line):
    names = b"main.a\0main.b\0"
    cutab = struct.pack("<I", 0)
    files = b"/src/a.go\0"
    # pc-value tables: (zig-zag value delta, pc delta) varint pairs, 0 ends;
    # offset 0 is "none", so the tables start after a zero byte
    pctab = bytearray(b"\0")
    file0 = len(pctab); pctab += bytes([2, 0x40, 0])              # file 0 over 0x40 bytes
    line_a = len(pctab); pctab += bytes([22, 0x10, 2, 0x30, 0])   # line 10, then 11
    line_b = len(pctab); pctab += bytes([42, 0x40, 0])            # line 20
    ptr = 8
    nwords = 8 if new_layout else 7
    header_size = 8 + nwords * ptr
    off_names = header_size
    off_cu = off_names + len(names)
    off_files = off_cu + len(cutab)
    off_pc = off_files + len(files)
    off_functab = off_pc + len(pctab)
    entry_size = 8 if new_layout else 16
    funcs = [(0x00, 0, line_a), (0x40, 7, line_b)]
    records = bytearray()
    record_offs = []
    base = entry_size * (len(funcs) + 1)
    for entry, nameoff, pcln in funcs:
        record_offs.append(base + len(records))
        head = struct.pack("<I", entry) if new_layout else struct.pack("<Q", TEXT + entry)
        rec = head + struct.pack("<iiIIIIII", nameoff, 0, 0, 0, file0, pcln, 0, 0)
        if start_line:
            rec += struct.pack("<i", 10)
        rec += bytes([0, 0, 0, 0])
        records += rec
    functab = bytearray()
    for (entry, _, _), roff in zip(funcs, record_offs):
        functab += struct.pack("<II", entry, roff) if new_layout else struct.pack("<QQ", TEXT + entry, roff)
    end = 0x80
    functab += struct.pack("<II", end, 0) if new_layout else struct.pack("<QQ", TEXT + end, 0)
    words = [len(funcs), 1] + ([TEXT] if new_layout else []) + [off_names, off_cu, off_files, off_pc, off_functab]
    head = struct.pack("<IBBBB", magic, 0, 0, 1, ptr) + b"".join(struct.pack("<Q", w) for w in words)
    return head + names + cutab + files + bytes(pctab) + bytes(functab) + bytes(records)


def main():
    out = sys.argv[1]
    for name, magic, new, start in (("go116", 0xFFFFFFFA, False, False), ("go118", 0xFFFFFFF0, True, False),
                                    ("go120", 0xFFFFFFF1, True, True)):
        with open(f"{out}/{name}", "wb") as f:
            f.write(table(magic, new, start))


main()
