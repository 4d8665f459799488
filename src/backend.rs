//! Which implementation runs the bulk kernels, chosen at run time.
//!
//! The entry points in [`crate::packed`] (packed varint decode and encode, `count_varints`) use
//! the best backend the CPU supports. It is detected
//! once (CPUID and XGETBV on x86-64, so the OS must have enabled the wide registers too), and
//! the choice is cached in an atomic pointer to the backend's table of kernels, so a call costs
//! one relaxed load and an indirect call. When the build already enables the best backend's
//! target features (`-C target-cpu=native`), the choice is made at compile time and nothing is
//! checked at run time.
//!
//! Single-value functions ([`crate::varint`], [`crate::wire`]) never dispatch: they are
//! `#[inline]` scalar code. Of the message-level calls only [`crate::fields::validate`] does
//! (its field scan: a table of field lengths on AVX-512 and AVX2).
//!
//! To run or compare a specific backend, take a [`Kernel`]: tests, fuzzers and benchmarks run
//! every backend [`available`] on the machine.
//!
//! ```
//! use pbwire::backend::{self, Backend, Kernel};
//! let payload = [0x96, 0x01, 0x05];
//! for b in backend::available() {
//!     let kernel = Kernel::new(b).unwrap();
//!     let mut out = [0u64; 2];
//!     assert_eq!(kernel.decode_u64(&payload, &mut out), Ok(2), "{}", b.name());
//!     assert_eq!(out, [150, 5]);
//! }
//! assert!(Kernel::new(Backend::Scalar).is_some());
//! ```

use core::sync::atomic::{AtomicPtr, Ordering};

use crate::arch::{self, KernelFns};
use crate::error::Result;

/// An implementation of the bulk kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// The portable reference; every CPU.
    Scalar,
    /// x86-64 SSE2 (every x86-64 CPU): 16-byte blocks.
    Sse2,
    /// x86-64 SSSE3: the SSE2 blocks and lanes, joined with `PMADDUBSW`; a `PSHUFB` encoder.
    Ssse3,
    /// x86-64 AVX2 with BMI1/BMI2/LZCNT/POPCNT: 32-byte blocks, the lane decoder.
    Avx2,
    /// x86-64 AVX-512 F/BW/VL/CD/VBMI/VBMI2 on top of `Avx2`: 64-byte blocks, short varints
    /// eight at a time; encoding eight values a step.
    Avx512,
    /// aarch64 NEON (every aarch64 CPU): 16-byte blocks.
    Neon,
}

/// Every backend, slowest first.
const ALL: [Backend; 6] =
    [Backend::Scalar, Backend::Neon, Backend::Sse2, Backend::Ssse3, Backend::Avx2, Backend::Avx512];

impl Backend {
    /// A short lower-case name: `scalar`, `sse2`, `ssse3`, `avx2`, `avx512`, `neon`.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Sse2 => "sse2",
            Backend::Ssse3 => "ssse3",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }

    /// Whether this CPU (and OS) can run the backend.
    pub fn is_available(self) -> bool {
        self.fns().is_some()
    }

    /// The backend's kernel table, if this CPU can run it.
    fn fns(self) -> Option<&'static KernelFns> {
        match self {
            Backend::Scalar => Some(&arch::scalar::FNS),
            #[cfg(target_arch = "x86_64")]
            Backend::Sse2 => Some(&arch::x86_64::sse2::FNS),
            #[cfg(target_arch = "x86_64")]
            Backend::Ssse3 if x86_features() & SSSE3 != 0 => Some(&arch::x86_64::ssse3::FNS),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 if x86_features() & AVX2 != 0 => Some(arch::x86_64::avx2::fns()),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 if x86_features() & AVX512 != 0 => Some(&arch::x86_64::avx512::FNS),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => Some(&arch::aarch64::neon::FNS),
            _ => None,
        }
    }
}

impl core::fmt::Display for Backend {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(target_arch = "x86_64")]
const AVX2: u8 = 1;
#[cfg(target_arch = "x86_64")]
const AVX512: u8 = 2;
#[cfg(target_arch = "x86_64")]
const SSSE3: u8 = 4;
#[cfg(target_arch = "x86_64")]
const DETECTED: u8 = 0x80;

/// The detected x86 features as `SSSE3 | AVX2 | AVX512` bits, asking the CPU only once.
#[cfg(target_arch = "x86_64")]
fn x86_features() -> u8 {
    static FEATURES: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);
    let cached = FEATURES.load(Ordering::Relaxed);
    if cached & DETECTED != 0 {
        return cached;
    }
    let f = arch::x86_64::detect();
    let bits = DETECTED
        | if f.ssse3 { SSSE3 } else { 0 }
        | if f.avx2_bmi2 { AVX2 } else { 0 }
        | if f.avx512 { AVX512 } else { 0 };
    // Racing threads compute the same value.
    FEATURES.store(bits, Ordering::Relaxed);
    bits
}

/// The backends this CPU can run, slowest first (the last is [`detected`]).
pub fn available() -> impl Iterator<Item = Backend> + Clone {
    ALL.into_iter().filter(|b| b.is_available())
}

/// The backend the entry points in [`crate::packed`] use: the fastest available.
pub fn detected() -> Backend {
    available().last().unwrap_or(Backend::Scalar)
}

/// The dispatched table: compile-time when the build enables the best backend, otherwise
/// detected on first use and cached.
#[inline(always)]
pub(crate) fn active() -> &'static KernelFns {
    cfg_if::cfg_if! {
        if #[cfg(all(target_arch = "x86_64", target_feature = "avx512f", target_feature = "avx512bw",
                     target_feature = "avx512vl", target_feature = "avx512cd", target_feature = "avx512vbmi", target_feature = "avx512vbmi2", target_feature = "avx512bitalg",
                     target_feature = "avx2", target_feature = "bmi1",
                     target_feature = "bmi2", target_feature = "lzcnt", target_feature = "popcnt"))] {
            &arch::x86_64::avx512::FNS
        } else if #[cfg(all(target_arch = "aarch64", target_feature = "neon"))] {
            &arch::aarch64::neon::FNS
        } else {
            static ACTIVE: AtomicPtr<KernelFns> = AtomicPtr::new(core::ptr::null_mut());
            let cached = ACTIVE.load(Ordering::Relaxed);
            if cached.is_null() {
                return init_active(&ACTIVE);
            }
            // SAFETY: non-null values stored in ACTIVE are only ever `&'static KernelFns`.
            unsafe { &*cached }
        }
    }
}

#[cold]
#[allow(dead_code)]
fn init_active(slot: &AtomicPtr<KernelFns>) -> &'static KernelFns {
    let fns = detected().fns().unwrap_or(&arch::scalar::FNS);
    slot.store(fns as *const KernelFns as *mut KernelFns, Ordering::Relaxed);
    fns
}

/// A handle on one backend's kernels, obtainable only if the CPU can run it; its methods are
/// the same as the entry points of [`crate::packed`], with the same results on every backend.
#[derive(Clone, Copy)]
pub struct Kernel {
    backend: Backend,
    fns: &'static KernelFns,
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kernel").field("backend", &self.backend).finish()
    }
}

impl Kernel {
    /// The kernels of `backend`, or `None` if this CPU cannot run them.
    pub fn new(backend: Backend) -> Option<Kernel> {
        backend.fns().map(|fns| Kernel { backend, fns })
    }

    /// The kernels the entry points of [`crate::packed`] use.
    pub fn detected() -> Kernel {
        Kernel { backend: detected(), fns: active() }
    }

    /// Which backend this is.
    pub const fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether these are the AVX2 kernels for a CPU whose PEXT runs in microcode (AMD and
    /// Hygon before Zen 3: hundreds of cycles an instruction), which [`Kernel::new`] and the
    /// dispatch hand out there instead of the usual AVX2 ones: shifts and masks where those use
    /// PEXT, and no `SHLD` in `skip_varints`. The same results either way; false on every other
    /// CPU and backend.
    ///
    /// ```
    /// use pbwire::backend::{Backend, Kernel};
    /// assert!(!Kernel::new(Backend::Scalar).unwrap().avoids_slow_pext());
    /// ```
    pub fn avoids_slow_pext(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            core::ptr::eq(self.fns, &arch::x86_64::avx2::slow_pext::FNS)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// For the fuzz targets only (built with `--cfg fuzzing`, as `cargo fuzz` does): the AVX2
    /// backend's table for CPUs with a slow PEXT (shifts and masks instead), which a CPU with a
    /// fast one never chooses; `None` without AVX2. Not part of the API.
    #[cfg(all(fuzzing, target_arch = "x86_64"))]
    #[doc(hidden)]
    pub fn avx2_slow_pext() -> Option<Kernel> {
        Backend::Avx2
            .is_available()
            .then_some(Kernel { backend: Backend::Avx2, fns: &arch::x86_64::avx2::slow_pext::FNS })
    }

    /// [`crate::utf8::from_utf8`] with this backend's check past the short ASCII one (with the
    /// `simdutf8` feature, simdutf8's on AVX2, AVX-512 and NEON; core's otherwise): the same
    /// result on every backend.
    #[inline]
    pub fn from_utf8<'a>(&self, bytes: &'a [u8]) -> core::result::Result<&'a str, core::str::Utf8Error> {
        // SAFETY: a `Kernel` holds a table only after the CPU was found to support it.
        unsafe { crate::utf8::from_utf8_with(self.fns.validate_utf8, bytes) }
    }

    /// [`crate::fields::validate_with_depth_limit`] with this backend's field scan (a table of
    /// field lengths on AVX-512, for messages of 512 bytes or more with short fields; the
    /// scalar loop alone elsewhere): the same result, error kind and offset on every backend.
    ///
    /// ```
    /// use pbwire::backend::{self, Kernel};
    /// use pbwire::{wire::DEFAULT_DEPTH_LIMIT, ErrorKind};
    /// // 400 fields `1: 150`, then field 2 cut short.
    /// let mut msg: Vec<u8> = [0x08, 0x96, 0x01].repeat(400);
    /// msg.extend_from_slice(&[0x10, 0x80]);
    /// for b in backend::available() {
    ///     let err = Kernel::new(b).unwrap().validate(&msg, DEFAULT_DEPTH_LIMIT).unwrap_err();
    ///     assert_eq!((err.kind(), err.offset()), (ErrorKind::Truncated, 1201));
    /// }
    /// ```
    #[inline]
    pub fn validate(&self, message: &[u8], depth_limit: u8) -> Result<()> {
        // SAFETY: a `Kernel` holds a table only after the CPU was found to support it.
        unsafe { crate::fields::validate_with(self.fns.scan_fields, message, depth_limit) }
    }

    /// The backend whose field scan [`Kernel::validate`] runs: this kernel's own where it has
    /// one (the AVX-512 and AVX2 tables of field lengths), else [`Backend::Scalar`] (the scalar loop).
    ///
    /// ```
    /// use pbwire::backend::{Backend, Kernel};
    /// assert_eq!(Kernel::new(Backend::Scalar).unwrap().validate_backend(), Backend::Scalar);
    /// ```
    pub fn validate_backend(&self) -> Backend {
        if self.fns.scan_fields.is_some() {
            self.backend
        } else {
            Backend::Scalar
        }
    }

    /// See [`crate::packed::decode_u64`].
    #[inline]
    pub fn decode_u64(&self, payload: &[u8], out: &mut [u64]) -> Result<usize> {
        // SAFETY: a `Kernel` holds a table only after the CPU was found to support it; a
        // decoder writes only values into its slots.
        unsafe { (self.fns.decode_u64)(crate::arch::Payload::new(payload), crate::arch::slots(out)) }
    }

    /// See [`crate::packed::decode_u32`].
    #[inline]
    pub fn decode_u32(&self, payload: &[u8], out: &mut [u32]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.decode_u32)(crate::arch::Payload::new(payload), crate::arch::slots(out)) }
    }

    /// See [`crate::packed::decode_i64`]: the `u64` kernel, as the bits are the same.
    #[inline]
    pub fn decode_i64(&self, payload: &[u8], out: &mut [i64]) -> Result<usize> {
        self.decode_u64(payload, bytemuck::cast_slice_mut(out))
    }

    /// See [`crate::packed::decode_i32`]: the `u32` kernel, as the bits are the same.
    #[inline]
    pub fn decode_i32(&self, payload: &[u8], out: &mut [i32]) -> Result<usize> {
        self.decode_u32(payload, bytemuck::cast_slice_mut(out))
    }

    /// See [`crate::packed::decode_sint64`].
    #[inline]
    pub fn decode_sint64(&self, payload: &[u8], out: &mut [i64]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.decode_sint64)(crate::arch::Payload::new(payload), crate::arch::slots(out)) }
    }

    /// See [`crate::packed::decode_sint32`].
    #[inline]
    pub fn decode_sint32(&self, payload: &[u8], out: &mut [i32]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.decode_sint32)(crate::arch::Payload::new(payload), crate::arch::slots(out)) }
    }

    /// See [`crate::packed::decode_bool`].
    #[inline]
    pub fn decode_bool(&self, payload: &[u8], out: &mut [bool]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.decode_bool)(crate::arch::Payload::new(payload), crate::arch::slots(out)) }
    }

    /// See [`crate::packed::count_varints`].
    #[inline]
    pub fn count_varints(&self, payload: &[u8]) -> usize {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.count_varints)(payload) }
    }

    /// See [`crate::packed::skip_varints`].
    #[inline]
    pub fn skip_varints(&self, payload: &[u8], n: usize) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.skip_varints)(payload, n) }
    }

    /// See [`crate::packed::encode_u64`].
    #[inline]
    pub fn encode_u64(&self, values: &[u64], out: &mut [u8]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encode_u64)(values, out) }
    }

    /// See [`crate::packed::encode_u32`].
    #[inline]
    pub fn encode_u32(&self, values: &[u32], out: &mut [u8]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encode_u32)(values, out) }
    }

    /// See [`crate::packed::encode_i64`]: the `u64` kernel, as the bits are the same.
    #[inline]
    pub fn encode_i64(&self, values: &[i64], out: &mut [u8]) -> Result<usize> {
        self.encode_u64(bytemuck::cast_slice(values), out)
    }

    /// See [`crate::packed::encode_i32`] (a negative value is sign-extended: ten bytes).
    #[inline]
    pub fn encode_i32(&self, values: &[i32], out: &mut [u8]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encode_i32)(values, out) }
    }

    /// See [`crate::packed::encode_sint64`].
    #[inline]
    pub fn encode_sint64(&self, values: &[i64], out: &mut [u8]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encode_sint64)(values, out) }
    }

    /// See [`crate::packed::encode_sint32`].
    #[inline]
    pub fn encode_sint32(&self, values: &[i32], out: &mut [u8]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encode_sint32)(values, out) }
    }

    /// See [`crate::packed::encode_bool`].
    #[inline]
    pub fn encode_bool(&self, values: &[bool], out: &mut [u8]) -> Result<usize> {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encode_bool)(values, out) }
    }

    /// See [`crate::packed::encoded_len_u64`]: this backend's length pass, whatever the length
    /// (the dispatched function sums fewer than 4 values inline).
    #[inline]
    pub fn encoded_len_u64(&self, values: &[u64]) -> usize {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encoded_len_u64)(values) }
    }

    /// See [`crate::packed::encoded_len_i64`]: the `u64` kernel, as the bits are the same.
    #[inline]
    pub fn encoded_len_i64(&self, values: &[i64]) -> usize {
        self.encoded_len_u64(bytemuck::cast_slice(values))
    }

    /// See [`crate::packed::encoded_len_sint64`].
    #[inline]
    pub fn encoded_len_sint64(&self, values: &[i64]) -> usize {
        // SAFETY: as for `decode_u64`.
        unsafe { (self.fns.encoded_len_sint64)(values) }
    }
}

/// The `*_unchecked` decoders of a [`Kernel`]: each as the safe one, for a payload followed by
/// [`crate::packed::UNCHECKED_SLOP`] readable bytes.
macro_rules! unchecked_decoders {
    ($($name:ident: $kernel:ident, $elem:ty, $adapt:path;)*) => {
        impl Kernel {$(
            #[doc = concat!("See [`crate::packed::", stringify!($name), "`].")]
            ///
            /// # Safety
            /// As for that function: `payload` valid for reads of
            /// `len + UNCHECKED_SLOP` initialised bytes, unmodified during the call.
            #[inline]
            pub unsafe fn $name(&self, payload: *const u8, len: usize, out: &mut [$elem]) -> Result<usize> {
                // SAFETY: the caller's contract is `with_slop`'s; a `Kernel` holds a table only
                // after the CPU was found to support it; a decoder writes only values into its
                // slots.
                unsafe {
                    let payload = crate::arch::Payload::with_slop(payload, len, crate::packed::UNCHECKED_SLOP);
                    (self.fns.$kernel)(payload, crate::arch::slots($adapt(out)))
                }
            }
        )*}
    };
}

unchecked_decoders! {
    decode_u64_unchecked: decode_u64, u64, core::convert::identity;
    decode_u32_unchecked: decode_u32, u32, core::convert::identity;
    decode_i64_unchecked: decode_u64, i64, bytemuck::cast_slice_mut;
    decode_i32_unchecked: decode_u32, i32, bytemuck::cast_slice_mut;
    decode_sint64_unchecked: decode_sint64, i64, core::convert::identity;
    decode_sint32_unchecked: decode_sint32, i32, core::convert::identity;
    decode_bool_unchecked: decode_bool, bool, core::convert::identity;
}
