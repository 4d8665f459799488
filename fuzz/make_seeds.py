#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target from tests/golden/vectors.txt (messages that
Google's encoder wrote) into fuzz/corpus/<target>/ (not committed; .ci/fuzz runs this first).
Each target gets the messages in the framing it reads: raw for the single-value targets, a
header selecting raw mode for the structure and round-trip targets, and the messages'
length-delimited payloads (packed arrays among them) for the packed target."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
vectors = os.path.join(here, "..", "tests", "golden", "vectors.txt")
corpus = os.path.join(here, "corpus")

messages = []
name = None
for line in open(vectors, encoding="utf-8"):
    parts = line.split()
    if len(parts) == 2 and parts[0] == "vector":
        name = parts[1]
    elif len(parts) == 2 and parts[0] == "hex":
        messages.append((name, b"" if parts[1] == "-" else bytes.fromhex(parts[1])))


def varint(buf, pos):
    value, shift = 0, 0
    while pos < len(buf) and shift < 70:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos
    raise ValueError("bad varint")


def payloads(msg):
    """The length-delimited payloads of a well-formed message's top-level fields."""
    out, pos = [], 0
    try:
        while pos < len(msg):
            tag, pos = varint(msg, pos)
            wire = tag & 7
            if wire == 0:
                _, pos = varint(msg, pos)
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            elif wire == 2:
                n, pos = varint(msg, pos)
                out.append(msg[pos:pos + n])
                pos += n
            elif wire in (3, 4):
                pass
            else:
                break
    except ValueError:
        pass
    return out


def write(target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


count = 0
for name, msg in messages:
    write("decode_single", name, msg[:256])
    write("varint_unchecked", name, msg[:64])
    # mode 0 (raw bytes), default depth limit, 255-byte output for write_delimited
    write("structure", name, bytes([0, 0, 255]) + msg)
    # short 0, no values, then the message as raw input to decode-then-encode
    write("roundtrip", name, bytes([0, 0]) + msg)
    for i, p in enumerate(payloads(msg)):
        # exact capacity, no offset; the payload's bytes then drive the generator
        write("packed_backends", "%s.%d" % (name, i), bytes([0, 0, 0, 0]) + p)
    count += 1
print("seeds from %d golden vectors in %s" % (count, corpus), file=sys.stderr)
