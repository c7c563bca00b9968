#!/usr/bin/env python3
"""gopclntab-seeds.py — write the gopclntab fuzz target's seeds: a small
.gopclntab of each layout (Go 1.16, 1.18, 1.20), two functions, main.a at
0x401000 (0x40 bytes) and main.b at 0x401040 (0x40), in /src/a.go, lines
10-11 and 20; main.b inlined into main.a's first 0x10 bytes (its inlining
tree in the funcdata after the table, at 0x480000: the call at main.a+0x20),
and a cyclic variant of each (the call at main.a+0: in main.b again).
Each seed: the table's length (4 bytes), the table, the funcdata.
Usage: python3 tests/fuzz/gopclntab-seeds.py OUTDIR"""
import struct
import sys

TEXT = 0x401000
FUNCDATA = 0x480000


def pc_tables():
    # pc-value tables: (zig-zag value delta, pc delta) varint pairs, 0 ends;
    # offset 0 is "none", so the tables start after a zero byte
    pctab = bytearray(b"\0")
    offs = {}
    offs["file0"] = len(pctab); pctab += bytes([2, 0x40, 0])             # file 0 over 0x40 bytes
    offs["line_a"] = len(pctab); pctab += bytes([22, 0x10, 2, 0x30, 0])  # line 10, then 11
    offs["line_b"] = len(pctab); pctab += bytes([42, 0x40, 0])           # line 20
    offs["inl_a"] = len(pctab); pctab += bytes([2, 0x10, 1, 0x30, 0])    # entry 0, then none
    return pctab, offs


def record(layout, entry, nameoff, pcln, inline, offs, at):
    """main.a's or main.b's _func record, written at table offset at"""
    new = layout != "go116"
    rec = struct.pack("<I", entry) if new else struct.pack("<Q", TEXT + entry)
    npcdata = 3 if inline else 0
    nfuncdata = 4 if inline else 0
    rec += struct.pack("<iiIIIIII", nameoff, 0, 0, 0, offs["file0"], pcln, npcdata, 0)
    if layout == "go120":
        rec += struct.pack("<i", 10)
    rec += bytes([0, 0, 0, nfuncdata])
    if inline:
        rec += struct.pack("<III", 0, 0, offs["inl_a"])
        if new:  # offsets from gofunc, all ones: none
            rec += struct.pack("<IIII", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
        else:    # pointers, 8-byte aligned
            if (at + len(rec)) & 4:
                rec += bytes(4)
            rec += struct.pack("<QQQQ", 0, 0, 0, FUNCDATA)
    return rec


def tree(layout, parent_pc):
    """the inlining tree: entry 0, main.b (name offset 7) called at parent_pc"""
    if layout == "go120":
        return struct.pack("<BxxxiiI", 0, 7, parent_pc, 20)
    return struct.pack("<hBxiiii", -1, 0, 0, 11, 7, parent_pc)


def table(layout, magic, parent_pc):
    new = layout != "go116"
    names = b"main.a\0main.b\0"
    cutab = struct.pack("<I", 0)
    files = b"/src/a.go\0"
    pctab, offs = pc_tables()
    ptr = 8
    nwords = 8 if new else 7
    header_size = 8 + nwords * ptr
    off_names = header_size
    off_cu = off_names + len(names)
    off_files = off_cu + len(cutab)
    off_pc = off_files + len(files)
    off_functab = off_pc + len(pctab)
    entry_size = 8 if new else 16
    funcs = [(0x00, 0, offs["line_a"], True), (0x40, 7, offs["line_b"], False)]
    records = bytearray()
    record_offs = []
    base = entry_size * (len(funcs) + 1)
    for entry, nameoff, pcln, inline in funcs:
        if (base + len(records)) & 7:
            records += bytes(8 - ((base + len(records)) & 7))
        record_offs.append(base + len(records))
        records += record(layout, entry, nameoff, pcln, inline, offs, off_functab + base + len(records))
    functab = bytearray()
    for (entry, _, _, _), roff in zip(funcs, record_offs):
        functab += struct.pack("<II", entry, roff) if new else struct.pack("<QQ", TEXT + entry, roff)
    end = 0x80
    functab += struct.pack("<II", end, 0) if new else struct.pack("<QQ", TEXT + end, 0)
    words = [len(funcs), 1] + ([TEXT] if new else []) + [off_names, off_cu, off_files, off_pc, off_functab]
    head = struct.pack("<IBBBB", magic, 0, 0, 1, ptr) + b"".join(struct.pack("<Q", w) for w in words)
    t = head + names + cutab + files + bytes(pctab) + bytes(functab) + bytes(records)
    return struct.pack("<I", len(t)) + t + tree(layout, parent_pc)


def main():
    out = sys.argv[1]
    for name, magic in (("go116", 0xFFFFFFFA), ("go118", 0xFFFFFFF0), ("go120", 0xFFFFFFF1)):
        with open(f"{out}/{name}", "wb") as f:
            f.write(table(name, magic, 0x20))
        with open(f"{out}/{name}-cycle", "wb") as f:
            f.write(table(name, magic, 0x00))


main()
