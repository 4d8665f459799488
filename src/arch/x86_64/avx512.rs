//! AVX-512BW with BMI2: 64-byte blocks (one mask register per block), PEXT compression.

use crate::arch::generic;
use core::arch::x86_64::{__m512i, _mm512_loadu_si512, _mm512_movepi8_mask};

#[derive(Clone, Copy)]
pub(crate) struct Avx512(__m512i);

impl generic::Vector for Avx512 {
    const BYTES: usize = 64;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 64 readable bytes and AVX-512F.
        Avx512(unsafe { _mm512_loadu_si512(ptr as *const __m512i) })
    }

    #[inline(always)]
    fn continuation_bits(self) -> u64 {
        // SAFETY: only instantiated inside functions compiled with AVX-512BW enabled.
        unsafe { _mm512_movepi8_mask(self.0) }
    }
}

generic::kernel_fns!("avx512f,avx512bw,avx512vl,avx2,bmi1,bmi2,lzcnt,popcnt", Avx512, super::avx2::Pext);
