//! Encode-then-decode round trips of fuzzer values for every varint and packed type (every
//! backend's encoders write the reference's bytes, and every backend decodes them), output buffers of every size (too small:
//! OutputTooSmall at 0 and nothing written), and decode-then-encode of valid input: canonical
//! varints, tags and packed payloads re-encode to the same bytes, padded ones to shorter bytes
//! with the same values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::backend::{self, Kernel};
use pbwire::wire::{self, Tag, WireType};
use pbwire::{packed, varint, ErrorKind, Result};
use pbwire_fuzz::{exact_copy, exact_out, gen, reference as r, Unstructured};

/// One encoder: the canonical bytes into a roomy buffer, then into one of `short` bytes.
fn single(wire_value: u64, short: usize, encode: impl Fn(&mut [u8]) -> Result<usize>) {
    let want = r::encode(wire_value);
    let mut out = [0u8; 16];
    assert_eq!(encode(&mut out), Ok(want.len()));
    assert_eq!(&out[..want.len()], &want[..]);
    assert_eq!(varint::encoded_len(wire_value), want.len());
    let mut small = exact_out::<u8>(short);
    match encode(&mut small) {
        Ok(n) => {
            assert!(short >= want.len());
            assert_eq!(&small[..n], &want[..]);
        }
        Err(e) => {
            assert!(short < want.len());
            assert_eq!((e.kind(), e.offset()), (ErrorKind::OutputTooSmall, 0));
            assert!(small.iter().all(|&b| b == 0), "nothing written");
        }
    }
    assert_eq!(varint::decode_u64(&exact_copy(&want)), Ok((wire_value, want.len())));
}

fn singles(v: u64, short: usize) {
    single(v, short, |o| varint::encode_u64(v, o));
    single(v as u32 as u64, short, |o| varint::encode_u32(v as u32, o));
    single(v, short, |o| varint::encode_i64(v as i64, o));
    single(v as u32 as i32 as i64 as u64, short, |o| varint::encode_i32(v as u32 as i32, o));
    single(r::unzigzag64(v as i64), short, |o| varint::encode_sint64(v as i64, o));
    single(r::unzigzag32(v as i32) as u64, short, |o| varint::encode_sint32(v as i32, o));
    single((v & 1 != 0) as u64, short, |o| varint::encode_bool(v & 1 != 0, o));
    let buf = r::encode(v);
    assert_eq!(varint::decode_i32(&buf), Ok((v as u32 as i32, buf.len())));
    assert_eq!(varint::decode_sint64(&r::encode(r::unzigzag64(v as i64))).unwrap().0, v as i64);
    assert_eq!(varint::decode_sint32(&r::encode(r::unzigzag32(v as i32) as u64)).unwrap().0, v as i32);
    assert_eq!(varint::zigzag_decode_64(varint::zigzag_encode_64(v as i64)), v as i64);

    let field = (v as u32) % wire::MAX_FIELD_NUMBER + 1;
    let wire_type = WireType::from_u8((v >> 32) as u8 % 6).unwrap();
    let tag = Tag::new(field, wire_type).unwrap();
    assert_eq!(tag.raw(), field << 3 | wire_type as u32);
    single(tag.raw() as u64, short, |o| wire::encode_tag(tag, o));
    assert_eq!(wire::decode_tag(&r::encode(tag.raw() as u64)), Ok((tag, tag.encoded_len())));
}

/// One packed varint type: encoded length, encode into exact and short buffers (dispatched,
/// and on every backend), decode on every backend into an exact output, extend.
#[allow(clippy::too_many_arguments)]
fn packed_type<T: Copy + Default + PartialEq + core::fmt::Debug>(
    values: &[T],
    to_wire: impl Fn(T) -> u64,
    encoded_len: impl Fn(&[T]) -> usize,
    encode: impl Fn(&[T], &mut [u8]) -> Result<usize>,
    encode_on: impl Fn(&Kernel, &[T], &mut [u8]) -> Result<usize>,
    decode: impl Fn(&Kernel, &[u8], &mut [T]) -> Result<usize>,
    extend: impl Fn(&[u8], &mut Vec<T>) -> Result<usize>,
) {
    let want: Vec<u8> = values.iter().flat_map(|&v| r::encode(to_wire(v))).collect();
    assert_eq!(encoded_len(values), want.len());
    let mut out = exact_out::<u8>(want.len());
    assert_eq!(encode(values, &mut out), Ok(want.len()));
    assert_eq!(&out[..], &want[..]);
    if !want.is_empty() {
        let mut short = exact_out::<u8>(want.len() - 1);
        let e = encode(values, &mut short).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ErrorKind::OutputTooSmall, 0));
        assert!(short.iter().all(|&b| b == 0));
    }
    // Room for any type's worst case (no length pass): the same bytes, none written after them.
    let roomy_len = values.len() * 10;
    let mut roomy = exact_out::<u8>(roomy_len);
    assert_eq!(encode(values, &mut roomy), Ok(want.len()));
    assert_eq!(&roomy[..want.len()], &want[..]);
    assert!(roomy[want.len()..].iter().all(|&b| b == 0));
    for b in backend::available() {
        let k = Kernel::new(b).unwrap();
        let mut encoded = exact_out::<u8>(want.len());
        assert_eq!(encode_on(&k, values, &mut encoded), Ok(want.len()), "{b}");
        assert_eq!(&encoded[..], &want[..], "{b}");
        if !want.is_empty() {
            let mut short = exact_out::<u8>(want.len() - 1);
            let e = encode_on(&k, values, &mut short).unwrap_err();
            assert_eq!((e.kind(), e.offset()), (ErrorKind::OutputTooSmall, 0), "{b}");
            assert!(short.iter().all(|&b| b == 0), "{b}");
        }
        let mut roomy = exact_out::<u8>(roomy_len);
        assert_eq!(encode_on(&k, values, &mut roomy), Ok(want.len()), "{b} with room");
        assert_eq!(&roomy[..want.len()], &want[..], "{b} with room");
        assert!(roomy[want.len()..].iter().all(|&b| b == 0), "{b} wrote past the payload");
        let mut decoded = exact_out::<T>(values.len());
        assert_eq!(decode(&k, &out, &mut decoded), Ok(values.len()), "{b}");
        assert_eq!(&decoded[..], values, "{b}");
    }
    let mut v = Vec::new();
    assert_eq!(extend(&out, &mut v), Ok(values.len()));
    assert_eq!(v, values);
}

fn packed_all(values: &[u64]) {
    packed_type(
        values,
        |v| v,
        packed::encoded_len_u64,
        packed::encode_u64,
        |k, v, o| k.encode_u64(v, o),
        |k, p, o| k.decode_u64(p, o),
        packed::extend_u64,
    );
    let v32: Vec<u32> = values.iter().map(|&v| v as u32).collect();
    packed_type(
        &v32,
        |v| v as u64,
        packed::encoded_len_u32,
        packed::encode_u32,
        |k, v, o| k.encode_u32(v, o),
        |k, p, o| k.decode_u32(p, o),
        packed::extend_u32,
    );
    let i64s: Vec<i64> = values.iter().map(|&v| v as i64).collect();
    packed_type(
        &i64s,
        |v| v as u64,
        packed::encoded_len_i64,
        packed::encode_i64,
        |k, v, o| k.encode_i64(v, o),
        |k, p, o| k.decode_i64(p, o),
        packed::extend_i64,
    );
    let i32s: Vec<i32> = values.iter().map(|&v| v as i32).collect();
    packed_type(
        &i32s,
        |v| v as i64 as u64,
        packed::encoded_len_i32,
        packed::encode_i32,
        |k, v, o| k.encode_i32(v, o),
        |k, p, o| k.decode_i32(p, o),
        packed::extend_i32,
    );
    packed_type(
        &i64s,
        |v| r::unzigzag64(v),
        packed::encoded_len_sint64,
        packed::encode_sint64,
        |k, v, o| k.encode_sint64(v, o),
        |k, p, o| k.decode_sint64(p, o),
        packed::extend_sint64,
    );
    packed_type(
        &i32s,
        |v| r::unzigzag32(v) as u64,
        packed::encoded_len_sint32,
        packed::encode_sint32,
        |k, v, o| k.encode_sint32(v, o),
        |k, p, o| k.decode_sint32(p, o),
        packed::extend_sint32,
    );
    let bools: Vec<bool> = values.iter().map(|&v| v & 1 != 0).collect();
    packed_type(
        &bools,
        |v| v as u64,
        packed::encoded_len_bool,
        packed::encode_bool,
        |k, v, o| k.encode_bool(v, o),
        |k, p, o| k.decode_bool(p, o),
        packed::extend_bool,
    );

    // Fixed-width: little-endian bytes, back again.
    let mut out = exact_out::<u8>(values.len() * 8);
    assert_eq!(packed::encode_fixed64(values, &mut out), Ok(values.len() * 8));
    let want: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(&out[..], &want[..]);
    let mut back = exact_out::<u64>(values.len());
    assert_eq!(packed::decode_fixed64(&out, &mut back), Ok(values.len()));
    assert_eq!(&back[..], values);
    let f32s: Vec<f32> = values.iter().map(|&v| f32::from_bits(v as u32)).collect();
    let mut out = exact_out::<u8>(values.len() * 4);
    assert_eq!(packed::encode_f32(&f32s, &mut out), Ok(values.len() * 4));
    let mut back = exact_out::<f32>(values.len());
    assert_eq!(packed::decode_f32(&out, &mut back), Ok(values.len()));
    assert!(back.iter().zip(&f32s).all(|(a, b)| a.to_bits() == b.to_bits()));
    if !values.is_empty() {
        let mut short = exact_out::<u8>(values.len() * 4 - 1);
        assert_eq!(packed::encode_sfixed32(&i32s, &mut short).unwrap_err().kind(), ErrorKind::OutputTooSmall);
    }
}

/// Valid input decoded and re-encoded: the same bytes when canonical.
fn decode_then_encode(bytes: &[u8]) {
    let bytes = exact_copy(bytes);
    if let Ok((v, n)) = varint::decode_u64(&bytes) {
        let canonical = r::encode(v);
        let mut out = [0u8; 10];
        let m = varint::encode_u64(v, &mut out).unwrap();
        assert_eq!(&out[..m], &canonical[..]);
        assert_eq!(m == n, bytes[..n] == canonical[..]);
    }
    if let Ok((tag, n)) = wire::decode_tag(&bytes) {
        let mut out = [0u8; 10];
        let m = wire::encode_tag(tag, &mut out).unwrap();
        assert_eq!(m == n, out[..m] == bytes[..n]);
    }
    let mut values = exact_out::<u64>(bytes.len());
    if let Ok(n) = packed::decode_u64(&bytes, &mut values) {
        let values = &values[..n];
        let canonical = {
            let mut pos = 0;
            values.iter().all(|&v| {
                let enc = r::encode(v);
                let same = bytes[pos..].starts_with(&enc);
                pos += r::varint(&bytes[pos..]).unwrap().1;
                same
            })
        };
        let mut out = exact_out::<u8>(packed::encoded_len_u64(values));
        packed::encode_u64(values, &mut out).unwrap();
        assert_eq!(canonical, out[..] == bytes[..]);
        assert!(out.len() <= bytes.len());
        let mut again = exact_out::<u64>(n);
        assert_eq!(packed::decode_u64(&out, &mut again), Ok(n));
        assert_eq!(&again[..], values);
        let mut sint = exact_out::<i64>(n);
        assert_eq!(packed::decode_sint64(&bytes, &mut sint), Ok(n));
        let mut out2 = exact_out::<u8>(packed::encoded_len_sint64(&sint));
        packed::encode_sint64(&sint, &mut out2).unwrap();
        assert_eq!(out2, out, "sint64 re-encodes the same varints");
    }
    // A whole message re-encoded field by field.
    if pbwire::fields::validate(&bytes).is_ok() {
        let mut out = Vec::new();
        for f in pbwire::fields::fields(&bytes) {
            let f = f.unwrap();
            out.extend_from_slice(&bytes[f.offset..f.end]);
        }
        assert_eq!(out, &bytes[..]);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let short: u8 = u.arbitrary().unwrap_or(0);
    let count: u8 = u.arbitrary().unwrap_or(0);
    let mut values = Vec::new();
    for _ in 0..count % 100 {
        if u.is_empty() {
            break;
        }
        values.push(gen::any_length_value(&mut u));
    }
    for &v in &values {
        singles(v, short as usize % 12);
    }
    packed_all(&values);
    let rest = if short & 0x80 != 0 { gen::packed_payload(&mut u) } else { u.take_rest().to_vec() };
    decode_then_encode(&rest);
});
