//! SSE2 (every x86-64 CPU): 16-byte blocks, shift-and-mask compression.

use crate::arch::generic;
use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_movemask_epi8};

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
}

generic::kernel_fns!("sse2", Sse2, generic::Swar, generic::EachVarint);
