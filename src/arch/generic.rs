//! The SIMD algorithms, written once over a small vector trait. Each instruction set supplies a
//! [`Vector`] (a block of bytes it can load and test) and a [`Compress`] (how to pack the seven
//! payload bits of each varint byte); `kernel_fns!` instantiates the algorithms for them inside
//! `#[target_feature]` functions, so that the inlined code is compiled for that instruction set.
//!
//! Every kernel finishes, and recovers from anything unusual (an overlong varint, a short output),
//! by handing the rest of the input to the scalar reference at the exact position it reached, so
//! results, errors and offsets are the reference's by construction.

use crate::arch::{scalar, Payload};
use crate::error::Result;
use core::mem::MaybeUninit;

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

    /// Bit `i` is set when byte `i` is a terminator above 1 (`0x02..=0x7f`), which cannot be
    /// the last byte of a 10-byte varint; bits from `BYTES` up are zero.
    fn above_one_bits(self) -> u64;

    /// Bit `i` is set when byte `i` is `byte`; bits from `BYTES` up are zero.
    fn equal_bits(self, byte: u8) -> u64;

    /// Copies the `len` bytes at `src` (fewer than a window and its margin) to the start of
    /// `dst`, the decoders' padded tail window, reading nothing past them; the bytes of `dst`
    /// after them may keep what they held. By default [`copy_short`].
    ///
    /// # Safety
    /// `src` must be valid for reads of `len` bytes, `len < WINDOW + 16`, and the CPU must
    /// support the instruction set of the implementation.
    #[inline(always)]
    unsafe fn copy_tail(src: *const u8, len: usize, dst: &mut [u8; WINDOW + 16]) {
        // SAFETY: `len` readable bytes at `src` (the caller), `len <= dst.len()`, and `dst` is
        // a distinct stack buffer.
        unsafe { copy_short(src, dst.as_mut_ptr(), len) }
    }

    /// Copies `bytes` initialised bytes from `src` to `dst` (a window's values, from the spill
    /// buffer to the output when it had room for fewer than 64), reading and writing nothing
    /// past them. By default [`copy_short`].
    ///
    /// # Safety
    /// `src` must be valid for reads and `dst` for writes of `bytes` bytes, the two distinct,
    /// and the CPU must support the instruction set of the implementation.
    #[inline(always)]
    unsafe fn copy_out(src: *const u8, dst: *mut u8, bytes: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { copy_short(src, dst, bytes) }
    }
}

/// Copies `len` bytes (a window's tail or values, at most a few hundred) from `src` to `dst`
/// inline: 32-byte chunks, the last one ending at `len` (overlapping the one before), or, below
/// 32 bytes, two overlapping copies of the largest power of two that fits. The compiler turns
/// each chunk into the widest moves of the instruction set. A `memcpy` call in their place
/// was about a third of the SIMD decoders' cost on a short payload (AVX2: 258 instructions for
/// a one-byte payload, two calls among them, each also spilling and reloading the kernel's
/// constant registers around it).
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `len` bytes, the two distinct.
#[inline(always)]
pub(crate) unsafe fn copy_short(src: *const u8, dst: *mut u8, len: usize) {
    /// Copies `N` bytes at `from` (the caller's safety contract: `from + N <= len`).
    #[inline(always)]
    unsafe fn chunk<const N: usize>(src: *const u8, dst: *mut u8, from: usize) {
        // SAFETY: `from + N <= len` bytes, readable at `src` and writable at `dst` (the
        // caller); unaligned accesses of a byte array.
        unsafe {
            let bytes = (src.add(from) as *const [u8; N]).read_unaligned();
            (dst.add(from) as *mut [u8; N]).write_unaligned(bytes);
        }
    }
    // SAFETY: every `chunk` lies within `0..len` (the caller's bytes): those from `at` while
    // `at + 32 < len`, the last ones ending exactly at `len`, and the pairs below 32 bytes
    // starting at 0 and ending at `len`, each no longer than `len`.
    unsafe {
        if len >= 32 {
            let mut at = 0;
            while at + 32 < len {
                chunk::<32>(src, dst, at);
                at += 32;
            }
            chunk::<32>(src, dst, len - 32);
        } else if len >= 16 {
            chunk::<16>(src, dst, 0);
            chunk::<16>(src, dst, len - 16);
        } else if len >= 8 {
            chunk::<8>(src, dst, 0);
            chunk::<8>(src, dst, len - 8);
        } else if len >= 4 {
            chunk::<4>(src, dst, 0);
            chunk::<4>(src, dst, len - 4);
        } else if len >= 2 {
            chunk::<2>(src, dst, 0);
            chunk::<2>(src, dst, len - 2);
        } else if len == 1 {
            chunk::<1>(src, dst, 0);
        }
    }
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

/// How a backend decodes the varints of one 64-byte window.
pub(crate) trait WindowDecoder {
    /// What the decoder keeps from one window to the next (say, how common long varints have
    /// been, to choose its loop by the data's mix with a branch that stays predictable).
    type Mix: Copy + Default;

    /// Decodes the varints that end in the window at `base` into `dst`, mapping each value with
    /// `convert`; the slots after the values written, up to the 64th, may be overwritten too
    /// (vector decoders store whole registers without checking where the values end). `stops`
    /// are the window's terminator bits (non-zero), `long_ends` those of the varints longer than
    /// 8 bytes; `mix` is the decoder's own, kept across the windows of one call; `V` is the
    /// backend's block type, for any other bits of the window the decoder needs. Returns the
    /// values written, the bytes consumed (through the last terminator) and whether a varint
    /// overflowed (the values are then meaningless).
    ///
    /// # Safety
    /// `base` must be valid for reads of 64 + 16 bytes and `dst` for writes of 64 values; the
    /// CPU must support the instruction sets of the implementation and of `V`.
    unsafe fn decode<V: Vector, X: Compress, T: Copy>(
        base: *const u8,
        stops: u64,
        long_ends: u64,
        mix: &mut Self::Mix,
        dst: *mut T,
        convert: impl Fn(u64) -> T,
    ) -> (usize, usize, bool);

    /// The decoder for a payload whose first windows are dense with varints over 8 bytes (see
    /// [`decode_varints`]), when [`HAS_DENSE`](Self::HAS_DENSE); else `Self`, unused.
    type Dense: WindowDecoder;

    /// Whether [`Dense`](Self::Dense) is another decoder.
    const HAS_DENSE: bool = false;

    /// The decoder for a payload whose first windows hold a few varints over 8 bytes, as
    /// negative `int32`s make (see [`decode_varints`]), when [`HAS_SPARSE`](Self::HAS_SPARSE);
    /// else `Self`, unused.
    type Sparse: WindowDecoder;

    /// Whether [`Sparse`](Self::Sparse) is another decoder.
    const HAS_SPARSE: bool = false;

    /// Whether [`decode_varints`]' bulk loop places its windows at fixed anchors (each from
    /// the bytes just before its own anchor and the next) rather than each where the one
    /// before it ended (see there).
    const ANCHORED: bool = false;
}

/// Varint by varint, each from one unaligned 8-byte load: works on every instruction set (NEON's
/// window decoder; the x86 backends use [`InLanes`]).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(crate) struct EachVarint;

impl WindowDecoder for EachVarint {
    type Mix = ();
    type Dense = Self;
    type Sparse = Self;

    #[inline(always)]
    unsafe fn decode<V: Vector, X: Compress, T: Copy>(
        base: *const u8,
        stops: u64,
        long_ends: u64,
        _mix: &mut (),
        dst: *mut T,
        convert: impl Fn(u64) -> T,
    ) -> (usize, usize, bool) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match long_ends.count_ones() {
                0 => decode_window::<X, T, SHORT>(base, stops, dst, convert),
                // A rare long varint is cheaper as a predictable branch than paid for by all.
                1..=2 => decode_window::<X, T, RARELY_LONG>(base, stops, dst, convert),
                _ => decode_window::<X, T, ANY>(base, stops, dst, convert),
            }
        }
    }
}

/// Re-decodes, one by one, the varints longer than 8 bytes (terminator bits `long_ends`) of a
/// window a vector decoder has handled as if they were short, overwriting their outputs.
/// Returns whether one of them overflowed.
///
/// # Safety
/// As for [`WindowDecoder::decode`].
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) unsafe fn redo_long_varints<X: Compress, T>(
    base: *const u8,
    stops: u64,
    mut long_ends: u64,
    dst: *mut T,
    convert: &impl Fn(u64) -> T,
) -> bool {
    let mut overflow = false;
    while long_ends != 0 {
        let end = long_ends.trailing_zeros();
        let before = stops & ((1u64 << end) - 1);
        let index = before.count_ones() as usize;
        let start = 64 - before.leading_zeros() as usize;
        // SAFETY: `start <= end < 64`, so 10 bytes from `base + start` are readable; `index` is
        // the varint's place among the window's outputs, below 64.
        unsafe {
            let (value, bad) = decode_known_len::<X>(base.add(start), end as usize + 1 - start);
            dst.add(index).write(convert(value));
            overflow |= bad;
        }
        long_ends &= long_ends - 1;
    }
    overflow
}

/// Whether one of a window's varints over 8 bytes (terminator bits `long_ends`, of the window's
/// `stops`) overflows: over 10 bytes (the 9th and 10th bytes before its terminator go on too),
/// or 10 with a last byte above 1 (`above_one`: bit `i` set when byte `i` is above 1; only the
/// terminators' bits are looked at). From the ends alone, without the carry runs that gave
/// `long_ends`: a window-wide check that shared them had the compiler keep them live across
/// the lane decoder's window loop, spilling them.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn long_varint_overflows(stops: u64, long_ends: u64, above_one: u64) -> bool {
    let carry = !stops;
    long_ends & carry << 9 & (carry << 10 | above_one) != 0
}

/// Whether the decoders' output type keeps only the low 32 bits of each value: every 4-byte
/// output does (`uint32`, `int32` and `sint32` convert the value's low 32 bits, which a varint's
/// first five bytes hold), so that a varint over 8 bytes needs no more of its bytes than the
/// first 8, only the check that it does not overflow. The kernels' `convert` for a 4-byte `T`
/// must read only those bits; the tests hold every type to the reference on long varints.
#[inline(always)]
pub(crate) const fn keeps_low_32<T>() -> bool {
    core::mem::size_of::<T>() == 4
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
    out: &mut [MaybeUninit<T>],
    pos: usize,
    n: usize,
    convert: impl Fn(u64) -> T,
) -> Result<usize> {
    scalar::decode_varints(&payload[pos..], &mut out[n..], convert).map(|k| n + k).map_err(|e| e.shifted(pos))
}

/// The window the block kernel works on: 64 input bytes, whatever the vector width, so that a
/// mixed window holds enough varints to make the one unpredictable branch per window (the end
/// of the varint loop) cheap per varint.
pub(crate) const WINDOW: usize = 64;

/// Bit `i` set when bits `i..i + 8` of `carry` (continuation bits) are all set: eight
/// continuation bytes in a row from byte `i`.
#[inline(always)]
fn runs_of_8(carry: u64) -> u64 {
    let carry2 = carry & carry >> 1;
    let carry4 = carry2 & carry2 >> 2;
    carry4 & carry4 >> 4
}

/// Bit `i` set when byte `i` of the 64 at `p` is a terminator (below 0x80).
///
/// # Safety
/// `p` must be valid for reads of 64 bytes; the CPU must support `V`'s instruction set.
#[inline(always)]
unsafe fn terminators<V: Vector>(p: *const u8) -> u64 {
    // SAFETY: forwarded from the caller.
    let [carry] = unsafe { window_bits::<V, 1>(p, |v| [v.continuation_bits()]) };
    !carry
}

/// The `N` bit sets `bits` gives for each block of the 64 bytes at `p`, each placed at the
/// block's offset: one load per block, whatever `N`.
///
/// # Safety
/// `p` must be valid for reads of 64 bytes; the CPU must support `V`'s instruction set.
#[inline(always)]
unsafe fn window_bits<V: Vector, const N: usize>(p: *const u8, bits: impl Fn(V) -> [u64; N]) -> [u64; N] {
    let mut all = [0u64; N];
    for i in 0..WINDOW / V::BYTES {
        // SAFETY: `i * BYTES + BYTES <= 64` readable bytes.
        let block = bits(unsafe { V::load(p.add(i * V::BYTES)) });
        for (all, block) in all.iter_mut().zip(block) {
            *all |= block << (i * V::BYTES);
        }
    }
    all
}

/// Decodes the varint of at most 8 bytes at `p`. Its own bytes say where it ends: the keep mask
/// runs to the first clear top bit, so the length is not needed.
///
/// # Safety
/// `p` must be valid for reads of 8 bytes, and the varint there at most 8 bytes long.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
unsafe fn decode_short<X: Compress>(p: *const u8) -> u64 {
    // SAFETY: the caller guarantees 8 readable bytes at `p`.
    let word = u64::from_le(unsafe { (p as *const u64).read_unaligned() });
    let stops = !word & 0x8080_8080_8080_8080;
    X::compress(word & (stops ^ stops.wrapping_sub(1)))
}

/// Which lengths a window's varints may have, to pick its loop (const parameters, so each
/// loop is compiled without the others' checks).
/// 1..=8 bytes.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
const SHORT: u8 = 0;
/// Mostly 1..=8, one or two longer.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
const RARELY_LONG: u8 = 1;
/// Anything.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
const ANY: u8 = 2;

/// Decodes every varint that ends in the window at `base`, whose terminator bits are `stops`
/// (non-zero), into `dst`. Returns the values written, the bytes consumed (through the last
/// terminator) and whether any varint overflowed (the values are then meaningless).
///
/// # Safety
/// `base` must be valid for reads of 64 + 16 bytes and `dst` for writes of 64 values.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
unsafe fn decode_window<X: Compress, T, const LENGTHS: u8>(
    base: *const u8,
    mut stops: u64,
    dst: *mut T,
    convert: impl Fn(u64) -> T,
) -> (usize, usize, bool) {
    let (mut n, mut start, mut overflow) = (0usize, 0usize, false);
    while stops != 0 {
        let end = stops.trailing_zeros() as usize;
        let len = end + 1 - start;
        // SAFETY: `start <= end < 64`, so the 10 bytes from `base + start` are readable.
        let p = unsafe { base.add(start) };
        let value = match LENGTHS {
            // SAFETY: as above (`decode_short` needs 8 of them).
            SHORT => unsafe { decode_short::<X>(p) },
            // SAFETY: as above.
            RARELY_LONG if len <= 8 => unsafe { decode_short::<X>(p) },
            _ => {
                // SAFETY: as above.
                let (value, bad) = unsafe { decode_known_len::<X>(p, len) };
                overflow |= bad;
                value
            }
        };
        // SAFETY: one value per terminator, at most 64, and `dst` has room for 64.
        unsafe { dst.add(n).write(convert(value)) };
        n += 1;
        start = end + 1;
        stops &= stops - 1;
    }
    (n, start, overflow)
}

/// A window of one-byte varints: each byte is its value.
#[inline(always)]
fn widen<T>(from: &[u8; WINDOW], to: &mut [MaybeUninit<T>; WINDOW], convert: impl Fn(u64) -> T) {
    // The payload reaches the kernel as a raw pointer, so the compiler cannot tell that it does
    // not overlap the output; a local copy it can (the signed types' loops vectorize then).
    let from = *from;
    for (o, &b) in to.iter_mut().zip(&from) {
        o.write(convert(b as u64));
    }
}

/// The anchored bulk loop's windows are this far apart: a window starts up to [`MAX_BACK`] bytes
/// before its anchor and ends where the next one starts, so it spans at most 64 bytes.
const STRIDE: usize = WINDOW - MAX_BACK;
/// The most continuation bytes a valid varint has before an anchor: nine, of a ten-byte one.
const MAX_BACK: usize = crate::varint::MAX_LEN - 1;

/// Packed varint decode, a 64-byte window at a time.
///
/// The window's terminator bits (bytes below 0x80) say where every varint that ends in it
/// starts and ends, so the varints decode independently of each other: no step waits for the
/// previous varint's length, and none branches on a length. A window of only terminators is
/// widened in one go; one with no run of eight continuation bytes (so no varint over 8 bytes)
/// takes the short-varint loop; others the full one. A varint that starts in the window but ends
/// after it is left for the next window. The last bytes (fewer than a window and its margin) are
/// copied into a zero-padded stack window whose terminator bits past the payload's end are
/// cleared, so that the vector code finishes short payloads too. With fewer than 64 outputs of
/// room left, a window decodes into a stack buffer and is copied out if it fits. Anything
/// unusual (an overflowing varint, no terminator in a window, a window with more varints than
/// the output has room for, a varint cut by the payload's end) goes to the reference from the
/// window's start. Windows away from both ends (of the payload and of the output) go through
/// a loop that skips the checks only the ends need and takes their terminator bits from
/// 64-byte blocks read ahead, so that no window's start waits on loading the window before it.
/// For the decoders that ask for it ([`WindowDecoder::ANCHORED`]) that loop places windows 55
/// bytes apart instead, each from the bytes before its own anchor and the next, so that no
/// window's place waits on the window before it either.
/// A window decoder with a variant for data dense with varints over 8 bytes
/// ([`WindowDecoder::Dense`]), or for data with a few of them ([`WindowDecoder::Sparse`]), gets
/// the whole call sent to it when the payload starts so ([`long_ends_at_start`]). A payload of at most one window takes that window's steps once, outside
/// the loops and their setup ([`decode_one_window`]): most packed fields are that short.
///
/// # Safety
/// The CPU must support the instruction sets of `V` and `X`.
#[inline(always)]
pub(crate) unsafe fn decode_varints<V: Vector, X: Compress, W: WindowDecoder, T: Copy>(
    input: Payload,
    out: &mut [MaybeUninit<T>],
    convert: impl Fn(u64) -> T + Copy,
) -> Result<usize> {
    if input.bytes().len() <= WINDOW {
        // SAFETY: forwarded from the caller.
        return unsafe { decode_one_window::<V, X, W, T>(input, out, convert) };
    }
    let long = long_ends_at_start::<V, W>(input.bytes());
    // A 4-byte output needs no varint's bytes past its 8th (see `keeps_low_32`): its payloads
    // dense with long varints take the variant for a few of them, which then only checks for
    // overflow.
    if W::HAS_DENSE && long >= DENSE_FROM && !keeps_low_32::<T>() {
        // SAFETY: forwarded from the caller.
        unsafe { decode_windows::<V, X, W::Dense, T>(input, out, convert) }
    } else if W::HAS_SPARSE && long >= SPARSE_FROM {
        // SAFETY: forwarded from the caller.
        unsafe { decode_windows::<V, X, W::Sparse, T>(input, out, convert) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { decode_windows::<V, X, W, T>(input, out, convert) }
    }
}

/// [`decode_windows`] for a payload of at most one window: the outer loop's body once, outside
/// the loop, so that a short payload does not pay for the loop's setup (its constants loaded
/// and spilled to the stack, the bulk loops' limits).
///
/// # Safety
/// The CPU must support the instruction sets of `V` and `X`.
#[inline(always)]
unsafe fn decode_one_window<V: Vector, X: Compress, W: WindowDecoder, T: Copy>(
    input: Payload,
    out: &mut [MaybeUninit<T>],
    convert: impl Fn(u64) -> T + Copy,
) -> Result<usize> {
    let payload = input.bytes();
    let len = payload.len();
    if len == 0 {
        return Ok(0);
    }
    let mut padded = [0u8; WINDOW + 16];
    // SAFETY: `len` payload bytes and `input.slop()` more readable at `input.ptr()`; the caller
    // guarantees the instruction set.
    let (base, stops) = unsafe { end_window::<V>(input.ptr(), len, input.slop(), &mut padded) };
    if stops == 0 {
        return finish(payload, out, 0, 0, convert);
    }
    let mut spill = [MaybeUninit::<T>::uninit(); WINDOW];
    let room = out.len();
    // SAFETY: 80 readable bytes at `base`, room for `room` values at the output's start; the
    // caller guarantees the instruction sets.
    let Some((written, consumed)) = (unsafe {
        checked_window::<V, X, W, T>(
            base,
            stops,
            &mut W::Mix::default(),
            out.as_mut_ptr() as *mut T,
            room,
            &mut spill,
            convert,
        )
    }) else {
        return finish(payload, out, 0, 0, convert);
    };
    if consumed == len {
        return Ok(written);
    }
    // A varint cut by the payload's end.
    finish(payload, out, consumed, written, convert)
}

/// A window near the payload's end, of which `left` bytes are the payload's: where a window and
/// its margin are readable at `at` (the payload's bytes and its slop), those; else the `left`
/// bytes copied into `padded`. Returns where the window is read and its terminator bits, none
/// past the payload's end (slop and padding are never terminators of the payload).
///
/// # Safety
/// `at` must be valid for reads of `left + slop` bytes, `left > 0`; the CPU must support `V`'s
/// instruction set.
#[inline(always)]
unsafe fn end_window<V: Vector>(
    at: *const u8,
    left: usize,
    slop: usize,
    padded: &mut [u8; WINDOW + 16],
) -> (*const u8, u64) {
    let base = if left + slop >= WINDOW + 16 {
        at
    } else {
        // SAFETY: `left` readable bytes at `at`, and `left < WINDOW + 16` here.
        unsafe { V::copy_tail(at, left, padded) };
        padded.as_ptr()
    };
    // SAFETY: 80 readable bytes at `base` (at `at`, or `padded`); the caller guarantees the
    // instruction set.
    let stops = unsafe { terminators::<V>(base) };
    (base, if left >= WINDOW { stops } else { stops & ((1u64 << left) - 1) })
}

/// One window (its terminator bits `stops`, not zero) decoded to `dst`, which has room for
/// `room` values: directly with room for 64, the most that end in a window, else through
/// `spill` and copied out if they fit. Returns the values written and the bytes consumed, or
/// `None` if a varint overflowed or more values end in the window than `room`.
///
/// # Safety
/// 80 readable bytes at `base`; `dst` valid for writes of `room` values; the CPU must support
/// the instruction sets of `V` and `X`.
#[inline(always)]
unsafe fn checked_window<V: Vector, X: Compress, W: WindowDecoder, T: Copy>(
    base: *const u8,
    stops: u64,
    mix: &mut W::Mix,
    dst: *mut T,
    room: usize,
    spill: &mut [MaybeUninit<T>; WINDOW],
    convert: impl Fn(u64) -> T + Copy,
) -> Option<(usize, usize)> {
    let to = if room >= WINDOW { dst } else { spill.as_mut_ptr() as *mut T };
    // SAFETY: 64 + 16 readable bytes at `base`, room for 64 values at `to` (the output, or
    // `spill`); the caller guarantees the instruction sets.
    let (written, consumed) = unsafe { bulk_window::<V, X, W, T>(base, stops, mix, to, convert) }?;
    if written > room {
        return None;
    }
    if room < WINDOW {
        // SAFETY: the decoder initialised `spill[..written]`, `written <= room` values fit at
        // `dst`, and the two buffers are distinct.
        unsafe { V::copy_out(to as *const u8, dst as *mut u8, written * core::mem::size_of::<T>()) };
    }
    Some((written, consumed))
}

/// Payloads whose first eight 64-byte windows end at least this many varints over 8 bytes go
/// to `W`'s decoder for data dense with them ([`WindowDecoder::Dense`]): 1.5 a window;
/// `realistic` data has 0.71, `u64-mixed` 2.04 (of 64 payloads of 10,000 values, 0 and 59
/// pass).
const DENSE_FROM: u32 = 12;

/// Payloads whose first eight windows end at least this many varints over 8 bytes (and fewer
/// than [`DENSE_FROM`]) go to `W`'s decoder for a few of them ([`WindowDecoder::Sparse`]):
/// `realistic` data, about 5.7 in eight windows, passes (but for about one payload in 13),
/// data without long varints does not, and pays nothing for that decoder's window check. Fresh
/// 10,000 values (`realistic` with its 2% of negative `int32`s at another rate), ns a value
/// before -> after, AVX2 / SSE2: 0.5% 0.481 -> 0.482 / 0.915 -> 0.933, 1% 0.525 -> 0.519 /
/// 0.977 -> 1.015, 2% 0.608 -> 0.535 / 1.099 -> 1.073, 4% 0.749 -> 0.658 / 1.307 -> 1.221.
/// (From 4, SSE2 at 1% still lost 3.5%, and AVX2 on `realistic` gained less.)
const SPARSE_FROM: u32 = 3;

/// How many varints over 8 bytes end in the first eight 64-byte windows of `payload` (none if
/// it is shorter, or if `W` has no decoder for either kind of data), for [`decode_varints`]'s
/// one choice a call: the window loops then stay in loop bodies of their own, where in one body
/// the compiler spilled the shared state of every window for them (see [`InLanes`]).
#[inline(always)]
fn long_ends_at_start<V: Vector, W: WindowDecoder>(payload: &[u8]) -> u32 {
    const WINDOWS: usize = 8;
    if !(W::HAS_DENSE || W::HAS_SPARSE) || payload.len() < WINDOWS * WINDOW {
        return 0;
    }
    (0..WINDOWS)
        .map(|i| {
            // SAFETY: `64 * i + 64 <= payload.len()`; the caller guarantees `V`'s instruction
            // set.
            let stops = unsafe { terminators::<V>(payload.as_ptr().add(i * WINDOW)) };
            (runs_of_8(!stops) << 8 & stops).count_ones()
        })
        .sum()
}

/// [`decode_varints`] with one window decoder.
///
/// # Safety
/// The CPU must support the instruction sets of `V` and `X`.
#[inline(always)]
unsafe fn decode_windows<V: Vector, X: Compress, W: WindowDecoder, T: Copy>(
    input: Payload,
    out: &mut [MaybeUninit<T>],
    convert: impl Fn(u64) -> T + Copy,
) -> Result<usize> {
    let payload = input.bytes();
    // Reads past the end go through `src`, whose provenance covers the slop too.
    let src = input.ptr();
    let slop = input.slop();
    // Taken again after each safe write through `out`, which ends an earlier pointer's right to
    // write (Stacked Borrows; Miri).
    let mut dst = out.as_mut_ptr() as *mut T;
    let (mut pos, mut n) = (0usize, 0usize);
    // The tail's window. Bytes past the payload's end may hold an earlier tail's: they are never
    // terminators of the window, and a varint's value depends only on its own bytes.
    let mut padded = [0u8; WINDOW + 16];
    // Where a window's values go when the output has room for fewer than 64, the most varints
    // that can end in a window.
    let mut spill = [MaybeUninit::<T>::uninit(); WINDOW];
    let mut mix = W::Mix::default();
    // A window is read with a 16-byte margin after it (the payload's or `padded`'s), so that
    // every varint ending in it can be read as 10 bytes unchecked.
    //
    // Windows with 64 payload bytes and their margin readable and room for 64 values take the
    // inner loop, without the checks the last windows need (the tail copy, the mask past the
    // end, the stack buffer for the outputs): that per-window work cost about as much as
    // decoding 20 varints (A/B, fresh 10,000 values: AVX2 -5% to -6%, AVX-512 -3% to -16%,
    // SSE2/SSSE3 -2% to -4%). The outer loop's body takes the other windows, one-byte runs
    // and anything the inner loop stops at, a window at a time.
    //
    // The inner loop takes a window's terminator bits from those of the 64-byte blocks from
    // where it began, read up to three blocks ahead of its window (192 bytes): each block's
    // load and mask then wait on nothing, and the chain from one window's start to the next
    // is a shift of two masks, the leading-zero count and an add, no longer a load of the new
    // window and its mask too. (A probe that advanced windows by a constant, exact on its
    // data, put that load at about half the time of 8-byte varints on AVX-512; with the block
    // masks, AVX-512 `u32-mixed` took 0.537 -> 0.341 ns/value in the wall A/B.)
    //
    // That chain (two masks shifted, a leading-zero count, the block's select) still ran
    // through every window, and through the stack where the decoder spilled its parts. The
    // anchored loop has none: a window's start and bits come from the block read two windows
    // ahead at its anchor, whatever the windows before it held. Its windows are shorter (55
    // bytes apart, so that one reaching 9 bytes back fits 64 bits), so more of them: the lane
    // decoders (AVX2, SSE2, SSSE3), whose windows took 50-60 cycles, gain (fresh 10,000
    // values, AVX2: u32-mixed -12%, realistic -6%, u64-mixed -3%), while AVX-512's, bound by
    // each window's fixed cost, lost 5-10% on mixed data and keeps the chained loop. (A probe
    // that placed each anchored window by loads of its own bytes, not read ahead, was slower
    // than the chained loop on every backend.)
    //
    // The limits are on `pos` (the window and its margin in the payload, the blocks in the
    // payload and its slop) and on `n` (room for 64 values); `None` when nothing qualifies.
    let bulk_pos_end = match (
        payload.len().checked_sub(WINDOW + 16usize.saturating_sub(slop)),
        (payload.len() + slop).checked_sub(3 * WINDOW),
    ) {
        (Some(window_end), Some(block_end)) => Some(window_end.min(block_end)),
        _ => None,
    };
    let bulk_n_end = out.len().checked_sub(WINDOW);
    let bulk = |pos: usize, n: usize| {
        bulk_pos_end.is_some_and(|end| pos <= end) && bulk_n_end.is_some_and(|end| n <= end)
    };
    while pos < payload.len() {
        if bulk(pos, n) && W::ANCHORED {
            // Window `b` is anchored at `anchor = pos + STRIDE * b` and runs from `anchor - back`
            // (`back`: the continuation bytes just before its anchor, of the varint that crosses
            // it, at most 9 in a valid payload) to the next window's start. Its terminator bits
            // are those of the 64 bytes from `anchor - MAX_BACK` (`ahead[0]`, read two windows
            // ahead); their top zeros, the continuation bytes just before the next anchor, are
            // the next window's `back`. So no window's place waits on the window before it.
            let mut anchor = pos;
            let mut back = 0usize;
            // SAFETY: `pos + 192 <= payload.len() + slop` (`bulk`), so both blocks are
            // readable; the caller guarantees the instruction set. The first window's bits are
            // read from `pos` and shifted up as if read from `pos - MAX_BACK`.
            let mut ahead = unsafe {
                [
                    terminators::<V>(src.add(pos)) << MAX_BACK,
                    terminators::<V>(src.add(pos + STRIDE - MAX_BACK)),
                ]
            };
            while bulk(anchor, n) {
                // SAFETY: `anchor + 2 * STRIDE - MAX_BACK + 64 < anchor + 192 <= payload.len() +
                // slop`; the caller guarantees the instruction set.
                let later = unsafe { terminators::<V>(src.add(anchor + 2 * STRIDE - MAX_BACK)) };
                // `ahead[0]` holds payload bytes only (`anchor + 64 <= payload.len()`).
                let next_back = ahead[0].leading_zeros() as usize;
                if next_back > MAX_BACK {
                    // An overlong varint (or no terminator): the outer loop's body finds which.
                    break;
                }
                let here = anchor - back;
                // The window's bits: from `here` up to the next window's start (the bits after
                // that are the next anchor's continuation bytes, zero, and zeros shifted in).
                // Not zero: the byte before the next window's start is a terminator.
                let stops = ahead[0] >> (MAX_BACK - back);
                let len = STRIDE + back - next_back;
                // A window of one-byte varints: the outer loop's body widens the run.
                if stops == u64::MAX >> (64 - len) {
                    break;
                }
                // SAFETY: 80 readable bytes at `src + here` (`here <= anchor`, `bulk`), room for
                // 64 values at `dst + n` (`bulk`); the caller guarantees the instruction set.
                let Some((written, consumed)) = (unsafe {
                    bulk_window::<V, X, W, T>(src.add(here), stops, &mut mix, dst.add(n), convert)
                }) else {
                    return finish(payload, out, here, n, convert);
                };
                debug_assert_eq!(consumed, len);
                n += written;
                anchor += STRIDE;
                back = next_back;
                ahead = [ahead[1], later];
            }
            pos = anchor - back;
        } else if bulk(pos, n) {
            let mut block = pos;
            // SAFETY: `block + 192 <= payload.len() + slop`, so both blocks are readable; the
            // caller guarantees the instruction set.
            let (mut low, mut high) =
                unsafe { (terminators::<V>(src.add(block)), terminators::<V>(src.add(block + WINDOW))) };
            // `pos = block + off` with `off < 64` throughout, so `block + 192 <= payload.len() +
            // slop`. The chain from window to window runs through `off` alone.
            let mut off = 0usize;
            while bulk(pos, n) {
                // SAFETY: as above, `block + 128 + 64` readable bytes.
                let next = unsafe { terminators::<V>(src.add(block + 2 * WINDOW)) };
                // The window's 64 bits, from bit `off` of the two blocks' (`off < 64`).
                let stops = low >> off | (high << 1) << (63 - off);
                if stops == u64::MAX || stops == 0 {
                    break;
                }
                // SAFETY: 64 payload bytes and 16 more (payload or slop) at `src + pos`, room
                // for 64 values at `dst + n`; the caller guarantees the instruction set.
                let Some((written, consumed)) = (unsafe {
                    bulk_window::<V, X, W, T>(src.add(pos), stops, &mut mix, dst.add(n), convert)
                }) else {
                    return finish(payload, out, pos, n, convert);
                };
                n += written;
                // Past the block (`consumed <= 64`, so at most one): shift the blocks by one,
                // without a branch (one window in a few ends in the same block).
                let end = off + consumed;
                let step = end >> 6;
                off = end & 63;
                let stay = (step as u64).wrapping_sub(1);
                low = low & stay | high & !stay;
                high = high & stay | next & !stay;
                block += step << 6;
                pos = block + off;
            }
        }
        if pos >= payload.len() {
            break;
        }
        let left = payload.len() - pos;
        // SAFETY: `left` payload bytes and `slop` more readable at `src + pos`; the caller
        // guarantees the instruction set.
        let (base, stops) = unsafe { end_window::<V>(src.add(pos), left, slop, &mut padded) };
        let room = out.len() - n;
        if stops == u64::MAX && room >= WINDOW {
            // 64 terminators (so `left >= 64`): a run of one-byte windows (enums, small ids),
            // widened back to back while the next window is one too, without the bookkeeping
            // above (the tail copy, the mask, the room check a window), which cost AVX2 a
            // third more time than the widening's stores on one-byte data.
            // First the values up to a 64-byte boundary of the output, one by one, so that the
            // run's stores do not straddle cache lines (`u64` outputs 16 or 48 bytes off a line
            // took 0.096-0.100 ns a value against 0.080 on the line, AVX-512).
            let to_line = (64 - (dst.wrapping_add(n) as usize) % 64) % 64 / core::mem::size_of::<T>().max(1);
            if to_line != 0 {
                for (o, &b) in out[n..n + to_line].iter_mut().zip(&payload[pos..pos + to_line]) {
                    o.write(convert(b as u64));
                }
                pos += to_line;
                n += to_line;
                dst = out.as_mut_ptr() as *mut T;
                continue;
            }
            loop {
                let (from, to) = (&payload[pos..pos + WINDOW], &mut out[n..n + WINDOW]);
                if let (Ok(from), Ok(to)) =
                    (<&[u8; WINDOW]>::try_from(from), <&mut [MaybeUninit<T>; WINDOW]>::try_from(to))
                {
                    widen(from, to, convert);
                }
                pos += WINDOW;
                n += WINDOW;
                if payload.len() - pos < WINDOW || out.len() - n < WINDOW {
                    break;
                }
                // SAFETY: 64 payload bytes at `pos`; the caller guarantees the instruction set.
                if unsafe { terminators::<V>(src.add(pos)) } != u64::MAX {
                    break;
                }
            }
            dst = out.as_mut_ptr() as *mut T;
            continue;
        }
        if stops == 0 {
            break;
        }
        // SAFETY: 80 readable bytes at `base`, room for `room` values at `dst + n`; the caller
        // guarantees the instruction sets.
        let Some((written, consumed)) = (unsafe {
            checked_window::<V, X, W, T>(base, stops, &mut mix, dst.add(n), room, &mut spill, convert)
        }) else {
            return finish(payload, out, pos, n, convert);
        };
        n += written;
        pos += consumed;
    }
    if pos == payload.len() {
        // Every varint ended in a window (the usual case): no call into the reference.
        return Ok(n);
    }
    finish(payload, out, pos, n, convert)
}

/// One window: the values of the varints ending in it (its terminator bits `stops`, not zero)
/// at `dst`. Returns the values written and the bytes consumed, or `None` if a varint
/// overflowed. The bulk loops' step; [`checked_window`] adds what the ends need.
///
/// # Safety
/// As for [`WindowDecoder::decode`].
#[inline(always)]
unsafe fn bulk_window<V: Vector, X: Compress, W: WindowDecoder, T: Copy>(
    base: *const u8,
    stops: u64,
    mix: &mut W::Mix,
    dst: *mut T,
    convert: impl Fn(u64) -> T,
) -> Option<(usize, usize)> {
    let long_ends = runs_of_8(!stops) << 8 & stops;
    // SAFETY: forwarded from the caller.
    let (written, consumed, overflow) =
        unsafe { W::decode::<V, X, T>(base, stops, long_ends, mix, dst, convert) };
    (!overflow).then_some((written, consumed))
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

/// Skips `n` varints, a 64-byte window at a time at a fixed stride, so that no load waits for
/// a varint length: each window's terminators are counted, and its bits, with the previous
/// window's, show whether a varint ending in it overflows. The window holding the `n`th
/// terminator gives the result; an overflowing varint and the last bytes (under a window) go to
/// the reference from the start of the varint in progress.
///
/// # Safety
/// The CPU must support the instruction set of `V`.
#[inline(always)]
pub(crate) unsafe fn skip_varints<V: Vector, C: CarryIn>(payload: &[u8], n: usize) -> Result<usize> {
    // `left`: the varints to skip from the start of the window at `at`.
    let mut left = n;
    // The payload begins a varint, as if after a window of terminators.
    let mut runs = ContinuationRuns::<C>::default();
    let mut at = 0usize;
    while left > 0 && payload.len() - at >= WINDOW {
        // SAFETY: `at + 64 <= payload.len()` readable bytes; the caller guarantees the
        // instruction set.
        let [carry, above_one] = unsafe {
            window_bits::<V, 2>(payload.as_ptr().add(at), |v| [v.continuation_bits(), v.above_one_bits()])
        };
        let stops = !carry;
        // A byte after nine continuation bytes ends an overflowing varint unless it is a
        // terminator of 0 or 1 (the last byte of a 10-byte varint). Checked without a branch
        // on whether the window has long varints: in mixed 64-bit data most windows do.
        let (after_nine, next) = runs.next(carry);
        if after_nine & (carry | above_one) != 0 {
            break;
        }
        let count = stops.count_ones() as usize;
        if count >= left {
            // Clear the first `left - 1` terminators; the lowest left is the `n`th's.
            let mut rest = stops;
            for _ in 1..left {
                rest &= rest - 1;
            }
            return Ok(at + rest.trailing_zeros() as usize + 1);
        }
        left -= count;
        runs = next;
        at += WINDOW;
    }
    // Where the varint in progress begins: after the last terminator of the windows passed
    // (each has one, or nine continuation bytes in a row would have stopped the loop).
    let start = at - runs.carry.leading_ones() as usize;
    scalar::skip_varints(&payload[start..], left).map(|k| start + k).map_err(|e| e.shifted(start))
}

/// How a window's mask hands its top bits to the next window's runs, which shift them in at
/// bit 0: kept whole, so that the next window shifts its own mask and this one's together with
/// one funnel shift ([`Whole`]), or cut down to those bits as the window ends, so that the next
/// one needs only a shift and an `or` ([`TopBits`]).
pub(crate) trait CarryIn: Copy + Default {
    /// What `mask` hands on for a shift by `K`.
    fn keep<const K: u32>(mask: u64) -> Self;
    /// `mask << K` with the top `K` bits of the previous window's mask (as `keep` kept them)
    /// below.
    fn shift_in<const K: u32>(self, mask: u64) -> u64;
}

/// The whole mask: `mask << K | previous >> (64 - K)`, one `SHLD` on x86-64, which LLVM's
/// tuning takes as cheap on Intel's cores and on AMD's from Zen 3.
#[derive(Clone, Copy, Default)]
pub(crate) struct Whole(u64);

impl CarryIn for Whole {
    #[inline(always)]
    fn keep<const K: u32>(mask: u64) -> Self {
        Whole(mask)
    }
    #[inline(always)]
    fn shift_in<const K: u32>(self, mask: u64) -> u64 {
        mask << K | self.0 >> (64 - K)
    }
}

/// The top bits only, for the CPUs whose `SHLD` takes several micro-ops (AMD's Zen 1 and Zen 2,
/// as LLVM's tuning for them also says): on Zen 1 `skip_varints` went 8.1-8.8 -> 11.8-13.4 GB/s
/// on AVX2 (A/B, three rounds) with this one, though it runs about a quarter more instructions
/// (callgrind, with it in every table: 0.72 -> 0.92 a one-byte value on AVX2). Intel's CPUs and
/// Zen 3 and 4 keep [`Whole`]: not measured there with this one.
#[derive(Clone, Copy, Default)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct TopBits(u64);

impl CarryIn for TopBits {
    #[inline(always)]
    fn keep<const K: u32>(mask: u64) -> Self {
        TopBits(mask >> (64 - K))
    }
    #[inline(always)]
    fn shift_in<const K: u32>(self, mask: u64) -> u64 {
        mask << K | self.0
    }
}

/// Runs of continuation bytes through consecutive windows: each run's mask as it carries into
/// the next window ([`CarryIn`]), and the last window's continuation bits.
#[derive(Clone, Copy, Default)]
struct ContinuationRuns<C: CarryIn> {
    /// Bit `j`: byte `j` of the window is a continuation byte.
    carry: u64,
    /// `carry`, for a shift by 1. (Kept apart from `carry`, not derived from it at the next
    /// window: with [`TopBits`] the cut must happen in this window, or LLVM, seeing `x << 1 |
    /// carry >> 63` in one block, makes it the `SHLD` that form avoids: two came back in the
    /// slow-PEXT table's `skip_varints` when tried.)
    carry_by1: C,
    /// `carry`, for a shift by 8 (kept apart likewise).
    carry_by8: C,
    /// Bit `j`: bytes `j - 1..=j` are continuation bytes; for a shift by 2.
    carry2: C,
    /// Bit `j`: bytes `j - 3..=j` are; for a shift by 4.
    carry4: C,
    /// Bit `j`: bytes `j - 8..=j` are; for a shift by 1.
    runs9: C,
}

impl<C: CarryIn> ContinuationRuns<C> {
    /// The runs through the next window, whose continuation bits are `carry`, and bit `i` set
    /// when the nine bytes before its byte `i` (reaching back into earlier windows) are all
    /// continuation bytes.
    #[inline(always)]
    fn next(self, carry: u64) -> (u64, ContinuationRuns<C>) {
        let carry2 = carry & self.carry_by1.shift_in::<1>(carry);
        let carry4 = carry2 & self.carry2.shift_in::<2>(carry2);
        let carry8 = carry4 & self.carry4.shift_in::<4>(carry4);
        let runs9 = carry8 & self.carry_by8.shift_in::<8>(carry);
        let next = ContinuationRuns {
            carry,
            carry_by1: C::keep::<1>(carry),
            carry_by8: C::keep::<8>(carry),
            carry2: C::keep::<2>(carry2),
            carry4: C::keep::<4>(carry4),
            runs9: C::keep::<1>(runs9),
        };
        (self.runs9.shift_in::<1>(runs9), next)
    }
}

/// Defines a backend's kernel functions (`#[target_feature]` instantiations of the generic
/// algorithms for `$vector`, `$compress` and the window decoder `$window`) and the table
/// of them, `FNS`. Its encoders are those of the module `$encoders` (by default the portable
/// ones of [`crate::packed`]); `$carry` is how `skip_varints` carries its runs from window to
/// window (by default [`Whole`]).
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(unused_macros))]
macro_rules! kernel_fns {
    ($features:literal, $vector:ty, $compress:ty, $window:ty) => {
        crate::arch::generic::kernel_fns!($features, $vector, $compress, $window, crate::packed::portable);
    };
    ($features:literal, $vector:ty, $compress:ty, $window:ty, $($encoders:ident)::+) => {
        crate::arch::generic::kernel_fns!(
            $features, $vector, $compress, $window, $($encoders)::+, crate::arch::generic::Whole
        );
    };
    ($features:literal, $vector:ty, $compress:ty, $window:ty, $($encoders:ident)::+, $carry:ty) => {
        #[target_feature(enable = $features)]
        unsafe fn decode_u64(
            payload: crate::arch::Payload,
            out: &mut [core::mem::MaybeUninit<u64>],
        ) -> crate::error::Result<usize> {
            // SAFETY: only reachable through `FNS`, handed out once the CPU has these features.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, $window, u64>(payload, out, |v| v)
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_u32(
            payload: crate::arch::Payload,
            out: &mut [core::mem::MaybeUninit<u32>],
        ) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, $window, u32>(payload, out, |v| {
                    v as u32
                })
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_sint64(
            payload: crate::arch::Payload,
            out: &mut [core::mem::MaybeUninit<i64>],
        ) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, $window, i64>(
                    payload,
                    out,
                    crate::varint::zigzag_decode_64,
                )
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_sint32(
            payload: crate::arch::Payload,
            out: &mut [core::mem::MaybeUninit<i32>],
        ) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, $window, i32>(payload, out, |v| {
                    crate::varint::zigzag_decode_32(v as u32)
                })
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn decode_bool(
            payload: crate::arch::Payload,
            out: &mut [core::mem::MaybeUninit<bool>],
        ) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe {
                crate::arch::generic::decode_varints::<$vector, $compress, $window, bool>(payload, out, |v| {
                    v != 0
                })
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn count_varints(payload: &[u8]) -> usize {
            // SAFETY: as for `decode_u64`.
            unsafe { crate::arch::generic::count_varints::<$vector>(payload) }
        }

        #[target_feature(enable = $features)]
        unsafe fn skip_varints(payload: &[u8], n: usize) -> crate::error::Result<usize> {
            // SAFETY: as for `decode_u64`.
            unsafe { crate::arch::generic::skip_varints::<$vector, $carry>(payload, n) }
        }

        pub(crate) static FNS: crate::arch::KernelFns = crate::arch::KernelFns {
            decode_u64,
            decode_u32,
            decode_sint64,
            decode_sint32,
            decode_bool,
            count_varints,
            skip_varints,
            encode_u64: $($encoders)::+::encode_u64,
            encode_u32: $($encoders)::+::encode_u32,
            encode_i32: $($encoders)::+::encode_i32,
            encode_sint64: $($encoders)::+::encode_sint64,
            encode_sint32: $($encoders)::+::encode_sint32,
            encode_bool: $($encoders)::+::encode_bool,
            encoded_len_u64: $($encoders)::+::encoded_len_u64,
            encoded_len_sint64: $($encoders)::+::encoded_len_sint64,
            // Each backend module names its UTF-8 check.
            validate_utf8: VALIDATE_UTF8,
            // And its field scan for `fields::validate`.
            scan_fields: SCAN_FIELDS,
            // And from which length it takes short packed payloads with longer varints.
            short_mixed: SHORT_MIXED,
        };
    };
}
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(unused_imports))]
pub(crate) use kernel_fns;

/// Stores a step's decoded values, converted, at `dst`: all of them, also in the window's last
/// step when fewer are real, without a branch on how many (a loop over the real ones, or a
/// masked store through scratch, cost the last step of every window a mispredicted branch or a
/// stalled reload: most of SSE2's time on mixed data). The extra ones land in slots after the
/// window's values, whose contents the decoders leave unspecified.
///
/// # Safety
/// `dst` must be valid for writes of `values.len()` values.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) unsafe fn store_group<T>(values: &[u64], dst: *mut T, convert: &impl Fn(u64) -> T) {
    for (i, &value) in values.iter().enumerate() {
        // SAFETY: `i < values.len()`, which the caller guarantees room for.
        unsafe { dst.add(i).write(convert(value)) };
    }
}

/// Decodes four varints, one per 64-bit vector lane.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) trait Gather4 {
    /// The varints of at most 8 bytes at the four addresses (a longer one gives a meaningless
    /// value).
    ///
    /// # Safety
    /// Each pointer must be valid for reads of 8 bytes; the CPU must support the
    /// implementation's instruction set.
    unsafe fn decode4(p: [*const u8; 4]) -> [u64; 4];

    /// The varints of at most 10 bytes at the four addresses: as [`decode4`](Self::decode4),
    /// and a lane whose 8 bytes all go on takes its varint's 9th byte, and its 10th's lowest
    /// bit if the 9th goes on. An overflowing varint (a 10th byte above 1, or more bytes) gives
    /// a meaningless value; the caller finds those from the window's bits.
    ///
    /// # Safety
    /// Each pointer must be valid for reads of 16 bytes; the CPU must support the
    /// implementation's instruction set.
    unsafe fn decode4_long(p: [*const u8; 4]) -> [u64; 4];

    /// As [`decode4`](Self::decode4), and a lane whose 8 bytes all go on gets bits 56..64 set:
    /// the value of a 10-byte varint whose last two bytes are `0xff` and `0x01`, a negative
    /// number of at least -2^56 (every negative `int32`, as encoders write it). The caller
    /// checks that the long varints were such ([`negative_ten_byte_ends`]).
    ///
    /// # Safety
    /// As for [`decode4`](Self::decode4).
    unsafe fn decode4_negative(p: [*const u8; 4]) -> [u64; 4];
}

/// Bits 56..64 of a negative number of at least -2^56: what a 10-byte varint ending in `0xff`,
/// `0x01` adds to its first 8 bytes' 56 bits ([`Gather4::decode4_negative`]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const NEGATIVE_TOP_BYTE: u64 = 0xff00_0000_0000_0000;

/// Of a window's varints over 8 bytes (terminator bits `long_ends`, of its `stops`), those of
/// exactly 10 bytes whose last two are `0xff` and `0x01`, which [`Gather4::decode4_negative`]
/// decodes right; `ones` and `all_ones` are the window's bytes equal to `0x01` and `0xff`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn negative_ten_byte_ends(stops: u64, long_ends: u64, ones: u64, all_ones: u64) -> u64 {
    // A varint starts at byte 0 (the window starts one) and after every terminator; a long one
    // (eight continuation bytes before its terminator) that starts nine bytes before its
    // terminator, with a continuation byte there, has exactly ten.
    let starts = stops << 1 | 1;
    (starts & !stops) << 9 & long_ends & ones & all_ones << 1
}

/// Four varints a step, each loaded into a 64-bit vector lane at the start its window's
/// terminator bits give, cut at its terminator and packed in the lanes: no branch on any
/// varint's length, and the general registers only find the starts. Varints over 8 bytes: with
/// `LONG` (a call whose payload starts dense with them, see [`decode_varints`]) every lane also
/// takes its bytes 8 and 9 (16-byte loads, [`Gather4::decode4_long`]); without, they are redone
/// after the window, a window's only one by itself, two or more four at a time in lanes, each
/// value written back to its own slot. (All redone one by one, with a branch per long varint:
/// AVX2 `u64-mixed` 1.62 ns/value at 10,000 values; the redo in lanes 1.42, with the `LONG`
/// variant for dense payloads 1.18; a probe that skipped the redo, wrong values, took 0.75. The
/// lanes' work in every window, chosen window by window by a branch, cost `u32-mixed` 4-6%: the
/// compiler spilled the window loop's state for the second loop body.) With `NEGATIVE` (a call
/// whose payload starts with a few of them) every lane whose 8 bytes all go on is taken for a
/// negative number of ten bytes, the usual long varint there (a negative `int32`), and a check
/// after the window sends the window to the redo only if one was not that.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct InLanes<G, const LONG: bool = false, const NEGATIVE: bool = false>(
    core::marker::PhantomData<G>,
);

impl<G: Gather4, const LONG: bool, const NEGATIVE: bool> InLanes<G, LONG, NEGATIVE> {
    /// Re-decodes the varints over 8 bytes (terminator bits `long_ends`), four a step,
    /// overwriting their outputs. A step with fewer than four left decodes the first again in
    /// the spare lanes, which writes the same value to the same slot.
    ///
    /// # Safety
    /// As for [`WindowDecoder::decode`].
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    unsafe fn redo_long<T: Copy>(
        base: *const u8,
        stops: u64,
        mut long_ends: u64,
        dst: *mut T,
        convert: &impl Fn(u64) -> T,
    ) {
        while long_ends != 0 {
            let first = long_ends.trailing_zeros();
            let (mut p, mut slot) = ([base; 4], [0usize; 4]);
            for (p, slot) in p.iter_mut().zip(&mut slot) {
                let end = if long_ends != 0 { long_ends.trailing_zeros() } else { first };
                // The terminators before this varint's: their count is its slot, and the last
                // one ends the varint before it.
                let before = stops & ((1u64 << end) - 1);
                *slot = before.count_ones() as usize;
                // SAFETY: a varint over 8 bytes starts at least 8 bytes before its end (`end <
                // 64`), so before offset 56, and 64 + 16 bytes are readable at `base`.
                *p = unsafe { base.add(64 - before.leading_zeros() as usize) };
                long_ends &= long_ends.wrapping_sub(1);
            }
            // SAFETY: 16 readable bytes at each pointer (above); the caller guarantees the
            // instruction set.
            let values = unsafe { G::decode4_long(p) };
            for (&slot, &value) in slot.iter().zip(&values) {
                // SAFETY: `slot < 64`, the window's varints, which `dst` has room for.
                unsafe { dst.add(slot).write(convert(value)) };
            }
        }
    }
}

impl<G: Gather4, const LONG: bool, const NEGATIVE: bool> WindowDecoder for InLanes<G, LONG, NEGATIVE> {
    type Mix = ();
    // Unused but in the plain decoder (`!LONG && !NEGATIVE`), which chooses.
    type Dense = InLanes<G, true>;
    const HAS_DENSE: bool = !LONG && !NEGATIVE;
    type Sparse = InLanes<G, false, true>;
    const HAS_SPARSE: bool = !LONG && !NEGATIVE;
    // Fresh 10,000 values, AVX2: u32-mixed -12%, realistic -6%, u64-mixed -3%; SSE2 and SSSE3
    // u64-mixed -6% and -4%, their other mixed rows -2% to +1% (see `decode_varints`).
    const ANCHORED: bool = true;

    #[inline(always)]
    unsafe fn decode<V: Vector, X: Compress, T: Copy>(
        base: *const u8,
        stops: u64,
        long_ends: u64,
        _mix: &mut (),
        dst: *mut T,
        convert: impl Fn(u64) -> T,
    ) -> (usize, usize, bool) {
        let count = stops.count_ones() as usize;
        let consumed = 64 - stops.leading_zeros() as usize;
        // Two steps an iteration for short varints (eight a window's first step has room for:
        // `n` then a multiple of 8, below `count <= 64`), one with `LONG`: `u32-mixed`, about
        // 21 varints a window, takes 3 iterations (2 to 4) where it took 6 (4 to 7), and the
        // predictor misses the loop's end less. Fresh 10,000 values, AVX2: u32-mixed 0.667 ->
        // 0.557 ns a value, realistic 0.634 -> 0.565; SSE2/SSSE3 -4% to -9%. (Four steps an
        // iteration: u32-mixed SSE2 +10%; two with `LONG`: SSE2 `u64-mixed` +7%.)
        let group = if LONG { 4 } else { 8 };
        let (mut rest, mut start, mut n) = (stops, 0usize, 0usize);
        while n < count {
            for _ in 0..group / 4 {
                let mut p = [base; 4];
                for lane in &mut p {
                    // 64 and 65 only start lanes past the window's last varint, whose values
                    // are overwritten later; with `LONG` those read from 0 or 1, to keep 16
                    // bytes readable.
                    let at = if LONG { start & 63 } else { start };
                    // SAFETY: `at <= 65` (64 + 1 once `rest` is empty; below 64 with `LONG`),
                    // and 64 + 16 bytes are readable at `base`, so 8 are at `base + at` (16
                    // with `LONG`).
                    *lane = unsafe { base.add(at) };
                    start = rest.trailing_zeros() as usize + 1;
                    rest &= rest.wrapping_sub(1);
                }
                // SAFETY: as above; the caller guarantees the instruction set.
                let values = unsafe {
                    if LONG {
                        G::decode4_long(p)
                    } else if NEGATIVE && !keeps_low_32::<T>() {
                        G::decode4_negative(p)
                    } else {
                        G::decode4(p)
                    }
                };
                // SAFETY: `n` is below `count <= 64` at the iteration's start, a multiple of
                // `group` (4 or 8, which divide 64), and at most `group - 4` more here, so the
                // four slots are among the 64 at `dst`.
                unsafe { store_group(&values, dst.add(n), &convert) };
                n += 4;
            }
        }
        if keeps_low_32::<T>() && !LONG {
            // A 4-byte output keeps a value's low 32 bits, which its varint's first 8 bytes
            // hold: every lane is right already, long or not, and only an overflowing varint
            // (which the reference reports) needs the window's bytes. With `NEGATIVE` (long
            // varints common) that check runs in every window, without a branch.
            if !NEGATIVE && long_ends == 0 {
                return (count, consumed, false);
            }
            // SAFETY: 64 readable bytes at `base`; the caller guarantees the instruction set.
            let [above_one] = unsafe { window_bits::<V, 1>(base, |v| [v.above_one_bits()]) };
            return (count, consumed, long_varint_overflows(stops, long_ends, above_one));
        }
        if NEGATIVE {
            // The lanes took every long varint for a negative number of ten bytes: right for
            // all of them that are such (and for none but a long one), which one window-wide
            // check finds, without a branch on whether the window has a long varint at all. On
            // `realistic` data, with about 0.7 a window (negative `int32`s), that branch missed
            // in about half of the windows, and the one-by-one redo after it cost about as much
            // (fresh 10,000 values, min of three alternated runs, ns a value: AVX2 0.603 ->
            // 0.534, against 0.453 with no long varint handled at all, wrong values; SSE2 1.092
            // -> 1.074, SSSE3 1.056 -> 1.026). A window with any other long varint (or none
            // such, but a bad one) is redone below, all its long varints.
            // SAFETY: 64 readable bytes at `base`; the caller guarantees the instruction set.
            let [ones, all_ones] =
                unsafe { window_bits::<V, 2>(base, |v| [v.equal_bits(1), v.equal_bits(0xff)]) };
            if long_ends & !negative_ten_byte_ends(stops, long_ends, ones, all_ones) == 0 {
                return (count, consumed, false);
            }
        } else if long_ends == 0 {
            return (count, consumed, false);
        }
        if !LONG {
            if long_ends & long_ends.wrapping_sub(1) == 0 {
                // A single long varint: cheaper on its own than four lanes and the overflow
                // check below (`realistic` data has about 0.8 a window; taking them in lanes
                // too cost SSE2/SSSE3 6% and AVX2 2% there, and gained `u64-mixed` AVX2 7%).
                // SAFETY: forwarded from the caller.
                let overflow = unsafe { redo_long_varints::<X, T>(base, stops, long_ends, dst, &convert) };
                return (count, consumed, overflow);
            }
            // SAFETY: forwarded from the caller (64 + 16 readable bytes at `base`, room for 64
            // values at `dst`, the instruction sets).
            unsafe { Self::redo_long(base, stops, long_ends, dst, &convert) };
        }
        // SAFETY: 64 readable bytes at `base`; the caller guarantees the instruction set.
        let [above_one] = unsafe { window_bits::<V, 1>(base, |v| [v.above_one_bits()]) };
        (count, consumed, long_varint_overflows(stops, long_ends, above_one))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ContinuationRuns::next`, with each way of carrying bits between windows, against a
    /// byte-by-byte count, over windows of runs of every length around 9 that cross window
    /// boundaries.
    #[test]
    fn runs_after_nine_cross_windows() {
        runs_after_nine::<Whole>();
        runs_after_nine::<TopBits>();
    }

    fn runs_after_nine<C: CarryIn>() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut carry_bytes = [false; 64 * 400];
        let mut at = 0;
        while at < carry_bytes.len() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // A run of 0..=20 continuation bytes, then a terminator.
            let end = (at + (seed % 21) as usize).min(carry_bytes.len());
            carry_bytes[at..end].fill(true);
            at = end + 1;
        }
        let mut runs = ContinuationRuns::<C>::default();
        for (w, window) in carry_bytes.chunks_exact(64).enumerate() {
            let carry = window.iter().enumerate().fold(0u64, |c, (i, &b)| c | (b as u64) << i);
            let (after_nine, next) = runs.next(carry);
            for i in 0..64 {
                let at = w * 64 + i;
                let want = at >= 9 && carry_bytes[at - 9..at].iter().all(|&b| b);
                assert_eq!(after_nine >> i & 1 == 1, want, "byte {at}");
            }
            assert_eq!(next.carry, carry);
            runs = next;
        }
    }
}
