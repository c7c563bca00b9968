"""mutate.py — the byte-level mutations shared by the whole-program fuzzers
(progs.py, config.py), which run programs rather than link a libFuzzer target.

mutate_bytes(rng, data, tokens, seeds, rounds) applies 1..rounds of: change a
byte, insert a token, delete a run, repeat a slice, cut the tail, splice in the
start of another seed, repeat a line, shuffle the lines."""

def mutate_bytes(rng, data, tokens, seeds, rounds=8):
    data = bytearray(data)
    for _ in range(rng.randint(1, rounds)):
        op = rng.randrange(8)
        pos = rng.randint(0, len(data)) if data else 0
        if op == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1:
            data[pos:pos] = rng.choice(tokens)
        elif op == 2 and data:
            del data[pos:pos + rng.randint(1, 64)]
        elif op == 3 and data:
            a = rng.randrange(len(data))
            b = min(len(data), a + rng.randint(1, 200))
            data[pos:pos] = data[a:b] * rng.randint(1, 4)
        elif op == 4:
            data = data[:pos]
        elif op == 5:
            other = rng.choice(seeds)
            data[pos:pos] = other[:rng.randint(0, len(other))]
        elif op == 6 and data:
            nl = data.find(b'\n', pos)
            if nl >= 0:
                data[nl:nl] = data[pos:nl] * rng.randint(1, 3)
        elif op == 7:
            lines = bytes(data).split(b'\n')
            rng.shuffle(lines)
            data = bytearray(b'\n'.join(lines))
    return bytes(data)
