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

    /// A word with one set bit for each byte of the block whose top (continuation) bit is set;
    /// which bit stands for which byte is up to the implementation.
    fn continuation_bits(self) -> u64;
}

/// Packs the low seven bits of each byte of a word (the bytes of one varint, already cut at its
/// terminator) into contiguous bits.
pub(crate) trait Compress {
    /// `word` holds up to eight varint bytes, least significant first; bytes after the
    /// terminator are zero.
    fn compress(word: u64) -> u64;
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

const CONTINUATION_BITS: u64 = 0x8080_8080_8080_8080;

/// Decodes the varint at `p` without a branch on its length for lengths 1..=8. `None` for a
/// varint that overflows (the caller lets the scalar reference report it).
///
/// # Safety
/// `p` must be valid for reads of 10 bytes.
#[inline(always)]
unsafe fn decode_one<X: Compress>(p: *const u8) -> Option<(u64, usize)> {
    // SAFETY: the caller guarantees 10 readable bytes at `p`.
    let (word, b8, b9) = unsafe { (u64::from_le((p as *const u64).read_unaligned()), *p.add(8), *p.add(9)) };
    let stops = !word & CONTINUATION_BITS;
    if stops != 0 {
        // Keep the bits up to and including the first terminator's (clear) top bit.
        let keep = stops ^ (stops - 1);
        return Some((X::compress(word & keep), stops.trailing_zeros() as usize / 8 + 1));
    }
    let low = X::compress(word);
    if b8 < 0x80 {
        return Some((low | (b8 as u64) << 56, 9));
    }
    if b9 > 1 {
        return None;
    }
    Some((low | ((b8 & 0x7f) as u64) << 56 | (b9 as u64) << 63, 10))
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

/// Packed varint decode: whole blocks of one-byte values are widened in one go; other blocks
/// decode varint by varint with the branch-free word decoder; the tail goes to the reference.
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
    let (mut pos, mut n) = (0usize, 0usize);
    // A block is entered only with a 16-byte margin after it, so that every varint starting in
    // it can be read whole (10 bytes) unchecked, and with room for `BYTES` outputs, the most
    // varints that can start in a block.
    while payload.len() - pos >= V::BYTES + 16 && out.len() - n >= V::BYTES {
        // SAFETY: `pos + BYTES <= payload.len()`; the caller guarantees the instruction set.
        let block = unsafe { V::load(src.add(pos)) };
        if block.continuation_bits() == 0 {
            for i in 0..V::BYTES {
                // SAFETY: `pos + i < payload.len()` and `n + i < out.len()` by the loop condition.
                unsafe { dst.add(n + i).write(convert(*src.add(pos + i) as u64)) };
            }
            pos += V::BYTES;
            n += V::BYTES;
            continue;
        }
        let end = pos + V::BYTES;
        while pos < end {
            // SAFETY: `pos < end`, so `pos + 10 <= end + 9 < payload.len()` by the margin.
            match unsafe { decode_one::<X>(src.add(pos)) } {
                Some((value, len)) => {
                    // SAFETY: at most `BYTES` varints start in `pos..end`, and there was room
                    // for `BYTES` outputs at the start of the block.
                    unsafe { dst.add(n).write(convert(value)) };
                    n += 1;
                    pos += len;
                }
                None => return finish(payload, out, pos, n, convert),
            }
        }
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
