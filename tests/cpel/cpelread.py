#!/usr/bin/env python3
"""cpelread.py -- an independent CPEL reader for marple's tests.

Written from the format facts only (VPP cpel.h / G2 reader), not from
lib/render/cpel.c: big-endian, file header {u8 version 0x01, u8 pad, u16 nsections,
u32 date}; sections {u32 type, u32 length excluding these 8 bytes};
STRTAB(1) = NUL-terminated strings, the first its own name; EVTDEF(3) =
{char name[64], u32 n, n x {u32 code, u32 event_format, u32 datum_format}};
TRACKDEF(4) = {char name[64], u32 n, n x {u32 id, u32 format}};
EVENT(5) = {char name[64], u32 n, u32 ticks_per_second,
n x {u32 time_hi, u32 time_lo, u32 track, u32 code, u32 datum}}.

Prints a summary as JSON (or raises on any violation of the facts):
  {"tracks": {...id: label}, "events": {...code: [name, datum_format]},
   "count": N, "ticks_per_second": T, "sorted": true,
   "per_track": {label: n}, "per_event": {name: n}, "first": [...], "data": [...]}
With --events, also every event as [time, track label, event name, datum].
"""
import json
import struct
import sys


def cstr(tab, off):
    end = tab.index(b"\0", off)
    return tab[off:end].decode("utf-8", "replace")


def read(path, want_events=False):
    data = open(path, "rb").read()
    assert len(data) >= 8, "file too short"
    assert data[0] == 0x01, "first byte must be 0x01 (version 1, big-endian), got %#x" % data[0]
    nsections = struct.unpack(">H", data[2:4])[0]
    pos = 8
    strtab = None
    tracks, evdefs = {}, {}
    events = None
    tps = None
    seen = []
    for _ in range(nsections):
        stype, slen = struct.unpack(">II", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + slen]
        assert len(body) == slen, "section %d truncated" % stype
        pos += 8 + slen
        seen.append(stype)
        if stype == 1:
            strtab = body
            assert cstr(strtab, 0) != "", "string table must start with its name"
        elif stype in (3, 4, 5):
            assert strtab is not None, "string table must come before section %d" % stype
            name = body[:64].split(b"\0")[0].decode()
            assert name == cstr(strtab, 0), "section names string table %r" % name
            n = struct.unpack(">I", body[64:68])[0]
            if stype == 3:
                assert slen == 68 + 12 * n, "EVTDEF length"
                for i in range(n):
                    code, ef, df = struct.unpack(">III", body[68 + 12 * i:80 + 12 * i])
                    evdefs[code] = (cstr(strtab, ef), cstr(strtab, df))
            elif stype == 4:
                assert slen == 68 + 8 * n, "TRACKDEF length"
                for i in range(n):
                    tid, tf = struct.unpack(">II", body[68 + 8 * i:76 + 8 * i])
                    tracks[tid] = cstr(strtab, tf)
            else:
                assert events is None, "more than one event section"
                tps = struct.unpack(">I", body[68:72])[0]
                assert slen == 72 + 20 * n, "EVENT length"
                events = []
                for i in range(n):
                    hi, lo, tr, code, datum = struct.unpack(">IIIII", body[72 + 20 * i:92 + 20 * i])
                    events.append(((hi << 32) | lo, tr, code, datum))
        else:
            raise AssertionError("unknown section type %d" % stype)
    assert pos == len(data), "trailing bytes after the last section"
    assert events is not None, "no event section"
    out = {"tracks": {str(k): v for k, v in tracks.items()},
           "events": {str(k): list(v) for k, v in evdefs.items()},
           "count": len(events), "ticks_per_second": tps, "sections": seen}
    out["sorted"] = all(events[i][0] <= events[i + 1][0] for i in range(len(events) - 1))
    per_track, per_event, dat = {}, {}, {}
    rows = []
    for t, tr, code, datum in events:
        assert tr in tracks, "event on undefined track %d" % tr
        assert code in evdefs, "event with undefined code %d" % code
        ename, dfmt = evdefs[code]
        d = cstr(strtab, datum) if dfmt.startswith("%s") else datum
        per_track[tracks[tr]] = per_track.get(tracks[tr], 0) + 1
        per_event[ename] = per_event.get(ename, 0) + 1
        if want_events:
            rows.append([t, tracks[tr], ename, d])
    out["per_track"] = per_track
    out["per_event"] = per_event
    if want_events:
        out["rows"] = rows
    return out


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    try:
        res = read(args[0], "--events" in sys.argv)
    except (AssertionError, struct.error, ValueError) as e:
        print("cpelread: %s: %s" % (args[0], e), file=sys.stderr)
        sys.exit(1)
    json.dump(res, sys.stdout, indent=None)
    print()
