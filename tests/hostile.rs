//! Hostile input: one test per row of the README's "Hostile input" table, each checking the
//! exact error kind and offset (and, for packed decoding, the same on every backend this CPU
//! runs, for every varint element type).

mod common;

use common::sweep;
use pbwire::backend::{self, Kernel};
use pbwire::fields::{self, fields, Value};
use pbwire::wire::{self, Tag, WireType};
use pbwire::{packed, stream, varint, Error, ErrorKind, Result};

fn e(kind: ErrorKind, offset: usize) -> Error {
    Error::new(kind, offset)
}

/// Packed varint decode of `payload` into `capacity` slots, by every backend and every element
/// type; all must agree (values included). Returns the common result.
fn packed_everywhere(payload: &[u8], capacity: usize) -> Result<usize> {
    let reference = Kernel::new(backend::Backend::Scalar).unwrap();
    let mut want_values = vec![0u64; capacity];
    let want = reference.decode_u64(payload, &mut want_values);
    for b in backend::available() {
        let k = Kernel::new(b).unwrap();
        let mut o64 = vec![0u64; capacity];
        let got = k.decode_u64(payload, &mut o64);
        assert_eq!(got, want, "{b} u64 on {payload:02x?} capacity {capacity}");
        if let Ok(n) = got {
            assert_eq!(o64[..n], want_values[..n], "{b}");
        }
        assert_eq!(k.decode_u32(payload, &mut vec![0; capacity]), want, "{b} u32");
        assert_eq!(k.decode_i64(payload, &mut vec![0; capacity]), want, "{b} i64");
        assert_eq!(k.decode_i32(payload, &mut vec![0; capacity]), want, "{b} i32");
        assert_eq!(k.decode_sint64(payload, &mut vec![0; capacity]), want, "{b} sint64");
        assert_eq!(k.decode_sint32(payload, &mut vec![0; capacity]), want, "{b} sint32");
        assert_eq!(k.decode_bool(payload, &mut vec![false; capacity]), want, "{b} bool");
    }
    assert_eq!(packed::decode_u64(payload, &mut vec![0; capacity]), want, "dispatched");
    want
}

/// `bad` placed after `at` one-byte values and followed by `after` more, so that it lands on
/// every position of the SIMD windows (64 bytes, 16-byte margin).
fn embedded(at: usize, bad: &[u8], after: usize) -> Vec<u8> {
    let mut p = vec![0x05u8; at];
    p.extend_from_slice(bad);
    p.extend(std::iter::repeat_n(0x06u8, after));
    p
}

/// A message with every wire type: field 1 varint 150 (0..3), field 2 fixed64 (3..12), field
/// 3 "abc" (12..17), field 4 fixed32 (17..22), field 500 varint 1 with a two-byte tag (22..25),
/// field 5 group { 1: 1 } (25..29).
const MESSAGE: [u8; 29] = [
    0x08, 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1a, 0x03, b'a', b'b', b'c', 0x25, 1, 2, 3, 4, 0xa0,
    0x1f, 0x01, 0x2b, 0x08, 0x01, 0x2c,
];

#[test]
fn truncation_at_every_byte() {
    assert_eq!(fields::validate(&MESSAGE), Ok(()));
    assert_eq!(fields(&MESSAGE).count(), 6);
    for k in 0..MESSAGE.len() {
        let want = match k {
            0 | 3 | 12 | 17 | 22 | 25 => Ok(()),
            1 | 2 => Err(e(ErrorKind::Truncated, 1)), // inside the varint value
            4..=11 => Err(e(ErrorKind::Truncated, 4)), // inside the fixed64
            13..=16 => Err(e(ErrorKind::Truncated, 13)), // at the length prefix
            18..=21 => Err(e(ErrorKind::Truncated, 18)),
            23 => Err(e(ErrorKind::Truncated, 22)), // inside the two-byte tag
            24 => Err(e(ErrorKind::Truncated, 24)),
            // Inside the group: where the missing end tag (or the cut inner value) starts.
            26 => Err(e(ErrorKind::Truncated, 26)),
            27 => Err(e(ErrorKind::Truncated, 27)),
            28 => Err(e(ErrorKind::Truncated, 28)),
            _ => unreachable!(),
        };
        assert_eq!(fields::validate(&MESSAGE[..k]), want, "prefix of {k} bytes");
        if let Err(err) = want {
            assert_eq!(fields(&MESSAGE[..k]).last(), Some(Err(err)));
        }
    }
    // Single values and length-prefixed streams: Truncated at the value's first byte.
    let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    for k in 0..10 {
        assert_eq!(varint::decode_u64(&max[..k]), Err(e(ErrorKind::Truncated, 0)));
        assert_eq!(wire::decode_len(&[0x05, 1, 2, 3, 4, 5][..k.min(5)]), Err(e(ErrorKind::Truncated, 0)));
    }
    for k in 0..8 {
        assert_eq!(wire::decode_fixed64(&[0; 8][..k]), Err(e(ErrorKind::Truncated, 0)));
        assert_eq!(wire::decode_fixed32(&[0; 4][..k.min(3)]), Err(e(ErrorKind::Truncated, 0)));
    }
    let framed = [0x02, 0x08, 0x01, 0x01, 0x00];
    for k in 1..framed.len() {
        let last = stream::delimited(&framed[..k]).last();
        let want = match k {
            1 | 2 => Some(Err(e(ErrorKind::Truncated, 0))),
            3 => Some(Ok(&framed[1..3])),
            _ => Some(Err(e(ErrorKind::Truncated, 3))),
        };
        assert_eq!(last, want, "stream prefix {k}");
    }
}

#[test]
fn overlong_varints() {
    // 11 or more bytes: VarintOverflow at the varint's first byte, wherever it is.
    for n in 10..=20 {
        let mut v = vec![0x80u8; n];
        v.push(0x00);
        assert_eq!(varint::decode_u64(&v), Err(e(ErrorKind::VarintOverflow, 0)));
        for at in sweep(0..=140, 7) {
            assert_eq!(
                packed_everywhere(&embedded(at, &v, 90), 400),
                Err(e(ErrorKind::VarintOverflow, at)),
                "{n} bytes at {at}"
            );
        }
    }
    // Padding up to 10 bytes is fine: 80 00 is 0, and so are ten bytes 80 .. 80 00.
    assert_eq!(varint::decode_u64(&[0x80, 0x00]), Ok((0, 2)));
    let mut padded = [0x80u8; 10];
    padded[9] = 0;
    assert_eq!(varint::decode_u64(&padded), Ok((0, 10)));
    assert_eq!(packed_everywhere(&embedded(60, &padded, 90), 400), Ok(151));
    // In a message: at the value's offset.
    let mut msg = vec![0x08];
    msg.extend_from_slice(&[0xff; 11]);
    msg.push(0x01);
    assert_eq!(fields::validate(&msg), Err(e(ErrorKind::VarintOverflow, 1)));
}

#[test]
fn tenth_byte_overflow() {
    let mut v = [0xffu8; 10];
    for b10 in [0x02u8, 0x03, 0x7f, 0x80, 0xff] {
        v[9] = b10;
        assert_eq!(varint::decode_u64(&v), Err(e(ErrorKind::VarintOverflow, 0)), "{b10:#x}");
        for at in [0, 1, 47, 48, 54, 55, 56, 63, 64, 70, 79, 80, 127, 128] {
            assert_eq!(packed_everywhere(&embedded(at, &v, 90), 400), Err(e(ErrorKind::VarintOverflow, at)));
        }
    }
    v[9] = 0x01;
    assert_eq!(varint::decode_u64(&v), Ok((u64::MAX, 10)));
    assert_eq!(packed_everywhere(&embedded(55, &v, 90), 400), Ok(146));
    // A tag or a length prefix that overflows: VarintOverflow at its first byte.
    let mut msg = vec![0x08, 0x01];
    msg.extend_from_slice(&[0xff; 9]);
    msg.push(0x02);
    assert_eq!(fields::validate(&msg), Err(e(ErrorKind::VarintOverflow, 2)));
}

#[test]
fn lengths_past_the_end_or_above_i32_max() {
    // Past the end: Truncated at the length prefix.
    assert_eq!(wire::decode_len(&[0x03, 1, 2]), Err(e(ErrorKind::Truncated, 0)));
    assert_eq!(fields::validate(&[0x08, 0x01, 0x12, 0x7f, 0x00]), Err(e(ErrorKind::Truncated, 3)));
    assert_eq!(stream::delimited(&[0x00, 0x05, 0x00]).last(), Some(Err(e(ErrorKind::Truncated, 1))));
    // i32::MAX itself is a valid length (so a short input is Truncated) ...
    let max = [0xff, 0xff, 0xff, 0xff, 0x07];
    assert_eq!(wire::decode_len(&max), Err(e(ErrorKind::Truncated, 0)));
    // ... one more, and anything up to u64::MAX, is LengthOutOfBounds whatever the input size.
    for prefix in [
        &[0x80, 0x80, 0x80, 0x80, 0x08][..],
        &[0xff, 0xff, 0xff, 0xff, 0x0f],
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
    ] {
        assert_eq!(wire::decode_len(prefix), Err(e(ErrorKind::LengthOutOfBounds, 0)));
        let mut msg = vec![0x1a];
        msg.extend_from_slice(prefix);
        msg.extend_from_slice(&[0u8; 64]);
        assert_eq!(fields::validate(&msg), Err(e(ErrorKind::LengthOutOfBounds, 1)));
        let tag = Tag::new(3, WireType::Len).unwrap();
        assert_eq!(wire::skip_field(tag, &msg[1..]), Err(e(ErrorKind::LengthOutOfBounds, 0)));
        assert_eq!(stream::delimited(&msg[1..]).next(), Some(Err(e(ErrorKind::LengthOutOfBounds, 0))));
    }
}

#[test]
fn wire_types_6_and_7() {
    for wt in [6u8, 7] {
        assert_eq!(wire::decode_tag(&[0x08 | wt]), Err(e(ErrorKind::InvalidWireType, 0)));
        assert_eq!(fields::validate(&[0x08, 0x01, 0x10 | wt]), Err(e(ErrorKind::InvalidWireType, 2)));
        // Inside a group: at the bad tag.
        assert_eq!(
            fields::validate(&[0x0b, 0x08, 0x01, 0x10 | wt, 0x0c]),
            Err(e(ErrorKind::InvalidWireType, 3))
        );
    }
}

#[test]
fn field_number_zero_and_tags_over_32_bits() {
    for raw in 0u8..8 {
        // Field 0 with any wire type (6 and 7 included: the field number is checked first).
        assert_eq!(wire::decode_tag(&[raw]), Err(e(ErrorKind::InvalidFieldNumber, 0)));
        assert_eq!(fields::validate(&[0x08, 0x01, raw]), Err(e(ErrorKind::InvalidFieldNumber, 2)));
    }
    // Padded field 0 and a tag of 2^32 (it does not fit in 32 bits).
    assert_eq!(wire::decode_tag(&[0x80, 0x00]), Err(e(ErrorKind::InvalidFieldNumber, 0)));
    assert_eq!(wire::decode_tag(&[0x80, 0x80, 0x80, 0x80, 0x10]), Err(e(ErrorKind::InvalidFieldNumber, 0)));
    // The largest field number is fine.
    assert_eq!(
        wire::decode_tag(&[0xf8, 0xff, 0xff, 0xff, 0x0f]).map(|(t, n)| (t.field(), n)),
        Ok((wire::MAX_FIELD_NUMBER, 5))
    );
}

#[test]
fn unbalanced_and_mismatched_groups() {
    // An end tag at the top level.
    assert_eq!(fields::validate(&[0x08, 0x01, 0x0c]), Err(e(ErrorKind::GroupMismatch, 2)));
    // An end tag for another field, directly and one level down.
    assert_eq!(fields::validate(&[0x0b, 0x14]), Err(e(ErrorKind::GroupMismatch, 1)));
    assert_eq!(fields::validate(&[0x0b, 0x13, 0x1c, 0x0c]), Err(e(ErrorKind::GroupMismatch, 2)));
    // No end tag: Truncated at the end of the input, where it would be.
    assert_eq!(fields::validate(&[0x0b, 0x13, 0x14]), Err(e(ErrorKind::Truncated, 3)));
    let start = Tag::new(1, WireType::StartGroup).unwrap();
    assert_eq!(wire::skip_field(start, &[0x08, 0x01]), Err(e(ErrorKind::Truncated, 2)));
    assert_eq!(wire::skip_field(start, &[0x14]), Err(e(ErrorKind::GroupMismatch, 0)));
    // An end-group tag cannot be skipped.
    let end = Tag::new(1, WireType::EndGroup).unwrap();
    assert_eq!(wire::skip_field(end, &[0x08, 0x01]), Err(e(ErrorKind::GroupMismatch, 0)));
    // Balanced: the group comes out whole.
    let msg = [0x0b, 0x13, 0x14, 0x0c];
    let f = fields(&msg).next().unwrap().unwrap();
    assert_eq!((f.value, f.end), (Value::Group(&[0x13, 0x14]), 4));
}

#[test]
fn nesting_past_the_depth_limit() {
    fn nested(depth: usize) -> Vec<u8> {
        let mut m = vec![0x0bu8; depth];
        m.extend(std::iter::repeat_n(0x0cu8, depth));
        m
    }
    // 100 levels (the default limit) are fine; the 101st start tag is DepthLimit at its offset.
    assert_eq!(fields::validate(&nested(100)), Ok(()));
    assert_eq!(fields::validate(&nested(101)), Err(e(ErrorKind::DepthLimit, 100)));
    // A hostile run of start tags costs no stack: 1 MiB of them stops at the limit.
    let deep = vec![0x0bu8; 1 << 20];
    assert_eq!(fields::validate(&deep), Err(e(ErrorKind::DepthLimit, 100)));
    // Explicit limits, 255 at most; 0 allows no group at all.
    assert_eq!(fields::validate_with_depth_limit(&nested(255), 255), Ok(()));
    assert_eq!(fields::validate_with_depth_limit(&deep, 255), Err(e(ErrorKind::DepthLimit, 255)));
    assert_eq!(fields::validate_with_depth_limit(&nested(3), 2), Err(e(ErrorKind::DepthLimit, 2)));
    assert_eq!(fields::validate_with_depth_limit(&nested(1), 0), Err(e(ErrorKind::DepthLimit, 0)));
    // skip_field: offsets after the outer start tag.
    let start = Tag::new(1, WireType::StartGroup).unwrap();
    assert_eq!(wire::skip_field(start, &nested(100)[1..]), Ok(199));
    assert_eq!(wire::skip_field(start, &deep[1..]), Err(e(ErrorKind::DepthLimit, 99)));
    assert_eq!(wire::skip_field_with_depth_limit(start, &deep[1..], 0), Err(e(ErrorKind::DepthLimit, 0)));
}

#[test]
fn output_buffers_too_small() {
    // Packed varints: OutputTooSmall at the first element with no room, on every backend, for
    // every capacity below the count; payload lengths across the 64-byte windows.
    for len in [1usize, 15, 63, 64, 79, 80, 81, 150, 200] {
        let payload: Vec<u8> = (0..len).map(|i| if i % 7 == 3 { 0x81 } else { 0x01 }).collect();
        let payload = {
            let mut p = payload;
            if p.last() == Some(&0x81) {
                p.push(0x01);
            }
            p
        };
        let starts: Vec<usize> = (0..payload.len()).filter(|&i| i == 0 || payload[i - 1] < 0x80).collect();
        for (capacity, &start) in sweep(starts.iter().enumerate(), 5) {
            assert_eq!(
                packed_everywhere(&payload, capacity),
                Err(e(ErrorKind::OutputTooSmall, start)),
                "len {len} capacity {capacity}"
            );
        }
        assert_eq!(packed_everywhere(&payload, starts.len()), Ok(starts.len()));
    }
    // A full output comes before the next element's own error.
    assert_eq!(packed_everywhere(&[0x01, 0x80], 1), Err(e(ErrorKind::OutputTooSmall, 1)));
    // Packed fixed-width: at the first element that does not fit.
    assert_eq!(packed::decode_fixed32(&[0; 12], &mut [0u32; 2]), Err(e(ErrorKind::OutputTooSmall, 8)));
    assert_eq!(packed::decode_f64(&[0; 16], &mut [0f64; 0]), Err(e(ErrorKind::OutputTooSmall, 0)));
    // Encoders: OutputTooSmall at 0, nothing written.
    let mut out = [0xaau8; 9];
    assert_eq!(varint::encode_u64(u64::MAX, &mut out), Err(e(ErrorKind::OutputTooSmall, 0)));
    assert_eq!(packed::encode_u32(&[300, 300], &mut out[..3]), Err(e(ErrorKind::OutputTooSmall, 0)));
    assert_eq!(stream::write_delimited(&[1, 2, 3], &mut out[..3]), Err(e(ErrorKind::OutputTooSmall, 0)));
    assert_eq!(out, [0xaa; 9]);
}

#[test]
fn packed_payloads_ending_inside_an_element() {
    // A varint cut anywhere: Truncated at its first byte, wherever it sits in the windows.
    for cut in 1..=9 {
        let bad = vec![0x80u8; cut];
        for at in sweep(0..=140, 7) {
            assert_eq!(
                packed_everywhere(&embedded(at, &bad, 0), 400),
                Err(e(ErrorKind::Truncated, at)),
                "{cut} at {at}"
            );
        }
    }
    // Fixed-width: Truncated at the incomplete last element (OutputTooSmall first if full).
    for r in 1..4 {
        let payload = vec![0u8; 8 + r];
        assert_eq!(packed::decode_fixed32(&payload, &mut [0u32; 3]), Err(e(ErrorKind::Truncated, 8)));
        assert_eq!(packed::decode_sfixed32(&payload, &mut [0i32; 2]), Err(e(ErrorKind::OutputTooSmall, 8)));
    }
    for r in 1..8 {
        let payload = vec![0u8; 16 + r];
        assert_eq!(packed::decode_fixed64(&payload, &mut [0u64; 3]), Err(e(ErrorKind::Truncated, 16)));
        assert_eq!(packed::decode_f64(&payload, &mut [0f64; 2]), Err(e(ErrorKind::OutputTooSmall, 16)));
    }
}
