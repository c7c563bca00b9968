#!/usr/bin/env python3
"""A loopback HTTP receiver for marple-push's tests: it records every POST and
answers as its mode file says, so one receiver plays a server that is up,
slow, failing or refusing.

    receiver.py DIR [PORT]   listens on 127.0.0.1:PORT (default: a free port),
                             the port written to DIR/port

Each request N (from 1 more than the requests in DIR) is kept as DIR/N.json (method, path, query as a list
of [key, value], headers) and DIR/N.body.  DIR/mode, read at each request:
    ok           200 (the default when there is no mode file)
    hang         accept, read the request, never answer
    fail K       500 for the next K requests, then 200 (K counts down in the file)
    status CODE  answer CODE
    redirect CODE [loop|https|otherhost]
                 answer CODE with Location: /moved + the request's path
                 (a path under /moved is answered 200); loop: that too;
                 https: to https://127.0.0.1:PORT/moved...;
                 otherhost: to http://localhost:PORT/moved...
    endless K    for the next K requests, 500 with a body that never ends
                 (a line a second), then 200 (K counts down in the file)
    overlong K   the same, the body sent on past its Content-Length: a
                 client that keeps the connection reads the rest as the
                 next answer's status line ("Unsupported protocol")
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

DIR = sys.argv[1]
lock = threading.Lock()


def mode():
    """The mode for this request; 'fail K' counts itself down."""
    path = os.path.join(DIR, 'mode')
    try:
        words = open(path).read().split()
    except FileNotFoundError:
        return 'ok', 200
    if not words or words[0] == 'ok':
        return 'ok', 200
    if words[0] == 'hang':
        return 'hang', 0
    if words[0] == 'status':
        return 'status', int(words[1])
    if words[0] == 'redirect':
        return 'redirect ' + ' '.join(words[2:]), int(words[1])
    if words[0] in ('fail', 'endless', 'overlong'):
        left = int(words[1])
        with open(path + '.tmp', 'w') as f:
            f.write('%s %d\n' % (words[0], left - 1) if left > 1 else 'ok\n')
        os.replace(path + '.tmp', path)
        return (words[0], 500) if left > 0 else ('ok', 200)
    raise SystemExit('receiver: unknown mode %r' % words)


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(n)
        with lock:
            what, code = mode()
            if what != 'hang':
                # numbered after the requests kept so far: a test that
                # removes them starts again at 1
                seq = 1 + sum(1 for f in os.listdir(DIR) if f.endswith('.body'))
                with open(os.path.join(DIR, '%d.body' % seq), 'wb') as f:
                    f.write(body)
        if what == 'hang':
            # never answer: the client's own timeout has to end this
            time.sleep(3600)
            return
        url = urlsplit(self.path)
        location = None
        if what.startswith('redirect'):
            if self.path.startswith('/moved') and 'loop' not in what:
                code = 200
            else:
                location = '/moved' + self.path
                if 'https' in what:
                    location = 'https://127.0.0.1:%d%s' % (self.server.server_address[1], location)
                elif 'otherhost' in what:
                    location = 'http://localhost:%d%s' % (self.server.server_address[1], location)
        rec = {'method': 'POST', 'path': url.path, 'query': parse_qsl(url.query, keep_blank_values=True),
               'headers': dict(self.headers.items()), 'status': code}
        with open(os.path.join(DIR, '%d.json.tmp' % seq), 'w') as f:
            json.dump(rec, f)
        os.replace(os.path.join(DIR, '%d.json.tmp' % seq), os.path.join(DIR, '%d.json' % seq))
        if what in ('endless', 'overlong'):
            self.send_response(code)
            if what == 'endless':
                self.send_header('Transfer-Encoding', 'chunked')
            else:
                self.send_header('Content-Length', '14')
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b'e\r\nstill failing\n\r\n')
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                return
        reply = b'' if code == 200 or location else b'injected failure\n'
        self.send_response(code)
        if location:
            self.send_header('Location', location)
        self.send_header('Content-Length', str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


server = ThreadingHTTPServer(('127.0.0.1', int(sys.argv[2]) if len(sys.argv) > 2 else 0), Handler)
server.daemon_threads = True
with open(os.path.join(DIR, 'port.tmp'), 'w') as f:
    f.write('%d\n' % server.server_address[1])
os.replace(os.path.join(DIR, 'port.tmp'), os.path.join(DIR, 'port'))
server.serve_forever()
