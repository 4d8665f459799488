//! The scalar reference kernels. Their results define the semantics that every other backend
//! must reproduce exactly (values, counts, error kind and offset), and they are the fallback on
//! targets with no SIMD backend.

use crate::error::{Error, ErrorKind, Result};
use crate::varint;
use core::mem::MaybeUninit;

/// Decodes the packed varints of `payload` into `out`, mapping each 64-bit value with
/// `convert`, and returns how many were written.
///
/// Elements are taken in order. Before each one: if `out` is full, [`ErrorKind::OutputTooSmall`]
/// at the element's offset; otherwise a malformed element gives its varint error at its offset.
#[inline(always)]
pub fn decode_varints<T>(
    payload: &[u8],
    out: &mut [MaybeUninit<T>],
    convert: impl Fn(u64) -> T,
) -> Result<usize> {
    let mut pos = 0;
    let mut n = 0;
    while pos < payload.len() {
        let Some(slot) = out.get_mut(n) else {
            return Err(Error::new(ErrorKind::OutputTooSmall, pos));
        };
        let (value, len) = varint::decode_u64(&payload[pos..]).map_err(|e| e.shifted(pos))?;
        slot.write(convert(value));
        n += 1;
        pos += len;
    }
    Ok(n)
}

/// The number of varint terminators (bytes below 0x80) in `payload`: exactly the number of
/// varints in a well-formed packed payload.
#[inline]
pub fn count_varints(payload: &[u8]) -> usize {
    payload.iter().filter(|&&b| b < 0x80).count()
}

/// The offset just past the first `n` varints of `payload`: `varint::skip` `n` times, with its
/// errors (at the varint's offset); fewer than `n` varints is `Truncated` at the end.
#[inline]
pub fn skip_varints(payload: &[u8], n: usize) -> Result<usize> {
    let mut pos = 0;
    for _ in 0..n {
        pos += varint::skip(&payload[pos..]).map_err(|e| e.shifted(pos))?;
    }
    Ok(pos)
}

// The kernels below are always inlined: `packed`'s short payloads come to them directly, and
// for a few values the call (saved registers, the `Result` through memory) cost more than the
// decode. `FNS` takes their addresses too, for the reference backend.
#[inline(always)]
pub(crate) fn decode_u64(payload: super::Payload, out: &mut [MaybeUninit<u64>]) -> Result<usize> {
    decode_varints(payload.bytes(), out, |v| v)
}

#[inline(always)]
pub(crate) fn decode_u32(payload: super::Payload, out: &mut [MaybeUninit<u32>]) -> Result<usize> {
    decode_varints(payload.bytes(), out, |v| v as u32)
}

#[inline(always)]
pub(crate) fn decode_sint64(payload: super::Payload, out: &mut [MaybeUninit<i64>]) -> Result<usize> {
    decode_varints(payload.bytes(), out, varint::zigzag_decode_64)
}

#[inline(always)]
pub(crate) fn decode_sint32(payload: super::Payload, out: &mut [MaybeUninit<i32>]) -> Result<usize> {
    decode_varints(payload.bytes(), out, |v| varint::zigzag_decode_32(v as u32))
}

#[inline(always)]
pub(crate) fn decode_bool(payload: super::Payload, out: &mut [MaybeUninit<bool>]) -> Result<usize> {
    decode_varints(payload.bytes(), out, |v| v != 0)
}

/// The reference as a backend: runs on every CPU. Its encoders are the portable ones of [`crate::packed`], the reference for every backend.
pub(crate) static FNS: super::KernelFns = super::KernelFns {
    decode_u64,
    decode_u32,
    decode_sint64,
    decode_sint32,
    decode_bool,
    count_varints,
    skip_varints,
    encode_u64: crate::packed::portable::encode_u64,
    encode_u32: crate::packed::portable::encode_u32,
    encode_i32: crate::packed::portable::encode_i32,
    encode_sint64: crate::packed::portable::encode_sint64,
    encode_sint32: crate::packed::portable::encode_sint32,
    validate_utf8: super::utf8_core,
    encode_bool: crate::packed::portable::encode_bool,
    encoded_len_u64: crate::packed::portable::encoded_len_u64,
    encoded_len_sint64: crate::packed::portable::encoded_len_sint64,
    scan_fields: None,
    short_mixed: crate::packed::SMALL_PAYLOAD,
};
