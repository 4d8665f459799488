//! AVX2 with BMI2: 32-byte blocks; four varints a step in the 64-bit lanes of a register, packed
//! with multiply-adds; PEXT for the long ones.

use crate::arch::generic;
use core::arch::x86_64::{
    __m128i, __m256i, _bzhi_u64, _mm256_and_si256, _mm256_andnot_si256, _mm256_castsi128_si256,
    _mm256_inserti128_si256, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_maddubs_epi16,
    _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set1_epi64x,
    _mm256_set1_epi8, _mm256_srli_epi64, _mm256_storeu_si256, _mm256_sub_epi64, _mm256_xor_si256,
    _mm_castpd_si128, _mm_castsi128_pd, _mm_loadh_pd, _mm_loadl_epi64, _pext_u64,
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

/// Four varints in the 64-bit lanes of one register.
pub(crate) struct Avx2Lanes;

impl generic::Gather4 for Avx2Lanes {
    #[inline(always)]
    unsafe fn decode4(p: [*const u8; 4]) -> [u64; 4] {
        let mut values = [0u64; 4];
        // SAFETY: the caller guarantees 8 readable bytes at each pointer and AVX2.
        unsafe {
            let lo = _mm_loadl_epi64(p[0] as *const __m128i);
            let lo = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(lo), p[1] as *const f64));
            let hi = _mm_loadl_epi64(p[2] as *const __m128i);
            let hi = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(hi), p[3] as *const f64));
            let x = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
            // Each lane's bytes through its first terminator: `t ^ (t - 1)` of the terminators'
            // top bits (all eight bytes when there is none: the varint is redone).
            let t = _mm256_andnot_si256(x, _mm256_set1_epi8(-128));
            let keep = _mm256_xor_si256(t, _mm256_sub_epi64(t, _mm256_set1_epi64x(1)));
            let groups7 = _mm256_and_si256(_mm256_and_si256(x, keep), _mm256_set1_epi8(0x7f));
            // `b0 + 128 b1` per 16 bits, then `w0 + 2^14 w1` per 32 bits.
            let groups14 = _mm256_maddubs_epi16(_mm256_set1_epi16(0x8001u16 as i16), groups7);
            let groups28 = _mm256_madd_epi16(groups14, _mm256_set1_epi32(0x4000_0001));
            let low28 = _mm256_set1_epi64x(0x0fff_ffff);
            let v = _mm256_or_si256(
                _mm256_and_si256(low28, groups28),
                _mm256_andnot_si256(low28, _mm256_srli_epi64::<4>(groups28)),
            );
            _mm256_storeu_si256(values.as_mut_ptr() as *mut __m256i, v);
        }
        values
    }
}

generic::kernel_fns!("avx2,bmi1,bmi2,lzcnt,popcnt", Avx2, Pext, generic::InLanes<Avx2Lanes>);
