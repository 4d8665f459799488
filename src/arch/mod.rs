//! The kernels behind the bulk entry points: the scalar reference, the SIMD algorithms written
//! once over a vector trait (`generic`), and one thin module per instruction set that supplies
//! the traits.

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
// Only x86-64 has a table builder so far.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) mod field_table;
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) mod generic;
pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

use crate::error::Result;
use core::mem::MaybeUninit;

/// `out` as the slots a decoder writes. The decoders take their output as slots that they
/// write in order and never read, so that `packed::extend_*` can hand one a `Vec`'s spare
/// capacity instead of filling it with zeros first (a pass over the whole output: at 10,000
/// one-byte `u64`s, as long as the decode itself).
///
/// # Safety
/// Only initialised values may be written into the slots (never `MaybeUninit::uninit()`), so
/// that `out` stays initialised; the decoders write nothing else.
#[inline(always)]
pub(crate) unsafe fn slots<T: Copy>(out: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout; the caller keeps the slots initialised.
    unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// Slots of one plain integer type as slots of another of the same size and alignment (an
/// `i64` output for the `u64` decoder).
#[inline(always)]
pub(crate) fn cast_slots<A: bytemuck::Pod, B: bytemuck::Pod>(
    out: &mut [MaybeUninit<A>],
) -> &mut [MaybeUninit<B>] {
    const { assert!(size_of::<A>() == size_of::<B>() && align_of::<A>() == align_of::<B>()) };
    // SAFETY: the same size and alignment (checked above), so the same number of slots covers
    // the same bytes; a value written as a `B` is a valid `A` (both are `Pod`).
    unsafe { core::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut MaybeUninit<B>, out.len()) }
}

/// Asks the CPU to bring the cache line at `ptr` into L1 ahead of a load that a serial chain
/// will need, where the hardware prefetchers fall behind: a chain from one length prefix to the
/// next through a stream of messages a few cache lines long waits on L2 at every step. Any
/// address will do (a prefetch never faults); a no-op on other targets.
#[inline(always)]
pub(crate) fn prefetch(ptr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    x86_64::prefetch(ptr);
    #[cfg(target_arch = "aarch64")]
    aarch64::prefetch(ptr);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = ptr;
}

/// How far ahead of a length prefix the loops over runs of length-prefixed items
/// ([`crate::stream::Delimited`], the field scans' runs of length-delimited fields)
/// [`prefetch`], in bytes: a few items of 50..=300 bytes on (probe on Zen 4, 50,000 such
/// messages: 5.5 ns a message fetching nothing, 3.7 / 3.3 / 3.3 / 3.3 at 256 / 512 / 1024 /
/// 2048 bytes ahead). Sapphire Rapids wants 1024 (A/B against 512, speed vs prost in the same
/// runs: streams of 50..=300-byte messages 1.64-1.72x -> 1.81-1.83x, of 128..=255 bytes
/// 1.64-1.66x -> 1.89-1.91x, of 20..=100 bytes 1.87x -> 1.93-1.96x, of 200..=1000 bytes within
/// noise; field scans of 12 MiB of 128..=255-byte strings 12.6 -> 11.5 ns a field; 2048 lost
/// the 50..=300-byte gain).
pub(crate) const PREFETCH_AHEAD: usize = 1024;

/// [`prefetch`] for a chain of length-prefixed items, from the start of one that takes `len`
/// bytes: [`PREFETCH_AHEAD`] bytes on after an item under 256 bytes; after a longer one
/// nothing (the prefetch goes to the item's own line, already read: no branch on `len`, which
/// would mispredict where lengths are mixed). On Intel (Sapphire Rapids) that far after a long
/// item is inside the next one's body, and fetching there set the hardware streaming the
/// bodies in: items of 200..=1000 bytes, 12 MB, took a stream 33-35 ns a message against 9.4-12
/// without, and a field scan 29-34 ns a field against 9.3-10.3. (Streams on AMD, where that
/// costs nothing, fetch ahead after every message: `far_prefetch_is_harmless`.)
#[inline(always)]
pub(crate) fn prefetch_after(item: *const u8, len: usize) {
    prefetch(item.wrapping_add(if len < 256 { PREFETCH_AHEAD } else { 0 }));
}

/// Whether [`prefetch`] far ahead in a stream may land in the bodies of long messages without
/// slowing the stream down (see `x86_64::far_prefetch_is_harmless`); false where not measured.
#[inline(always)]
pub(crate) fn far_prefetch_is_harmless() -> bool {
    #[cfg(target_arch = "x86_64")]
    return x86_64::far_prefetch_is_harmless();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A packed payload as the decoders take it: `len` bytes at `ptr`, of which the `slop` bytes
/// after the end may also be read (never used for results), so that a kernel can load whole
/// blocks up to the end without copying the tail.
#[derive(Clone, Copy)]
pub(crate) struct Payload {
    ptr: *const u8,
    len: usize,
    slop: usize,
}

impl Payload {
    /// A slice, with no slop.
    #[inline(always)]
    pub fn new(bytes: &[u8]) -> Payload {
        Payload { ptr: bytes.as_ptr(), len: bytes.len(), slop: 0 }
    }

    /// # Safety
    /// `ptr` must be valid for reads of `len + slop` initialised bytes that nothing writes to
    /// during the call.
    #[inline(always)]
    pub unsafe fn with_slop(ptr: *const u8, len: usize, slop: usize) -> Payload {
        Payload { ptr, len, slop }
    }

    /// The start; valid for reads of `len() + slop()` bytes.
    #[inline(always)]
    pub fn ptr(self) -> *const u8 {
        self.ptr
    }

    #[inline(always)]
    pub fn slop(self) -> usize {
        self.slop
    }

    /// The payload bytes (without the slop).
    #[inline(always)]
    pub fn bytes<'a>(self) -> &'a [u8] {
        // SAFETY: both constructors guarantee `len` readable, initialised, unmodified bytes for
        // the duration of the kernel call, the only place a `Payload` lives.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// How far from a field start the fields of a message are valid, with a group depth limit
/// (see [`field_table::scan`]); `fields::validate` continues from there.
pub(crate) type ScanFields = unsafe fn(&[u8], usize, u8) -> usize;

/// One backend's bulk kernels. The functions are `unsafe` because a SIMD backend's may only run
/// on a CPU with its instruction set; a table is handed out only after that has been checked.
pub(crate) struct KernelFns {
    pub decode_u64: unsafe fn(Payload, &mut [MaybeUninit<u64>]) -> Result<usize>,
    pub decode_u32: unsafe fn(Payload, &mut [MaybeUninit<u32>]) -> Result<usize>,
    pub decode_sint64: unsafe fn(Payload, &mut [MaybeUninit<i64>]) -> Result<usize>,
    pub decode_sint32: unsafe fn(Payload, &mut [MaybeUninit<i32>]) -> Result<usize>,
    pub decode_bool: unsafe fn(Payload, &mut [MaybeUninit<bool>]) -> Result<usize>,
    pub count_varints: unsafe fn(&[u8]) -> usize,
    pub skip_varints: unsafe fn(&[u8], usize) -> Result<usize>,
    pub encode_u64: unsafe fn(&[u64], &mut [u8]) -> Result<usize>,
    pub encode_u32: unsafe fn(&[u32], &mut [u8]) -> Result<usize>,
    pub encode_i32: unsafe fn(&[i32], &mut [u8]) -> Result<usize>,
    pub encode_sint64: unsafe fn(&[i64], &mut [u8]) -> Result<usize>,
    pub encode_sint32: unsafe fn(&[i32], &mut [u8]) -> Result<usize>,
    pub encode_bool: unsafe fn(&[bool], &mut [u8]) -> Result<usize>,
    /// The packed lengths of the 64-bit wire types (`int64` takes `uint64`'s), compiled with the
    /// backend's leading-zero count: the baseline build's `BSR` takes several micro-ops on AMD.
    pub encoded_len_u64: unsafe fn(&[u64]) -> usize,
    pub encoded_len_sint64: unsafe fn(&[i64]) -> usize,
    /// Whether the bytes are UTF-8 (for `utf8::from_utf8` past its short ASCII check).
    pub validate_utf8: unsafe fn(&[u8]) -> bool,
    /// The field scan `fields::validate` starts with, if the backend has a table builder.
    pub scan_fields: Option<ScanFields>,
    /// The shortest packed payload below `packed`'s cut-off (`packed::SMALL_PAYLOAD`) that the
    /// dispatched decoders give this backend's kernel rather than the scalar reference, if it
    /// holds a varint of two bytes or more (one of one-byte varints alone always goes to the
    /// reference, whose loop is the faster there). `SMALL_PAYLOAD` (never) where unmeasured.
    pub short_mixed: usize,
}

/// `core::str::from_utf8` as a backend's UTF-8 check: every backend without a SIMD one (or
/// without the `simdutf8` feature).
///
/// # Safety
/// None; `unsafe` only to fit [`KernelFns::validate_utf8`].
pub(crate) unsafe fn utf8_core(bytes: &[u8]) -> bool {
    core::str::from_utf8(bytes).is_ok()
}
