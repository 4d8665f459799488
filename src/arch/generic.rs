//! The SIMD algorithms, written once over a small vector trait. Each instruction set supplies a
//! [`Vector`] (a block of bytes it can load and test) and a [`Compress`] (how to pack the seven
//! payload bits of each varint byte); `kernel_fns!` instantiates the algorithms for them inside
//! `#[target_feature]` functions, so that the inlined code is compiled for that instruction set.
//!
//! Every kernel finishes, and recovers from anything unusual (an overlong varint, a short output),
//! by handing the rest of the input to the scalar reference at the exact position it reached, so
//! results, errors and offsets are the reference's by construction.

use crate::arch::scalar;
use crate::error::Result;

/// A block of `BYTES` input bytes in a SIMD register.
pub(crate) trait Vector: Copy {
    /// How many bytes a block holds (at most 64).
    const BYTES: usize;

    /// Loads `BYTES` bytes from `ptr`, which need not be aligned.
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `BYTES` bytes, and the CPU must support the instruction
    /// set of the implementation.
    unsafe fn load(ptr: *const u8) -> Self;

    /// Bit `i` is the top (continuation) bit of byte `i`; bits from `BYTES` up are zero.
    fn continuation_bits(self) -> u64;
}

/// Packs the low seven bits of each byte of a word (the bytes of one varint, already cut at its
/// terminator) into contiguous bits.
pub(crate) trait Compress {
    /// `word` holds up to eight varint bytes, least significant first; bytes after the
    /// terminator are zero.
    fn compress(word: u64) -> u64;

    /// `value` with the bits from `bits` up cleared (all of it when `bits >= 64`).
    #[inline(always)]
    fn low_bits(value: u64, bits: u32) -> u64 {
        if bits >= 64 {
            value
        } else {
            value & ((1u64 << bits) - 1)
        }
    }
}

/// Shifts and masks: three rounds of pairing 7-, 14- and 28-bit groups.
pub(crate) struct Swar;

impl Compress for Swar {
    #[inline(always)]
    fn compress(word: u64) -> u64 {
        let x = word & 0x7f7f_7f7f_7f7f_7f7f;
        let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
        let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
        (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
    }
}

/// Decodes the varint of `len` bytes at `p`, whose terminator the caller has already found,
/// without branching on the length. The flag is set for a varint that overflows (more than 10
/// bytes, or a 10th byte above 1); its value is then meaningless.
///
/// # Safety
/// `p` must be valid for reads of 10 bytes.
#[inline(always)]
unsafe fn decode_known_len<X: Compress>(p: *const u8, len: usize) -> (u64, bool) {
    // SAFETY: the caller guarantees 10 readable bytes at `p`.
    let (low, high) =
        unsafe { ((p as *const u64).read_unaligned(), (p.add(8) as *const u16).read_unaligned()) };
    let (low, high) = (u64::from_le(low), u16::from_le(high));
    // Bytes 0..8 through `X`, bytes 8 and 9 by hand: seven bits each, 70 bits in all, of which
    // the top six (overflow) fall off the end.
    let b8 = (high & 0x7f) as u64;
    let b9 = (high >> 8) as u64;
    let value = X::compress(low) | b8 << 56 | b9 << 63;
    (X::low_bits(value, 7 * len as u32), len > 10 || (len == 10 && b9 > 1))
}

/// The rest of a decode, from input position `pos` and output position `n`, by the reference.
#[inline(always)]
fn finish<T>(
    payload: &[u8],
    out: &mut [T],
    pos: usize,
    n: usize,
    convert: impl Fn(u64) -> T,
) -> Result<usize> {
    scalar::decode_varints(&payload[pos..], &mut out[n..], convert).map(|k| n + k).map_err(|e| e.shifted(pos))
}

/// Packed varint decode, a block of `BYTES` input bytes at a time.
///
/// The block's terminator bits (bytes below 0x80) say where every varint that ends in the block
/// starts and ends, so the varints are decoded independently of each other: no step waits for
/// the previous varint's length, and none branches on a length. A block of only terminators is
/// widened in one go. A varint that starts in the block but ends after it is left for the next
/// block; anything unusual (an overflowing varint, no terminator in a block) and the tail go to
/// the reference from the block's start.
///
/// # Safety
/// The CPU must support the instruction sets of `V` and `X`.
#[inline(always)]
pub(crate) unsafe fn decode_varints<V: Vector, X: Compress, T: Copy>(
    payload: &[u8],
    out: &mut [T],
    convert: impl Fn(u64) -> T + Copy,
) -> Result<usize> {
    let src = payload.as_ptr();
    let dst = out.as_mut_ptr();
    let all = u64::MAX >> (64 - V::BYTES);
    let (mut pos, mut n) = (0usize, 0usize);
    // A block is entered only with a 16-byte margin after it, so that every varint ending in it
    // can be read as 10 bytes unchecked, and with room for `BYTES` outputs, the most varints
    // that can end in a block.
    while payload.len() - pos >= V::BYTES + 16 && out.len() - n >= V::BYTES {
        // SAFETY: `pos + BYTES <= payload.len()`; the caller guarantees the instruction set.
        let block = unsafe { V::load(src.add(pos)) };
        let mut stops = !block.continuation_bits() & all;
        if stops == all {
            for i in 0..V::BYTES {
                // SAFETY: `pos + i < payload.len()` and `n + i < out.len()` by the loop condition.
                unsafe { dst.add(n + i).write(convert(*src.add(pos + i) as u64)) };
            }
            pos += V::BYTES;
            n += V::BYTES;
            continue;
        }
        if stops == 0 {
            break;
        }
        let block_n = n;
        let mut start = 0usize;
        let mut overflow = false;
        while stops != 0 {
            let end = stops.trailing_zeros() as usize;
            // SAFETY: `start <= end < BYTES`, so 10 bytes from `pos + start` are within the
            // margin after the block.
            let (value, bad) = unsafe { decode_known_len::<X>(src.add(pos + start), end + 1 - start) };
            // SAFETY: one output per terminator in the block, at most `BYTES`, and there was room
            // for `BYTES` at the block's start.
            unsafe { dst.add(n).write(convert(value)) };
            n += 1;
            overflow |= bad;
            start = end + 1;
            stops &= stops - 1;
        }
        if overflow {
            return finish(payload, out, pos, block_n, convert);
        }
        pos += start;
    }
    finish(payload, out, pos, n, convert)
}

/// Counts bytes below 0x80, a block at a time.
///
/// # Safety
/// The CPU must support the instruction set of `V`.
#[inline(always)]
pub(crate) unsafe fn count_varints<V: Vector>(payload: &[u8]) -> usize {
    let mut blocks = payload.chunks_exact(V::BYTES);
    let mut count = 0;
    for block in &mut blocks {
        // SAFETY: `block` has `BYTES` bytes; the caller guarantees the instruction set.
        let v = unsafe { V::load(block.as_ptr()) };
        count += V::BYTES - v.continuation_bits().count_ones() as usize;
    }
    count + scalar::count_varints(blocks.remainder())
}

/// Defines a backend's kernel functions (`#[target_feature]` instantiations of the generic
/// algorithms for `$vector` and `$compress`) and the table of them, `FNS`.
macro_rules! kernel_fns {
    ($features:literal, $vector:ty, $compress:ty) => {
        #[target_feature(enable = $features)]
        unsafe fn decode_u64(payload: &[u8], out: &mut [u64]) -> crate::error::Result<usize> {
            // SAFETY: only reachable through `FNS`, handed out once the CPU has these features.
            unsafe { crate::arch::generic::decode_varints::<$vector, $compress, u64>(payload, out, |v| v) }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_u32(payload: &[u8], out: &mut [u32]) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, u32>(payload, out, |v| v as u32)
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_sint64(payload: &[u8], out: &mut [i64]) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, i64>(
                    payload,
                    out,
                    crate::varint::zigzag_decode_64,
                )
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_sint32(payload: &[u8], out: &mut [i32]) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, i32>(payload, out, |v| {
                    crate::varint::zigzag_decode_32(v as u32)
                })
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_bool(payload: &[u8], out: &mut [bool]) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, bool>(payload, out, |v| v != 0)
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn count_varints(payload: &[u8]) -> usize {
            // SAFETY: as for `decode_u64`.
            unsafe { crate::arch::generic::count_varints::<$vector>(payload) }
        }

        pub(crate) static FNS: crate::arch::KernelFns = crate::arch::KernelFns {
            decode_u64,
            decode_u32,
            decode_sint64,
            decode_sint32,
            decode_bool,
            count_varints,
        };
    };
}
pub(crate) use kernel_fns;
