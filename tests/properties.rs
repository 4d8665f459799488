//! quickcheck properties of the public API against the independent oracles in `common`.

mod common;

use common::{
    check, encode_fields, naive_encode_varint, naive_fields, naive_packed, naive_varint, sweep, xorshift,
    DamagedMessage, EncodeCase, GenField, GenMessage, NaiveField, NaiveValue, VarintBytes,
};
use pbwire::fields::{fields, validate, Value};
use pbwire::wire::{self, WireType};
use pbwire::{packed, stream, varint, ErrorKind};
use quickcheck::{Arbitrary, Gen};

/// A u64 spread over every varint length (quickcheck's own favours small numbers).
#[derive(Clone, Debug)]
struct Wide(u64);

impl Arbitrary for Wide {
    fn arbitrary(g: &mut Gen) -> Self {
        Wide(common::any_length_u64(g))
    }
}

#[test]
fn varint_decode_equals_the_byte_at_a_time_oracle() {
    check(
        (|bytes: VarintBytes| {
            (0..bytes.0.len().min(12))
                .all(|start| varint::decode_u64(&bytes.0[start..]) == naive_varint(&bytes.0[start..]))
        }) as fn(VarintBytes) -> bool,
    );
    check((|bytes: Vec<u8>| varint::decode_u64(&bytes) == naive_varint(&bytes)) as fn(Vec<u8>) -> bool);
}

#[test]
fn unchecked_decode_equals_checked_given_ten_readable_bytes() {
    check(
        (|bytes: VarintBytes| {
            let mut padded = bytes.0.clone();
            padded.resize(bytes.0.len() + varint::MAX_LEN, 0);
            (0..bytes.0.len()).all(|i| {
                let end = (i + varint::MAX_LEN).min(bytes.0.len());
                let checked = varint::decode_u64(&bytes.0[i..end]);
                // SAFETY: `padded` has at least 10 readable bytes from `i`.
                let unchecked = unsafe { varint::decode_u64_unchecked(padded.as_ptr().add(i)) };
                // Past the real end the padding (zeros) may finish a varint the checked call calls
                // truncated; wherever the checked call succeeds, the two agree.
                checked.is_err() || checked == unchecked
            })
        }) as fn(VarintBytes) -> bool,
    );
}

#[test]
fn every_varint_type_round_trips() {
    check(
        (|v: Wide| {
            let v = v.0;
            let mut buf = [0u8; 10];
            let n = varint::encode_u64(v, &mut buf).unwrap();
            let ok = n == varint::encoded_len(v) && varint::decode_u64(&buf[..n]) == Ok((v, n));
            let i32v = v as i32;
            let n32 = varint::encode_i32(i32v, &mut buf).unwrap();
            let ok = ok && varint::decode_i32(&buf[..n32]) == Ok((i32v, n32)) && (i32v >= 0 || n32 == 10);
            let n = varint::encode_sint64(v as i64, &mut buf).unwrap();
            let ok = ok && varint::decode_sint64(&buf[..n]) == Ok((v as i64, n));
            let n = varint::encode_sint32(i32v, &mut buf).unwrap();
            let ok = ok && varint::decode_sint32(&buf[..n]) == Ok((i32v, n));
            let n = varint::encode_u32(v as u32, &mut buf).unwrap();
            let ok = ok && varint::decode_u32(&buf[..n]) == Ok((v as u32, n));
            let n = varint::encode_i64(v as i64, &mut buf).unwrap();
            let ok = ok && varint::decode_i64(&buf[..n]) == Ok((v as i64, n));
            let n = varint::encode_bool(v & 1 == 1, &mut buf).unwrap();
            ok && varint::decode_bool(&buf[..n]) == Ok((v & 1 == 1, 1))
        }) as fn(Wide) -> bool,
    );
}

/// One bulk encoder against the byte-at-a-time oracle: the length, the bytes, no byte written
/// past them, and nothing written at all when the output is one byte short.
fn encoder_matches_naive<T: Copy>(
    values: &[T],
    spare: usize,
    wire: fn(T) -> u64,
    len: fn(&[T]) -> usize,
    enc: fn(&[T], &mut [u8]) -> pbwire::Result<usize>,
) -> bool {
    let mut expected = Vec::new();
    values.iter().for_each(|&v| naive_encode_varint(wire(v), &mut expected));
    let mut out = vec![0xa5u8; expected.len() + spare];
    let ok = len(values) == expected.len()
        && enc(values, &mut out) == Ok(expected.len())
        && out[..expected.len()] == expected[..]
        && out[expected.len()..].iter().all(|&b| b == 0xa5);
    if expected.is_empty() {
        return ok;
    }
    let mut short = vec![0xa5u8; expected.len() - 1];
    ok && enc(values, &mut short) == Err(pbwire::Error::new(ErrorKind::OutputTooSmall, 0))
        && short.iter().all(|&b| b == 0xa5)
}

#[test]
fn packed_encoders_equal_a_byte_at_a_time_encoder() {
    check(
        (|case: EncodeCase| {
            let (v, s) = (&case.values[..], case.spare);
            let u32s: Vec<u32> = v.iter().map(|&x| x as u32).collect();
            let i32s: Vec<i32> = v.iter().map(|&x| x as i32).collect();
            let i64s: Vec<i64> = v.iter().map(|&x| x as i64).collect();
            let bools: Vec<bool> = v.iter().map(|&x| x & 1 == 1).collect();
            encoder_matches_naive(v, s, |x| x, packed::encoded_len_u64, packed::encode_u64)
                && encoder_matches_naive(&u32s, s, |x| x as u64, packed::encoded_len_u32, packed::encode_u32)
                && encoder_matches_naive(
                    &i32s,
                    s,
                    |x| x as i64 as u64,
                    packed::encoded_len_i32,
                    packed::encode_i32,
                )
                && encoder_matches_naive(&i64s, s, |x| x as u64, packed::encoded_len_i64, packed::encode_i64)
                && encoder_matches_naive(
                    &i32s,
                    s,
                    |x| varint::zigzag_encode_32(x) as u64,
                    packed::encoded_len_sint32,
                    packed::encode_sint32,
                )
                && encoder_matches_naive(
                    &i64s,
                    s,
                    varint::zigzag_encode_64,
                    packed::encoded_len_sint64,
                    packed::encode_sint64,
                )
                && encoder_matches_naive(
                    &bools,
                    s,
                    |x| x as u64,
                    packed::encoded_len_bool,
                    packed::encode_bool,
                )
        }) as fn(EncodeCase) -> bool,
    );
}

#[test]
fn packed_varints_round_trip_for_every_type() {
    check(
        (|values: Vec<Wide>| {
            let v: Vec<u64> = values.iter().map(|w| w.0).collect();
            fn round<T: Copy + Default + PartialEq>(
                values: &[T],
                len: fn(&[T]) -> usize,
                enc: fn(&[T], &mut [u8]) -> pbwire::Result<usize>,
                dec: fn(&[u8], &mut [T]) -> pbwire::Result<usize>,
            ) -> bool {
                let mut buf = vec![0u8; len(values)];
                let mut back = vec![T::default(); values.len()];
                enc(values, &mut buf) == Ok(buf.len())
                    && packed::count_varints(&buf) == values.len()
                    && dec(&buf, &mut back) == Ok(values.len())
                    && back == values
                    && (buf.is_empty() || enc(values, &mut vec![0u8; buf.len() - 1]).is_err())
            }
            let u32s: Vec<u32> = v.iter().map(|&x| x as u32).collect();
            let i32s: Vec<i32> = v.iter().map(|&x| x as i32).collect();
            let i64s: Vec<i64> = v.iter().map(|&x| x as i64).collect();
            let bools: Vec<bool> = v.iter().map(|&x| x & 1 == 1).collect();
            round(&v, packed::encoded_len_u64, packed::encode_u64, packed::decode_u64)
                && round(&u32s, packed::encoded_len_u32, packed::encode_u32, packed::decode_u32)
                && round(&i32s, packed::encoded_len_i32, packed::encode_i32, packed::decode_i32)
                && round(&i64s, packed::encoded_len_i64, packed::encode_i64, packed::decode_i64)
                && round(&i32s, packed::encoded_len_sint32, packed::encode_sint32, packed::decode_sint32)
                && round(&i64s, packed::encoded_len_sint64, packed::encode_sint64, packed::decode_sint64)
                && round(&bools, packed::encoded_len_bool, packed::encode_bool, packed::decode_bool)
        }) as fn(Vec<Wide>) -> bool,
    );
}

#[test]
fn packed_fixed_round_trips_and_views_agree() {
    check(
        (|values: Vec<u64>| {
            let mut buf = vec![0u8; values.len() * 8];
            let mut back = vec![0u64; values.len()];
            let floats: Vec<f32> = values.iter().map(|&v| f32::from_bits(v as u32)).collect();
            let mut fbuf = vec![0u8; floats.len() * 4];
            let mut fback = vec![0f32; floats.len()];
            let ok = packed::encode_fixed64(&values, &mut buf) == Ok(buf.len())
                && packed::decode_fixed64(&buf, &mut back) == Ok(values.len())
                && back == values
                && buf.chunks(8).zip(&values).all(|(c, v)| c == v.to_le_bytes())
                && packed::encode_f32(&floats, &mut fbuf) == Ok(fbuf.len())
                && packed::decode_f32(&fbuf, &mut fback) == Ok(floats.len())
                && fback.iter().zip(&floats).all(|(a, b)| a.to_bits() == b.to_bits());
            // The zero-copy view, where the host allows one, shows the same values.
            let view_ok = match packed::view_fixed64(&buf) {
                Some(view) => cfg!(target_endian = "little") && view == &values[..],
                None => cfg!(target_endian = "big") || (buf.as_ptr() as usize) & 7 != 0,
            };
            ok && view_ok
        }) as fn(Vec<u64>) -> bool,
    );
}

#[test]
fn packed_decode_equals_element_by_element_decode() {
    check(
        (|bytes: VarintBytes, capacity: u8| {
            let payload = &bytes.0;
            let capacity = capacity as usize;
            let mut out64 = vec![0u64; capacity];
            let mut out32 = vec![0u32; capacity];
            let mut outs32 = vec![0i32; capacity];
            let mut outb = vec![false; capacity];
            let same = |got: pbwire::Result<usize>, out: &[u64], want: Result<Vec<u64>, pbwire::Error>| match (
                got, want,
            ) {
                (Ok(n), Ok(w)) => out[..n] == w[..],
                (Err(a), Err(b)) => a == b,
                _ => false,
            };
            let r64 = packed::decode_u64(payload, &mut out64);
            let r32 = packed::decode_u32(payload, &mut out32);
            let rs32 = packed::decode_sint32(payload, &mut outs32);
            let rb = packed::decode_bool(payload, &mut outb);
            let widen32: Vec<u64> = out32.iter().map(|&v| v as u64).collect();
            let widens: Vec<u64> = outs32.iter().map(|&v| v as u32 as u64).collect();
            let widenb: Vec<u64> = outb.iter().map(|&v| v as u64).collect();
            same(r64, &out64, naive_packed(payload, capacity, |v| v))
                && same(r32, &widen32, naive_packed(payload, capacity, |v| v as u32 as u64))
                && same(
                    rs32,
                    &widens,
                    naive_packed(payload, capacity, |v| varint::zigzag_decode_32(v as u32) as u32 as u64),
                )
                && same(rb, &widenb, naive_packed(payload, capacity, |v| (v != 0) as u64))
        }) as fn(VarintBytes, u8) -> bool,
    );
}

/// Short payloads (below a SIMD window, the reference's in every backend) of one-byte values
/// that end in every way a payload can, at every output capacity around their count: every
/// decoder's count, values and error equal to the oracle's.
#[test]
fn short_payloads_after_one_byte_values_equal_the_oracle() {
    let tails: [&[u8]; 7] =
        [&[], &[0x05], &[0x96, 0x01], &[0x80], &[0xff; 11], &[0x80, 0x80, 0x01, 0x7f], &[0xff; 9]];
    fn agree<T: Copy + Default + PartialEq + core::fmt::Debug>(
        payload: &[u8],
        capacity: usize,
        decode: fn(&[u8], &mut [T]) -> pbwire::Result<usize>,
        map: impl Fn(u64) -> T,
    ) {
        let mut out = vec![T::default(); capacity];
        let got = decode(payload, &mut out).map(|n| out[..n].to_vec());
        assert_eq!(got, naive_packed(payload, capacity, map), "{payload:02x?}, capacity {capacity}");
    }
    for prefix in 0..=20usize {
        for tail in tails {
            let mut payload: Vec<u8> = (0..prefix).map(|i| (i * 37 % 128) as u8).collect();
            payload.extend_from_slice(tail);
            for capacity in prefix.saturating_sub(2)..=prefix + 3 {
                agree(&payload, capacity, packed::decode_u64, |v| v);
                agree(&payload, capacity, packed::decode_u32, |v| v as u32);
                agree(&payload, capacity, packed::decode_i64, |v| v as i64);
                agree(&payload, capacity, packed::decode_i32, |v| v as i32);
                agree(&payload, capacity, packed::decode_sint64, varint::zigzag_decode_64);
                agree(&payload, capacity, packed::decode_sint32, |v| varint::zigzag_decode_32(v as u32));
                agree(&payload, capacity, packed::decode_bool, |v| v != 0);
            }
        }
    }
}

#[test]
fn fields_reassemble_the_message_and_skip_exactly() {
    check(
        (|msg: GenMessage| {
            let mut bytes = Vec::new();
            encode_fields(&msg.0, &mut bytes);
            let decoded: Vec<_> = match fields(&bytes).collect::<Result<Vec<_>, _>>() {
                Ok(d) => d,
                Err(_) => return false,
            };
            // Each field starts where the last ended, and together they cover the message.
            let mut pos = 0;
            for f in &decoded {
                if f.offset != pos {
                    return false;
                }
                let (tag, n) = wire::decode_tag(&bytes[f.offset..]).unwrap();
                if wire::skip_field(tag, &bytes[f.offset + n..]) != Ok(f.end - f.offset - n) {
                    return false;
                }
                pos = f.end;
            }
            pos == bytes.len()
                && validate(&bytes).is_ok()
                && decoded.len() == msg.0.len()
                && decoded.iter().zip(&msg.0).all(|(f, g)| same_field(f.number, &f.value, g))
        }) as fn(GenMessage) -> bool,
    );
}

fn same_field(number: u32, value: &Value, generated: &GenField) -> bool {
    match (value, generated) {
        (Value::Varint(a), GenField::Varint(n, b)) => *n == number && a == b,
        (Value::I64(a), GenField::I64(n, b)) => *n == number && a == b,
        (Value::I32(a), GenField::I32(n, b)) => *n == number && a == b,
        (Value::Len(a), GenField::Len(n, b)) => *n == number && a == b,
        (Value::Group(content), GenField::Group(n, inner)) => {
            let parsed: Result<Vec<_>, _> = fields(content).collect();
            *n == number
                && parsed.is_ok_and(|p| {
                    p.len() == inner.len()
                        && p.iter().zip(inner).all(|(f, g)| same_field(f.number, &f.value, g))
                })
        }
        _ => false,
    }
}

#[test]
fn truncated_messages_fail_cleanly_with_in_bounds_offsets() {
    check(
        (|msg: GenMessage, cut: usize| {
            let mut bytes = Vec::new();
            encode_fields(&msg.0, &mut bytes);
            if bytes.is_empty() {
                return true;
            }
            let cut = cut % bytes.len();
            let prefix = &bytes[..cut];
            let full: Vec<_> = fields(&bytes).map(Result::unwrap).collect();
            let mut seen = 0;
            for item in fields(prefix) {
                match item {
                    // Fields before the cut are exactly the full message's.
                    Ok(f) => {
                        if f.end > cut || f != full[seen] {
                            return false;
                        }
                        seen += 1;
                    }
                    // A cut inside a field can only ever be a truncation.
                    Err(e) => return e.kind() == ErrorKind::Truncated && e.offset() <= cut,
                }
            }
            // No error: the cut fell between two top-level fields.
            full.iter().any(|f| f.end == cut) || cut == 0
        }) as fn(GenMessage, usize) -> bool,
    );
}

#[test]
fn arbitrary_bytes_never_panic_and_errors_stay_in_bounds() {
    check(
        (|bytes: Vec<u8>, capacity: u8| {
            let len = bytes.len();
            let in_bounds = |r: Result<(), pbwire::Error>| r.map_or_else(|e| e.offset() <= len, |_| true);
            let mut ok = true;
            ok &= in_bounds(varint::decode_u64(&bytes).map(drop));
            ok &= in_bounds(wire::decode_tag(&bytes).map(drop));
            ok &= in_bounds(wire::decode_len(&bytes).map(drop));
            ok &= in_bounds(validate(&bytes));
            for f in fields(&bytes) {
                ok &= in_bounds(f.map(|f| assert!(f.end <= len)));
            }
            for m in stream::delimited(&bytes) {
                ok &= in_bounds(m.map(drop));
            }
            for wt in [
                WireType::Varint,
                WireType::I64,
                WireType::Len,
                WireType::StartGroup,
                WireType::EndGroup,
                WireType::I32,
            ] {
                let tag = wire::Tag::new(1, wt).unwrap();
                ok &= in_bounds(wire::skip_field(tag, &bytes).map(|n| assert!(n <= len)));
            }
            let cap = capacity as usize;
            ok &= in_bounds(packed::decode_u64(&bytes, &mut vec![0; cap]).map(drop));
            ok &= in_bounds(packed::decode_sint64(&bytes, &mut vec![0; cap]).map(drop));
            ok &= in_bounds(packed::decode_fixed32(&bytes, &mut vec![0; cap]).map(drop));
            ok &= in_bounds(packed::decode_f64(&bytes, &mut vec![0.0; cap]).map(drop));
            ok
        }) as fn(Vec<u8>, u8) -> bool,
    );
}

#[test]
fn delimited_streams_round_trip() {
    check(
        (|messages: Vec<Vec<u8>>| {
            let total: usize = messages.iter().map(|m| m.len() + 10).sum();
            let mut buf = vec![0u8; total];
            let mut pos = 0;
            for m in &messages {
                pos += stream::write_delimited(m, &mut buf[pos..]).unwrap();
            }
            let back: Result<Vec<&[u8]>, _> = stream::delimited(&buf[..pos]).collect();
            back.is_ok_and(|b| b.len() == messages.len() && b.iter().zip(&messages).all(|(a, m)| a == m))
        }) as fn(Vec<Vec<u8>>) -> bool,
    );
}

/// `stream::delimited` against a byte-at-a-time splitter: every message, error, position and
/// remainder, on streams that mix runs of small messages and runs of 128..=400-byte ones (the
/// one-comparison paths for one- and two-byte prefixes) with single messages of either size,
/// overlong prefixes, messages opening with a byte over 0x7f, and a cut and a damaged byte
/// anywhere.
#[test]
fn delimited_equals_the_stream_oracle() {
    type Item = (Result<(usize, usize), pbwire::Error>, usize);
    fn oracle(buf: &[u8]) -> (Vec<Item>, usize) {
        let mut out: Vec<Item> = Vec::new();
        let mut pos = 0;
        while pos < buf.len() {
            let item = match naive_varint(&buf[pos..]) {
                Err(e) => Err(e.shifted(pos)),
                Ok((len, _)) if len > i32::MAX as u64 => {
                    Err(pbwire::Error::new(ErrorKind::LengthOutOfBounds, pos))
                }
                Ok((len, n)) if pos + n + len as usize > buf.len() => {
                    Err(pbwire::Error::new(ErrorKind::Truncated, pos))
                }
                Ok((len, n)) => Ok((pos + n, pos + n + len as usize)),
            };
            let Ok((_, end)) = item else {
                out.push((item, pos));
                break;
            };
            out.push((item, pos));
            pos = end;
        }
        (out, pos)
    }
    check(
        (|seed: u64, cut: u16, damage: (u16, u8)| {
            let mut next = xorshift(seed | 1);
            let mut buf = Vec::new();
            for _ in 0..next() % 60 {
                // A run of small messages, a run of 128..=400-byte ones, or one of either.
                let kind = next() % 3;
                for _ in 0..if kind < 2 { 1 + next() % 20 } else { 1 } {
                    let len = match kind {
                        0 => next() % 128,
                        1 => 128 + next() % 273,
                        _ => next() % 401,
                    } as usize;
                    let mut prefix = [0u8; 10];
                    let mut n = varint::encode_u64(len as u64, &mut prefix).unwrap();
                    if next() & 15 == 0 && n < 10 {
                        // The same length in one byte more.
                        prefix[n - 1] |= 0x80;
                        n += 1;
                    }
                    buf.extend_from_slice(&prefix[..n]);
                    buf.extend((0..len).map(|_| next() as u8));
                }
            }
            if !buf.is_empty() {
                let at = damage.0 as usize % buf.len();
                if damage.1 & 1 == 1 {
                    buf[at] = damage.1;
                }
                buf.truncate(buf.len() - cut as usize % 4 * (cut as usize % buf.len()) / 4);
            }
            let (want, end) = oracle(&buf);
            let mut it = stream::delimited(&buf);
            for (item, pos) in want {
                if it.position() != pos || it.remaining() != &buf[pos..] {
                    return false;
                }
                let got = it.next().map(|r| r.map(|m| m.as_ptr() as usize - buf.as_ptr() as usize));
                if got != Some(item.map(|(start, _)| start)) {
                    return false;
                }
            }
            it.next().is_none() && it.position() == end
        }) as fn(u64, u16, (u16, u8)) -> bool,
    );
}

/// What pbwire's `Field` says, in the oracle's terms.
fn as_naive(msg: &[u8], f: &pbwire::fields::Field) -> NaiveField {
    let value = match f.value {
        Value::Varint(v) => NaiveValue::Varint(v),
        Value::I64(v) => NaiveValue::I64(v),
        Value::I32(v) => NaiveValue::I32(v),
        Value::Len(p) => {
            let start = p.as_ptr() as usize - msg.as_ptr() as usize;
            NaiveValue::Len(start, start + p.len())
        }
        Value::Group(_) => unreachable!("the oracle stops at groups"),
    };
    NaiveField { number: f.number, offset: f.offset, value_offset: f.value_offset, end: f.end, value }
}

/// Messages with runs of length-delimited fields (after eight in a row, `fields()` and
/// `Reader::skip_next` read them by their branchy path): one- and two-byte tags (some written longer than needed, some of field
/// 0), length prefixes of one to three bytes, other fields between the runs, then the message
/// cut at many places and a byte damaged: every field and error equal to the oracle's.
#[test]
fn runs_of_length_delimited_fields_equal_the_field_oracle() {
    let mut next = xorshift(0x853c_49e6_748f_ea9bu64);
    let agrees = |msg: &[u8]| {
        // The oracle stops at a group (`None`): compare up to there.
        let want = naive_fields(msg);
        let upto = want.iter().position(Option::is_none).unwrap_or(want.len());
        let got: Vec<_> = fields(msg).take(upto).map(|r| Some(r.map(|f| as_naive(msg, &f)))).collect();
        // `Reader::skip_next` (which counts such runs too): the same tags and ends, and an
        // error of the same kind where the oracle has one.
        let mut r = pbwire::reader::Reader::new(msg);
        let skips = want[..upto].iter().all(|item| match (item, r.skip_next()) {
            (Some(Ok(f)), Ok(tag)) => tag.field() == f.number && r.position() == f.end,
            (Some(Err(e)), Err(got)) => got.kind() == e.kind(),
            _ => false,
        });
        got[..] == want[..upto] && skips
    };
    for round in sweep(0..300, 30) {
        let mut msg = Vec::new();
        for _ in 0..1 + next() % 4 {
            for _ in 0..next() % 40 {
                let r = next();
                let tag: &[u8] = match r % 16 {
                    0 => &[0x92, 0x00],     // field 2, in two bytes
                    1 => &[0x82, 0x00],     // field 0
                    2..=5 => &[0xa2, 0x06], // field 100
                    _ => &[0x0a],           // field 1
                };
                msg.extend_from_slice(tag);
                let len = match (r >> 8) % 16 {
                    0..=7 => (r >> 16) % 21,
                    8..=14 => 100 + (r >> 16) % 200,
                    _ => 16_380 + (r >> 16) % 10,
                };
                naive_encode_varint(len, &mut msg);
                msg.extend((0..len).map(|i| i as u8));
            }
            // Another wire type between runs.
            msg.extend_from_slice(&[0x18, 0x96, 0x01]);
        }
        assert!(agrees(&msg), "round {round}");
        let step = 1 + msg.len() / 40;
        for cut in (0..msg.len()).step_by(step) {
            assert!(agrees(&msg[..cut]), "round {round} cut {cut}");
            let mut damaged = msg.clone();
            damaged[cut] = next() as u8;
            assert!(agrees(&damaged), "round {round} byte {cut}");
        }
    }
}

#[test]
fn scanning_fast_paths_equal_the_byte_at_a_time_field_oracle() {
    check(
        (|msg: DamagedMessage| {
            let msg = &msg.0[..];
            let want = naive_fields(msg);
            let mut it = fields(msg);
            let mut pos = 0;
            let mut skipper = pbwire::reader::Reader::new(msg);
            for item in &want {
                let Some(item) = item else {
                    // A group: compare no further.
                    return true;
                };
                let got = it.next().map(|r| r.map(|f| as_naive(msg, &f)));
                if got != Some(*item) {
                    return false;
                }
                // decode_tag + skip_field, and the Reader's skip_next, see the same extent.
                let by_skip =
                    wire::decode_tag(&msg[pos..]).map_err(|e| e.shifted(pos)).and_then(|(tag, n)| {
                        let at = pos + n;
                        wire::skip_field(tag, &msg[at..]).map(|m| at + m).map_err(|e| e.shifted(at))
                    });
                let reader_tag = skipper.skip_next();
                let by_reader = reader_tag.map(|_| skipper.position());
                // And skip_next returns the tag decode_tag reads.
                if let Ok(tag) = reader_tag {
                    if wire::decode_tag(&msg[pos..]).map(|(t, _)| t) != Ok(tag) {
                        return false;
                    }
                }
                // (An end-group tag is an error at the tag for the iterator, after it for
                // `skip_field`, which starts after the tag: compare kinds for errors.)
                let end = item.map(|f| f.end);
                let kind = |r: &Result<usize, pbwire::Error>| r.as_ref().map_err(|e| e.kind()).copied();
                if kind(&by_skip) != kind(&end) || kind(&by_reader) != kind(&end) {
                    return false;
                }
                if end.is_err()
                    && item.map_err(|e| e.kind()) != Err(ErrorKind::GroupMismatch)
                    && by_skip != end
                {
                    return false;
                }
                if let Ok(e) = end {
                    pos = e;
                }
            }
            let all_ok = want.iter().all(|i| matches!(i, Some(Ok(_))));
            let first_err = want.iter().find_map(|i| i.and_then(|r| r.err()));
            it.next().is_none()
                && (!all_ok || validate(msg).is_ok())
                && first_err.is_none_or(|e| validate(msg) == Err(e))
        }) as fn(DamagedMessage) -> bool,
    );
}

/// One `Reader` call, as the reference single-value functions define it: the result, and the
/// reader's position after it.
fn reader_model(op: u8, msg: &[u8], pos: usize, tag_pos: &mut usize) -> (Result<u64, pbwire::Error>, usize) {
    let rest = &msg[pos..];
    let at = |e: pbwire::Error| e.shifted(pos);
    let step = |r: pbwire::Result<(u64, usize)>| match r {
        Ok((v, n)) => (Ok(v), pos + n),
        Err(e) => (Err(at(e)), pos),
    };
    match op % 9 {
        0 => step(varint::decode_u64(rest)),
        1 => {
            *tag_pos = pos;
            match varint::decode_u64(rest) {
                Ok((v, _)) if v > u32::MAX as u64 => {
                    (Err(pbwire::Error::new(ErrorKind::InvalidFieldNumber, pos)), pos)
                }
                r => step(r),
            }
        }
        2 => step(wire::decode_len(rest).map(|(p, n)| (p.len() as u64, n))),
        3 => match wire::decode_len(rest) {
            Ok((p, n)) => match core::str::from_utf8(p) {
                Ok(s) => (Ok(s.len() as u64), pos + n),
                Err(_) => (Err(pbwire::Error::new(ErrorKind::InvalidUtf8, pos)), pos),
            },
            Err(e) => (Err(at(e)), pos),
        },
        4 => step(wire::decode_fixed32(rest).map(|v| (v as u64, 4))),
        5 => step(wire::decode_fixed64(rest).map(|v| (v, 8))),
        6 => step(wire::decode_tag(rest).map(|(t, n)| (t.raw() as u64, n))),
        7 => match wire::decode_tag(rest) {
            Ok((tag, n)) => match wire::skip_field(tag, &rest[n..]) {
                Ok(m) => (Ok(tag.raw() as u64), pos + n + m),
                Err(e) => (Err(e.shifted(pos + n)), pos),
            },
            Err(e) => (Err(at(e)), pos),
        },
        _ => {
            // skip_raw of the raw tag at `tag_pos` (what read_raw_tag last returned).
            let raw = varint::decode_u64(&msg[*tag_pos..]).map_or(0, |(v, _)| v as u32);
            match wire::Tag::from_raw(raw) {
                Ok(tag) => step(wire::skip_field(tag, rest).map(|n| (0, n))),
                Err(kind) => (Err(pbwire::Error::new(kind, *tag_pos)), pos),
            }
        }
    }
}

#[test]
fn reader_calls_equal_the_single_value_functions() {
    check(
        (|msg: DamagedMessage, ops: Vec<u8>| {
            let msg = &msg.0[..];
            let mut r = pbwire::reader::Reader::new(msg);
            let (mut pos, mut tag_pos, mut last_raw) = (0, 0, None::<u32>);
            for &op in &ops {
                // skip_raw only right after a successful read_raw_tag, as its contract says.
                let op = if op % 9 == 8 && last_raw.is_none() { 0 } else { op };
                let (want, want_pos) = reader_model(op, msg, pos, &mut tag_pos);
                // Calls 0..=8 of `reader_call` are the model's (8, skip_raw, only after a tag).
                let got = reader_call(&mut r, op % 9, last_raw);
                last_raw = if op % 9 == 1 { got.ok().map(|t| t as u32) } else { None };
                if got != want || r.position() != want_pos || r.remaining() != &msg[want_pos..] {
                    return false;
                }
                pos = want_pos;
            }
            true
        }) as fn(DamagedMessage, Vec<u8>) -> bool,
    );
}

/// The 32-bit reads (`read_u32`, `read_i32`, `read_sint32`, `read_bool`), whose word path is
/// their own (branching on a terminator in the first eight bytes first), give `read_u64`'s
/// result converted and leave the reader where it does: from every offset of varint-shaped
/// bytes (overlong runs included), at the top level, where ten bytes or fewer remain, and in a
/// nested message whose reader may look at the bytes after it.
#[test]
fn narrow_reads_equal_read_u64_converted() {
    fn narrow(r: &mut pbwire::reader::Reader<'_>, op: usize) -> Result<u64, pbwire::Error> {
        match op {
            0 => r.read_u32().map(u64::from),
            1 => r.read_i32().map(|v| v as u32 as u64),
            2 => r.read_sint32().map(|v| v as u32 as u64),
            _ => r.read_bool().map(u64::from),
        }
    }
    fn convert(op: usize, v: u64) -> u64 {
        match op {
            0 | 1 => v as u32 as u64,
            2 => varint::zigzag_decode_32(v as u32) as u32 as u64,
            _ => (v != 0) as u64,
        }
    }
    check(
        (|bytes: VarintBytes, after: Vec<u8>| {
            let bytes = &bytes.0[..];
            for skip in 0..=bytes.len() {
                let tail = &bytes[skip..];
                let mut msg = vec![0x0a];
                naive_encode_varint(tail.len() as u64, &mut msg);
                msg.extend_from_slice(tail);
                msg.extend_from_slice(&after);
                let nested = || {
                    let mut outer = pbwire::reader::Reader::new(&msg);
                    outer.read_raw_tag().unwrap();
                    outer.read_message().unwrap()
                };
                for op in 0..4 {
                    let (mut r, mut w) =
                        (pbwire::reader::Reader::new(tail), pbwire::reader::Reader::new(tail));
                    let want = w.read_u64().map(|v| convert(op, v));
                    if narrow(&mut r, op) != want || r.position() != w.position() {
                        return false;
                    }
                    let (mut r, mut w) = (nested(), nested());
                    let want = w.read_u64().map(|v| convert(op, v));
                    if narrow(&mut r, op) != want || r.position() != w.position() {
                        return false;
                    }
                }
            }
            true
        }) as fn(VarintBytes, Vec<u8>) -> bool,
    );
}

/// `read_packed` is `read_bytes` then the decoder on the payload: the same values, the
/// decoder's errors at the payload's start plus their offset, and a reader that stays where it
/// was on any error. Payloads of any varints (bad ones included) behind 0..=3 fixed32 values,
/// their length sometimes overstated, the buffer sometimes cut.
#[test]
fn read_packed_is_read_bytes_then_the_decoder() {
    check(
        (|payload: VarintBytes, pads: u8, capacity: u8, cut: u8| {
            let payload = &payload.0[..];
            let pads = pads as usize % 4;
            let capacity = capacity as usize % 40;
            let mut buf = vec![0xab; 4 * pads];
            let mut len = [0u8; 10];
            let stated = payload.len() + (cut & 0x40 != 0) as usize;
            let n = varint::encode_u64(stated as u64, &mut len).unwrap();
            buf.extend_from_slice(&len[..n]);
            buf.extend_from_slice(payload);
            buf.truncate(buf.len().saturating_sub(cut as usize % 5).max(4 * pads));
            let mut r = pbwire::reader::Reader::new(&buf);
            for _ in 0..pads {
                r.read_fixed32().unwrap();
            }
            let pos = r.position();
            let mut out = vec![0u32; capacity];
            let got = r.read_packed(|p| packed::decode_u32(p, &mut out)).map(|k| out[..k].to_vec());
            let (want, want_pos) = match wire::decode_len(&buf[pos..]) {
                Err(e) => (Err(e.shifted(pos)), pos),
                Ok((p, n)) => match naive_packed(p, capacity, |v| v as u32) {
                    Ok(values) => (Ok(values), pos + n),
                    Err(e) => (Err(e.shifted(pos + n - p.len())), pos),
                },
            };
            got == want && r.position() == want_pos
        }) as fn(VarintBytes, u8, u8, u8) -> bool,
    );
}

/// `read_tag_if(raw)` matches exactly when `read_raw_tag` would return `raw` from its shortest
/// encoding and `raw` is a valid tag; a match moves as `read_raw_tag` does (so `skip_raw`
/// after it gives the same result), a miss moves nothing.
#[test]
fn read_tag_if_is_read_raw_tag_of_that_tag() {
    check(
        (|msg: DamagedMessage, skip_from: u16, other: u32, pick: u8| {
            // Any suffix of the message: tags at every kind of place.
            let msg = &msg.0[(skip_from as usize).min(msg.0.len())..];
            // Mostly the tag that is there (or its field's neighbours), sometimes anything.
            let there = varint::decode_u64(msg).map_or(other, |(v, _)| v as u32);
            let raw = match pick % 4 {
                0 => there,
                1 => there ^ 8,
                2 => there & !7 | (other & 7),
                _ => other,
            };
            let mut a = pbwire::reader::Reader::new(msg);
            let mut b = pbwire::reader::Reader::new(msg);
            let hit = a.read_tag_if(raw);
            let want = wire::Tag::from_raw(raw).is_ok()
                && b.read_raw_tag() == Ok(raw)
                && b.position() == varint::encoded_len(raw as u64);
            if hit != want {
                return false;
            }
            if !hit {
                return a.position() == 0 && a.remaining() == msg;
            }
            let (skipped_a, skipped_b) = (a.skip_raw(raw), b.skip_raw(raw));
            skipped_a == skipped_b && a.position() == b.position()
        }) as fn(DamagedMessage, u16, u32, u8) -> bool,
    );
}

/// One `Reader` call, chosen by `op`, as a comparable value: the result (a value, a length, a
/// tag, a flag) or the error. `last_raw` is the raw tag the previous call read, if it was
/// `read_raw_tag` (`skip_raw` needs it).
fn reader_call(
    r: &mut pbwire::reader::Reader<'_>,
    op: u8,
    last_raw: Option<u32>,
) -> Result<u64, pbwire::Error> {
    match op % 12 {
        0 => r.read_u64(),
        1 => r.read_raw_tag().map(u64::from),
        2 => r.read_bytes().map(|p| p.len() as u64),
        3 => r.read_str().map(|s| s.len() as u64),
        4 => r.read_fixed32().map(u64::from),
        5 => r.read_fixed64(),
        6 => r.read_tag().map(|t| u64::from(t.raw())),
        7 => r.skip_next().map(|t| u64::from(t.raw())),
        8 => match last_raw {
            Some(raw) => r.skip_raw(raw).map(|()| 0),
            None => r.read_i32().map(|v| v as u32 as u64),
        },
        9 => Ok(r.read_tag_if(0x08) as u64 | (r.read_tag_if(16 << 3 | 2) as u64) << 1),
        10 => r.read_message().map(|m| m.remaining().len() as u64),
        _ => r.read_sint64().map(|v| v as u64),
    }
}

/// `Fields::within` over a message in a larger buffer (random bytes after it) gives the same
/// fields and errors as `fields` over the message alone.
#[test]
fn fields_within_a_buffer_equal_fields_alone() {
    check(
        (|msg: DamagedMessage, before: u8, after: Vec<u8>| {
            let msg = &msg.0[..];
            let mut buf = vec![0xff; before as usize % 4];
            buf.extend_from_slice(msg);
            buf.extend_from_slice(&after);
            let start = before as usize % 4;
            pbwire::fields::Fields::within(&buf[start..start + msg.len()], &buf).eq(fields(msg))
        }) as fn(DamagedMessage, u8, Vec<u8>) -> bool,
    );
}

/// A reader from `read_message` or `Reader::within` (which may read past the message's end)
/// gives what a reader over the same bytes alone gives, call for call: values, positions,
/// errors. The bytes after the message are random, so a varint cut by the message's end is
/// often completed by them.
#[test]
fn nested_readers_equal_readers_over_the_same_bytes() {
    check(
        (|inner: DamagedMessage, after: Vec<u8>, ops: Vec<u8>| {
            let inner = &inner.0[..];
            let mut msg = vec![0x0a];
            naive_encode_varint(inner.len() as u64, &mut msg);
            msg.extend_from_slice(inner);
            msg.extend_from_slice(&after);
            let mut outer = pbwire::reader::Reader::new(&msg);
            assert_eq!(outer.read_raw_tag(), Ok(0x0a));
            let mut nested = outer.read_message().unwrap();
            // `Reader::within`, over the same message in the same buffer, likewise.
            let start = msg.len() - after.len() - inner.len();
            let mut within = pbwire::reader::Reader::within(&msg[start..start + inner.len()], &msg);
            let mut plain = pbwire::reader::Reader::new(inner);
            let mut last_raw = None;
            for &op in &ops {
                let got = reader_call(&mut nested, op, last_raw);
                if got != reader_call(&mut plain, op, last_raw) || nested.remaining() != plain.remaining() {
                    return false;
                }
                if got != reader_call(&mut within, op, last_raw) || within.remaining() != plain.remaining() {
                    return false;
                }
                last_raw = if op % 12 == 1 { got.ok().map(|t| t as u32) } else { None };
            }
            // The outer reader is past the message, whatever the nested one did.
            outer.remaining() == &after[..]
        }) as fn(DamagedMessage, Vec<u8>, Vec<u8>) -> bool,
    );
}
