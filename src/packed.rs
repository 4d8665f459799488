//! Packed repeated fields: the payload of a length-delimited field holding scalars back to back.
//!
//! Decoders write into a caller's `&mut [T]` and return how many elements they wrote; size the
//! output with [`count_varints`] (varint types) or `payload.len() / 4` or `/ 8` (fixed types).
//! With the `alloc` feature, the `extend_*` functions append to a `Vec`, allocating once.
//! Encoders write the payload only (no tag, no length prefix); the `encoded_len_*` functions
//! give its size, for the length prefix and to size the output.
//!
//! Errors: elements are taken in order, and before each one, if the output is full, the result
//! is [`ErrorKind::OutputTooSmall`] at that element's offset; otherwise a malformed element gives
//! [`ErrorKind::Truncated`] (the payload ends inside it) or [`ErrorKind::VarintOverflow`] at its
//! offset. On error the output holds unspecified values. Encoders check the whole size first
//! and write nothing if it does not fit ([`ErrorKind::OutputTooSmall`] at offset 0).
//!
//! ```
//! use pbwire::packed;
//! let payload = [0x05, 0x96, 0x01, 0x7f];
//! let mut values = [0u32; 3];
//! assert_eq!(packed::count_varints(&payload), 3);
//! assert_eq!(packed::decode_u32(&payload, &mut values), Ok(3));
//! assert_eq!(values, [5, 150, 127]);
//! let mut out = [0u8; 4];
//! assert_eq!(packed::encoded_len_u32(&values), 4);
//! assert_eq!(packed::encode_u32(&values, &mut out), Ok(4));
//! assert_eq!(out, payload);
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::varint;

/// How a protobuf varint type maps to its Rust element type, and which dispatched kernel
/// decodes it.
trait VarintType {
    type Elem: Copy + Default;
    fn to_wire(value: Self::Elem) -> u64;
    fn decode(payload: &[u8], out: &mut [Self::Elem]) -> Result<usize>;
}

macro_rules! varint_type {
    ($name:ident, $elem:ty, |$e:ident| $to:expr, $kernel:ident, $adapt:path) => {
        struct $name;
        impl VarintType for $name {
            type Elem = $elem;
            #[inline(always)]
            fn to_wire($e: $elem) -> u64 {
                $to
            }
            #[inline(always)]
            fn decode(payload: &[u8], out: &mut [$elem]) -> Result<usize> {
                let fns = crate::backend::active();
                // SAFETY: `active` hands out only a table the CPU supports.
                unsafe { (fns.$kernel)(payload, $adapt(out)) }
            }
        }
    };
}

varint_type!(Uint64, u64, |v| v, decode_u64, core::convert::identity);
varint_type!(Uint32, u32, |v| v as u64, decode_u32, core::convert::identity);
// Same bits as uint64 / uint32, so the same kernels.
varint_type!(Int64, i64, |v| v as u64, decode_u64, bytemuck::cast_slice_mut);
// Negative int32 values are sign-extended to 64 bits on the wire (ten bytes).
varint_type!(Int32, i32, |v| v as i64 as u64, decode_u32, bytemuck::cast_slice_mut);
varint_type!(Sint64, i64, |v| varint::zigzag_encode_64(v), decode_sint64, core::convert::identity);
varint_type!(Sint32, i32, |v| varint::zigzag_encode_32(v) as u64, decode_sint32, core::convert::identity);
varint_type!(Bool, bool, |v| v as u64, decode_bool, core::convert::identity);

#[inline]
fn decode_varint_type<V: VarintType>(payload: &[u8], out: &mut [V::Elem]) -> Result<usize> {
    V::decode(payload, out)
}

#[inline]
fn encoded_len_varint_type<V: VarintType>(values: &[V::Elem]) -> usize {
    values.iter().map(|&v| varint::encoded_len(V::to_wire(v))).sum()
}

#[inline]
fn encode_varint_type<V: VarintType>(values: &[V::Elem], out: &mut [u8]) -> Result<usize> {
    let total = encoded_len_varint_type::<V>(values);
    let Some(out) = out.get_mut(..total) else {
        return Err(Error::new(ErrorKind::OutputTooSmall, 0));
    };
    let mut pos = 0;
    for &value in values {
        let mut bytes = [0u8; varint::MAX_LEN];
        let len = varint::encode_to_array(V::to_wire(value), &mut bytes);
        // While ten bytes remain, store all ten (one fixed-size copy) and advance by `len`.
        match out.get_mut(pos..pos + varint::MAX_LEN) {
            Some(dst) => dst.copy_from_slice(&bytes),
            None => out[pos..pos + len].copy_from_slice(&bytes[..len]),
        }
        pos += len;
    }
    Ok(total)
}

#[cfg(feature = "alloc")]
fn extend_varint_type<V: VarintType>(payload: &[u8], vec: &mut alloc::vec::Vec<V::Elem>) -> Result<usize> {
    // One slot per terminator, plus one for a final element that never terminates, so that
    // such a payload reports Truncated rather than running out of room.
    let unterminated = matches!(payload.last(), Some(&b) if b >= 0x80);
    let room = count_varints(payload) + unterminated as usize;
    let old_len = vec.len();
    vec.resize(old_len + room, V::Elem::default());
    let result = decode_varint_type::<V>(payload, &mut vec[old_len..]);
    vec.truncate(old_len + *result.as_ref().unwrap_or(&0));
    result
}

/// The number of varints in a well-formed packed payload (it counts terminator bytes, those
/// below 0x80; a malformed payload may count differently from what a decoder accepts).
///
/// ```
/// assert_eq!(pbwire::packed::count_varints(&[0x01, 0x96, 0x01, 0xff]), 2);
/// ```
#[inline]
pub fn count_varints(payload: &[u8]) -> usize {
    let fns = crate::backend::active();
    // SAFETY: `active` hands out only a table the CPU supports.
    unsafe { (fns.count_varints)(payload) }
}

macro_rules! varint_api {
    ($ty:ident, $elem:ty, $proto:literal, $decode:ident, $extend:ident, $encode:ident, $len:ident) => {
        #[doc = concat!("Decodes a packed `", $proto, "` payload into `out`; returns how many values were written.")]
        #[inline]
        pub fn $decode(payload: &[u8], out: &mut [$elem]) -> Result<usize> {
            decode_varint_type::<$ty>(payload, out)
        }

        #[doc = concat!("Appends the values of a packed `", $proto, "` payload to `vec`, allocating once; returns how many. On error `vec` is left as it was.")]
        #[cfg(feature = "alloc")]
        pub fn $extend(payload: &[u8], vec: &mut alloc::vec::Vec<$elem>) -> Result<usize> {
            extend_varint_type::<$ty>(payload, vec)
        }

        #[doc = concat!("Encodes `values` as a packed `", $proto, "` payload into `out`; returns its length.")]
        #[inline]
        pub fn $encode(values: &[$elem], out: &mut [u8]) -> Result<usize> {
            encode_varint_type::<$ty>(values, out)
        }

        #[doc = concat!("The length of the packed `", $proto, "` payload encoding `values`.")]
        #[inline]
        pub fn $len(values: &[$elem]) -> usize {
            encoded_len_varint_type::<$ty>(values)
        }
    };
}

varint_api!(Uint64, u64, "uint64", decode_u64, extend_u64, encode_u64, encoded_len_u64);
varint_api!(Uint32, u32, "uint32", decode_u32, extend_u32, encode_u32, encoded_len_u32);
varint_api!(Int64, i64, "int64", decode_i64, extend_i64, encode_i64, encoded_len_i64);
varint_api!(Int32, i32, "int32` or enum", decode_i32, extend_i32, encode_i32, encoded_len_i32);
varint_api!(Sint64, i64, "sint64", decode_sint64, extend_sint64, encode_sint64, encoded_len_sint64);
varint_api!(Sint32, i32, "sint32", decode_sint32, extend_sint32, encode_sint32, encoded_len_sint32);
varint_api!(Bool, bool, "bool", decode_bool, extend_bool, encode_bool, encoded_len_bool);

/// A fixed-width element type: plain old data whose wire form is its little-endian bytes.
trait FixedType: bytemuck::Pod + Default {
    /// Converts between little-endian (wire) and native byte order; its own inverse.
    fn swap_le(self) -> Self;
}

macro_rules! fixed_int {
    ($($t:ty),*) => {$(
        impl FixedType for $t {
            #[inline(always)]
            fn swap_le(self) -> Self {
                <$t>::from_le(self)
            }
        }
    )*};
}
fixed_int!(u32, u64, i32, i64);

impl FixedType for f32 {
    #[inline(always)]
    fn swap_le(self) -> Self {
        f32::from_bits(u32::from_le(self.to_bits()))
    }
}

impl FixedType for f64 {
    #[inline(always)]
    fn swap_le(self) -> Self {
        f64::from_bits(u64::from_le(self.to_bits()))
    }
}

#[inline]
fn decode_fixed<T: FixedType>(payload: &[u8], out: &mut [T]) -> Result<usize> {
    let size = core::mem::size_of::<T>();
    let whole = payload.len() / size;
    let elements = payload.len().div_ceil(size);
    if elements > out.len() {
        return Err(Error::new(ErrorKind::OutputTooSmall, core::mem::size_of_val(out)));
    }
    let out = &mut out[..whole];
    bytemuck::cast_slice_mut::<T, u8>(out).copy_from_slice(&payload[..whole * size]);
    if cfg!(target_endian = "big") {
        out.iter_mut().for_each(|v| *v = v.swap_le());
    }
    if whole * size != payload.len() {
        return Err(Error::new(ErrorKind::Truncated, whole * size));
    }
    Ok(whole)
}

#[inline]
fn view_fixed<T: FixedType>(payload: &[u8]) -> Option<&[T]> {
    if cfg!(target_endian = "little") {
        bytemuck::try_cast_slice(payload).ok()
    } else {
        None
    }
}

#[inline]
fn encode_fixed<T: FixedType>(values: &[T], out: &mut [u8]) -> Result<usize> {
    let len = core::mem::size_of_val(values);
    let Some(out) = out.get_mut(..len) else {
        return Err(Error::new(ErrorKind::OutputTooSmall, 0));
    };
    if cfg!(target_endian = "little") {
        out.copy_from_slice(bytemuck::cast_slice(values));
    } else {
        let size = core::mem::size_of::<T>();
        for (dst, v) in out.chunks_exact_mut(size).zip(values) {
            dst.copy_from_slice(bytemuck::bytes_of(&v.swap_le()));
        }
    }
    Ok(len)
}

#[cfg(feature = "alloc")]
fn extend_fixed<T: FixedType>(payload: &[u8], vec: &mut alloc::vec::Vec<T>) -> Result<usize> {
    let old_len = vec.len();
    vec.resize(old_len + payload.len().div_ceil(core::mem::size_of::<T>()), T::default());
    let result = decode_fixed(payload, &mut vec[old_len..]);
    vec.truncate(old_len + *result.as_ref().unwrap_or(&0));
    result
}

macro_rules! fixed_api {
    ($elem:ty, $proto:literal, $decode:ident, $view:ident, $extend:ident, $encode:ident) => {
        #[doc = concat!("Decodes a packed `", $proto, "` payload into `out` (a copy, byte-swapped on big-endian hosts); returns how many values were written. A payload whose length is not a multiple of the element size is [`ErrorKind::Truncated`] at its incomplete last element.")]
        #[inline]
        pub fn $decode(payload: &[u8], out: &mut [$elem]) -> Result<usize> {
            decode_fixed(payload, out)
        }

        #[doc = concat!("Views a packed `", $proto, "` payload in place, without copying: `Some` only on little-endian hosts, when the payload is suitably aligned and its length a multiple of the element size. Otherwise decode it (`", stringify!($decode), "`).")]
        #[inline]
        pub fn $view(payload: &[u8]) -> Option<&[$elem]> {
            view_fixed(payload)
        }

        #[doc = concat!("Appends the values of a packed `", $proto, "` payload to `vec`, allocating once; returns how many. On error `vec` is left as it was.")]
        #[cfg(feature = "alloc")]
        pub fn $extend(payload: &[u8], vec: &mut alloc::vec::Vec<$elem>) -> Result<usize> {
            extend_fixed(payload, vec)
        }

        #[doc = concat!("Encodes `values` as a packed `", $proto, "` payload (little-endian) into `out`; returns its length, `size_of_val(values)`.")]
        #[inline]
        pub fn $encode(values: &[$elem], out: &mut [u8]) -> Result<usize> {
            encode_fixed(values, out)
        }
    };
}

fixed_api!(u32, "fixed32", decode_fixed32, view_fixed32, extend_fixed32, encode_fixed32);
fixed_api!(u64, "fixed64", decode_fixed64, view_fixed64, extend_fixed64, encode_fixed64);
fixed_api!(i32, "sfixed32", decode_sfixed32, view_sfixed32, extend_sfixed32, encode_sfixed32);
fixed_api!(i64, "sfixed64", decode_sfixed64, view_sfixed64, extend_sfixed64, encode_sfixed64);
fixed_api!(f32, "float", decode_f32, view_f32, extend_f32, encode_f32);
fixed_api!(f64, "double", decode_f64, view_f64, extend_f64, encode_f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_errors_follow_element_order() {
        let mut out = [0u64; 2];
        assert_eq!(decode_u64(&[1, 2, 3], &mut out), Err(Error::new(ErrorKind::OutputTooSmall, 2)));
        assert_eq!(decode_u64(&[1, 0x80], &mut out), Err(Error::new(ErrorKind::Truncated, 1)));
        assert_eq!(decode_u64(&[1, 2, 0x80], &mut out), Err(Error::new(ErrorKind::OutputTooSmall, 2)));
        assert_eq!(decode_u64(&[], &mut []), Ok(0));
    }

    #[test]
    fn fixed_errors() {
        let mut out = [0u32; 2];
        assert_eq!(decode_fixed32(&[1, 0, 0, 0, 2, 0, 0, 0], &mut out), Ok(2));
        assert_eq!(out, [1, 2]);
        assert_eq!(decode_fixed32(&[1, 0, 0, 0, 2, 0], &mut out), Err(Error::new(ErrorKind::Truncated, 4)));
        assert_eq!(decode_fixed32(&[0; 9], &mut out), Err(Error::new(ErrorKind::OutputTooSmall, 8)));
        assert_eq!(decode_fixed64(&[0; 9], &mut [0u64; 1]), Err(Error::new(ErrorKind::OutputTooSmall, 8)));
        assert_eq!(decode_fixed64(&[0; 9], &mut [0u64; 2]), Err(Error::new(ErrorKind::Truncated, 8)));
    }

    #[test]
    fn int32_negative_is_ten_bytes() {
        assert_eq!(encoded_len_i32(&[-1, 1]), 11);
        assert_eq!(encoded_len_sint32(&[-1, 1]), 2);
        let mut out = [0u8; 11];
        assert_eq!(encode_i32(&[-1, 1], &mut out), Ok(11));
        assert_eq!(out, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01]);
        assert_eq!(encode_i32(&[-1, 1], &mut [0u8; 10]), Err(Error::new(ErrorKind::OutputTooSmall, 0)));
    }

    #[test]
    fn views_only_where_the_bytes_already_are_the_values() {
        let words = [1u64.to_le(), 2u64.to_le(), 0];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        let aligned = view_fixed64(&bytes[..16]);
        assert_eq!(aligned, if cfg!(target_endian = "little") { Some(&[1u64, 2][..]) } else { None });
        // Misaligned or a partial element: no view, but the copying decoder still works.
        assert_eq!(view_fixed32(&bytes[1..9]), None);
        assert_eq!(view_fixed64(&bytes[..12]), None);
        let mut out = [0u32; 2];
        assert_eq!(decode_fixed32(&bytes[..8], &mut out), Ok(2));
        assert_eq!(out, [1, 0]);
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn extend_allocates_and_rolls_back() {
        let mut v = alloc::vec![9u64];
        assert_eq!(extend_u64(&[1, 0x96, 0x01], &mut v), Ok(2));
        assert_eq!(v, [9, 1, 150]);
        assert_eq!(extend_u64(&[1, 0x96], &mut v), Err(Error::new(ErrorKind::Truncated, 1)));
        assert_eq!(v, [9, 1, 150]);
        let mut f = alloc::vec::Vec::new();
        assert_eq!(extend_f32(&1.5f32.to_le_bytes(), &mut f), Ok(1));
        assert_eq!(f, [1.5]);
    }
}
