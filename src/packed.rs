//! Packed repeated fields: the payload of a length-delimited field holding scalars back to back.
//!
//! Decoders write into a caller's `&mut [T]` and return how many elements they wrote; size the
//! output with [`count_varints`] (varint types) or `payload.len() / 4` or `/ 8` (fixed types).
//! With the `alloc` feature, the `extend_*` functions append to a `Vec`, allocating once (room
//! for one value per terminator byte, or for a payload under 64 bytes one per byte, so that a
//! short field needs no count pass: such a vector may keep up to 63 spare slots), and decoding
//! the varint types straight into the spare capacity, without filling it first.
//! Encoders write the payload only (no tag, no length prefix); the `encoded_len_*` functions
//! give its size, for the length prefix and to size the output.
//!
//! Errors: elements are taken in order, and before each one, if the output is full, the result
//! is [`ErrorKind::OutputTooSmall`] at that element's offset; otherwise a malformed element gives
//! [`ErrorKind::Truncated`] (the payload ends inside it) or [`ErrorKind::VarintOverflow`] at its
//! offset. On error the output holds unspecified values; on success so may the elements after
//! the ones written (SIMD decoders store whole registers). Encoders check the whole size first
//! and write nothing if it does not fit ([`ErrorKind::OutputTooSmall`] at offset 0); given room
//! for the worst case (10 bytes a value for the 64-bit types and `int32`, 5 for `uint32` and
//! `sint32`, 1 for `bool`) they skip that length pass, often a quarter of their time or more.
//! Either way they write nothing past the payload.
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

use crate::arch::{slots, Payload};
use crate::error::{Error, ErrorKind, Result};
use crate::varint;
use core::mem::MaybeUninit;

/// How many bytes after a payload the `*_unchecked` decoders (such as [`decode_u64_unchecked`])
/// may read: enough for a 64-byte block load at every varint, so that they never copy the tail.
/// The bytes are read but never decide a result, so they may hold anything (the rest of the
/// message, say); they must be initialised memory of the same allocation.
pub const UNCHECKED_SLOP: usize = 64;

/// How a protobuf varint type maps to its Rust element type, which dispatched kernel decodes
/// it, and how a block of it is encoded.
trait VarintType {
    type Elem: Copy + Default;
    fn to_wire(value: Self::Elem) -> u64;
    /// The encoded length of one element; equal to `varint::encoded_len(to_wire(value))`, in a
    /// form the compiler can vectorize for the 32-bit types.
    fn wire_len(value: Self::Elem) -> usize;
    /// Whether wire values are 64-bit (`to_wire` may exceed 2^32).
    const WIDE: bool;
    /// The longest encoding of one element, in bytes.
    const MAX_LEN: usize;
    /// Encodes a block of [`BLOCK`] elements at the start of `dst`; `None` (nothing written)
    /// when `dst` lacks room for their bytes plus the slack of its stores ([`BLOCK_SLACK`];
    /// none for a block of one-byte values). `int32_first`: see [`encode_block_64`].
    fn encode_block<B: Block32>(
        block: &[Self::Elem; BLOCK],
        dst: &mut [u8],
        int32_first: bool,
    ) -> Option<usize>;
    /// Encodes the first `count` (at most [`BLOCK`]) elements of `block` (the others are zero
    /// padding) at the start of `dst`, which must hold at least their bytes: writes nothing past
    /// `dst`, returns their bytes. For the end of the output, where `encode_block` refuses.
    fn encode_block_end(block: &[Self::Elem; BLOCK], count: usize, dst: &mut [u8]) -> usize;
    /// Decodes through the dispatched kernel into `out`'s first slots (which it only writes).
    fn decode(payload: Payload, out: &mut [MaybeUninit<Self::Elem>]) -> Result<usize>;
    /// Encodes through the dispatched kernel.
    fn encode(values: &[Self::Elem], out: &mut [u8]) -> Result<usize>;
    /// The encoded length of `values` through the dispatched kernel (for the 64-bit wire types;
    /// the others never call it).
    fn encoded_len_dispatched(values: &[Self::Elem]) -> usize;
}

/// The varint length of a value below 2^32, by comparisons (vectorizable, unlike a
/// leading-zero count on baseline x86-64).
#[inline(always)]
fn len_32(v: u32) -> usize {
    1 + (v > 0x7f) as usize + (v > 0x3fff) as usize + (v > 0x1f_ffff) as usize + (v > 0x0fff_ffff) as usize
}

/// Values per block of the bulk encoder.
pub(crate) const BLOCK: usize = 32;

/// How far the stores of a block may reach past its last byte: the whole-word stores of its
/// last value.
pub(crate) const BLOCK_SLACK: usize = 10;

/// How a backend encodes a block of 32-bit wire values (see [`encode_block_32`], the portable
/// one, whose results and `None` cases every implementation must match).
pub(crate) trait Block32 {
    fn encode<const SIGNED: bool>(v: &[u32; BLOCK], dst: &mut [u8]) -> Option<usize>;

    /// Whether `int32` blocks (64-bit blocks of sign-extended 32-bit values, either sign) are
    /// one kind once one of them with a negative value has been seen: from that block on, the
    /// 64-bit length pass tells them first and sums their lengths in 32-bit lanes (rather than
    /// by 64-bit leading-zero counts), and when the pass has seen one, the array's `int32`
    /// blocks all take the `SIGNED` 32-bit block encoder, also those that would fit unsigned
    /// (see [`encode_block_64`]). `realistic` data, whose negatives are 2% of the values, has
    /// one in about half of its 32-value blocks: told apart, those blocks took two paths by a
    /// branch that mispredicted on fresh data, where each miss waits for values still on their
    /// way from memory (AVX2, a probe over 256 fresh arrays of 10,000 `uint64`s, ns a value,
    /// Zen 4, min of four alternated runs: the length pass 0.435 -> 0.289, the encoder with it
    /// 1.836 -> 1.506). Until such a block the length pass runs a loop without the `int32` test,
    /// so that other data pays nothing for it (a first version told `int32` blocks first from
    /// the start: 0.65 instructions a value more on `u32-mixed` and small values). With room
    /// for the worst case there is no length pass, and blocks are told apart as before. The
    /// SSSE3 and portable encoders, whose length pass has no 32-bit lanes for these blocks, lost
    /// more than they gained from the `SIGNED` blocks alone (`realistic` within noise, small
    /// values 4-7% slower), so this is AVX2's.
    const INT32_FIRST: bool = false;

    /// Arrays of values that all fit 32 bits are staged (`encode_varint_type`) below this
    /// length, at most [`FEW`]; from it on they go through the blocks, where a backend's own
    /// 32-bit block encoder may be the faster.
    const STAGE_32_BIT_BELOW: usize = FEW;

    /// The bytes a block of 64-bit wire values takes whose values all fit 32 bits, or (for
    /// `SIGNED`) are all sign-extended 32-bit values, a negative one ten bytes: by default the
    /// lengths of their low halves as the compiler vectorizes [`len_32`].
    #[inline(always)]
    fn len_fits_32<const SIGNED: bool>(v: &[u64; BLOCK]) -> usize {
        v.iter()
            .map(|&x| if SIGNED && (x as i64) < 0 { varint::MAX_LEN as u32 } else { len_32(x as u32) as u32 })
            .sum::<u32>() as usize
    }

    /// The bytes a block of 64-bit wire values takes (any values): by default their lengths as
    /// the compiler vectorizes [`varint::encoded_len`] (without a vector leading-zero count, an
    /// emulation of some forty ops for four values on AVX2).
    #[inline(always)]
    fn len_64(v: &[u64; BLOCK]) -> usize {
        v.iter().map(|&x| varint::encoded_len(x) as u32).sum::<u32>() as usize
    }

    /// Encodes a block of 64-bit wire values that do not all fit 32 bits (the contract of
    /// [`encode_block_64`]): by default [`encode_block_64_words`].
    #[inline(always)]
    fn encode_64(v: &[u64; BLOCK], dst: &mut [u8]) -> Option<usize> {
        encode_block_64_words(v, dst)
    }

    /// The low 32 bits of each value of a 64-bit block that fits 32 bits, for
    /// [`Block32::encode`]: by default as the compiler narrows it.
    #[inline(always)]
    fn narrow(v: &[u64; BLOCK]) -> [u32; BLOCK] {
        core::array::from_fn(|i| v[i] as u32)
    }
}

/// [`encode_block_32`] itself.
pub(crate) struct PortableBlock32;

impl Block32 for PortableBlock32 {
    #[inline(always)]
    fn encode<const SIGNED: bool>(v: &[u32; BLOCK], dst: &mut [u8]) -> Option<usize> {
        encode_block_32::<SIGNED>(v, dst)
    }
}

/// Encodes a block of 32-bit wire values (for `SIGNED`, `int32`s: a negative one is ten bytes)
/// in two passes. The first, in 32-bit lanes the compiler vectorizes, computes each value's
/// bytes 0..4 with their continuation bits, its byte 4 (for a negative `int32`, bytes 4..8),
/// and its length; the second stores them unaligned, one value after another, advancing by
/// each length, so that each value's stores overwrite the spill of the previous one's.
#[inline(always)]
pub(crate) fn encode_block_32<const SIGNED: bool>(v: &[u32; BLOCK], dst: &mut [u8]) -> Option<usize> {
    if v.iter().fold(0, |acc, &x| acc | x) < 0x80 {
        return encode_block_one_byte(v, dst);
    }
    encode_block_32_wide::<SIGNED>(v, dst)
}

/// A block of one-byte values (enums, small ids, bools): its values narrowed to bytes. Its
/// stores are exact, so it needs no slack after them.
#[inline(always)]
pub(crate) fn encode_block_one_byte(v: &[u32; BLOCK], dst: &mut [u8]) -> Option<usize> {
    let dst = dst.get_mut(..BLOCK)?;
    for (d, &x) in dst.iter_mut().zip(v) {
        *d = x as u8;
    }
    Some(BLOCK)
}

/// [`encode_block_32`] for a block with a value of two bytes or more.
#[inline(always)]
pub(crate) fn encode_block_32_wide<const SIGNED: bool>(v: &[u32; BLOCK], dst: &mut [u8]) -> Option<usize> {
    let (low, high, lens) = block_words_32::<SIGNED>(v);
    let bytes = lens.iter().sum::<u32>() as usize;
    if dst.len() < bytes + BLOCK_SLACK {
        return None;
    }
    let p = dst.as_mut_ptr();
    let mut at = 0usize;
    for i in 0..BLOCK {
        // SAFETY: `at` is the sum of the lengths before value i, so `at + 10 <= bytes + 9`:
        // every store below lies within `dst`, which has `bytes + BLOCK_SLACK` bytes.
        unsafe { store_words_32::<SIGNED>(p.add(at), low[i], high[i]) };
        at += lens[i] as usize;
    }
    debug_assert_eq!(at, bytes);
    Some(bytes)
}

/// The first pass of the 32-bit block encoders: each value's bytes 0..4 with their
/// continuation bits, its byte 4 (for a negative `int32`, bytes 4..8), and its length.
#[inline(always)]
fn block_words_32<const SIGNED: bool>(v: &[u32; BLOCK]) -> ([u32; BLOCK], [u32; BLOCK], [u32; BLOCK]) {
    let mut low = [0u32; BLOCK];
    let mut high = [0u32; BLOCK];
    let mut lens = [0u32; BLOCK];
    for i in 0..BLOCK {
        let x = v[i];
        let c1 = (x > 0x7f) as u32;
        let c2 = (x > 0x3fff) as u32;
        let c3 = (x > 0x1f_ffff) as u32;
        let c4 = (x > 0x0fff_ffff) as u32;
        // Bits 0..28 into four 7-bit groups (14/14, then 7/7), with continuation bits.
        let y = (x & 0x3fff) | ((x & 0x0fff_c000) << 2);
        low[i] = (y & 0x007f_007f) | ((y & 0x3f80_3f80) << 1) | c1 << 7 | c2 << 15 | c3 << 23 | c4 << 31;
        let mut h = x >> 28;
        let mut len = 1 + c1 + c2 + c3 + c4;
        if SIGNED {
            // A negative value is above every threshold as a u32, so bytes 0..4 already carry
            // continuation bits; byte 4 gains three sign bits and its own, bytes 5..8 are sign
            // bits, and bytes 8 and 9 (`ff 01`) are stored as a constant.
            let negative = ((x as i32) >> 31) as u32;
            h |= negative & 0xffff_fff0;
            len = (len & !negative) | (varint::MAX_LEN as u32 & negative);
        }
        high[i] = h;
        lens[i] = len;
    }
    (low, high, lens)
}

/// Stores a value of [`block_words_32`] as whole words: `low` at `p`, then the low byte of
/// `high` or (for `SIGNED`) all of it and the `ff 01` of a sign-extended value.
///
/// # Safety
/// `p` must be valid for writes of 5 bytes, or 10 for `SIGNED`.
#[inline(always)]
unsafe fn store_words_32<const SIGNED: bool>(p: *mut u8, low: u32, high: u32) {
    // SAFETY: within the bytes the caller guarantees.
    unsafe {
        p.cast::<[u8; 4]>().write_unaligned(low.to_le_bytes());
        if SIGNED {
            p.add(4).cast::<[u8; 4]>().write_unaligned(high.to_le_bytes());
            p.add(8).cast::<[u8; 2]>().write_unaligned([0xff, 0x01]);
        } else {
            p.add(4).write(high as u8);
        }
    }
}

/// [`encode_block_32`] for the end of the output (the contract of
/// `VarintType::encode_block_end`): whole-word stores while they fit, exact ones after.
#[inline(always)]
fn encode_block_32_end<const SIGNED: bool>(v: &[u32; BLOCK], count: usize, dst: &mut [u8]) -> usize {
    if v.iter().fold(0, |acc, &x| acc | x) < 0x80 {
        for (d, &x) in dst[..count].iter_mut().zip(v) {
            *d = x as u8;
        }
        return count;
    }
    let (low, high, lens) = block_words_32::<SIGNED>(v);
    let reach = if SIGNED { varint::MAX_LEN } else { varint::MAX_LEN_32 };
    let (mut at, mut i) = (0usize, 0usize);
    while i < count && at + reach <= dst.len() {
        // SAFETY: `at + reach <= dst.len()` by the loop condition.
        unsafe { store_words_32::<SIGNED>(dst.as_mut_ptr().add(at), low[i], high[i]) };
        at += lens[i] as usize;
        i += 1;
    }
    let sign_extension = if SIGNED { 0x01ff } else { 0 };
    for j in i..count {
        let len = lens[j] as usize;
        store_exact(low[j] as u64 | (high[j] as u64) << 32, sign_extension, len, &mut dst[at..]);
        at += len;
    }
    at
}

/// Writes the `len` bytes of a varint given as [`varint::encode_words`] gives it at the start
/// of `dst`, a byte at a time (a loop the compiler does not turn into a `memcpy` call, which
/// costs more than the encoding at this size). For the last few values of an output.
#[inline(always)]
fn store_exact(low: u64, high: u64, len: usize, dst: &mut [u8]) {
    let mut word = low;
    for d in dst[..len.min(8)].iter_mut() {
        *d = word as u8;
        word >>= 8;
    }
    if len > 8 {
        dst[8] = high as u8;
        if len > 9 {
            dst[9] = (high >> 8) as u8;
        }
    }
}

/// Stores the two words of a varint as [`varint::encode_words`] gives them (bytes 0..8 and
/// 8..10) at `p`, ten bytes whatever its length: the store every encoder's one-value path
/// shares.
///
/// # Safety
/// `p` must be valid for writes of 10 bytes.
#[inline(always)]
pub(crate) unsafe fn store_varint_words(p: *mut u8, low: u64, high: u64) {
    // SAFETY: within the ten bytes the caller guarantees.
    unsafe {
        p.cast::<[u8; 8]>().write_unaligned(low.to_le_bytes());
        p.add(8).cast::<[u8; 2]>().write_unaligned((high as u16).to_le_bytes());
    }
}

/// Stores varints given as [`varint::encode_words`] gives them one after another from
/// `dst[at..]`, which must hold their bytes: whole-word stores (each value's overwriting the
/// spill of the one before) while ten bytes remain, exact stores after. Returns the position
/// after the last.
#[inline(always)]
fn store_words(mut words: impl Iterator<Item = (u64, u64, usize)>, dst: &mut [u8], mut at: usize) -> usize {
    for (low, high, len) in words.by_ref() {
        if at + varint::MAX_LEN > dst.len() {
            store_exact(low, high, len, &mut dst[at..]);
            at += len;
            break;
        }
        // SAFETY: `at + 10 <= dst.len()`.
        unsafe { store_varint_words(dst.as_mut_ptr().add(at), low, high) };
        at += len;
    }
    for (low, high, len) in words {
        store_exact(low, high, len, &mut dst[at..]);
        at += len;
    }
    at
}

/// Encodes a block of 64-bit wire values: blocks whose values all fit 32 bits (or are all
/// sign-extended 32-bit values, like negative `int32`s stored as `int64`) take
/// [`encode_block_32`]; others the backend's `Block32::encode_64` (by default
/// [`encode_block_64_words`]). With `int32_first` (see `Block32::INT32_FIRST`) a block of
/// `int32`s takes the `SIGNED` 32-bit block even when it fits unsigned. `None` (nothing
/// written) when `dst` lacks room for the block's bytes plus [`BLOCK_SLACK`].
#[inline(always)]
fn encode_block_64<B: Block32>(v: &[u64; BLOCK], dst: &mut [u8], int32_first: bool) -> Option<usize> {
    let or = v.iter().fold(0, |acc, &x| acc | x);
    if or < 0x80 {
        return encode_block_one_byte(&core::array::from_fn(|i| v[i] as u32), dst);
    }
    // An array with a block of `int32`s with a negative one (the length pass found one): all
    // its `int32` blocks, with a negative value or without, the same path, which its branch
    // predicts.
    if int32_first && all_int32(v) {
        return B::encode::<true>(&B::narrow(v), dst);
    }
    if or >> 32 == 0 {
        return B::encode::<false>(&B::narrow(v), dst);
    }
    if all_int32(v) {
        return B::encode::<true>(&B::narrow(v), dst);
    }
    B::encode_64(v, dst)
}

/// Whether every value of a 64-bit block is a sign-extended 32-bit value (an `int32` of either
/// sign as the wire has it): the values plus 2^31 all below 2^32.
#[inline(always)]
fn all_int32(v: &[u64]) -> bool {
    v.iter().fold(0, |acc, &x| acc | x.wrapping_add(1 << 31)) >> 32 == 0
}

/// [`encode_block_64`] for a block of any 64-bit values: each value's two words computed
/// branch-free ([`varint::encode_words`]) in a first pass, then stored unaligned.
#[inline(always)]
pub(crate) fn encode_block_64_words(v: &[u64; BLOCK], dst: &mut [u8]) -> Option<usize> {
    let mut low = [0u64; BLOCK];
    let mut high = [0u16; BLOCK];
    let mut lens = [0u8; BLOCK];
    for i in 0..BLOCK {
        let (l, h, n) = varint::encode_words(v[i]);
        low[i] = l;
        high[i] = h as u16;
        lens[i] = n as u8;
    }
    let bytes = lens.iter().map(|&n| n as usize).sum::<usize>();
    if dst.len() < bytes + BLOCK_SLACK {
        return None;
    }
    let p = dst.as_mut_ptr();
    let mut at = 0usize;
    for i in 0..BLOCK {
        // SAFETY: as in `encode_block_32`, `at + 10 <= bytes + 9 < dst.len()`.
        unsafe { store_varint_words(p.add(at), low[i], high[i] as u64) };
        at += lens[i] as usize;
    }
    Some(bytes)
}

/// [`encode_block_64`] for the end of the output (the contract of
/// `VarintType::encode_block_end`).
#[inline(always)]
fn encode_block_64_end(v: &[u64; BLOCK], count: usize, dst: &mut [u8]) -> usize {
    if v.iter().fold(0, |acc, &x| acc | x) >> 32 == 0 {
        return encode_block_32_end::<false>(&core::array::from_fn(|i| v[i] as u32), count, dst);
    }
    if all_int32(v) {
        return encode_block_32_end::<true>(&core::array::from_fn(|i| v[i] as u32), count, dst);
    }
    store_words(v[..count].iter().map(|&x| varint::encode_words(x)), dst, 0)
}

/// Packed payloads shorter than this (one SIMD window) are decoded by the scalar reference
/// (those under [`TINY_PAYLOAD`] without a look) unless they hold a varint of two bytes or
/// more and are at least the backend's `arch::KernelFns::short_mixed` bytes long (4 on
/// AVX-512, 8 on SSE2, SSSE3 and AVX2; never on NEON and the slow-PEXT AVX2 kernels, where it
/// was not measured); a payload of one-byte varints alone, when the output has room for it, is
/// widened by one loop instead. Below a window a SIMD decoder works from a zero-padded stack
/// copy and through a spill buffer, a fixed cost of about 12-13 ns on AVX-512 and 18-22 ns on
/// the others (Sapphire Rapids, since payloads of one window skip the window loop's setup),
/// while the reference's loop costs little for each one-byte varint and, on fresh data, a
/// mispredicted branch for most longer ones. A probe over 4,096 different payloads of each
/// size, ns a payload, reference / SSE2 / AVX2 / AVX-512 (at c56ecda, before that change):
/// one-byte, 4 bytes 5 / 27 / 23 / 14, 16 bytes 12 / 37 / 32 / 16; `u32-mixed`, 5 bytes 23 /
/// 26 / 23 / 14, 11 bytes 38 / 26 / 24 / 14, 23 bytes 57 / 30 / 25 / 14; `realistic`, 6 bytes
/// 26 / 28 / 25 / 16, 12 bytes 46 / 32 / 27 / 16; `u64-mixed`, 11 bytes 25 / 32 / 27 / 18, 22
/// bytes 37 / 35 / 29 / 21. The dispatched decode with the table forced to SSE2, SSSE3 or
/// AVX2, cut-off 16 against 8 bytes, ns a payload: `u32-mixed` 11 bytes 29-34 against 19-22,
/// `realistic` 9 bytes 27-30 against 18-25, `u64-mixed` 11 bytes 19-23 against 19-24; a
/// cut-off of 4 lost 2-4 ns on 5-byte payloads (one or two varints). (A cut-off by the count of
/// varints over one byte was tried: see the history.) Hence the one-byte test
/// (`utf8::short_ascii`, a few overlapping word loads) and the cut-off per backend. (Until
/// 2026-12-07 every payload under 64 bytes went to the reference, from the wall bench's short
/// rows, whose payloads repeat every call: the predictor learns their lengths there, and the
/// reference took 2.3 ns a value on 16 `u32-mixed` values against 5.3 fresh.) `skip_varints`
/// below a window runs its reference on the tail anyway, after a SIMD check that costs more
/// than it saves (8 one-byte values: 1.0 against 1.4 ns/value). `count_varints` has no such
/// cost and always dispatches. A [`crate::backend::Kernel`] always runs its own backend,
/// whatever the length.
pub(crate) const SMALL_PAYLOAD: usize = 64;

/// Packed payloads shorter than this go to the reference without a look at the backend or the
/// bytes (the smallest `short_mixed`, AVX-512's): those looks added 13-33 instructions to the
/// TradeOrder decoders' two-byte payload (iai) for nothing.
const TINY_PAYLOAD: usize = 4;

macro_rules! varint_type {
    ($name:ident, $elem:ty, $wide:expr, $max:expr, |$e:ident| $to:expr, |$ob:ident| $from_byte:expr, |$l:ident| $len:expr, |$b:ident, $d:ident, $f:tt| $block:expr, |$eb:ident, $ec:ident, $ed:ident| $end:expr, $kernel:ident, $adapt:path, $enc_kernel:ident, $enc_adapt:path, |$lv:ident| $len_kernel:expr) => {
        struct $name;
        impl VarintType for $name {
            type Elem = $elem;
            const WIDE: bool = $wide;
            const MAX_LEN: usize = $max;
            #[inline(always)]
            fn to_wire($e: $elem) -> u64 {
                $to
            }
            #[inline(always)]
            fn wire_len($l: $elem) -> usize {
                $len
            }
            #[inline(always)]
            fn encode_block<B: Block32>($b: &[$elem; BLOCK], $d: &mut [u8], $f: bool) -> Option<usize> {
                $block
            }
            #[inline(always)]
            fn encode_block_end($eb: &[$elem; BLOCK], $ec: usize, $ed: &mut [u8]) -> usize {
                $end
            }
            #[inline(always)]
            fn decode(payload: Payload, out: &mut [MaybeUninit<$elem>]) -> Result<usize> {
                let bytes = payload.bytes();
                // A few bytes (the TradeOrder's two ids): the reference's loop, which costs
                // no more than a look at the backend or the bytes would.
                if bytes.len() < TINY_PAYLOAD {
                    return crate::arch::scalar::$kernel(payload, $adapt(out));
                }
                let fns = crate::backend::active();
                if bytes.len() < SMALL_PAYLOAD {
                    // Every varint one byte (enums, bools, small ids: most short packed
                    // fields): each byte is a value, widened in one loop the compiler
                    // vectorizes.
                    let one_byte = crate::utf8::short_ascii(bytes);
                    if let (true, Some(out)) = (one_byte, out.get_mut(..bytes.len())) {
                        for (o, &$ob) in out.iter_mut().zip(bytes) {
                            o.write($from_byte);
                        }
                        return Ok(bytes.len());
                    }
                    if one_byte || bytes.len() < fns.short_mixed {
                        return crate::arch::scalar::$kernel(payload, $adapt(out));
                    }
                }
                // SAFETY: `active` hands out only a table the CPU supports.
                unsafe { (fns.$kernel)(payload, $adapt(out)) }
            }
            #[inline(always)]
            fn encode(values: &[$elem], out: &mut [u8]) -> Result<usize> {
                let fns = crate::backend::active();
                // SAFETY: `active` hands out only a table the CPU supports.
                unsafe { (fns.$enc_kernel)($enc_adapt(values), out) }
            }
            #[inline(always)]
            fn encoded_len_dispatched($lv: &[$elem]) -> usize {
                $len_kernel
            }
        }
    };
}

/// `f` over a block.
#[inline(always)]
fn map<T: Copy, U>(block: &[T; BLOCK], f: impl Fn(T) -> U) -> [U; BLOCK] {
    core::array::from_fn(|i| f(block[i]))
}

varint_type!(
    Uint64,
    u64,
    true,
    varint::MAX_LEN,
    |v| v,
    |b| b as u64,
    |v| varint::encoded_len(v),
    |b, d, int32_first| encode_block_64::<B>(b, d, int32_first),
    |b, c, d| encode_block_64_end(b, c, d),
    decode_u64,
    core::convert::identity,
    encode_u64,
    core::convert::identity,
    |v| {
        // SAFETY: `active` hands out only a table the CPU supports.
        unsafe { (crate::backend::active().encoded_len_u64)(v) }
    }
);
varint_type!(
    Uint32,
    u32,
    false,
    varint::MAX_LEN_32,
    |v| v as u64,
    |b| b as u32,
    |v| len_32(v),
    |b, d, _| B::encode::<false>(b, d),
    |b, c, d| encode_block_32_end::<false>(b, c, d),
    decode_u32,
    core::convert::identity,
    encode_u32,
    core::convert::identity,
    // A 32-bit wire type's length vectorizes in any build: never dispatched.
    |v| encoded_len_with::<Uint32, PortableBlock32>(v)
);
// Same bits as uint64 / uint32, so the same kernels.
varint_type!(
    Int64,
    i64,
    true,
    varint::MAX_LEN,
    |v| v as u64,
    |b| b as i64,
    |v| varint::encoded_len(v as u64),
    |b, d, int32_first| encode_block_64::<B>(&map(b, |v| v as u64), d, int32_first),
    |b, c, d| encode_block_64_end(&map(b, |v| v as u64), c, d),
    decode_u64,
    crate::arch::cast_slots,
    encode_u64,
    bytemuck::cast_slice,
    |v| {
        // SAFETY: `active` hands out only a table the CPU supports.
        unsafe { (crate::backend::active().encoded_len_u64)(bytemuck::cast_slice(v)) }
    }
);
// Negative int32 values are sign-extended to 64 bits on the wire (ten bytes).
varint_type!(
    Int32,
    i32,
    false,
    varint::MAX_LEN,
    |v| v as i64 as u64,
    |b| b as i32,
    // As a u32 a negative value takes 5 bytes; sign-extended, 10.
    |v| len_32(v as u32) + 5 * (v < 0) as usize,
    |b, d, _| B::encode::<true>(&map(b, |v| v as u32), d),
    |b, c, d| encode_block_32_end::<true>(&map(b, |v| v as u32), c, d),
    decode_u32,
    crate::arch::cast_slots,
    encode_i32,
    core::convert::identity,
    // A 32-bit wire type's length vectorizes in any build: never dispatched.
    |v| encoded_len_with::<Int32, PortableBlock32>(v)
);
varint_type!(
    Sint64,
    i64,
    true,
    varint::MAX_LEN,
    |v| varint::zigzag_encode_64(v),
    |b| varint::zigzag_decode_64(b as u64),
    |v| varint::encoded_len(varint::zigzag_encode_64(v)),
    |b, d, int32_first| encode_block_64::<B>(&map(b, varint::zigzag_encode_64), d, int32_first),
    |b, c, d| encode_block_64_end(&map(b, varint::zigzag_encode_64), c, d),
    decode_sint64,
    core::convert::identity,
    encode_sint64,
    core::convert::identity,
    |v| {
        // SAFETY: `active` hands out only a table the CPU supports.
        unsafe { (crate::backend::active().encoded_len_sint64)(v) }
    }
);
varint_type!(
    Sint32,
    i32,
    false,
    varint::MAX_LEN_32,
    |v| varint::zigzag_encode_32(v) as u64,
    |b| varint::zigzag_decode_32(b as u32),
    |v| len_32(varint::zigzag_encode_32(v)),
    |b, d, _| B::encode::<false>(&map(b, varint::zigzag_encode_32), d),
    |b, c, d| encode_block_32_end::<false>(&map(b, varint::zigzag_encode_32), c, d),
    decode_sint32,
    core::convert::identity,
    encode_sint32,
    core::convert::identity,
    // A 32-bit wire type's length vectorizes in any build: never dispatched.
    |v| encoded_len_with::<Sint32, PortableBlock32>(v)
);
varint_type!(
    Bool,
    bool,
    false,
    1,
    |v| v as u64,
    |b| b != 0,
    |_v| 1,
    |b, d, _| B::encode::<false>(&map(b, |v| v as u32), d),
    |b, c, d| encode_block_32_end::<false>(&map(b, |v| v as u32), c, d),
    decode_bool,
    core::convert::identity,
    encode_bool,
    core::convert::identity,
    // A 32-bit wire type's length vectorizes in any build: never dispatched.
    |v| encoded_len_with::<Bool, PortableBlock32>(v)
);

#[inline]
fn decode_varint_type<V: VarintType>(payload: &[u8], out: &mut [V::Elem]) -> Result<usize> {
    // SAFETY: a decoder writes only values into its slots.
    V::decode(Payload::new(payload), unsafe { slots(out) })
}

/// The public length: the 64-bit wire types from [`DISPATCH_LEN_FROM`] values through the
/// dispatched kernel, where the leading-zero count is one instruction (`LZCNT`, or AVX-512's
/// `VPLZCNTQ` for four or eight values): the baseline build counts with `BSR`, several
/// micro-ops on AMD's cores.
#[inline(always)]
fn encoded_len_varint_type<V: VarintType>(values: &[V::Elem]) -> usize {
    if V::WIDE && values.len() >= DISPATCH_LEN_FROM {
        return V::encoded_len_dispatched(values);
    }
    encoded_len_with::<V, PortableBlock32>(values)
}

/// Arrays shorter than this sum their lengths inline rather than through the kernel table (an
/// indirect call of a few nanoseconds). Zen 3, `uint64` arrays of `realistic` values, 65,536
/// values' worth of different arrays, ns a call, inline / through the AVX2 kernel: 2 values
/// 7.1 / 6.1, 4 values 11.9 / 9.4, 8 values 22.0 / 13.0, 12 values 32.0 / 16.6 (probe; the same
/// on `u32-mixed` and `u64-mixed`). On Intel's cores, whose `BSR` is one micro-op, the inline sum
/// of a few values costs less (not measured): hence 4 rather than 2.
const DISPATCH_LEN_FROM: usize = 4;

#[inline(always)]
fn encoded_len_with<V: VarintType, B: Block32>(values: &[V::Elem]) -> usize {
    len_and_int32_first::<V, B>(values).0
}

/// [`encoded_len_with`], and whether the blocks of a 64-bit type are to take the `SIGNED` 32-bit
/// encoder whenever their values are `int32`s (`Block32::INT32_FIRST`): when a block of
/// `int32`s with a negative one is among them.
#[inline(always)]
fn len_and_int32_first<V: VarintType, B: Block32>(values: &[V::Elem]) -> (usize, bool) {
    // Lengths of at most 10 summed in u32 lanes (which the compiler vectorizes for the 32-bit
    // types), 2^20 values at a time so that no lane overflows.
    let sum = |c: &[V::Elem]| c.iter().map(|&v| V::wire_len(v) as u32).sum::<u32>() as usize;
    if !V::WIDE {
        return (values.chunks(1 << 20).map(sum).sum(), false);
    }
    // 64-bit types: a block whose values all fit 32 bits takes the vectorizable 32-bit length,
    // one whose values all take one byte none (the portable kernels' one-byte arrays, whose
    // encoding is then a narrowing loop: 10,000 values 0.61 -> 0.31 ns a value, A/B).
    // From the first block of `int32`s with a negative one on (`Block32::INT32_FIRST`), blocks
    // of `int32`s are told first, with or without a negative value: a second loop, so that the
    // first has no trace of that test (an array without such a block pays nothing for it).
    let whole = values.len() - values.len() % BLOCK;
    let (mut total, mut done, negative_int32s) = len_blocks::<V, B, false>(&values[..whole]);
    if negative_int32s {
        total += len_blocks::<V, B, true>(&values[done..whole]).0;
        done = whole;
    }
    (total + sum(&values[done..]), negative_int32s)
}

/// The length pass of [`len_and_int32_first`] over whole blocks: their bytes, the values
/// looked at, and (without `INT32_FIRST`) whether it stopped after a block of `int32`s with a
/// negative one, for a backend with `Block32::INT32_FIRST`.
#[inline(always)]
fn len_blocks<V: VarintType, B: Block32, const INT32_FIRST: bool>(
    values: &[V::Elem],
) -> (usize, usize, bool) {
    let mut total = 0;
    for (i, block) in values.chunks_exact(BLOCK).enumerate() {
        let wire: [u64; BLOCK] = core::array::from_fn(|i| V::to_wire(block[i]));
        let or = wire.iter().fold(0, |acc, &x| acc | x);
        total += if or < 0x80 {
            BLOCK
        } else if INT32_FIRST && all_int32(&wire) {
            B::len_fits_32::<true>(&wire)
        } else if or >> 32 == 0 {
            B::len_fits_32::<false>(&wire)
        } else if B::INT32_FIRST && all_int32(&wire) {
            if !INT32_FIRST {
                return (total + B::len_fits_32::<true>(&wire), (i + 1) * BLOCK, true);
            }
            B::len_fits_32::<true>(&wire)
        } else {
            B::len_64(&wire)
        };
    }
    (total, values.len(), false)
}

/// Packed varint encoding. The whole length is summed first, so that nothing is written when
/// the output is too small and the output is written once, front to back. Then blocks of
/// [`BLOCK`] values go through the type's block encoder (branch-free, whole-word unaligned
/// stores; see [`encode_block_32`] and [`encode_block_64`]) while their bytes and the stores'
/// slack fit before the end of the payload; the values after that go to [`encode_end`].
///
/// An output with room for the worst case (`MAX_LEN` bytes a value) cannot be too small, so
/// then there is no length pass over the whole array: the blocks stop [`TAIL`] values or more
/// before the end (those values' bytes cover the blocks' spill), and only the rest is summed,
/// for `encode_end`'s exact stores. Either way nothing past the payload is written.
#[inline(always)]
fn encode_varint_type<V: VarintType, B: Block32>(values: &[V::Elem], out: &mut [u8]) -> Result<usize> {
    // A short array (a packed field of some ids, enums, flags) takes none of the block
    // machinery below, which cost 277 instructions for two one-byte values and 50-75 ns for
    // eight mixed ones (scalar and AVX2 kernels on Sapphire Rapids; the AVX-512 encoder has its
    // own path): one byte a value if every value takes one; else, under `FEW` values, each
    // value's words stored whole into a stack buffer and the bytes copied out once (exact
    // stores into the output looped over each length, a branch that mispredicts on fresh data:
    // two u32-mixed values 26 ns that way, 12 this way; eight 20 against 53-71).
    // Every array the staging below would take is looked at whole (a longer one's length pass
    // finds one byte a value): staged, one-byte values would take ten bytes of stores each (100
    // of them 0.33 -> 1.8 ns a value before this look covered them).
    let or = if values.len() < FEW { values.iter().fold(0, |acc, &v| acc | V::to_wire(v)) } else { u64::MAX };
    if or < 0x80 {
        let Some(out) = out.get_mut(..values.len()) else {
            return Err(Error::new(ErrorKind::OutputTooSmall, 0));
        };
        return Ok(narrow::<V>(values, out));
    }
    let limit = if or >> 32 == 0 { B::STAGE_32_BIT_BELOW } else { FEW };
    if values.len() < limit {
        // Not zeroed (a store a word of the whole buffer each call): only the bytes written
        // are read.
        let mut staged = MaybeUninit::<[u8; FEW * varint::MAX_LEN]>::uninit();
        let base = staged.as_mut_ptr() as *mut u8;
        let mut at = 0;
        for &v in values {
            let (low, high, len) = varint::encode_words(V::to_wire(v));
            // SAFETY: `at` is at most `FEW - 1` values of 10 bytes, so the ten bytes stored lie
            // within `staged`.
            unsafe { store_varint_words(base.add(at), low, high) };
            at += len;
        }
        let Some(out) = out.get_mut(..at) else {
            return Err(Error::new(ErrorKind::OutputTooSmall, 0));
        };
        // SAFETY: every byte below `at` has been written (each value's ten bytes start where
        // the one before it ended, at most ten bytes before), and `out` is `at` bytes of a
        // distinct buffer.
        unsafe { core::ptr::copy_nonoverlapping(base, out.as_mut_ptr(), at) };
        return Ok(at);
    }
    let roomy = out.len() >= values.len().saturating_mul(V::MAX_LEN);
    // With room for the worst case there is no length pass to tell `int32_first`.
    let (out, in_blocks, int32_first) = if roomy {
        (out, values.len().saturating_sub(TAIL), false)
    } else {
        let (total, int32_first) = len_and_int32_first::<V, B>(values);
        let Some(out) = out.get_mut(..total) else {
            return Err(Error::new(ErrorKind::OutputTooSmall, 0));
        };
        if total == values.len() {
            // Every value takes one byte (the length pass has just said so): one narrowing
            // loop, which the compiler vectorizes, in place of the blocks (10,000 values,
            // scalar and SSE2 kernels: 0.76 -> 0.61 ns a value; 100 values 0.90 -> 0.65).
            return Ok(narrow::<V>(values, out));
        }
        (out, values.len(), int32_first)
    };
    // One loop for each `int32_first`, so that the other kind's loop has no trace of it.
    let (mut pos, done) = if int32_first {
        encode_blocks::<V, B, true>(&values[..in_blocks], out)
    } else {
        encode_blocks::<V, B, false>(&values[..in_blocks], out)
    };
    let rest = &values[done..];
    let end = if roomy { pos + encoded_len_with::<V, B>(rest) } else { out.len() };
    pos += encode_end::<V>(rest, &mut out[pos..end]);
    debug_assert_eq!(pos, end);
    Ok(pos)
}

/// The whole blocks of `values` into `out`, while they fit: the bytes written and the values
/// encoded.
#[inline(always)]
fn encode_blocks<V: VarintType, B: Block32, const INT32_FIRST: bool>(
    values: &[V::Elem],
    out: &mut [u8],
) -> (usize, usize) {
    let mut pos = 0;
    let mut done = 0;
    for block in values.chunks_exact(BLOCK) {
        let Ok(block) = <&[V::Elem; BLOCK]>::try_from(block) else { break };
        match V::encode_block::<B>(block, &mut out[pos..], INT32_FIRST) {
            Some(n) => pos += n,
            None => break,
        }
        done += BLOCK;
    }
    (pos, done)
}

/// The payload of values that all take one byte: each value's byte, into `out`, which holds
/// as many bytes as there are values. One loop, which the compiler vectorizes.
#[inline(always)]
fn narrow<V: VarintType>(values: &[V::Elem], out: &mut [u8]) -> usize {
    for (o, &v) in out.iter_mut().zip(values) {
        *o = V::to_wire(v) as u8;
    }
    values.len()
}

/// Arrays shorter than this of one-byte values are narrowed by one loop, and others are staged
/// whole on the stack (2,560
/// bytes, not zeroed: only the bytes written are read). Probe, fresh arrays, ns a value, SSE2 /
/// AVX2 kernels: staged, 48 to 63 values, 1.76-1.84 / 1.64-1.67 on `u32-mixed`, 1.75-1.88 /
/// 1.71-1.80 on `u64-mixed`, 1.73-1.77 / 1.64-1.67 on `realistic`; through the blocks, 64
/// values, 3.00 / 1.87, 4.34 / 3.15, 3.47 / 2.26 (most of an array this short goes to the exact
/// stores of the payload's end). At 32, the cut-off until 2026-12-07, the blocks took 4.4-6.2
/// ns a value on the portable kernels; at 64, the cut-off until that afternoon, the blocks
/// still lost up to 200 values (staged / blocks, 64 to 200 values: SSE2 `u64-mixed` 1.8-2.0 /
/// 3.2-4.7, `realistic` 1.8-2.0 / 2.7-3.8; AVX2 `u64-mixed` 1.8-2.0 / 2.4-3.5, `u32-mixed`
/// 1.7-1.9 / 1.5-2.2), and won from 256 on (AVX2 `u32-mixed` 1.36-1.59 against 1.84-2.17
/// staged in chunks, `realistic` 1.32-1.73 against 1.82-2.32; SSE2 `u64-mixed` the exception,
/// blocks 3.1-3.6 against 2.4-2.8 staged). A zeroed buffer of this size cost 16 values 1-2 ns a
/// value.
const FEW: usize = 256;

/// With room for the worst case, the values left to [`encode_end`] at least: more bytes than
/// a block's stores reach past its last one ([`BLOCK_SLACK`]).
const TAIL: usize = 16;

/// A last partial block of this many values or more is padded and goes through a block
/// encoder; fewer are encoded one at a time, which costs less than a block's first pass.
const PAD_FROM: usize = 8;

/// Encodes the values the block loop left (the last partial block, and a block whose stores
/// would reach past the output) into `out`, which holds exactly their bytes, a block at a time
/// with exact stores at the very end (`VarintType::encode_block_end`), so that no value is
/// copied with a `memcpy` call of its own length (more than the encoding costs at this size).
/// Inline, so that it is compiled with the backend's target features (out of line it counted
/// 13% more instructions for 100 `realistic` values on AVX2, and no fewer at 10,000).
#[inline(always)]
fn encode_end<V: VarintType>(values: &[V::Elem], out: &mut [u8]) -> usize {
    let mut pos = 0;
    for chunk in values.chunks(BLOCK) {
        if chunk.len() < PAD_FROM {
            let words = chunk.iter().map(|&v| varint::encode_words(V::to_wire(v)));
            pos = store_words(words, out, pos);
        } else {
            let mut block = [V::Elem::default(); BLOCK];
            block[..chunk.len()].copy_from_slice(chunk);
            pos += V::encode_block_end(&block, chunk.len(), &mut out[pos..]);
        }
    }
    pos
}

#[cfg(feature = "alloc")]
fn extend_varint_type<V: VarintType>(payload: &[u8], vec: &mut alloc::vec::Vec<V::Elem>) -> Result<usize> {
    // One slot per terminator, plus one for a final element that never terminates, so that
    // such a payload reports Truncated rather than running out of room. A payload shorter
    // than the cut-off gets one slot per byte instead (an upper bound, at most 63 spare
    // slots): no count pass for a short field.
    let room = if payload.len() < SMALL_PAYLOAD {
        payload.len()
    } else {
        let unterminated = matches!(payload.last(), Some(&b) if b >= 0x80);
        count_varints(payload) + unterminated as usize
    };
    // Decoded into the spare capacity, which is not filled first (a zero-filling `resize`
    // was a pass over the whole output: 10,000 one-byte values 0.30 -> 0.15 ns a value).
    let old_len = vec.len();
    vec.reserve(room);
    let result = V::decode(Payload::new(payload), &mut vec.spare_capacity_mut()[..room]);
    if let Ok(n) = result {
        // SAFETY: the decoder initialised the first `n` spare slots (its count), and `n <=
        // room`, within the capacity just reserved.
        unsafe { vec.set_len(old_len + n) };
    }
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

/// The offset just past the first `n` varints of `payload`, as `n` calls of
/// [`varint::skip`] would give it, with their errors: a malformed varint is its error at its
/// offset, and a payload of fewer than `n` varints is [`ErrorKind::Truncated`] at its end. For
/// random access into a packed field, or to skip part of one; SIMD on whole windows.
///
/// ```
/// use pbwire::{packed, ErrorKind};
/// let payload = [0x01, 0x96, 0x01, 0x7f];
/// assert_eq!(packed::skip_varints(&payload, 2), Ok(3));
/// assert_eq!(packed::skip_varints(&payload, 3), Ok(4));
/// assert_eq!(packed::skip_varints(&payload, 4).unwrap_err().kind(), ErrorKind::Truncated);
/// ```
#[inline]
pub fn skip_varints(payload: &[u8], n: usize) -> Result<usize> {
    if payload.len() < SMALL_PAYLOAD {
        return crate::arch::scalar::skip_varints(payload, n);
    }
    let fns = crate::backend::active();
    // SAFETY: `active` hands out only a table the CPU supports.
    unsafe { (fns.skip_varints)(payload, n) }
}

macro_rules! varint_api {
    ($ty:ident, $elem:ty, $proto:literal, $decode:ident, $unchecked:ident, $extend:ident, $encode:ident, $len:ident) => {
        #[doc = concat!("Decodes a packed `", $proto, "` payload into `out`; returns how many values were written.")]
        #[inline]
        pub fn $decode(payload: &[u8], out: &mut [$elem]) -> Result<usize> {
            decode_varint_type::<$ty>(payload, out)
        }

        #[doc = concat!("[`", stringify!($decode), "`] for a payload followed by [`UNCHECKED_SLOP`] readable bytes, which it may read so as not to copy the tail; same results and errors.")]
        ///
        /// # Safety
        /// `payload` must be valid for reads of `len + UNCHECKED_SLOP` initialised bytes (one
        /// allocation; the slop holds anything and decides no result), none of which may be
        /// written during the call. `out` must not overlap them.
        ///
        /// ```
        /// use pbwire::packed;
        /// // A buffer with the payload at 2..6 and at least UNCHECKED_SLOP bytes after it.
        /// let mut buf = vec![0u8; 6 + packed::UNCHECKED_SLOP];
        /// buf[2..6].copy_from_slice(&[0x05, 0x96, 0x01, 0x7f]);
        /// let (mut values, mut checked) = ([Default::default(); 3], [Default::default(); 3]);
        /// // SAFETY: `buf` has UNCHECKED_SLOP initialised bytes after the payload's 4.
        #[doc = concat!("let n = unsafe { packed::", stringify!($unchecked), "(buf.as_ptr().add(2), 4, &mut values) };")]
        /// assert_eq!(n, Ok(3));
        #[doc = concat!("assert_eq!(packed::", stringify!($decode), "(&buf[2..6], &mut checked), n);")]
        /// assert_eq!(values, checked);
        /// ```
        #[inline]
        pub unsafe fn $unchecked(payload: *const u8, len: usize, out: &mut [$elem]) -> Result<usize> {
            // SAFETY: the caller's contract is `with_slop`'s; a decoder writes only values into
            // its slots.
            unsafe { <$ty as VarintType>::decode(Payload::with_slop(payload, len, UNCHECKED_SLOP), slots(out)) }
        }

        #[doc = concat!("Appends the values of a packed `", $proto, "` payload to `vec`, allocating once; returns how many. On error `vec` is left as it was.")]
        #[cfg(feature = "alloc")]
        pub fn $extend(payload: &[u8], vec: &mut alloc::vec::Vec<$elem>) -> Result<usize> {
            extend_varint_type::<$ty>(payload, vec)
        }

        #[doc = concat!("Encodes `values` as a packed `", $proto, "` payload into `out`; returns its length. With room in `out` for the worst case (see the [module documentation](self)) there is no length pass.")]
        #[inline]
        pub fn $encode(values: &[$elem], out: &mut [u8]) -> Result<usize> {
            <$ty as VarintType>::encode(values, out)
        }

        #[doc = concat!("The length of the packed `", $proto, "` payload encoding `values`.")]
        #[inline]
        pub fn $len(values: &[$elem]) -> usize {
            encoded_len_varint_type::<$ty>(values)
        }
    };
}

varint_api!(Uint64, u64, "uint64", decode_u64, decode_u64_unchecked, extend_u64, encode_u64, encoded_len_u64);
varint_api!(Uint32, u32, "uint32", decode_u32, decode_u32_unchecked, extend_u32, encode_u32, encoded_len_u32);
varint_api!(Int64, i64, "int64", decode_i64, decode_i64_unchecked, extend_i64, encode_i64, encoded_len_i64);
varint_api!(
    Int32,
    i32,
    "int32` or enum",
    decode_i32,
    decode_i32_unchecked,
    extend_i32,
    encode_i32,
    encoded_len_i32
);
varint_api!(
    Sint64,
    i64,
    "sint64",
    decode_sint64,
    decode_sint64_unchecked,
    extend_sint64,
    encode_sint64,
    encoded_len_sint64
);
varint_api!(
    Sint32,
    i32,
    "sint32",
    decode_sint32,
    decode_sint32_unchecked,
    extend_sint32,
    encode_sint32,
    encoded_len_sint32
);
varint_api!(
    Bool,
    bool,
    "bool",
    decode_bool,
    decode_bool_unchecked,
    extend_bool,
    encode_bool,
    encoded_len_bool
);

/// The portable encoders, the scalar backend's (and the reference every backend's encoders must
/// reproduce byte for byte); the SIMD backends without encoders of their own use them too.
pub(crate) mod portable {
    use super::*;

    macro_rules! portable {
        ($($name:ident: $ty:ident, $elem:ty;)*) => {$(
            #[inline(always)]
            pub(crate) fn $name(values: &[$elem], out: &mut [u8]) -> Result<usize> {
                encode_varint_type::<$ty, PortableBlock32>(values, out)
            }
        )*
        /// The same encoders with another block encoder for the 32-bit wire values.
        #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
        pub(crate) mod with {
            use super::*;
            $(
                #[inline(always)]
                pub(crate) fn $name<B: Block32>(values: &[$elem], out: &mut [u8]) -> Result<usize> {
                    encode_varint_type::<$ty, B>(values, out)
                }
            )*

            /// The packed length of `uint64` values, as the kernel tables' `encoded_len_u64`.
            #[inline(always)]
            pub(crate) fn encoded_len_u64<B: Block32>(values: &[u64]) -> usize {
                encoded_len_with::<Uint64, B>(values)
            }

            /// The packed length of `sint64` values, as the kernel tables' `encoded_len_sint64`.
            #[inline(always)]
            pub(crate) fn encoded_len_sint64<B: Block32>(values: &[i64]) -> usize {
                encoded_len_with::<Sint64, B>(values)
            }
        }
        };
    }

    /// The packed length of `uint64` values, for the scalar backend's table.
    pub(crate) fn encoded_len_u64(values: &[u64]) -> usize {
        with::encoded_len_u64::<PortableBlock32>(values)
    }

    /// The packed length of `sint64` values, for the scalar backend's table.
    pub(crate) fn encoded_len_sint64(values: &[i64]) -> usize {
        with::encoded_len_sint64::<PortableBlock32>(values)
    }

    portable! {
        encode_u64: Uint64, u64;
        encode_u32: Uint32, u32;
        encode_i32: Int32, i32;
        encode_sint64: Sint64, i64;
        encode_sint32: Sint32, i32;
        encode_bool: Bool, bool;
    }
}

/// Defines, where it is invoked, a module `encoders` of the portable encoders compiled with the
/// target features `$features` and the block encoder `$block` for 32-bit wire values, for a
/// backend's kernel table: with wider vectors the compiler also widens the block encoders'
/// first pass (and uses the backend's bit instructions).
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_macros))]
macro_rules! encoders_with {
    ($features:literal, $block:ty) => {
        pub(crate) mod encoders {
            crate::packed::encoders_with!(@fns $features, $block;
                encode_u64: u64, encode_u32: u32, encode_i32: i32,
                encode_sint64: i64, encode_sint32: i32, encode_bool: bool);
            crate::packed::encoders_with!(@lens $features, $block;
                encoded_len_u64: u64, encoded_len_sint64: i64);
        }
    };
    (@fns $features:literal, $block:ty; $($name:ident: $elem:ty),*) => {$(
        /// # Safety
        /// The CPU must support the backend's target features.
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $name(values: &[$elem], out: &mut [u8]) -> crate::error::Result<usize> {
            crate::packed::portable::with::$name::<$block>(values, out)
        }
    )*};
    (@lens $features:literal, $block:ty; $($name:ident: $elem:ty),*) => {$(
        /// # Safety
        /// The CPU must support the backend's target features.
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $name(values: &[$elem]) -> usize {
            crate::packed::portable::with::$name::<$block>(values)
        }
    )*};
}
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_imports))]
pub(crate) use encoders_with;

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
    let size = core::mem::size_of::<T>();
    let whole = payload.len() / size;
    // The error `decode_fixed` gives with room for every element, before anything is copied.
    if whole * size != payload.len() {
        return Err(Error::new(ErrorKind::Truncated, whole * size));
    }
    // Copied straight into the spare capacity (not zero-filled first, as for the varints).
    let old_len = vec.len();
    vec.reserve(whole);
    let spare = &mut vec.spare_capacity_mut()[..whole];
    // SAFETY: `spare` is `whole * size` writable bytes (`MaybeUninit<T>` has `T`'s layout),
    // distinct from `payload`, which has them to read; every bit pattern is a `T` (`Pod`), so
    // the copy initialises the `whole` slots, and `set_len` then covers exactly those.
    unsafe {
        core::ptr::copy_nonoverlapping(payload.as_ptr(), spare.as_mut_ptr() as *mut u8, whole * size);
        vec.set_len(old_len + whole);
    }
    if cfg!(target_endian = "big") {
        vec[old_len..].iter_mut().for_each(|v| *v = v.swap_le());
    }
    Ok(whole)
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

    /// `extend_fixed*` as `decode_fixed*` with room for every element: the same result, the
    /// values appended, the vector unchanged on error; every length 0..=40 bytes, at every
    /// offset of a buffer (misaligned elements) and after existing elements.
    #[cfg(feature = "alloc")]
    #[test]
    fn extend_fixed_is_decode_fixed_appended() {
        let bytes: alloc::vec::Vec<u8> = (0..48u32).map(|i| (i * 97 + 13) as u8).collect();
        for start in 0..8 {
            for len in 0..=40 {
                let p = &bytes[start..start + len];
                let mut want = [0u32; 16];
                let want_result = decode_fixed32(p, &mut want);
                let mut got = alloc::vec![7u32, 8];
                assert_eq!(extend_fixed32(p, &mut got), want_result, "{start} {len}");
                let n = *want_result.as_ref().unwrap_or(&0);
                assert_eq!(got, [&[7, 8][..], &want[..n]].concat(), "{start} {len}");
                let mut want = [0u64; 8];
                let want_result = decode_fixed64(p, &mut want);
                let mut got = alloc::vec![9u64];
                assert_eq!(extend_fixed64(p, &mut got), want_result, "{start} {len}");
                let n = *want_result.as_ref().unwrap_or(&0);
                assert_eq!(got, [&[9][..], &want[..n]].concat(), "{start} {len}");
            }
        }
    }
}
