//! aarch64 backends. NEON is part of the base aarch64 target, so there is nothing to detect.

pub(crate) mod neon;

/// `PRFM PLDL1KEEP` of the line at `ptr`: see [`crate::arch::prefetch`].
#[inline(always)]
pub(crate) fn prefetch(ptr: *const u8) {
    // SAFETY: a prefetch of any address is a hint that neither faults nor reads or writes
    // anything the program sees; the instruction touches no register but its operand.
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) ptr, options(nostack, nomem, preserves_flags))
    }
    // Miri runs no inline assembly, and a hint has nothing for it to check.
    #[cfg(miri)]
    let _ = ptr;
}
