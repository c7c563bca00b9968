#!/usr/bin/env python3
# make-python-capture.py — writes python-marple.marple, a data file laid out as
# the original Python MARPLE's data_io.Writer wrote them (JSON metaheader with
# byte offsets, then per section a JSON header, "$$$"-separated records and a
# blank line), for tests/driver/import.t.  Run it again to regenerate.
import json, os, sys

sections = [
    ({"start time": "2018-08-14 10:20:30.123456", "end time": "2018-08-14 10:20:40.123456",
      "interface": "callstack", "datatype": "stack", "data options": {"weight_units": "samples"}},
     ["97$$$python3$$$_start$$$main$$$Py_RunMain",
      "41$$$python3$$$_start$$$main$$$PyObject_Malloc",
      "3$$$a,b;c#d$$$std::map<int, char>::find$$$caf\u00e9"]),
    ({"start time": "2018-08-14 10:20:30.123456", "end time": "2018-08-14 10:20:40.123456",
      "interface": "cpusched", "datatype": "event", "data options": {}},
     ["363654881950$$$sched:sched_switch$$$" + str({'pid': '311', 'comm': 'bash', 'cpu': '003'}) + "$$$None",
      "363654881990$$$sched:sched_wakeup$$$" + str({'pid': '412', 'comm': "it's \"q\",x\x01", 'cpu': '1'}) + "$$$None"]),
    ({"start time": "2018-08-14 10:20:30.123456", "end time": "2018-08-14 10:20:40.123456",
      "interface": "ipc", "datatype": "event", "data options": {}},
     ["1000$$$connect$$$" + str({'source_pid': 10, 'source_comm': 'client', 'source_port': 5000,
                                 'dest_pid': 11, 'dest_comm': 'server', 'dest_port': 80, 'net_ns': 4026531992})
      + "$$$" + str([('source_', 'dest_')])]),
    ({"start time": "2018-08-14 10:20:30", "end time": "2018-08-14 10:20:35",
      "interface": "memusage", "datatype": "point",
      "data options": {"x_label": "Time", "y_label": "Memory", "x_units": "s", "y_units": "MB"}},
     ["0.5$$$120.25$$$firefox (2211)", "1.0$$$121.0$$$firefox (2211)"]),
]

body = ""
meta = {}
for i, (hdr, lines) in enumerate(sections):
    start = len(body.encode())
    body += json.dumps(hdr) + "\n" + "".join(l + "\n" for l in lines) + "\n"
    h = dict(hdr)
    h["start byte"] = start
    h["end byte"] = len(body.encode())
    meta[i] = h
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python-marple.marple")
with open(out, "w", encoding="utf-8") as f:
    f.write(json.dumps(meta) + "\n" + body)
