//! AVX2 with BMI2: 32-byte blocks, PEXT compression.

use crate::arch::generic;
use core::arch::x86_64::{__m256i, _bzhi_u64, _mm256_loadu_si256, _mm256_movemask_epi8, _pext_u64};

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

generic::kernel_fns!("avx2,bmi1,bmi2,lzcnt,popcnt", Avx2, Pext, generic::EachVarint);
