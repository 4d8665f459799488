#!/usr/bin/env python3
"""Generate golden protobuf wire-format test vectors for pbwire.

Google's own protobuf encoder (the `protobuf` Python package) serializes
dynamically built messages (FileDescriptorProto -> DescriptorPool ->
message_factory.GetMessageClass, no protoc needed).  The result is written to
`vectors.txt` next to this script (or to `--out DIR`).  Format: see README.md.

Pinned dependency: protobuf==7.36.2 (see requirements.txt).  The script refuses
to run with another version unless --any-version is given.

Every vector is self-checked before it is written:
  * the whole serialization equals the concatenation, in field-number order,
    of the serializations of single-field copies of the message (this checks
    the predicted wire order);
  * re-encoding the emitted `field` lines (parsed back from their text) with
    the tiny reference encoder below reproduces the whole serialization
    byte for byte (this checks every value, kind and packed/unpacked choice).
"""

import argparse
import hashlib
import math
import os
import struct
import sys

import google.protobuf
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PINNED_PROTOBUF = "7.36.2"

FDP = descriptor_pb2.FieldDescriptorProto

NUMERIC_KINDS = [
    "int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool", "enum",
    "fixed32", "fixed64", "sfixed32", "sfixed64", "float", "double",
]
SCALAR_KINDS = NUMERIC_KINDS + ["string", "bytes"]

U32 = (1 << 32) - 1
U64 = (1 << 64) - 1
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1

RANGES = {
    "int32": (I32_MIN, I32_MAX), "sint32": (I32_MIN, I32_MAX),
    "sfixed32": (I32_MIN, I32_MAX), "enum": (I32_MIN, I32_MAX),
    "int64": (I64_MIN, I64_MAX), "sint64": (I64_MIN, I64_MAX),
    "sfixed64": (I64_MIN, I64_MAX),
    "uint32": (0, U32), "fixed32": (0, U32),
    "uint64": (0, U64), "fixed64": (0, U64),
    "bool": (0, 1),
}

# ---------------------------------------------------------------------------
# Schema construction
# ---------------------------------------------------------------------------

P2 = "pbwire.golden2"
P3 = "pbwire.golden3"


def add_field(msg, name, number, kind, label="optional", type_name=None,
              packed=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = getattr(FDP, "TYPE_" + kind.upper())
    f.label = FDP.LABEL_REPEATED if label == "repeated" else FDP.LABEL_OPTIONAL
    if type_name is not None:
        f.type_name = type_name
    if packed is not None:
        f.options.packed = packed
    return f


def add_scalar(msg, name, number, kind, enum_type, **kw):
    tn = enum_type if kind == "enum" else None
    return add_field(msg, name, number, kind, type_name=tn, **kw)


def add_enum(container, name, values):
    e = container.enum_type.add()
    e.name = name
    for vname, num in values:
        v = e.value.add()
        v.name = vname
        v.number = num
    return e


def add_group(msg, type_name_full, short_name, number, label="optional"):
    """A proto2 group: field named lowercase(type), nested type in `msg`."""
    nested = msg.nested_type.add()
    nested.name = short_name
    add_field(msg, short_name.lower(), number, "group", label=label,
              type_name=type_name_full + "." + short_name)
    return nested


# Enum values of the proto2 (closed) enum: every int32 edge value is defined,
# so the edge vectors can also set the enum field.
EDGE_ENUM_VALUES = [
    ("EDGE_ZERO", 0), ("EDGE_ONE", 1), ("EDGE_127", 127), ("EDGE_128", 128),
    ("EDGE_16383", 16383), ("EDGE_16384", 16384), ("EDGE_I32_MAX", I32_MAX),
    ("EDGE_I32_MIN", I32_MIN), ("EDGE_NEG1", -1), ("EDGE_TWO", 2),
    ("EDGE_1000", 1000),
]
EDGE_ENUM_SET = {v for _, v in EDGE_ENUM_VALUES}


def build_proto2():
    fp = descriptor_pb2.FileDescriptorProto()
    fp.name = "pbwire_golden2.proto"
    fp.package = P2
    fp.syntax = "proto2"
    add_enum(fp, "Edge", EDGE_ENUM_VALUES)
    enum_t = "." + P2 + ".Edge"

    m = fp.message_type.add()
    m.name = "Scalars"
    for i, k in enumerate(SCALAR_KINDS, 1):
        add_scalar(m, "f_" + k, i, k, enum_t)

    m = fp.message_type.add()
    m.name = "Repeated"  # unpacked (proto2 default)
    for i, k in enumerate(SCALAR_KINDS, 1):
        add_scalar(m, "r_" + k, i, k, enum_t, label="repeated")

    m = fp.message_type.add()
    m.name = "Packed"  # explicit [packed=true]
    for i, k in enumerate(NUMERIC_KINDS, 1):
        add_scalar(m, "p_" + k, i, k, enum_t, label="repeated", packed=True)

    # Three levels of nesting: Outer -> Middle -> Inner.
    m = fp.message_type.add()
    m.name = "Inner"
    add_field(m, "v", 1, "sint64")
    add_field(m, "data", 2, "bytes")
    add_field(m, "f", 3, "fixed32")
    m = fp.message_type.add()
    m.name = "Middle"
    add_field(m, "inner", 1, "message", type_name="." + P2 + ".Inner")
    add_field(m, "inners", 2, "message", label="repeated",
              type_name="." + P2 + ".Inner")
    add_field(m, "name", 3, "string")
    m = fp.message_type.add()
    m.name = "Outer"
    add_field(m, "id", 1, "int32")
    add_field(m, "middle", 2, "message", type_name="." + P2 + ".Middle")
    add_field(m, "middles", 3, "message", label="repeated",
              type_name="." + P2 + ".Middle")
    add_field(m, "tail", 4, "double")

    # Groups.
    m = fp.message_type.add()
    m.name = "Grouped"
    gfull = "." + P2 + ".Grouped"
    add_field(m, "before", 1, "int32")
    single = add_group(m, gfull, "Single", 2)
    add_field(single, "a", 1, "int32")
    add_field(single, "s", 2, "string")
    deep = add_group(single, gfull + ".Single", "Deep", 3)
    add_field(deep, "z", 1, "sint32")
    add_field(deep, "w", 2, "fixed64")
    add_field(single, "inner", 4, "message", type_name="." + P2 + ".Inner")
    item = add_group(m, gfull, "Item", 3, label="repeated")
    add_field(item, "id", 1, "uint32")
    add_field(item, "payload", 2, "bytes")
    add_field(m, "after", 4, "int32")

    # Large field numbers: tags of 1..5 bytes.
    m = fp.message_type.add()
    m.name = "LargeTags"
    for n in LARGE_FIELD_NUMBERS:
        add_field(m, "f%d" % n, n, "uint32")
    m = fp.message_type.add()
    m.name = "LargeMixed"  # every wire type near the max field number
    lfull = "." + P2 + ".LargeMixed"
    add_field(m, "a", 536870906, "fixed32")
    add_field(m, "b", 536870907, "fixed64")
    add_field(m, "c", 536870908, "string")
    big = add_group(m, lfull, "Big", 536870909)
    add_field(big, "x", 1, "int32")
    add_field(m, "d", 536870910, "message", type_name="." + P2 + ".Inner")
    add_field(m, "e", 536870911, "sint64")
    return fp


LARGE_FIELD_NUMBERS = [1, 15, 16, 2047, 2048, 262143, 262144, 536870911]


def build_proto3():
    fp = descriptor_pb2.FileDescriptorProto()
    fp.name = "pbwire_golden3.proto"
    fp.package = P3
    fp.syntax = "proto3"
    add_enum(fp, "Color", [("COLOR_ZERO", 0), ("COLOR_RED", 1),
                           ("COLOR_BLUE", 2)])
    enum_t = "." + P3 + ".Color"

    m = fp.message_type.add()
    m.name = "Scalars3"  # implicit presence: defaults are not serialized
    for i, k in enumerate(SCALAR_KINDS, 1):
        add_scalar(m, "f_" + k, i, k, enum_t)

    m = fp.message_type.add()
    m.name = "Packed3"  # repeated scalars are packed by default in proto3
    for i, k in enumerate(NUMERIC_KINDS, 1):
        add_scalar(m, "p_" + k, i, k, enum_t, label="repeated")

    m = fp.message_type.add()
    m.name = "BigPacked"
    add_field(m, "values", 1, "uint64", label="repeated")

    m = fp.message_type.add()
    m.name = "Buyer"
    add_field(m, "user_id", 1, "int32")
    add_field(m, "user_name", 2, "string")
    m = fp.message_type.add()
    m.name = "Order"  # the example from the protobuf encoding docs
    add_field(m, "order_id", 1, "int32")
    add_field(m, "buyer", 2, "message", type_name="." + P3 + ".Buyer")
    add_field(m, "sku_ids", 3, "int32", label="repeated")
    add_field(m, "paid", 4, "bool")

    m = fp.message_type.add()
    m.name = "OpenEnum"  # proto3 enums are open: unknown values are kept
    add_field(m, "color", 1, "enum", type_name=enum_t)
    add_field(m, "colors", 2, "enum", label="repeated", type_name=enum_t)
    add_field(m, "after", 3, "int32")
    return fp


FILE_SYNTAX = {}  # file name -> "proto2" / "proto3"


def build_classes():
    pool = descriptor_pool.DescriptorPool()
    classes = {}
    for fp in (build_proto2(), build_proto3()):
        FILE_SYNTAX[fp.name] = fp.syntax
        fd = pool.Add(fp)
        for mp in fp.message_type:
            desc = pool.FindMessageTypeByName(fp.package + "." + mp.name)
            classes[mp.name] = message_factory.GetMessageClass(desc)
        del fd
    return classes


# ---------------------------------------------------------------------------
# Field-line computation (from message objects + descriptors)
# ---------------------------------------------------------------------------

def kind_of(fd):
    return FDP.Type.Name(fd.type)[len("TYPE_"):].lower()


def predicted_packed(fd):
    """Our own packed prediction; cross-checked against fd.is_packed."""
    if not fd.is_repeated or kind_of(fd) not in NUMERIC_KINDS:
        return False
    opts = fd.GetOptions()
    if opts.HasField("packed"):
        return opts.packed
    return FILE_SYNTAX[fd.file.name] == "proto3"


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f64_bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def fmt_value(kind, v):
    if kind == "bool":
        return "true" if v else "false"
    if kind == "float":
        return "0x%08x" % f32_bits(v)
    if kind == "double":
        return "0x%016x" % f64_bits(v)
    if kind == "string":
        return v.encode("utf-8").hex() or "-"
    if kind == "bytes":
        return bytes(v).hex() or "-"
    assert kind in RANGES, kind
    v = int(v)
    lo, hi = RANGES[kind]
    assert lo <= v <= hi, (kind, v)
    return str(v)


def implicit_present(kind, v):
    if kind == "float":
        return f32_bits(v) != 0
    if kind == "double":
        return f64_bits(v) != 0
    if kind in ("string", "bytes"):
        return len(v) > 0
    return bool(v)


def ser(msg):
    return msg.SerializeToString(deterministic=True)


def field_lines(name, msg):
    """Returns (lines, children): lines = [(number, kind, value_text)]."""
    lines, children = [], []
    for fd in sorted(msg.DESCRIPTOR.fields, key=lambda f: f.number):
        kind = kind_of(fd)
        num = fd.number
        val = getattr(msg, fd.name)
        if fd.is_repeated:
            packed = predicted_packed(fd)
            assert packed == fd.is_packed, fd.full_name
            vals = list(val)
            if not vals:
                continue
            if packed:
                lines.append((num, "packed_" + kind,
                              ",".join(fmt_value(kind, v) for v in vals)))
                continue
            for i, v in enumerate(vals):
                if kind in ("message", "group"):
                    lines.append((num, kind, ser(v).hex() or "-"))
                    children.append(("%s.%s[%d]" % (name, fd.name, i), v))
                else:
                    lines.append((num, kind, fmt_value(kind, v)))
            continue
        if fd.has_presence:
            if not msg.HasField(fd.name):
                continue
        else:
            if not implicit_present(kind, val):
                continue
        if kind in ("message", "group"):
            lines.append((num, kind, ser(val).hex() or "-"))
            children.append(("%s.%s" % (name, fd.name), val))
        else:
            lines.append((num, kind, fmt_value(kind, val)))
    return lines, children


# ---------------------------------------------------------------------------
# Independent reference encoder for the emitted text (self-check only)
# ---------------------------------------------------------------------------

def enc_varint(n):
    assert 0 <= n <= U64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_tag(num, wt):
    return enc_varint((num << 3) | wt)


def unhex(text):
    return b"" if text == "-" else bytes.fromhex(text)


def enc_scalar_payload(kind, text):
    """Returns (wire_type, payload) for one scalar value in text syntax."""
    if kind == "bool":
        assert text in ("true", "false")
        return 0, enc_varint(1 if text == "true" else 0)
    if kind == "float":
        assert len(text) == 10 and text.startswith("0x")
        return 5, struct.pack("<I", int(text, 16))
    if kind == "double":
        assert len(text) == 18 and text.startswith("0x")
        return 1, struct.pack("<Q", int(text, 16))
    if kind in ("string", "bytes"):
        b = unhex(text)
        return 2, enc_varint(len(b)) + b
    n = int(text)
    lo, hi = RANGES[kind]
    assert lo <= n <= hi and str(n) == text
    if kind in ("int32", "int64", "uint32", "uint64", "enum"):
        return 0, enc_varint(n & U64)
    if kind == "sint32":
        return 0, enc_varint(((n << 1) ^ (n >> 31)) & U32)
    if kind == "sint64":
        return 0, enc_varint(((n << 1) ^ (n >> 63)) & U64)
    if kind in ("fixed32", "sfixed32"):
        return 5, struct.pack("<I", n & U32)
    if kind in ("fixed64", "sfixed64"):
        return 1, struct.pack("<Q", n & U64)
    raise AssertionError(kind)


def enc_line(num, kind, text):
    if kind == "message":
        b = unhex(text)
        return enc_tag(num, 2) + enc_varint(len(b)) + b
    if kind == "group":
        return enc_tag(num, 3) + unhex(text) + enc_tag(num, 4)
    if kind.startswith("packed_"):
        sub = kind[len("packed_"):]
        assert sub in NUMERIC_KINDS and text != "-"
        body = b"".join(enc_scalar_payload(sub, t)[1] for t in text.split(","))
        return enc_tag(num, 2) + enc_varint(len(body)) + body
    wt, payload = enc_scalar_payload(kind, text)
    return enc_tag(num, wt) + payload


# ---------------------------------------------------------------------------
# Vector collection
# ---------------------------------------------------------------------------

class Collector:
    def __init__(self):
        self.vectors = []  # (name, bytes, lines)
        self.names = set()

    def add(self, name, msg):
        assert name not in self.names, name
        assert " " not in name
        self.names.add(name)
        data = ser(msg)
        # Check 1: wire order == field-number order of single-field copies.
        fields = sorted(msg.DESCRIPTOR.fields, key=lambda f: f.number)
        concat = b""
        for fd in fields:
            single = type(msg)()
            single.CopyFrom(msg)
            for other in fields:
                if other is not fd:
                    single.ClearField(other.name)
            concat += ser(single)
        assert concat == data, (name, concat.hex(), data.hex())
        lines, children = field_lines(name, msg)
        # Check 2: the emitted lines re-encode to exactly the same bytes.
        reenc = b"".join(enc_line(*ln) for ln in lines)
        assert reenc == data, (name, reenc.hex(), data.hex())
        # Check 3: Google's parser round-trips the bytes.
        back = type(msg)()
        back.ParseFromString(data)
        assert ser(back) == data, name
        self.vectors.append((name, data, lines))
        for cname, child in children:
            self.add(cname, child)

    def render(self, version):
        out = ["# generated by gen_golden.py with protobuf %s \u2014 do not edit"
               % version]
        for name, data, lines in self.vectors:
            out.append("vector " + name)
            out.append("hex " + (data.hex() or "-"))
            for num, kind, text in lines:
                out.append("field %d %s %s" % (num, kind, text))
            out.append("end")
        return "\n".join(out) + "\n"


INT_EDGES = [
    ("0", 0), ("1", 1), ("127", 127), ("128", 128), ("16383", 16383),
    ("16384", 16384), ("i32max", I32_MAX), ("i32min", I32_MIN),
    ("neg1", -1), ("u32max", U32), ("i64max", I64_MAX), ("i64min", I64_MIN),
    ("u64max", U64),
]

F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
F32_MIN_SUB = struct.unpack("<f", struct.pack("<I", 0x00000001))[0]
F64_MAX = sys.float_info.max
F64_MIN_SUB = struct.unpack("<d", struct.pack("<Q", 1))[0]

# (name, float value, double value)
FLOAT_EDGES = [
    ("zero", 0.0, 0.0), ("negzero", -0.0, -0.0), ("1p5", 1.5, 1.5),
    ("nan", math.nan, math.nan), ("posinf", math.inf, math.inf),
    ("neginf", -math.inf, -math.inf),
    ("subnormal", F32_MIN_SUB, F64_MIN_SUB), ("max", F32_MAX, F64_MAX),
]

STRING_EDGES = [
    ("empty", ""), ("a", "a"), ("utf8", "h\u00e9llo \u2713"),
    ("len200", "".join(chr(ord("a") + i % 26) for i in range(200))),
]

ALL_BYTES = bytes(range(256))


def int_kind_allows(kind, v):
    if kind == "enum":
        return v in EDGE_ENUM_SET
    lo, hi = RANGES[kind]
    return lo <= v <= hi


def splitmix64(seed):
    state = seed & U64
    while True:
        state = (state + 0x9E3779B97F4A7C15) & U64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
        yield z ^ (z >> 31)


def mixed_varints(count, seed):
    """Deterministic values whose varint encodings are 1..10 bytes long."""
    rng = splitmix64(seed)
    out = []
    for _ in range(count):
        nbytes = next(rng) % 10 + 1
        lo = 0 if nbytes == 1 else 1 << (7 * (nbytes - 1))
        hi = min((1 << (7 * nbytes)) - 1, U64)
        out.append(lo + next(rng) % (hi - lo + 1))
    return out


# Edge values per numeric kind for repeated fields.
def repeated_edges(kind):
    if kind == "bool":
        return [True, False, True]
    if kind == "enum":
        return [0, 1, 127, 128, 16384, I32_MAX, I32_MIN, -1]
    if kind == "float":
        return [0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, F32_MIN_SUB,
                F32_MAX]
    if kind == "double":
        return [0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, F64_MIN_SUB,
                F64_MAX]
    return [v for _, v in INT_EDGES if int_kind_allows(kind, v)]


def open_enum_edges():
    return [0, 1, 2, -1, 1000, I32_MAX, I32_MIN]


def generate():
    C = build_classes()
    col = Collector()

    # --- scalars (proto2, explicit presence) -----------------------------
    Scalars = C["Scalars"]
    col.add("scalars.unset", Scalars())
    for label, v in INT_EDGES:
        m = Scalars()
        for k in NUMERIC_KINDS:
            if k in ("float", "double"):
                continue
            if int_kind_allows(k, v):
                setattr(m, "f_" + k, bool(v) if k == "bool" else v)
        col.add("scalars.int_" + label, m)
    for label, fv, dv in FLOAT_EDGES:
        m = Scalars()
        m.f_float = fv
        m.f_double = dv
        col.add("scalars.float_" + label, m)
    for label, s in STRING_EDGES:
        m = Scalars()
        m.f_string = s
        m.f_bytes = s.encode("utf-8")
        col.add("scalars.str_" + label, m)
    m = Scalars()
    m.f_bytes = ALL_BYTES
    col.add("scalars.bytes_all", m)
    m = Scalars()
    for i, k in enumerate(NUMERIC_KINDS, 1):
        if k == "bool":
            m.f_bool = True
        elif k == "enum":
            m.f_enum = 1000
        elif k in ("float", "double"):
            setattr(m, "f_" + k, -2.25)
        elif k.startswith("s") or k.startswith("int"):
            setattr(m, "f_" + k, -i * 1000)
        else:
            setattr(m, "f_" + k, i * 100000)
    m.f_string = "h\u00e9llo \u2713"
    m.f_bytes = b"\x00\xff\x80\x7f"
    col.add("scalars.mixed", m)

    # --- scalars (proto3, implicit presence) -----------------------------
    Scalars3 = C["Scalars3"]
    m = Scalars3()
    for k in SCALAR_KINDS:
        if k in ("string", "bytes"):
            continue
        setattr(m, "f_" + k, False if k == "bool" else 0)
    m.f_string = ""
    m.f_bytes = b""
    col.add("scalars3.defaults", m)  # all defaults -> empty encoding
    m = Scalars3()
    for k in SCALAR_KINDS:
        if k == "bool":
            m.f_bool = True
        elif k == "string":
            m.f_string = "a"
        elif k == "bytes":
            m.f_bytes = b"\x00"
        else:
            setattr(m, "f_" + k, 1)
    col.add("scalars3.ones", m)
    m = Scalars3()
    m.f_float = -0.0   # -0.0 is not the default (bitwise), so it is written
    m.f_double = -0.0
    m.f_int64 = -1
    col.add("scalars3.negzero", m)

    # --- repeated, unpacked (proto2) ------------------------------------
    Repeated = C["Repeated"]
    col.add("repeated.empty", Repeated())
    m = Repeated()
    for k in NUMERIC_KINDS:
        getattr(m, "r_" + k).extend(repeated_edges(k))
    m.r_string.extend(["", "a", "h\u00e9llo \u2713"])
    m.r_bytes.extend([b"", b"\x00", ALL_BYTES])
    col.add("repeated.edges", m)
    m = Repeated()
    for k in NUMERIC_KINDS:
        getattr(m, "r_" + k).append(True if k == "bool" else 1)
    m.r_string.append("a")
    m.r_bytes.append(b"\x01")
    col.add("repeated.single", m)
    m = Repeated()  # some repeated fields empty, some not
    m.r_int32.extend([-1, 0, 1])
    m.r_sint64.extend([I64_MIN, I64_MAX])
    m.r_double.extend([1.5, -0.0])
    m.r_bytes.extend([b"", b""])
    col.add("repeated.sparse", m)

    # --- repeated, [packed=true] (proto2) -------------------------------
    Packed = C["Packed"]
    col.add("packed.empty", Packed())
    m = Packed()
    for k in NUMERIC_KINDS:
        getattr(m, "p_" + k).extend(repeated_edges(k))
    col.add("packed.edges", m)
    m = Packed()
    for k in NUMERIC_KINDS:
        getattr(m, "p_" + k).append(True if k == "bool" else 1)
    col.add("packed.single", m)
    m = Packed()
    m.p_uint32.extend([0, 0, 0])
    m.p_sint32.extend([-1, 1, I32_MIN, I32_MAX])
    m.p_float.extend([math.nan, -0.0])
    m.p_sfixed64.extend([I64_MIN])
    col.add("packed.sparse", m)

    # --- repeated, packed by default (proto3) ---------------------------
    Packed3 = C["Packed3"]
    col.add("packed3.empty", Packed3())
    m = Packed3()
    for k in NUMERIC_KINDS:
        vals = open_enum_edges() if k == "enum" else repeated_edges(k)
        getattr(m, "p_" + k).extend(vals)
    col.add("packed3.edges", m)
    m = Packed3()
    for k in NUMERIC_KINDS:
        getattr(m, "p_" + k).extend([0] if k != "bool" else [False])
    col.add("packed3.zeros", m)
    m = Packed3()
    m.p_int64.extend([I64_MIN, -1, 0, 1, I64_MAX])
    m.p_fixed32.extend([0, U32])
    col.add("packed3.sparse", m)
    m = C["BigPacked"]()
    vals = mixed_varints(1000, seed=0x9B3173E5)
    assert {len(enc_varint(v)) for v in vals} == set(range(1, 11))
    m.values.extend(vals)
    col.add("packed3.big1000", m)

    # --- nested messages --------------------------------------------------
    Outer, Middle, Inner = C["Outer"], C["Middle"], C["Inner"]
    m = Outer()
    m.id = 42
    m.middle.name = "mid"
    m.middle.inner.v = -3
    m.middle.inner.data = b"\xde\xad\xbe\xef"
    m.middle.inner.f = 7
    x = m.middle.inners.add()
    x.v = 1
    m.middle.inners.add()  # empty element
    x = m.middle.inners.add()
    x.v = I64_MIN
    x.data = ALL_BYTES
    m.middles.add().name = "first"
    x = m.middles.add()
    x.inner.v = 150
    x.name = STRING_EDGES[3][1]
    m.middles.add()  # empty element
    m.tail = 1.5
    col.add("nested.full", m)
    m = Outer()
    m.middle.SetInParent()  # present but empty
    col.add("nested.empty_child", m)
    m = Outer()
    m.middle.inner.SetInParent()  # present, present-but-empty grandchild
    col.add("nested.empty_grandchild", m)
    m = Outer()
    m.middle.inner.data = bytes(200)  # 2-byte lengths at two levels
    col.add("nested.long", m)

    # --- the protobuf docs' example --------------------------------------
    m = C["Order"]()
    m.order_id = 150
    m.buyer.user_id = 7
    m.buyer.user_name = "a"
    m.sku_ids.extend([5, 6])
    m.paid = True
    assert ser(m) == bytes.fromhex("08960112050807120161" "1a020506" "2001"), \
        ser(m).hex()
    col.add("docs_example", m)

    # --- groups (proto2) --------------------------------------------------
    Grouped = C["Grouped"]
    m = Grouped()
    m.before = 1
    m.single.a = 150
    m.single.s = "g"
    m.single.deep.z = -2
    m.single.deep.w = U64
    m.single.inner.v = 5
    for i, payload in enumerate([b"", b"\x01\x02", b"x" * 130]):
        it = m.item.add()
        it.id = i * 300
        it.payload = payload
    m.item.add()  # empty group element
    m.after = -1
    col.add("groups.full", m)
    m = Grouped()
    m.single.SetInParent()  # empty group: start tag immediately followed by end
    col.add("groups.empty", m)
    m = Grouped()
    m.single.deep.SetInParent()  # nested empty group
    col.add("groups.empty_nested", m)
    m = Grouped()
    m.item.add().id = 1
    m.item.add().id = 2
    col.add("groups.repeated_only", m)

    # --- large field numbers ----------------------------------------------
    LargeTags = C["LargeTags"]
    m = LargeTags()
    for n in LARGE_FIELD_NUMBERS:
        setattr(m, "f%d" % n, n)
    col.add("large_tags.all", m)
    for n in LARGE_FIELD_NUMBERS[1:]:
        m = LargeTags()
        setattr(m, "f%d" % n, 0)
        col.add("large_tags.f%d" % n, m)
    m = C["LargeMixed"]()
    m.a = 1
    m.b = U64
    m.c = "max"
    m.big.x = -1
    m.d.v = 1
    m.e = I64_MIN
    col.add("large_mixed.all", m)

    # --- open enums: unknown / negative values (proto3) ---------------------
    OpenEnum = C["OpenEnum"]
    m = OpenEnum()
    m.color = -1  # not a declared value; negative -> 10-byte varint
    col.add("enum.unknown_neg1", m)
    m = OpenEnum()
    m.color = I32_MIN
    col.add("enum.i32min", m)
    m = OpenEnum()
    m.color = 99999  # unknown positive value
    m.after = 1
    col.add("enum.unknown_pos", m)
    m = OpenEnum()
    m.color = 2
    m.colors.extend(open_enum_edges())
    col.add("enum.packed_mixed", m)

    return col


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="output directory (default: next to this script)")
    ap.add_argument("--any-version", action="store_true",
                    help="allow a protobuf version other than the pinned one")
    args = ap.parse_args()
    version = google.protobuf.__version__
    if version != PINNED_PROTOBUF and not args.any_version:
        sys.exit("gen_golden.py: protobuf %s installed, %s pinned "
                 "(pip install -r requirements.txt, or pass --any-version)"
                 % (version, PINNED_PROTOBUF))
    text = generate().render(version)
    data = text.encode("utf-8")
    path = os.path.join(args.out, "vectors.txt")
    os.makedirs(args.out, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    nvec = text.count("\nvector ")
    print("wrote %s: %d vectors, %d bytes, sha256 %s"
          % (path, nvec, len(data), hashlib.sha256(data).hexdigest()))


if __name__ == "__main__":
    main()
