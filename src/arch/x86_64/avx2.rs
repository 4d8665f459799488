//! AVX2 with BMI2: 32-byte blocks; four varints a step in the 64-bit lanes of one register
//! (each loaded from its start, cut after its terminator, joined with multiply-adds); PEXT
//! compression for a window's only long varint, or shifts and masks in a second table for the
//! CPUs whose PEXT is microcode ([`slow_pext`]).

use crate::arch::generic;
use crate::arch::x86_64::{sse2, ssse3};
use crate::varint;
use core::arch::x86_64::{
    __m128i, __m256i, _bzhi_u64, _mm256_add_epi32, _mm256_and_si256, _mm256_andnot_si256,
    _mm256_castps_si256, _mm256_castsi128_si256, _mm256_castsi256_ps, _mm256_castsi256_si128,
    _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_cmpgt_epi8, _mm256_extracti128_si256,
    _mm256_inserti128_si256, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_maddubs_epi16,
    _mm256_maskload_epi32, _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi16, _mm256_set1_epi32,
    _mm256_set1_epi64x, _mm256_set1_epi8, _mm256_setr_epi32, _mm256_setzero_si256, _mm256_shuffle_ps,
    _mm256_sllv_epi32, _mm256_srai_epi32, _mm256_srli_epi64, _mm256_storeu_si256, _mm256_sub_epi32,
    _mm256_sub_epi64, _mm256_xor_si256, _mm_add_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_or_si128,
    _mm_shuffle_epi32, _mm_storeu_si128, _pdep_u64, _pext_u64,
};
use core::arch::x86_64::{
    _mm256_broadcastsi128_si256, _mm256_cmpeq_epi8, _mm256_cvtsi256_si32, _mm256_extract_epi32,
    _mm256_max_epu32, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srai_epi16, _mm256_testz_si256,
};

#[derive(Clone, Copy)]
pub(crate) struct Avx2(__m256i);

impl generic::Vector for Avx2 {
    const BYTES: usize = 32;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 32 readable bytes and AVX2.
        Avx2(unsafe { _mm256_loadu_si256(ptr as *const __m256i) })
    }

    #[inline(always)]
    fn continuation_bits(self) -> u64 {
        // SAFETY: only instantiated inside functions compiled with AVX2 enabled.
        unsafe { _mm256_movemask_epi8(self.0) as u32 as u64 }
    }

    #[inline(always)]
    fn above_one_bits(self) -> u64 {
        // A signed compare: continuation bytes are negative.
        // SAFETY: only instantiated inside functions compiled with AVX2 enabled.
        unsafe { _mm256_movemask_epi8(_mm256_cmpgt_epi8(self.0, _mm256_set1_epi8(1))) as u32 as u64 }
    }

    #[inline(always)]
    fn equal_bits(self, byte: u8) -> u64 {
        // SAFETY: only instantiated inside functions compiled with AVX2 enabled.
        unsafe { _mm256_movemask_epi8(_mm256_cmpeq_epi8(self.0, _mm256_set1_epi8(byte as i8))) as u32 as u64 }
    }

    /// The tail in three registers, stored whole at 0, 32 and 64: the window's 32-byte loads
    /// then each read one store, which the CPU forwards. Copied byte-exact (a `memcpy`, or
    /// `generic::copy_short`'s overlapping moves), they spanned several stores and waited for
    /// them to reach the cache: 5-7 ns of the 27 a short payload took (a probe, 4,096
    /// different payloads of 1-16 values, `Kernel(avx2)`).
    #[inline(always)]
    unsafe fn copy_tail(src: *const u8, len: usize, dst: &mut [u8; generic::WINDOW + 16]) {
        // SAFETY: `len` readable bytes at `src` (the caller), `len < 80`: each `first_bytes`
        // gets the bytes readable at its block's start, and the stores write bytes 0..80 of
        // `dst`; AVX2 (the caller).
        unsafe {
            let zero = _mm256_setzero_si256();
            let low = first_bytes(src, len.min(32));
            let high = if len > 32 { first_bytes(src.add(32), (len - 32).min(32)) } else { zero };
            let last = if len > 64 { first_bytes(src.add(64), len - 64) } else { zero };
            _mm256_storeu_si256(dst.as_mut_ptr() as *mut __m256i, low);
            _mm256_storeu_si256(dst.as_mut_ptr().add(32) as *mut __m256i, high);
            _mm_storeu_si128(dst.as_mut_ptr().add(64) as *mut __m128i, _mm256_castsi256_si128(last));
        }
    }

    /// 32 bytes a step, the last step ending at `bytes` (overlapping the one before), with the
    /// step read through `black_box`: a loop of 32-byte copies 32 bytes apart is one the
    /// compiler turns back into a `memcpy` call, which a window of 8 or more `u64` values took
    /// (`generic::copy_short`'s loop). Probe, `Kernel(avx2)`, fresh payloads, ns a call: 16
    /// values `u32-mixed` 25-27 -> 22, `realistic` 27.5-28 -> 23-25, 32 `realistic` 40.6-42.2
    /// -> 36.4-37.5. (The same loop in `copy_short` cost SSE2, whose 16-byte moves are half
    /// glibc's, 4-5 ns on 32 values.)
    #[inline(always)]
    unsafe fn copy_out(src: *const u8, dst: *mut u8, bytes: usize) {
        if bytes < 32 {
            // SAFETY: forwarded from the caller.
            return unsafe { generic::copy_short(src, dst, bytes) };
        }
        let step = core::hint::black_box(32);
        let mut at = 0;
        // SAFETY: every 32-byte move lies within the `bytes` readable at `src` and writable at
        // `dst` (the caller): those from `at` while `at + 32 < bytes`, the last one ending at
        // `bytes`; AVX2 (the caller).
        unsafe {
            while at + 32 < bytes {
                let chunk = _mm256_loadu_si256(src.add(at) as *const __m256i);
                _mm256_storeu_si256(dst.add(at) as *mut __m256i, chunk);
                at += step;
            }
            let last = _mm256_loadu_si256(src.add(bytes - 32) as *const __m256i);
            _mm256_storeu_si256(dst.add(bytes - 32) as *mut __m256i, last);
        }
    }
}

/// The `len` (at most 32) bytes at `p` in a register, the bytes after them zero, reading
/// nothing past them: the whole dwords by a masked load (which does not touch the dwords its
/// mask leaves out), the last one to three bytes from a dword read ending at `len`, or (under
/// four bytes) one by one.
///
/// # Safety
/// `p` must be valid for reads of `len` bytes, `len <= 32`; AVX2.
#[inline(always)]
unsafe fn first_bytes(p: *const u8, len: usize) -> __m256i {
    // SAFETY: AVX2 (the caller); every read lies within the `len` bytes at `p`: the masked load
    // reads dwords `0..len / 4`, the dword read bytes `len - 4..len`, the byte reads bytes below
    // `len`.
    unsafe {
        if len == 32 {
            return _mm256_loadu_si256(p as *const __m256i);
        }
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let whole = (len / 4) as i32;
        let words =
            _mm256_maskload_epi32(p as *const i32, _mm256_cmpgt_epi32(_mm256_set1_epi32(whole), lanes));
        let rest = len % 4;
        if rest == 0 {
            return words;
        }
        let bytes = if len >= 4 {
            u32::from_le((p.add(len - 4) as *const u32).read_unaligned()) >> (8 * (4 - rest))
        } else {
            (1..rest).fold(*p as u32, |acc, i| acc | (*p.add(i) as u32) << (8 * i))
        };
        let at = _mm256_cmpeq_epi32(_mm256_set1_epi32(whole), lanes);
        _mm256_or_si256(words, _mm256_and_si256(at, _mm256_set1_epi32(bytes as i32)))
    }
}

/// One PEXT gathers the seven payload bits of all eight bytes.
pub(crate) struct Pext;

impl generic::Compress for Pext {
    #[inline(always)]
    fn compress(word: u64) -> u64 {
        // SAFETY: only instantiated inside functions compiled with BMI2 enabled.
        unsafe { _pext_u64(word, 0x7f7f_7f7f_7f7f_7f7f) }
    }

    #[inline(always)]
    fn low_bits(value: u64, bits: u32) -> u64 {
        // SAFETY: only instantiated inside functions compiled with BMI2 enabled. BZHI keeps the
        // whole value for an index of 64 or more, as `low_bits` requires.
        unsafe { _bzhi_u64(value, bits) }
    }
}

/// The values of the varint bytes in each 64-bit lane (bytes past a lane's varint zero):
/// `VPMADDUBSW` and `VPMADDWD` join the 7-bit groups into 14 and 28 bits, and two ops join the
/// 28-bit halves: the low half shifted up by 4 (it has room) beside the high one in place, by
/// one variable shift of the dwords, is the value shifted up by 4.
#[inline(always)]
unsafe fn join_bytes(bytes: __m256i) -> __m256i {
    // SAFETY: only called from functions compiled with AVX2 enabled.
    unsafe {
        let groups7 = _mm256_and_si256(bytes, _mm256_set1_epi8(0x7f));
        // Unsigned bytes (1, 128) times the groups: `g0 + 128 g1` in 16 bits.
        let groups14 = _mm256_maddubs_epi16(_mm256_set1_epi16(0x8001u16 as i16), groups7);
        let groups28 = _mm256_madd_epi16(groups14, _mm256_set1_epi32(0x4000_0001));
        // `low << 4 | high << 32`: the low dwords shifted by 4 (`low` has 28 bits, so nothing
        // crosses into the high dword, shifted by 0), then `>> 4`. (Was `low28 & g | !low28 &
        // g >> 4`, four ops, then a shift, a blend and a shift. Callgrind, `decode_u64` at
        // 10,000 values: u32-mixed 10.68 -> 10.39 instructions a value; wall clock -2 to -4%
        // on mixed data.)
        let shifted = _mm256_sllv_epi32(groups28, _mm256_set1_epi64x(4));
        _mm256_srli_epi64::<4>(shifted)
    }
}

/// Each 64-bit lane of `x` cut after its first terminator (zero beyond; all 8 bytes of a
/// longer varint).
///
/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn cut_lanes(x: __m256i) -> __m256i {
    // SAFETY: only called from functions compiled with AVX2 enabled.
    unsafe {
        // The terminators' top bits; subtracting 1 per lane sets every bit up to the first.
        let t = _mm256_andnot_si256(x, _mm256_set1_epi8(-128));
        let keep = _mm256_xor_si256(t, _mm256_sub_epi64(t, _mm256_set1_epi64x(1)));
        _mm256_and_si256(x, keep)
    }
}

/// Four varints in the 64-bit lanes of one register, each loaded from its own start: each
/// lane cut after its first terminator, then joined by [`join_bytes`].
pub(crate) struct Avx2Lanes;

/// The 8 bytes at each of the four addresses in the 64-bit lanes of one register.
///
/// # Safety
/// 8 readable bytes at each pointer; AVX2.
#[inline(always)]
unsafe fn load4(p: [*const u8; 4]) -> __m256i {
    // SAFETY: forwarded from the caller.
    unsafe {
        let (low, high) = (sse2::load_pair(p[0], p[1]), sse2::load_pair(p[2], p[3]));
        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(low), high)
    }
}

impl generic::Gather4 for Avx2Lanes {
    #[inline(always)]
    unsafe fn decode4(p: [*const u8; 4]) -> [u64; 4] {
        // SAFETY: the caller guarantees 8 readable bytes at each pointer, and AVX2.
        unsafe { core::mem::transmute::<__m256i, [u64; 4]>(join_bytes(cut_lanes(load4(p)))) }
    }

    #[inline(always)]
    unsafe fn decode4_negative(p: [*const u8; 4]) -> [u64; 4] {
        // SAFETY: the caller guarantees 8 readable bytes at each pointer, and AVX2.
        unsafe {
            let cut = cut_lanes(load4(p));
            // Bit 63 of a cut lane is set only when all its 8 bytes go on: spread over the top
            // 16 bits, it keeps the top byte.
            let top = _mm256_and_si256(
                _mm256_srai_epi16::<15>(cut),
                _mm256_set1_epi64x(generic::NEGATIVE_TOP_BYTE as i64),
            );
            core::mem::transmute::<__m256i, [u64; 4]>(_mm256_or_si256(join_bytes(cut), top))
        }
    }

    #[inline(always)]
    unsafe fn decode4_long(p: [*const u8; 4]) -> [u64; 4] {
        // SAFETY: the caller guarantees 16 readable bytes at each pointer, and AVX2.
        unsafe {
            let ((first01, next01), (first23, next23)) =
                (sse2::load_pair16(p[0], p[1]), sse2::load_pair16(p[2], p[3]));
            let cut = cut_lanes(_mm256_inserti128_si256::<1>(_mm256_castsi128_si256(first01), first23));
            // The 9th and 10th bytes' bits, by SSE2's helper on each 128-bit half (LLVM joins
            // the halves' ops into 256-bit ones again).
            let high = _mm256_inserti128_si256::<1>(
                _mm256_castsi128_si256(sse2::high_groups(_mm256_castsi256_si128(cut), next01)),
                sse2::high_groups(_mm256_extracti128_si256::<1>(cut), next23),
            );
            core::mem::transmute::<__m256i, [u64; 4]>(_mm256_or_si256(join_bytes(cut), high))
        }
    }
}

/// The thresholds of a varint's bytes 2..=5 in the low 32 bits of a value (`x > t`: one byte
/// more), and those of bytes 6..=9 in the high 32 bits (2^35, 2^42, 2^49, 2^56; 2^63 is the
/// high half's sign).
const LOW_THRESHOLDS: [i32; 4] = [0x7f, 0x3fff, 0x1f_ffff, 0x0fff_ffff];
const HIGH_THRESHOLDS: [i32; 4] = [7, 0x3ff, 0x1_ffff, 0xff_ffff];

/// Values `8 i .. 8 i + 8` of a 64-bit block as their low and high 32-bit halves, each in the
/// lanes of one register (in an order of their own, the same for both: only sums count).
///
/// # Safety
/// AVX2; `i < BLOCK / 8`.
#[inline(always)]
unsafe fn halves(v: &[u64; crate::packed::BLOCK], i: usize) -> (__m256i, __m256i) {
    // SAFETY: the caller guarantees AVX2 and `i`: the loads read 64 of the block's 256 bytes.
    unsafe {
        let p = v.as_ptr() as *const __m256i;
        let (a, b) = (_mm256_loadu_si256(p.add(2 * i)), _mm256_loadu_si256(p.add(2 * i + 1)));
        let (a, b) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
        (
            _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(a, b)),
            _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(a, b)),
        )
    }
}

/// In each 32-bit lane of `x`, how many of `thresholds` it passes by signed compares (a true
/// compare is -1, subtracted), and `top` instead when its bit 31 is set, which those compares
/// leave out.
///
/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn thresholds_passed(x: __m256i, thresholds: [i32; 4], top: i32) -> __m256i {
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        let mut count = _mm256_and_si256(_mm256_srai_epi32::<31>(x), _mm256_set1_epi32(top));
        for threshold in thresholds {
            count = _mm256_sub_epi32(count, _mm256_cmpgt_epi32(x, _mm256_set1_epi32(threshold)));
        }
        count
    }
}

/// A block's bytes from the sum of its values' lengths less one, in the lanes of `sum`.
///
/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn block_len(sum: __m256i) -> usize {
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        let half = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256::<1>(sum));
        let half = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
        let half = _mm_add_epi32(half, _mm_shuffle_epi32::<0b10_11_00_01>(half));
        crate::packed::BLOCK + _mm_cvtsi128_si32(half) as u32 as usize
    }
}

/// The SSSE3 block encoder, fed 64-bit blocks narrowed with whole-vector stores
/// ([`sse2::narrow_block`]): with AVX2 the compiler's own narrowing stored each value on its
/// own, and the block encoder's 16-byte loads then waited for those stores to complete (a
/// store forwards only to a load it wholly contains). `encode_u64` at 10,000 values, probe
/// `Kernel(avx2)`: `u32-mixed` 1.92 -> 1.58 ns/value, `realistic` 2.03 -> 1.71. (The same
/// narrowing made the SSSE3 and portable encoders slower, 2.0 -> 2.5-2.8 on `u32-mixed`,
/// though they ran fewer instructions; they keep the compiler's.) It also tells blocks of
/// sign-extended `int32`s first (`INT32_FIRST`): the 64-bit length pass sums them in 32-bit
/// lanes, since AVX2 has no 64-bit leading-zero count (`realistic` 1.56 -> 1.44 ns/value in the
/// wall bench), and `realistic` blocks with and without a negative value take one path.
///
/// With `PDEP` (CPUs whose PDEP takes a few cycles), blocks of 64-bit values over 32 bits, and
/// unsigned 32-bit blocks with a five-byte value, are encoded a value at a time in scalar
/// registers: one `PDEP` spreads the 7-bit groups, one table load gives the length and
/// continuation bits, one or two stores; no first pass over arrays on the stack.
pub(crate) struct Avx2Block32<const PDEP: bool>;

impl<const PDEP: bool> crate::packed::Block32 for Avx2Block32<PDEP> {
    const INT32_FIRST: bool = true;

    /// From 64 values (the portable encoders' staging cut-off until 2026-12-07) these blocks
    /// beat the staging: arrays of 100 `u32-mixed` values, the same each call, 1.55-1.61 ns a
    /// value through them, 2.00-2.10 staged (fresh arrays: 1.67-1.79 against 1.74-1.93);
    /// staged, `realistic` and `u64-mixed` arrays gain 10-25%.
    const STAGE_32_BIT_BELOW: usize = 64;

    /// Eight values a step in 32-bit lanes: their low halves gathered from two registers by one
    /// in-lane shuffle (in an order of its own: only the sum counts), then signed compares
    /// against the four thresholds of a longer varint; a value with bit 31 set, which those
    /// compares leave at one byte, gets four more (below 2^32: five bytes) or nine (a negative
    /// `int32`: ten). The compiler's own loop narrowed four values at a time into 128-bit
    /// registers with two ops, and compared unsigned with two ops a threshold.
    #[inline(always)]
    fn len_fits_32<const SIGNED: bool>(v: &[u64; crate::packed::BLOCK]) -> usize {
        let top = if SIGNED { varint::MAX_LEN as i32 - 1 } else { 4 };
        // SAFETY: only instantiated inside functions compiled with AVX2 enabled; `i` is below
        // `BLOCK / 8`.
        unsafe {
            let mut sum = _mm256_setzero_si256();
            for i in 0..crate::packed::BLOCK / 8 {
                let (low, _) = halves(v, i);
                sum = _mm256_add_epi32(sum, thresholds_passed(low, LOW_THRESHOLDS, top));
            }
            block_len(sum)
        }
    }

    /// Eight values a step in 32-bit lanes, as [`len_fits_32`](Self::len_fits_32), with the
    /// high halves beside the low ones: a non-zero high half makes the low half's four
    /// thresholds pass, and its own five (2^35 to 2^63) add the rest. AVX2 has no 64-bit
    /// leading-zero count; the compiler's vectorized `leading_zeros` emulated it with nibble
    /// lookups (about forty ops for four values), and one `LZCNT` and table load a value in
    /// scalar registers (Zen 3, 10,000 `u64-mixed` values: 0.95 -> 0.68-0.75 ns a value through
    /// `encoded_len_u64`) ran about as many instructions as these (iai, `encode_u64`
    /// `u64-mixed`: 28.14 -> 28.23 a value) but slower: Zen 4, a probe of
    /// `Kernel(avx2).encoded_len_u64` on `u64-mixed` arrays, ns a value, scalar -> these, min
    /// of three: fresh 0.454 -> 0.423, in cache 0.435 -> 0.388.
    #[inline(always)]
    fn len_64(v: &[u64; crate::packed::BLOCK]) -> usize {
        // SAFETY: only instantiated inside functions compiled with AVX2 enabled; `i` is below
        // `BLOCK / 8`.
        unsafe {
            let mut sum = _mm256_setzero_si256();
            for i in 0..crate::packed::BLOCK / 8 {
                let (low, high) = halves(v, i);
                // A high half above zero passes the low half's four thresholds, whatever it is.
                let above = _mm256_andnot_si256(
                    _mm256_cmpeq_epi32(high, _mm256_setzero_si256()),
                    _mm256_set1_epi32(4),
                );
                let low = _mm256_max_epu32(thresholds_passed(low, LOW_THRESHOLDS, 4), above);
                sum =
                    _mm256_add_epi32(sum, _mm256_add_epi32(low, thresholds_passed(high, HIGH_THRESHOLDS, 5)));
            }
            block_len(sum)
        }
    }

    /// The SSSE3 block, given the values' bitwise or from eight 16-byte loads (the compiler's
    /// fold gathered the narrowed values lane by lane, some forty ops a block; 16 bytes, the
    /// size of [`sse2::narrow_block`]'s stores, so that each load takes one store's bytes),
    /// in steps of eight values ([`Pack8`]) with `PDEP`, whose steps with a long value (a
    /// negative `int32`) take the words of [`pdep_words`] (callgrind probe, `encode_u64`
    /// instructions a value: realistic 21.9 -> 19.2, `u32-mixed` 16.3 -> 15.2; wall rows within
    /// this machine's noise, `int32` 10-15% faster). The slow-PEXT table (Zen 1 and 2, which
    /// split each 256-bit op in two) keeps SSSE3's four-value step, unmeasured with eight.
    #[inline(always)]
    fn encode<const SIGNED: bool>(v: &[u32; crate::packed::BLOCK], dst: &mut [u8]) -> Option<usize> {
        // SAFETY: only instantiated inside functions compiled with AVX2 enabled; each load
        // reads 16 of the block's 128 bytes.
        let or = unsafe {
            let p = v.as_ptr() as *const __m128i;
            let load = |i| _mm_loadu_si128(p.add(i));
            let or4 =
                |i| _mm_or_si128(_mm_or_si128(load(i), load(i + 1)), _mm_or_si128(load(i + 2), load(i + 3)));
            let half = _mm_or_si128(or4(0), or4(4));
            let half = _mm_or_si128(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
            let half = _mm_or_si128(half, _mm_shuffle_epi32::<0b10_11_00_01>(half));
            _mm_cvtsi128_si32(half) as u32
        };
        if PDEP && !SIGNED && or >> 28 != 0 && dst.len() >= crate::packed::BLOCK * 8 {
            // A value of five bytes, which the SSSE3 steps leave to the portable block: one pass
            // of `PDEP` words, one 8-byte store each, reading the values a word at a time (the
            // portable block's 32-byte loads of a narrowed 64-bit block span two of
            // `narrow_block`'s 16-byte stores, which cannot forward to them). Zen 3, wall A/B,
            // min of three runs, `encode_u64` `u32-mixed` ns a value: 10,000 values 1.89 -> 1.54,
            // fresh 2.28 -> 1.95, 1,000,000 2.22 -> 1.71; `encode_u32` (no narrowing) unchanged,
            // 1.29 -> 1.20; 15.2 -> 15.8 instructions a value.
            let p = dst.as_mut_ptr();
            let mut at = 0usize;
            for &x in v {
                // SAFETY: only instantiated inside functions compiled with BMI2 enabled.
                let (low, _, len) = unsafe { pdep_words(x as u64) };
                // SAFETY: `at` is at most 31 values of five bytes, so the eight bytes stored lie
                // within `dst`, which has room for 32 values of eight.
                unsafe { p.add(at).cast::<u64>().write_unaligned(low.to_le()) };
                at += len;
            }
            return Some(at);
        }
        if PDEP {
            // SAFETY: only instantiated inside functions compiled with BMI2 enabled (the AVX2
            // backend's encoders).
            let words = |x| unsafe { pdep_words(x) };
            ssse3::ShuffleBlock32::encode_with::<SIGNED, Pack8>(v, or, dst, words)
        } else {
            ssse3::ShuffleBlock32::encode_with::<SIGNED, ssse3::Pack4>(v, or, dst, varint::encode_words)
        }
    }

    #[inline(always)]
    fn narrow(v: &[u64; crate::packed::BLOCK]) -> [u32; crate::packed::BLOCK] {
        sse2::narrow_block(v)
    }

    /// One pass: each value's words by `PDEP` and a table load, stored at once (ten bytes,
    /// each value's stores overwriting the spill of the one before). Near the end of the
    /// output, where ten bytes a value may not fit, the portable two-pass block.
    #[inline(always)]
    fn encode_64(v: &[u64; crate::packed::BLOCK], dst: &mut [u8]) -> Option<usize> {
        // Room for ten bytes a value and the slack: then the portable block would not refuse
        // this one either (`None` exactly where it does).
        if !PDEP || dst.len() < crate::packed::BLOCK * varint::MAX_LEN + crate::packed::BLOCK_SLACK {
            return crate::packed::encode_block_64_words(v, dst);
        }
        let p = dst.as_mut_ptr();
        let mut at = 0usize;
        for &x in v {
            // SAFETY: only instantiated inside functions compiled with BMI2 enabled (the AVX2
            // backend's encoders).
            let (low, high, len) = unsafe { pdep_words(x) };
            // SAFETY: `at` is the bytes of the values before this one, at most 31 of ten bytes,
            // so the ten bytes stored lie within `dst`, which has room for 32 such values.
            unsafe { crate::packed::store_varint_words(p.add(at), low, high) };
            at += len;
        }
        Some(at)
    }
}

/// The block encoder's step of eight values: SSSE3's four-value step ([`ssse3::pack4`]) in
/// each 128-bit half of one register, each half packed by its own `PSHUFB` row and stored
/// where the other's bytes end. Half the vector ops a value; a step with a value of 2^28 or more
/// (a negative `int32`) goes to words value by value, eight of them (retrying each half by the
/// four-value step cost fresh `realistic` arrays 3%, a second mispredicted branch, and gained
/// only where the negatives stand in the same place every time). Zen 4, a probe over 256 fresh
/// arrays of 10,000 values, `Kernel(avx2)`, min of three or four alternated runs, ns a value:
/// `encode_u64` realistic 1.505 -> 1.368-1.381, small values without a negative 1.181 ->
/// 1.003-1.021, `u32-mixed` and `u64-mixed` unchanged (1.24-1.28, 1.71-1.79); `encode_i32`
/// realistic 1.294 -> 1.136-1.187; in cache (4 arrays) realistic 1.207 -> 1.045; callgrind,
/// `encode_u64` realistic 20.0 -> 16.7-16.8 instructions a value (two builds of the same step). (An eight-value step tried before, one 32-byte load of
/// values the narrowing had stored 16 bytes at a time, stalled on the stores' forwarding and
/// measured no faster despite fewer instructions.)
///
/// [`ssse3::pack4`]: ssse3::pack4
pub(crate) struct Pack8;

impl ssse3::PackStep for Pack8 {
    const VALUES: usize = 8;

    #[inline(always)]
    unsafe fn pack(src: *const u32, dst: *mut u8) -> Option<usize> {
        use ssse3::{length_index, LOW_BYTES, PACK, PACKED_LEN};
        // SAFETY: the caller guarantees 32 readable bytes at `src`, 32 writable at `dst`, and
        // AVX2; the table rows are 16 bytes each.
        unsafe {
            // Two 16-byte loads: the values are `sse2::narrow_block`'s 16-byte stores, each of
            // which forwards only to a load within it. The second in `asm!`, or the compiler
            // joins them into one 32-byte load again (Miri, which runs no `asm!`, takes the
            // intrinsic).
            #[cfg(miri)]
            let high = _mm_loadu_si128(src.add(4) as *const __m128i);
            #[cfg(not(miri))]
            let high: __m128i;
            #[cfg(not(miri))]
            core::arch::asm!(
                "vmovdqu {high}, xmmword ptr [{p}]",
                high = out(xmm_reg) high,
                p = in(reg) src.add(4),
                options(pure, readonly, nostack, preserves_flags),
            );
            let x = _mm256_inserti128_si256::<1>(
                _mm256_castsi128_si256(_mm_loadu_si128(src as *const __m128i)),
                high,
            );
            if _mm256_testz_si256(x, _mm256_set1_epi32(0xf000_0000u32 as i32)) == 0 {
                return None;
            }
            let (bytes, len1) = ssse3::lane_bytes_and_lengths!(
                x,
                _mm256_and_si256,
                _mm256_or_si256,
                _mm256_slli_epi32,
                _mm256_cmpgt_epi32,
                _mm256_set1_epi32,
                _mm256_add_epi32,
                _mm256_sub_epi32,
                _mm256_setzero_si256()
            );
            // Each length less one, its low byte gathered into the low four bytes of each half.
            let low_bytes =
                _mm256_broadcastsi128_si256(_mm_loadu_si128(LOW_BYTES.as_ptr() as *const __m128i));
            let lens = _mm256_shuffle_epi8(len1, low_bytes);
            let (i0, i1) = (
                length_index(_mm256_cvtsi256_si32(lens) as u32),
                length_index(_mm256_extract_epi32::<4>(lens) as u32),
            );
            let rows = _mm256_inserti128_si256::<1>(
                _mm256_castsi128_si256(_mm_loadu_si128(PACK[i0].as_ptr() as *const __m128i)),
                _mm_loadu_si128(PACK[i1].as_ptr() as *const __m128i),
            );
            let packed = _mm256_shuffle_epi8(bytes, rows);
            let n0 = PACKED_LEN[i0] as usize;
            _mm_storeu_si128(dst as *mut __m128i, _mm256_castsi256_si128(packed));
            _mm_storeu_si128(dst.add(n0) as *mut __m128i, _mm256_extracti128_si256::<1>(packed));
            Some(n0 + PACKED_LEN[i1] as usize)
        }
    }
}

/// [`varint::encode_words`] with one `PDEP` for the 7-bit groups of bytes 0..8 (the portable
/// spread takes about ten ops). For the backends with BMI2 and a fast PDEP.
///
/// # Safety
/// The CPU must support BMI2.
#[inline(always)]
unsafe fn pdep_words(x: u64) -> (u64, u64, usize) {
    // SAFETY: the caller guarantees BMI2.
    varint::encode_words_with(x, |x| unsafe { _pdep_u64(x, 0x7f7f_7f7f_7f7f_7f7f) })
}

/// simdutf8's AVX2 validator (feature `simdutf8`), compiled with AVX2 enabled so that its
/// `#[inline]` body joins this function instead of being one more call away.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(feature = "simdutf8")]
#[target_feature(enable = "avx2")]
unsafe fn validate_utf8(bytes: &[u8]) -> bool {
    // SAFETY: the caller guarantees AVX2; this function is reachable only through the AVX2 and
    // AVX-512 tables, handed out once the CPU has been found to support them.
    unsafe { simdutf8::basic::imp::x86::avx2::validate_utf8(bytes) }.is_ok()
}

/// This backend's UTF-8 check: simdutf8's AVX2 one with the `simdutf8` feature, else core's.
#[cfg(feature = "simdutf8")]
pub(crate) const VALIDATE_UTF8: unsafe fn(&[u8]) -> bool = validate_utf8;
#[cfg(not(feature = "simdutf8"))]
pub(crate) const VALIDATE_UTF8: unsafe fn(&[u8]) -> bool = crate::arch::utf8_core;

crate::packed::encoders_with!("avx2,bmi1,bmi2,lzcnt,popcnt", crate::arch::x86_64::avx2::Avx2Block32<true>);

/// `fields::validate` starts with the AVX2 table of field lengths.
const SCAN_FIELDS: Option<crate::arch::ScanFields> = Some(super::avx2_fields::scan_fields);

/// Short packed payloads with a varint over one byte from 8 bytes on: the kernel's fixed cost for
/// a payload of one window is 18-20 ns (23-30 before it took such payloads outside its loop),
/// which the reference's loop exceeds on fresh `u32-mixed` and `realistic` data from 6-8 bytes;
/// below 8 bytes a payload is one or two varints, which the reference takes in less (see
/// `packed::SMALL_PAYLOAD`).
const SHORT_MIXED: usize = 8;

generic::kernel_fns!("avx2,bmi1,bmi2,lzcnt,popcnt", Avx2, Pext, generic::InLanes<Avx2Lanes>, encoders);

/// The same kernels with shifts and masks where [`FNS`] takes PEXT (a window's only varint over
/// 8 bytes, about a third of `realistic` data's windows), for the CPUs this backend is chosen on
/// whose PEXT is microcode: AMD before Zen 3 (AVX2 and BMI2, no AVX-512), where it takes hundreds
/// of cycles with a mask of 56 bits. A table of its own, chosen once per CPU, rather than a
/// branch in the window loop: that branch cost Zen 4 1-3% on realistic data. On Zen 1 the
/// realistic decode took 1.45-1.56 ns a value with this table and 2.26-2.51 with [`FNS`]. These
/// CPUs' `SHLD` is slow too, so `skip_varints` carries its runs by [`generic::TopBits`].
pub(crate) mod slow_pext {
    use super::{Avx2, Avx2Lanes, VALIDATE_UTF8};
    use crate::arch::generic;

    /// Short packed payloads go to the reference, as before the cut-off was measured per
    /// backend: these CPUs (Zen 1, Zen 2) were not measured for it.
    const SHORT_MIXED: usize = crate::packed::SMALL_PAYLOAD;

    /// No field-length table: `fields::validate` runs the scalar loop, as measured on Zen 1
    /// (3.85x prost). The AVX2 table was not measured on these CPUs, and Zen 1 runs each 256-bit
    /// op as two: by its op count (about 75 a 32-byte block, some 20 cycles a field there) no
    /// faster than its scalar loop's 16 cycles. (Zen 2, with whole 256-bit units, would likely
    /// gain; unmeasured, it keeps the loop too.)
    const SCAN_FIELDS: Option<crate::arch::ScanFields> = None;

    // The AVX2 encoders without PDEP.
    crate::packed::encoders_with!(
        "avx2,bmi1,bmi2,lzcnt,popcnt",
        crate::arch::x86_64::avx2::Avx2Block32<false>
    );

    generic::kernel_fns!(
        "avx2,bmi1,bmi2,lzcnt,popcnt",
        Avx2,
        generic::Swar,
        generic::InLanes<Avx2Lanes>,
        encoders,
        generic::TopBits
    );
}

/// This backend's kernels for this CPU: [`FNS`], or [`slow_pext::FNS`] where PEXT is slow.
pub(crate) fn fns() -> &'static crate::arch::KernelFns {
    if super::pext_is_fast() {
        &FNS
    } else {
        &slow_pext::FNS
    }
}

#[cfg(test)]
mod tests {
    use crate::arch::{scalar, slots, KernelFns, Payload};
    use crate::backend::Backend;
    use core::mem::MaybeUninit;
    use std::vec::Vec;

    /// A xorshift generator from `seed` (not zero).
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Payloads of varints of every length (runs of 10-byte ones, single ones among short ones),
    /// each also damaged: a byte turned into a continuation byte, a 10th byte above 1, cut short.
    fn payloads() -> Vec<Vec<u8>> {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut all = Vec::new();
        for case in 0..60 {
            let n = 1 + (next() % 700) as usize;
            let mut p = Vec::new();
            for _ in 0..n {
                let r = next();
                // Case by case more long varints: from none to nearly all.
                let len = if r % 60 < case { 10 } else { 1 + (r >> 8) % 5 } as u32;
                let v = if len == 10 {
                    r | 1 << 63
                } else {
                    (r >> 16) & ((1u64 << (7 * len)) - 1) | 1 << (7 * (len - 1))
                };
                let mut buf = [0u8; 10];
                let k = crate::varint::encode_u64(v, &mut buf).unwrap();
                p.extend_from_slice(&buf[..k]);
            }
            let at = (next() as usize) % p.len();
            let mut continued = p.clone();
            continued[at] |= 0x80;
            let mut above_one = p.clone();
            if let Some(i) = p.windows(10).position(|w| w[..9].iter().all(|&b| b >= 0x80)) {
                above_one[i + 9] = 2;
            }
            let cut = p[..at].to_vec();
            all.extend([p, continued, above_one, cut]);
        }
        all
    }

    /// One decode through `fns` and through the reference, with room for `room` values: the
    /// same result, and the same values when it is a count.
    fn agree<T: Copy + Default + PartialEq + core::fmt::Debug>(
        fns: &KernelFns,
        pick: impl Fn(&KernelFns) -> unsafe fn(Payload, &mut [MaybeUninit<T>]) -> crate::error::Result<usize>,
        p: &[u8],
        room: usize,
    ) {
        let (mut got, mut want) = (std::vec![T::default(); room], std::vec![T::default(); room]);
        // SAFETY: the caller checked that the CPU runs `fns`; the scalar table runs anywhere;
        // the decoders write only values into their slots.
        let (g, w) = unsafe {
            (
                pick(fns)(Payload::new(p), slots(&mut got)),
                pick(&scalar::FNS)(Payload::new(p), slots(&mut want)),
            )
        };
        assert_eq!(g, w, "payload of {} bytes, room {room}", p.len());
        if let Ok(n) = w {
            assert_eq!(got[..n], want[..n], "payload of {} bytes, room {room}", p.len());
        }
    }

    /// `Kernel::avoids_slow_pext` says which AVX2 table a kernel has: the slow-PEXT one exactly
    /// where this CPU's PEXT is slow, on no other backend.
    #[test]
    fn kernels_say_whether_they_avoid_pext() {
        use crate::backend::Kernel;
        for b in crate::backend::available() {
            let want = b == Backend::Avx2 && !crate::arch::x86_64::pext_is_fast();
            assert_eq!(Kernel::new(b).unwrap().avoids_slow_pext(), want, "{b:?}");
        }
        assert_eq!(
            Kernel::detected().avoids_slow_pext(),
            Kernel::detected().backend() == Backend::Avx2 && !crate::arch::x86_64::pext_is_fast()
        );
    }

    /// The field-length table is in the AVX2 kernels, and not in those for AMD before Zen 3.
    #[test]
    fn only_the_pext_table_scans_fields() {
        assert!(super::FNS.scan_fields.is_some());
        assert!(super::slow_pext::FNS.scan_fields.is_none());
    }

    /// The encoders and 64-bit lengths of the table for CPUs with a slow PEXT (its own blocks:
    /// no `PDEP`, the four-value step) against the reference, on arrays of every kind the
    /// blocks tell apart (`int32`s with and without negatives, five-byte values, any 64-bit
    /// values), with exact, one-short and worst-case outputs.
    #[test]
    fn slow_pext_encoders_equal_the_reference() {
        if !Backend::Avx2.is_available() {
            return;
        }
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let (fns, reference) = (&super::slow_pext::FNS, &scalar::FNS);
        // Under Miri, a few short arrays.
        let lengths: &[usize] =
            if cfg!(miri) { &[0, 33, 70] } else { &[0, 1, 7, 31, 32, 33, 64, 100, 257, 300] };
        for kind in 0..5 {
            for &n in lengths {
                let values: Vec<u64> = (0..n)
                    .map(|_| {
                        let r = next();
                        let short = (r >> 40) & ((1 << (7 * (1 + r % 4))) - 1);
                        match kind {
                            // `int32`s, one in 40 negative.
                            0 => {
                                if r.is_multiple_of(40) {
                                    (r as i32 | i32::MIN) as i64 as u64
                                } else {
                                    short
                                }
                            }
                            // Short values alone.
                            1 => short,
                            // Below 2^32, one in 8 of five bytes.
                            2 => {
                                if r.is_multiple_of(8) {
                                    (r >> 32) | 1 << 28
                                } else {
                                    short
                                }
                            }
                            // Any 64-bit values, shifted down to every length.
                            3 => r >> (r % 64),
                            // `int32`s, half of them negative.
                            _ => {
                                if r.is_multiple_of(2) {
                                    r as i32 as i64 as u64
                                } else {
                                    short
                                }
                            }
                        }
                    })
                    .collect();
                let i64s: Vec<i64> = values.iter().map(|&v| v as i64).collect();
                let (u32s, i32s): (Vec<u32>, Vec<i32>) = values.iter().map(|&v| (v as u32, v as i32)).unzip();
                // SAFETY: the CPU runs the AVX2 table (checked above); the scalar one runs anywhere.
                unsafe {
                    assert_eq!(
                        (fns.encoded_len_u64)(&values),
                        (reference.encoded_len_u64)(&values),
                        "{kind} {n}"
                    );
                    assert_eq!(
                        (fns.encoded_len_sint64)(&i64s),
                        (reference.encoded_len_sint64)(&i64s),
                        "{kind} {n}"
                    );
                }
                let check = |encode: &dyn Fn(&KernelFns, &mut [u8]) -> crate::error::Result<usize>| {
                    let mut roomy = std::vec![0u8; n * 10];
                    let len = encode(reference, &mut roomy).unwrap();
                    for size in [len, len.saturating_sub(1), n * 10] {
                        let (mut got, mut want) = (std::vec![0xa5u8; size], std::vec![0xa5u8; size]);
                        let (g, w) = (encode(fns, &mut got), encode(reference, &mut want));
                        assert_eq!(g, w, "kind {kind}, {n} values, output {size}");
                        assert_eq!(got, want, "kind {kind}, {n} values, output {size}");
                    }
                };
                // SAFETY: as above.
                check(&|f, o| unsafe { (f.encode_u64)(&values, o) });
                // SAFETY: as above.
                check(&|f, o| unsafe { (f.encode_sint64)(&i64s, o) });
                // SAFETY: as above.
                check(&|f, o| unsafe { (f.encode_u32)(&u32s, o) });
                // SAFETY: as above.
                check(&|f, o| unsafe { (f.encode_i32)(&i32s, o) });
                // SAFETY: as above.
                check(&|f, o| unsafe { (f.encode_sint32)(&i32s, o) });
            }
        }
    }

    /// The table for CPUs with a slow PEXT, which most machines CI runs on never choose, against
    /// the reference, as `tests/backends.rs` checks the chosen tables.
    #[test]
    fn slow_pext_table_equals_the_reference() {
        if !Backend::Avx2.is_available() {
            return;
        }
        // Under Miri (which interprets every instruction) one payload in 47, five of the 240.
        for p in payloads().into_iter().step_by(if cfg!(miri) { 47 } else { 1 }) {
            for room in [p.len(), p.len() / 3, 0] {
                let fns = &super::slow_pext::FNS;
                agree(fns, |f| f.decode_u64, &p, room);
                agree(fns, |f| f.decode_u32, &p, room);
                agree(fns, |f| f.decode_sint64, &p, room);
                agree(fns, |f| f.decode_sint32, &p, room);
                agree(fns, |f| f.decode_bool, &p, room);
            }
            // Its `skip_varints` carries runs between windows its own way (`TopBits`).
            let count = scalar::count_varints(&p);
            for n in [0, 1, count / 3, count / 2, count.saturating_sub(1), count, count + 1] {
                // SAFETY: as in `agree`.
                let (got, want) = unsafe {
                    ((super::slow_pext::FNS.skip_varints)(&p, n), (scalar::FNS.skip_varints)(&p, n))
                };
                assert_eq!(got, want, "payload of {} bytes, skip {n}", p.len());
            }
        }
    }
}
