//! NEON: 16-byte blocks; the shift-and-mask compression (aarch64 has no PEXT).

use crate::arch::generic;
// Under Miri, `top_bits` takes none of its shifts, loads and adds across the register.
#[cfg_attr(miri, allow(unused_imports))]
use core::arch::aarch64::{
    uint8x16_t, vaddv_u8, vceqq_u8, vcgtq_s8, vdupq_n_s8, vdupq_n_u8, vget_high_u8, vget_low_u8, vld1q_s8,
    vld1q_u8, vreinterpretq_s8_u8, vshlq_u8, vshrq_n_u8,
};

#[derive(Clone, Copy)]
pub(crate) struct Neon(uint8x16_t);

/// Shifts that move each byte's top bit (after `>> 7`) to bit `i % 8`.
#[cfg_attr(miri, allow(dead_code))]
const BIT_OF_BYTE: [i8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7];

impl generic::Vector for Neon {
    const BYTES: usize = 16;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 16 readable bytes; NEON is baseline on aarch64.
        Neon(unsafe { vld1q_u8(ptr) })
    }

    #[inline(always)]
    fn continuation_bits(self) -> u64 {
        top_bits(self.0)
    }

    #[inline(always)]
    fn above_one_bits(self) -> u64 {
        // A signed compare: continuation bytes are negative.
        // SAFETY: NEON is baseline on aarch64.
        top_bits(unsafe { vcgtq_s8(vreinterpretq_s8_u8(self.0), vdupq_n_s8(1)) })
    }

    #[inline(always)]
    fn equal_bits(self, byte: u8) -> u64 {
        // SAFETY: NEON is baseline on aarch64.
        top_bits(unsafe { vceqq_u8(self.0, vdupq_n_u8(byte)) })
    }
}

/// Bit `i` is the top bit of byte `i`. NEON has no movemask: isolate each top bit, shift it to
/// its position within its half, and add each half's eight bits across the register.
#[inline(always)]
fn top_bits(bytes: uint8x16_t) -> u64 {
    // Miri implements neither USHL nor UADDV: the same bits from the bytes as an array, so that
    // it can check the backend's loads and the generic code around them.
    #[cfg(miri)]
    {
        // SAFETY: `uint8x16_t` is sixteen bytes, any of which is a valid `u8`.
        let bytes: [u8; 16] = unsafe { core::mem::transmute(bytes) };
        return bytes.iter().enumerate().fold(0, |bits, (i, &b)| bits | ((b >> 7) as u64) << i);
    }
    // SAFETY: NEON is baseline on aarch64; BIT_OF_BYTE has 16 readable bytes.
    #[cfg(not(miri))]
    unsafe {
        let top = vshrq_n_u8::<7>(bytes);
        let placed = vshlq_u8(top, vld1q_s8(BIT_OF_BYTE.as_ptr()));
        vaddv_u8(vget_low_u8(placed)) as u64 | (vaddv_u8(vget_high_u8(placed)) as u64) << 8
    }
}

/// simdutf8's validator (feature `simdutf8`), which on aarch64 is its NEON one, chosen at
/// compile time (NEON is baseline; below 64 bytes it runs core's).
///
/// # Safety
/// None; `unsafe` only to fit `KernelFns::validate_utf8`.
#[cfg(feature = "simdutf8")]
unsafe fn validate_utf8(bytes: &[u8]) -> bool {
    simdutf8::basic::from_utf8(bytes).is_ok()
}

/// This backend's UTF-8 check: simdutf8's NEON one with the `simdutf8` feature, else core's.
#[cfg(feature = "simdutf8")]
const VALIDATE_UTF8: unsafe fn(&[u8]) -> bool = validate_utf8;
#[cfg(not(feature = "simdutf8"))]
const VALIDATE_UTF8: unsafe fn(&[u8]) -> bool = crate::arch::utf8_core;

/// No field-length table yet: `fields::validate` runs the scalar fast path.
const SCAN_FIELDS: Option<crate::arch::ScanFields> = None;

/// Short packed payloads go to the reference: the cut-off has not been measured on NEON (qemu
/// models no timing).
const SHORT_MIXED: usize = crate::packed::SMALL_PAYLOAD;

generic::kernel_fns!("neon", Neon, generic::Swar, generic::EachVarint);
