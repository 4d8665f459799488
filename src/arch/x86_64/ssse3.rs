//! SSSE3: the SSE2 blocks, with the lookup-table window decoder: four varints a table step in
//! the 64-bit lanes of two registers (two `PSHUFB`, then multiply-adds).

use crate::arch::x86_64::sse2::Sse2;
use crate::arch::{generic, shuffle};
use core::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_andnot_si128, _mm_loadu_si128, _mm_madd_epi16, _mm_maddubs_epi16,
    _mm_or_si128, _mm_set1_epi16, _mm_set1_epi32, _mm_set1_epi64x, _mm_set1_epi8, _mm_shuffle_epi8,
    _mm_srli_epi64, _mm_storeu_si128,
};

/// Joins the seven-bit groups of each 64-bit lane (the bytes of a varint of at most 8 bytes,
/// zero-padded) into its value.
///
/// # Safety
/// The CPU must support SSSE3.
#[inline(always)]
unsafe fn pack_lanes(bytes: __m128i) -> __m128i {
    // SAFETY: the caller guarantees SSSE3.
    unsafe {
        let groups7 = _mm_and_si128(bytes, _mm_set1_epi8(0x7f));
        // Unsigned bytes (1, 128) times the groups: `g0 + 128 g1` in 16 bits, then
        // `w0 + 2^14 w1` in 32.
        let groups14 = _mm_maddubs_epi16(_mm_set1_epi16(0x8001u16 as i16), groups7);
        let groups28 = _mm_madd_epi16(groups14, _mm_set1_epi32(0x4000_0001));
        // The high 28-bit half moves down next to the low one.
        let low28 = _mm_set1_epi64x(0x0fff_ffff);
        _mm_or_si128(_mm_and_si128(low28, groups28), _mm_andnot_si128(low28, _mm_srli_epi64::<4>(groups28)))
    }
}

/// Four varints in the 64-bit lanes of two registers, each shuffled from the same 16 bytes.
pub(crate) struct Ssse3Shuffle;

impl shuffle::Shuffle4 for Ssse3Shuffle {
    #[inline(always)]
    unsafe fn decode4(p: *const u8, row: *const u8) -> [u64; 4] {
        let mut values = [0u64; 4];
        // SAFETY: the caller guarantees 16 readable bytes at `p`, 32 at `row`, and SSSE3; 32
        // writable bytes in `values`.
        unsafe {
            let source = _mm_loadu_si128(p as *const __m128i);
            let lanes01 = _mm_shuffle_epi8(source, _mm_loadu_si128(row as *const __m128i));
            let lanes23 = _mm_shuffle_epi8(source, _mm_loadu_si128(row.add(16) as *const __m128i));
            _mm_storeu_si128(values.as_mut_ptr() as *mut __m128i, pack_lanes(lanes01));
            _mm_storeu_si128(values.as_mut_ptr().add(2) as *mut __m128i, pack_lanes(lanes23));
        }
        values
    }
}

generic::kernel_fns!("sse2,ssse3", Sse2, generic::Swar, shuffle::InShuffles<Ssse3Shuffle>);
