#!/usr/bin/env python3
"""Read `protoc --decode=...ExportProfilesServiceRequest` text (stdin) and
write what it says, for marple-push's tests to compare with the capture:

    stack root;...;leaf VALUE      one line a sample, frames by the dictionary
    meta KEY VALUE                 sample type, period, times, attributes

With --files each frame a location maps to a file is written
NAME@FILE@BUILD_ID@ADDRESS (its mapping's file name, the mapping's
process.executable.build_id.gnu attribute and the location's address).

Only the dictionary's indices are followed (stack -> locations -> lines ->
function -> string), so a wrong index shows as a wrong name.  Also checks
the proto's rule that every dictionary table starts with its zero value.
"""
import ast
import sys


def parse(lines):
    """protoc's text format as nested lists of (key, value-or-list)."""
    root = []
    stack = [root]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == '}':
            stack.pop()
        elif line.endswith('{'):
            node = []
            stack[-1].append((line[:-1].strip(), node))
            stack.append(node)
        else:
            key, _, value = line.partition(':')
            value = value.strip()
            if value.startswith('"'):
                # a C-escaped string (octal for bytes outside ASCII)
                value = ast.literal_eval('b' + value).decode('utf-8')
            else:
                value = int(value) if value.lstrip('-').isdigit() else value
            stack[-1].append((key.strip(), value))
    return root


def get(node, key, default=None):
    for k, v in node:
        if k == key:
            return v
    return default


def every(node, key):
    return [v for k, v in node if k == key]


req = parse(sys.stdin)
d = get(req, 'dictionary', [])
strings = every(d, 'string_table')
functions = every(d, 'function_table')
locations = every(d, 'location_table')
stacks = every(d, 'stack_table')
attrs = every(d, 'attribute_table')
for table, zero in (('mapping_table', []), ('location_table', []), ('function_table', []), ('link_table', []),
                    ('attribute_table', []), ('stack_table', []), ('string_table', '')):
    rows = every(d, table)
    if not rows or rows[0] != zero:
        print('meta bad-zero-entry %s' % table)


def frame(loc_index):
    loc = locations[loc_index]
    line = get(loc, 'lines', [])
    name = strings[get(functions[get(line, 'function_index', 0)], 'name_strindex', 0)]
    m = get(loc, 'mapping_index', 0)
    if '--files' not in sys.argv or not m:
        return name
    mapping = every(d, 'mapping_table')[m]
    build_id = ''
    for i in every(mapping, 'attribute_indices'):
        key, value = attr(i)
        if key == 'process.executable.build_id.gnu':
            build_id = value
    return '%s@%s@%s@%d' % (name, strings[get(mapping, 'filename_strindex', 0)], build_id, get(loc, 'address', 0))


def attr(i):
    a = attrs[i]
    return strings[get(a, 'key_strindex', 0)], get(get(a, 'value', []), 'string_value', '')


for rp in every(req, 'resource_profiles'):
    for kv in every(get(rp, 'resource', []), 'attributes'):
        print('meta resource %s=%s' % (get(kv, 'key'), get(get(kv, 'value', []), 'string_value')))
    for sp in every(rp, 'scope_profiles'):
        print('meta scope %s' % get(get(sp, 'scope', []), 'name'))
        for p in every(sp, 'profiles'):
            st = get(p, 'sample_type', [])
            print('meta sample_type %s/%s' % (strings[get(st, 'type_strindex', 0)], strings[get(st, 'unit_strindex', 0)]))
            pt = get(p, 'period_type')
            if pt is not None:
                print('meta period %s/%s %d' % (strings[get(pt, 'type_strindex', 0)],
                                                strings[get(pt, 'unit_strindex', 0)], get(p, 'period', 0)))
            print('meta time %d %d' % (get(p, 'time_unix_nano', 0), get(p, 'duration_nano', 0)))
            for i in every(p, 'attribute_indices'):
                print('meta attribute %s=%s' % attr(i))
            for s in every(p, 'samples'):
                locs = every(stacks[get(s, 'stack_index', 0)], 'location_indices')
                names = [frame(i) for i in reversed(locs)]	# leaf first in the proto
                print('stack %s %s' % (';'.join(names), ' '.join(str(v) for v in every(s, 'values'))))
