//! SSE2 (every x86-64 CPU): 16-byte blocks; four varints a step in the 64-bit lanes of two
//! registers, packed with shifts and a multiply-add; shift-and-mask compression for the long ones.

use crate::arch::generic;
use core::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_andnot_si128, _mm_castpd_si128, _mm_castps_si128, _mm_castsi128_pd,
    _mm_castsi128_ps, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_loadh_pd, _mm_loadl_epi64, _mm_loadu_si128,
    _mm_madd_epi16, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi16, _mm_set1_epi32, _mm_set1_epi64x,
    _mm_set1_epi8, _mm_set_epi64x, _mm_setzero_si128, _mm_shuffle_ps, _mm_slli_epi64, _mm_srai_epi16,
    _mm_srli_epi16, _mm_srli_epi64, _mm_storeu_si128, _mm_sub_epi64, _mm_unpackhi_epi64, _mm_unpacklo_epi64,
    _mm_xor_si128,
};

#[derive(Clone, Copy)]
pub(crate) struct Sse2(__m128i);

impl generic::Vector for Sse2 {
    const BYTES: usize = 16;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 16 readable bytes; SSE2 is baseline on x86-64.
        Sse2(unsafe { _mm_loadu_si128(ptr as *const __m128i) })
    }

    #[inline(always)]
    fn continuation_bits(self) -> u64 {
        // SAFETY: SSE2 is baseline on x86-64.
        unsafe { _mm_movemask_epi8(self.0) as u32 as u64 }
    }

    #[inline(always)]
    fn above_one_bits(self) -> u64 {
        // A signed compare: continuation bytes are negative.
        // SAFETY: SSE2 is baseline on x86-64.
        unsafe { _mm_movemask_epi8(_mm_cmpgt_epi8(self.0, _mm_set1_epi8(1))) as u32 as u64 }
    }

    #[inline(always)]
    fn equal_bits(self, byte: u8) -> u64 {
        // SAFETY: SSE2 is baseline on x86-64.
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(self.0, _mm_set1_epi8(byte as i8))) as u32 as u64 }
    }

    /// The tail in five registers, each stored whole, so that the window's 16-byte loads read
    /// one store each and are forwarded (see `avx2::Avx2::copy_tail`): full blocks loaded, the
    /// partial one built from word reads within the payload, the rest zero.
    #[inline(always)]
    unsafe fn copy_tail(src: *const u8, len: usize, dst: &mut [u8; generic::WINDOW + 16]) {
        for at in (0..generic::WINDOW + 16).step_by(16) {
            // SAFETY: `len` readable bytes at `src` (the caller): a block is loaded whole only
            // when its 16 bytes are among them, and `first_bytes` reads `len - at` of them from
            // `at`; the store writes bytes `at..at + 16` of `dst`, within its 80. SSE2 is
            // baseline on x86-64.
            unsafe {
                let block = if len >= at + 16 {
                    _mm_loadu_si128(src.add(at) as *const __m128i)
                } else if len > at {
                    first_bytes(src.add(at), len - at)
                } else {
                    _mm_setzero_si128()
                };
                _mm_storeu_si128(dst.as_mut_ptr().add(at) as *mut __m128i, block);
            }
        }
    }
}

/// The `len` (1..16) bytes at `p` in a register, the bytes after them zero, from word reads that
/// stay within them.
///
/// # Safety
/// `p` must be valid for reads of `len` bytes.
#[inline(always)]
unsafe fn first_bytes(p: *const u8, len: usize) -> __m128i {
    // SAFETY: each `low_bytes` reads within its `k` bytes, all among the `len` at `p`; SSE2 is
    // baseline on x86-64.
    unsafe {
        let low = low_bytes(p, len.min(8));
        let high = if len > 8 { low_bytes(p.add(8), len - 8) } else { 0 };
        _mm_set_epi64x(high as i64, low as i64)
    }
}

/// The `k` (1..=8) bytes at `p` as a little-endian word, the bytes above them zero: two reads
/// that overlap (equal bytes, so their `or` is exact), each within the `k` bytes.
///
/// # Safety
/// `p` must be valid for reads of `k` bytes.
#[inline(always)]
unsafe fn low_bytes(p: *const u8, k: usize) -> u64 {
    // SAFETY: every read ends at or before `p + k`: the word when `k == 8`, the dwords at 0 and
    // `k - 4` when `k >= 4`, the byte at 0 and the two bytes at `k - 2` when `k >= 2`.
    unsafe {
        let read = |at: usize, n: usize| -> u64 {
            let mut w = [0u8; 8];
            core::ptr::copy_nonoverlapping(p.add(at), w.as_mut_ptr(), n);
            u64::from_le_bytes(w)
        };
        match k {
            8 => read(0, 8),
            4..=7 => read(0, 4) | read(k - 4, 4) << (8 * (k - 4)),
            2 | 3 => read(0, 1) | read(k - 2, 2) << (8 * (k - 2)),
            _ => read(0, 1),
        }
    }
}

/// The low 32 bits of each of `v`'s values, written four at a time with whole 16-byte stores,
/// so that 16-byte loads of the result are forwarded from them (a store forwards only to a
/// load it wholly contains). Used by the AVX2 encoders (`avx2::Avx2Block32`), where the
/// compiler's own narrowing stored each value separately; built into the SSE2 and SSSE3
/// encoders it measured slower.
#[inline(always)]
pub(crate) fn narrow_block<const N: usize>(v: &[u64; N]) -> [u32; N] {
    let mut out = [0u32; N];
    for (o, x) in out.chunks_exact_mut(4).zip(v.chunks_exact(4)) {
        // SAFETY: `x` holds four u64 (32 readable bytes), `o` four u32 (16 writable bytes);
        // SSE2 is baseline on x86-64.
        unsafe {
            let a = _mm_castsi128_ps(_mm_loadu_si128(x.as_ptr() as *const __m128i));
            let b = _mm_castsi128_ps(_mm_loadu_si128(x.as_ptr().add(2) as *const __m128i));
            // Dwords 0 and 2 of each: the low halves of the four values, in order.
            let low = _mm_castps_si128(_mm_shuffle_ps::<0b10_00_10_00>(a, b));
            _mm_storeu_si128(o.as_mut_ptr() as *mut __m128i, low);
        }
    }
    out
}

/// The 8 bytes at `a` and the 8 at `b` in the two 64-bit lanes of one register.
///
/// # Safety
/// 8 readable bytes at `a` and at `b`.
#[inline(always)]
pub(crate) unsafe fn load_pair(a: *const u8, b: *const u8) -> __m128i {
    // The second 8 bytes go through a local: `_mm_loadh_pd` dereferences its `*const f64`,
    // which must then be 8-byte aligned, so handing it an unaligned varint start is undefined
    // behaviour (Miri reported it), though the instruction does not care. The compiler folds
    // the unaligned read back into the one MOVHPS.
    // SAFETY: forwarded from the caller (8 readable bytes at each; `read_unaligned` needs no
    // alignment); SSE2 is baseline on x86-64.
    unsafe {
        let x = _mm_loadl_epi64(a as *const __m128i);
        let high = (b as *const f64).read_unaligned();
        _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(x), &high))
    }
}

/// Each 64-bit lane of `x` cut after its first terminator (zero beyond; all 8 bytes of a
/// longer varint).
#[inline(always)]
fn cut_lanes(x: __m128i) -> __m128i {
    // SAFETY: SSE2 is baseline on x86-64.
    unsafe {
        // The terminators' top bits; subtracting 1 per lane sets every bit up to the first.
        let t = _mm_andnot_si128(x, _mm_set1_epi8(-128));
        let keep = _mm_xor_si128(t, _mm_sub_epi64(t, _mm_set1_epi64x(1)));
        _mm_and_si128(x, keep)
    }
}

/// The bits a varint's 9th and 10th bytes add at 56..64, per 64-bit lane: `cut` is the lane's
/// first 8 bytes as [`cut_lanes`] leaves them (its top bit set only when all 8 go on), `next`
/// the 8 bytes after them. Seven bits of the 9th byte, and the 10th's lowest if the 9th goes on;
/// nothing for a varint of at most 8 bytes. The AVX2 decoder's too, on each 128-bit half.
#[inline(always)]
pub(crate) fn high_groups(cut: __m128i, next: __m128i) -> __m128i {
    // SAFETY: SSE2 is baseline on x86-64.
    unsafe {
        // Bit 63 of `<< 56` is the 9th byte's continuation bit, of `<< 55` the 10th's lowest.
        let ninth = _mm_slli_epi64::<56>(next);
        let tenth = _mm_or_si128(_mm_slli_epi64::<55>(next), _mm_set1_epi64x(0x7f00_0000_0000_0000));
        // All ones in the top 16 bits of a lane whose 8 bytes all go on (only those bits of
        // `ninth` can be set).
        let long = _mm_srai_epi16::<15>(cut);
        _mm_and_si128(_mm_and_si128(ninth, tenth), long)
    }
}

/// The bytes of the two varints at `a` and `b` in the 64-bit lanes of one register, each lane
/// cut after its first terminator (zero beyond; all 8 bytes of a longer varint).
///
/// # Safety
/// 8 readable bytes at `a` and at `b`.
#[inline(always)]
unsafe fn varint_bytes2(a: *const u8, b: *const u8) -> __m128i {
    // SAFETY: forwarded from the caller.
    cut_lanes(unsafe { load_pair(a, b) })
}

/// The 16 bytes at `a` and the 16 at `b` as two registers: the first 8 of each, and the next 8
/// of each.
///
/// # Safety
/// 16 readable bytes at `a` and at `b`.
#[inline(always)]
pub(crate) unsafe fn load_pair16(a: *const u8, b: *const u8) -> (__m128i, __m128i) {
    // SAFETY: forwarded from the caller; SSE2 is baseline on x86-64.
    unsafe {
        let (x, y) = (_mm_loadu_si128(a as *const __m128i), _mm_loadu_si128(b as *const __m128i));
        (_mm_unpacklo_epi64(x, y), _mm_unpackhi_epi64(x, y))
    }
}

/// How a backend turns each 64-bit lane of varint bytes (at most 8, zero-padded, continuation
/// bits still set) into the lane's value.
pub(crate) trait JoinLanes {
    /// # Safety
    /// The CPU must support the implementation's instruction set.
    unsafe fn join(bytes: __m128i) -> __m128i;
}

/// SSE2's join: `b0 + 128 b1` per 16 bits by shift and mask (no SSSE3 multiply-add), then
/// [`join_groups14`].
pub(crate) struct ShiftJoin;

impl JoinLanes for ShiftJoin {
    #[inline(always)]
    unsafe fn join(bytes: __m128i) -> __m128i {
        // SAFETY: SSE2 is baseline on x86-64.
        unsafe {
            let groups7 = _mm_and_si128(bytes, _mm_set1_epi8(0x7f));
            let byte0 = _mm_set1_epi16(0x00ff);
            let groups14 = _mm_or_si128(
                _mm_and_si128(byte0, groups7),
                _mm_srli_epi16::<1>(_mm_andnot_si128(byte0, groups7)),
            );
            join_groups14(groups14)
        }
    }
}

/// Joins the four 14-bit groups of each 64-bit lane (bits 0..14 of each 16) into the lane's
/// value: `pmaddwd` makes them two 28-bit halves, and one shift moves the high half down next
/// to the low one. The SSSE3 decoder's last step too.
///
/// # Safety
/// None beyond SSE2, which is baseline on x86-64.
#[inline(always)]
pub(crate) unsafe fn join_groups14(groups14: __m128i) -> __m128i {
    // SAFETY: SSE2 is baseline on x86-64.
    unsafe {
        let groups28 = _mm_madd_epi16(groups14, _mm_set1_epi32(0x4000_0001));
        let low28 = _mm_set1_epi64x(0x0fff_ffff);
        _mm_or_si128(_mm_and_si128(low28, groups28), _mm_andnot_si128(low28, _mm_srli_epi64::<4>(groups28)))
    }
}

/// Four varints in the 64-bit lanes of two registers, each loaded from its own start, cut after
/// its terminator and joined by `J` (SSE2's shifts, or SSSE3's multiply-add).
pub(crate) struct Sse2Lanes<J>(core::marker::PhantomData<J>);

impl<J: JoinLanes> generic::Gather4 for Sse2Lanes<J> {
    #[inline(always)]
    unsafe fn decode4(p: [*const u8; 4]) -> [u64; 4] {
        let mut values = [0u64; 4];
        // SAFETY: the caller guarantees 8 readable bytes at each pointer and `J`'s instruction
        // set; 32 writable bytes in `values`.
        unsafe {
            let lanes01 = J::join(varint_bytes2(p[0], p[1]));
            let lanes23 = J::join(varint_bytes2(p[2], p[3]));
            _mm_storeu_si128(values.as_mut_ptr() as *mut __m128i, lanes01);
            _mm_storeu_si128(values.as_mut_ptr().add(2) as *mut __m128i, lanes23);
        }
        values
    }

    #[inline(always)]
    unsafe fn decode4_negative(p: [*const u8; 4]) -> [u64; 4] {
        let mut values = [0u64; 4];
        // SAFETY: the caller guarantees 8 readable bytes at each pointer and `J`'s instruction
        // set; 32 writable bytes in `values`.
        unsafe {
            for (pair, out) in [(p[0], p[1]), (p[2], p[3])].into_iter().zip(values.chunks_exact_mut(2)) {
                let cut = varint_bytes2(pair.0, pair.1);
                // Bit 63 of a cut lane is set only when all its 8 bytes go on: spread over the
                // top 16 bits, it keeps the top byte.
                let top = _mm_and_si128(
                    _mm_srai_epi16::<15>(cut),
                    _mm_set1_epi64x(generic::NEGATIVE_TOP_BYTE as i64),
                );
                _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, _mm_or_si128(J::join(cut), top));
            }
        }
        values
    }

    #[inline(always)]
    unsafe fn decode4_long(p: [*const u8; 4]) -> [u64; 4] {
        let mut values = [0u64; 4];
        // SAFETY: the caller guarantees 16 readable bytes at each pointer and `J`'s instruction
        // set; 32 writable bytes in `values`.
        unsafe {
            for (pair, out) in [(p[0], p[1]), (p[2], p[3])].into_iter().zip(values.chunks_exact_mut(2)) {
                let (first, next) = load_pair16(pair.0, pair.1);
                let cut = cut_lanes(first);
                let lanes = _mm_or_si128(J::join(cut), high_groups(cut, next));
                _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, lanes);
            }
        }
        values
    }
}

/// core's UTF-8 check (simdutf8 has none for plain SSE2).
const VALIDATE_UTF8: unsafe fn(&[u8]) -> bool = crate::arch::utf8_core;

/// No field-length table yet: `fields::validate` runs the scalar fast path.
const SCAN_FIELDS: Option<crate::arch::ScanFields> = None;

/// Short packed payloads with a varint over one byte from 8 bytes on, as AVX2 (a fixed cost of
/// 20-22 ns on Sapphire Rapids for a payload of one window; see `packed::SMALL_PAYLOAD`).
const SHORT_MIXED: usize = 8;

generic::kernel_fns!("sse2", Sse2, generic::Swar, generic::InLanes<Sse2Lanes<ShiftJoin>>);
