//! Decodes every message Google's encoder wrote into `tests/golden/vectors.txt`, checks each
//! field against the values the generator set, and re-encodes the fields with pbwire's encoders
//! to check the bytes are identical. See `tests/golden/README.md` for the format.

use pbwire::fields::{fields, Value};
use pbwire::wire::{self, Tag, WireType};
use pbwire::{packed, varint};

const VECTORS: &str = include_str!("golden/vectors.txt");

struct Vector<'a> {
    name: &'a str,
    bytes: Vec<u8>,
    fields: Vec<(u32, &'a str, &'a str)>,
}

fn hex(text: &str) -> Vec<u8> {
    if text == "-" {
        return Vec::new();
    }
    assert!(text.len() & 1 == 0, "odd hex {text}");
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

fn parse_vectors() -> Vec<Vector<'static>> {
    let mut out = Vec::new();
    let mut current: Option<Vector> = None;
    for line in VECTORS.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let mut words = line.split(' ');
        match words.next().unwrap() {
            "vector" => current = Some(Vector { name: words.next().unwrap(), bytes: vec![], fields: vec![] }),
            "hex" => current.as_mut().unwrap().bytes = hex(words.next().unwrap()),
            "field" => {
                let number = words.next().unwrap().parse().unwrap();
                let kind = words.next().unwrap();
                let value = words.next().unwrap();
                current.as_mut().unwrap().fields.push((number, kind, value));
            }
            "end" => out.push(current.take().unwrap()),
            other => panic!("unknown line kind {other:?}"),
        }
    }
    assert!(current.is_none(), "unterminated vector");
    out
}

fn parse_bits(text: &str) -> u64 {
    u64::from_str_radix(text.strip_prefix("0x").expect("float bits start with 0x"), 16).unwrap()
}

fn wire_type_of(kind: &str) -> WireType {
    match kind {
        "int32" | "int64" | "uint32" | "uint64" | "sint32" | "sint64" | "bool" | "enum" => WireType::Varint,
        "fixed64" | "sfixed64" | "double" => WireType::I64,
        "fixed32" | "sfixed32" | "float" => WireType::I32,
        "group" => WireType::StartGroup,
        _ => WireType::Len,
    }
}

/// Decodes a scalar varint as `kind`, checks it against the generator's text, and returns the
/// value's encoding by pbwire's typed encoder.
fn check_varint(kind: &str, text: &str, raw: u64, ctx: &str) -> Vec<u8> {
    let mut out = [0u8; 10];
    let n = match kind {
        "int32" | "enum" => {
            let expected: i32 = text.parse().unwrap();
            assert_eq!(raw as i32, expected, "{ctx}");
            varint::encode_i32(expected, &mut out)
        }
        "int64" => {
            let expected: i64 = text.parse().unwrap();
            assert_eq!(raw as i64, expected, "{ctx}");
            varint::encode_i64(expected, &mut out)
        }
        "uint32" => {
            let expected: u32 = text.parse().unwrap();
            assert_eq!(raw as u32, expected, "{ctx}");
            varint::encode_u32(expected, &mut out)
        }
        "uint64" => {
            let expected: u64 = text.parse().unwrap();
            assert_eq!(raw, expected, "{ctx}");
            varint::encode_u64(expected, &mut out)
        }
        "sint32" => {
            let expected: i32 = text.parse().unwrap();
            assert_eq!(varint::zigzag_decode_32(raw as u32), expected, "{ctx}");
            varint::encode_sint32(expected, &mut out)
        }
        "sint64" => {
            let expected: i64 = text.parse().unwrap();
            assert_eq!(varint::zigzag_decode_64(raw), expected, "{ctx}");
            varint::encode_sint64(expected, &mut out)
        }
        "bool" => {
            let expected = text == "true";
            assert_eq!(raw != 0, expected, "{ctx}");
            varint::encode_bool(expected, &mut out)
        }
        _ => panic!("{ctx}: not a varint kind {kind}"),
    };
    out[..n.unwrap()].to_vec()
}

/// Decodes a packed payload with pbwire's packed decoder for `elem` and compares it with the
/// comma-separated `text`; returns pbwire's re-encoding of the parsed values.
fn check_packed(elem: &str, text: &str, payload: &[u8], ctx: &str) -> Vec<u8> {
    let items: Vec<&str> = if text == "-" { vec![] } else { text.split(',').collect() };
    macro_rules! varints {
        ($t:ty, $decode:path, $encode:path, $len:path, |$s:ident| $parse:expr) => {{
            let expected: Vec<$t> = items.iter().map(|$s| $parse).collect();
            let mut got: Vec<$t> = vec![Default::default(); packed::count_varints(payload)];
            let n = $decode(payload, &mut got).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(&got[..n], &expected[..], "{ctx}");
            let mut out = vec![0u8; $len(&expected)];
            assert_eq!($encode(&expected, &mut out), Ok(out.len()), "{ctx}");
            out
        }};
    }
    macro_rules! fixed {
        ($t:ty, $decode:path, $encode:path, |$s:ident| $parse:expr) => {{
            let expected: Vec<$t> = items.iter().map(|$s| $parse).collect();
            let mut got: Vec<$t> = vec![Default::default(); payload.len() / core::mem::size_of::<$t>()];
            let n = $decode(payload, &mut got).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            // Compare bits, so that NaN equals NaN.
            assert_eq!(bytemuck_bits(&got[..n]), bytemuck_bits(&expected), "{ctx}");
            let mut out = vec![0u8; core::mem::size_of_val(&expected[..])];
            assert_eq!($encode(&expected, &mut out), Ok(out.len()), "{ctx}");
            out
        }};
    }
    match elem {
        "int32" | "enum" => {
            varints!(i32, packed::decode_i32, packed::encode_i32, packed::encoded_len_i32, |s| s
                .parse()
                .unwrap())
        }
        "int64" => {
            varints!(i64, packed::decode_i64, packed::encode_i64, packed::encoded_len_i64, |s| s
                .parse()
                .unwrap())
        }
        "uint32" => {
            varints!(u32, packed::decode_u32, packed::encode_u32, packed::encoded_len_u32, |s| s
                .parse()
                .unwrap())
        }
        "uint64" => {
            varints!(u64, packed::decode_u64, packed::encode_u64, packed::encoded_len_u64, |s| s
                .parse()
                .unwrap())
        }
        "sint32" => {
            varints!(i32, packed::decode_sint32, packed::encode_sint32, packed::encoded_len_sint32, |s| s
                .parse()
                .unwrap())
        }
        "sint64" => {
            varints!(i64, packed::decode_sint64, packed::encode_sint64, packed::encoded_len_sint64, |s| s
                .parse()
                .unwrap())
        }
        "bool" => {
            varints!(bool, packed::decode_bool, packed::encode_bool, packed::encoded_len_bool, |s| *s
                == "true")
        }
        "fixed32" => fixed!(u32, packed::decode_fixed32, packed::encode_fixed32, |s| s.parse().unwrap()),
        "fixed64" => fixed!(u64, packed::decode_fixed64, packed::encode_fixed64, |s| s.parse().unwrap()),
        "sfixed32" => fixed!(i32, packed::decode_sfixed32, packed::encode_sfixed32, |s| s.parse().unwrap()),
        "sfixed64" => fixed!(i64, packed::decode_sfixed64, packed::encode_sfixed64, |s| s.parse().unwrap()),
        "float" => {
            fixed!(f32, packed::decode_f32, packed::encode_f32, |s| f32::from_bits(parse_bits(s) as u32))
        }
        "double" => fixed!(f64, packed::decode_f64, packed::encode_f64, |s| f64::from_bits(parse_bits(s))),
        _ => panic!("{ctx}: unknown packed kind {elem}"),
    }
}

/// The native bytes of a fixed-width slice, for exact comparison (NaN equals NaN).
fn bytemuck_bits<T: bytemuck::Pod>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

fn check_vector(v: &Vector) {
    let decoded: Vec<_> =
        fields(&v.bytes).collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{}: {e}", v.name));
    assert!(pbwire::fields::validate(&v.bytes).is_ok(), "{}", v.name);
    assert_eq!(decoded.len(), v.fields.len(), "{}: field count", v.name);
    let mut reencoded = Vec::new();
    for (field, &(number, kind, text)) in decoded.iter().zip(&v.fields) {
        let ctx = format!("{} field {number} {kind} {text}", v.name);
        assert_eq!(field.number, number, "{ctx}");
        let wire_type = match kind.strip_prefix("packed_") {
            Some(_) => WireType::Len,
            None => wire_type_of(kind),
        };
        assert_eq!(field.value.wire_type(), wire_type, "{ctx}");
        let tag = Tag::new(number, wire_type).unwrap();
        let mut tag_bytes = [0u8; 5];
        let tag_len = wire::encode_tag(tag, &mut tag_bytes).unwrap();
        reencoded.extend_from_slice(&tag_bytes[..tag_len]);
        // The value as it sits in the message, checked against the typed fixed-width readers.
        let raw_value = &v.bytes[field.value_offset..field.end];
        match (field.value, kind) {
            (Value::Varint(raw), _) => reencoded.extend(check_varint(kind, text, raw, &ctx)),
            (Value::I32(raw), "fixed32") => assert_eq!(raw, text.parse::<u32>().unwrap(), "{ctx}"),
            (Value::I32(raw), "sfixed32") => {
                assert_eq!(wire::decode_sfixed32(raw_value).unwrap(), text.parse::<i32>().unwrap(), "{ctx}");
                assert_eq!(raw as i32, text.parse::<i32>().unwrap(), "{ctx}");
            }
            (Value::I32(raw), "float") => {
                assert_eq!(raw as u64, parse_bits(text), "{ctx}");
                assert_eq!(wire::decode_float(raw_value).unwrap().to_bits(), raw, "{ctx}");
            }
            (Value::I64(raw), "fixed64") => assert_eq!(raw, text.parse::<u64>().unwrap(), "{ctx}"),
            (Value::I64(raw), "sfixed64") => {
                assert_eq!(wire::decode_sfixed64(raw_value).unwrap(), text.parse::<i64>().unwrap(), "{ctx}");
                assert_eq!(raw as i64, text.parse::<i64>().unwrap(), "{ctx}");
            }
            (Value::I64(raw), "double") => {
                assert_eq!(raw, parse_bits(text), "{ctx}");
                assert_eq!(wire::decode_double(raw_value).unwrap().to_bits(), raw, "{ctx}");
            }
            (Value::Len(payload), _) => {
                let body = match kind.strip_prefix("packed_") {
                    Some(elem) => check_packed(elem, text, payload, &ctx),
                    None => {
                        if kind == "string" {
                            assert!(core::str::from_utf8(payload).is_ok(), "{ctx}");
                        }
                        assert_eq!(payload, &hex(text)[..], "{ctx}");
                        hex(text)
                    }
                };
                let mut prefix = [0u8; 10];
                let n = varint::encode_u64(body.len() as u64, &mut prefix).unwrap();
                reencoded.extend_from_slice(&prefix[..n]);
                reencoded.extend(body);
            }
            (Value::Group(content), "group") => {
                assert_eq!(content, &hex(text)[..], "{ctx}");
                reencoded.extend_from_slice(content);
                let end = Tag::new(number, WireType::EndGroup).unwrap();
                let n = wire::encode_tag(end, &mut tag_bytes).unwrap();
                reencoded.extend_from_slice(&tag_bytes[..n]);
            }
            (value, _) => panic!("{ctx}: unexpected value {value:?}"),
        }
        if !matches!(field.value, Value::Varint(_) | Value::Len(_) | Value::Group(_)) {
            reencoded.extend_from_slice(raw_value);
        }
        // Skipping the field from its tag consumes exactly what the iterator says it spans.
        let (tag_read, n) = wire::decode_tag(&v.bytes[field.offset..]).unwrap();
        assert_eq!(tag_read, tag, "{ctx}");
        let skipped = wire::skip_field(tag_read, &v.bytes[field.offset + n..]).unwrap();
        assert_eq!(field.offset + n + skipped, field.end, "{ctx}");
    }
    assert_eq!(reencoded, v.bytes, "{}: re-encoding differs from Google's bytes", v.name);
}

#[test]
fn every_golden_vector_decodes_and_reencodes_byte_for_byte() {
    let vectors = parse_vectors();
    assert!(vectors.len() >= 90, "only {} vectors", vectors.len());
    let mut kinds = std::collections::BTreeSet::new();
    for v in &vectors {
        check_vector(v);
        kinds.extend(v.fields.iter().map(|f| f.1));
    }
    // The file covers every scalar type, packed and not, plus messages and groups.
    for kind in [
        "int32",
        "int64",
        "uint32",
        "uint64",
        "sint32",
        "sint64",
        "bool",
        "enum",
        "fixed32",
        "fixed64",
        "sfixed32",
        "sfixed64",
        "float",
        "double",
        "string",
        "bytes",
        "message",
        "group",
        "packed_int32",
        "packed_sint64",
        "packed_bool",
        "packed_double",
        "packed_fixed32",
        "packed_enum",
    ] {
        assert!(kinds.contains(kind), "no vector has a {kind} field");
    }
}

#[test]
fn the_encoding_guide_example() {
    let v = parse_vectors()
        .into_iter()
        .find(|v| v.bytes == hex("08960112050807120161 1a0205062001".replace(' ', "").as_str()));
    let v = v.expect("the encoding guide's example message is among the vectors");
    check_vector(&v);
}
