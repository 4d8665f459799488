//! The pbwire kernels as the benches call them, one [`PbKernels`] per backend.
//!
//! [`pbwire_backends`] returns the dispatched entry points of `pbwire::packed` (whatever
//! `backend::detected()` picks) and then one `pbwire::backend::Kernel` per backend this CPU
//! runs, so every table has a row per backend (decode, count and encode). [`prost_merge_u64`]
//! is prost's packed `uint64` decode as the prost rows of both harnesses call it.

use pbwire::backend::{self, Backend, Kernel};
use pbwire::{packed, Result};

/// The bulk kernels of one pbwire backend.
pub trait PbKernels {
    /// The row label.
    fn name(&self) -> String;
    /// Packed `uint64` decode.
    fn decode_u64(&self, payload: &[u8], out: &mut [u64]) -> Result<usize>;
    /// Packed `uint32` decode.
    fn decode_u32(&self, payload: &[u8], out: &mut [u32]) -> Result<usize>;
    /// Packed `int32` decode.
    fn decode_i32(&self, payload: &[u8], out: &mut [i32]) -> Result<usize>;
    /// Varint count of a packed payload.
    fn count_varints(&self, payload: &[u8]) -> usize;
    /// The offset after the first `n` varints.
    fn skip_varints(&self, payload: &[u8], n: usize) -> Result<usize>;
    /// Packed `uint64` encode.
    fn encode_u64(&self, values: &[u64], out: &mut [u8]) -> Result<usize>;
    /// Packed `uint32` encode.
    fn encode_u32(&self, values: &[u32], out: &mut [u8]) -> Result<usize>;
    /// Packed `int32` encode.
    fn encode_i32(&self, values: &[i32], out: &mut [u8]) -> Result<usize>;
    /// Packed `uint64` length.
    fn encoded_len_u64(&self, values: &[u64]) -> usize;
}

/// The safe entry points of `pbwire::packed`, which dispatch to `backend::detected()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dispatched;

impl PbKernels for Dispatched {
    fn name(&self) -> String {
        format!("pbwire packed::* (dispatch -> {})", backend::detected().name())
    }
    #[inline]
    fn decode_u64(&self, payload: &[u8], out: &mut [u64]) -> Result<usize> {
        packed::decode_u64(payload, out)
    }
    #[inline]
    fn decode_u32(&self, payload: &[u8], out: &mut [u32]) -> Result<usize> {
        packed::decode_u32(payload, out)
    }
    #[inline]
    fn decode_i32(&self, payload: &[u8], out: &mut [i32]) -> Result<usize> {
        packed::decode_i32(payload, out)
    }
    #[inline]
    fn count_varints(&self, payload: &[u8]) -> usize {
        packed::count_varints(payload)
    }
    #[inline]
    fn skip_varints(&self, payload: &[u8], n: usize) -> Result<usize> {
        packed::skip_varints(payload, n)
    }
    #[inline]
    fn encode_u64(&self, values: &[u64], out: &mut [u8]) -> Result<usize> {
        packed::encode_u64(values, out)
    }
    #[inline]
    fn encode_u32(&self, values: &[u32], out: &mut [u8]) -> Result<usize> {
        packed::encode_u32(values, out)
    }
    #[inline]
    fn encode_i32(&self, values: &[i32], out: &mut [u8]) -> Result<usize> {
        packed::encode_i32(values, out)
    }
    #[inline]
    fn encoded_len_u64(&self, values: &[u64]) -> usize {
        packed::encoded_len_u64(values)
    }
}

/// One backend's kernels.
impl PbKernels for Kernel {
    fn name(&self) -> String {
        format!("pbwire Kernel({})", self.backend().name())
    }
    #[inline]
    fn decode_u64(&self, payload: &[u8], out: &mut [u64]) -> Result<usize> {
        Kernel::decode_u64(self, payload, out)
    }
    #[inline]
    fn decode_u32(&self, payload: &[u8], out: &mut [u32]) -> Result<usize> {
        Kernel::decode_u32(self, payload, out)
    }
    #[inline]
    fn decode_i32(&self, payload: &[u8], out: &mut [i32]) -> Result<usize> {
        Kernel::decode_i32(self, payload, out)
    }
    #[inline]
    fn count_varints(&self, payload: &[u8]) -> usize {
        Kernel::count_varints(self, payload)
    }
    #[inline]
    fn skip_varints(&self, payload: &[u8], n: usize) -> Result<usize> {
        Kernel::skip_varints(self, payload, n)
    }
    #[inline]
    fn encode_u64(&self, values: &[u64], out: &mut [u8]) -> Result<usize> {
        Kernel::encode_u64(self, values, out)
    }
    #[inline]
    fn encode_u32(&self, values: &[u32], out: &mut [u8]) -> Result<usize> {
        Kernel::encode_u32(self, values, out)
    }
    #[inline]
    fn encode_i32(&self, values: &[i32], out: &mut [u8]) -> Result<usize> {
        Kernel::encode_i32(self, values, out)
    }
    #[inline]
    fn encoded_len_u64(&self, values: &[u64]) -> usize {
        Kernel::encoded_len_u64(self, values)
    }
}

/// The kernels of `backend`; panics (naming it) if this CPU cannot run it.
pub fn kernel(backend: Backend) -> Kernel {
    Kernel::new(backend).unwrap_or_else(|| panic!("backend {} is not available on this CPU", backend.name()))
}

/// The dispatched entry points, then every backend this CPU runs, slowest first.
pub fn pbwire_backends() -> Vec<Box<dyn PbKernels>> {
    let mut all: Vec<Box<dyn PbKernels>> = vec![Box::new(Dispatched)];
    all.extend(backend::available().map(|b| Box::new(kernel(b)) as Box<dyn PbKernels>));
    all
}

/// prost's packed `uint64` decode (`merge_repeated`) of a length-prefixed payload into `vec`,
/// cleared first: the call of the benches' prost rows. Inline, so that each row compiles prost's
/// loop into its own code as the call written out there did.
#[inline(always)]
pub fn prost_merge_u64(vec: &mut Vec<u64>, prefixed: &[u8]) {
    vec.clear();
    let mut buf = prefixed;
    prost::encoding::uint64::merge_repeated(
        prost::encoding::WireType::LengthDelimited,
        vec,
        &mut buf,
        prost::encoding::DecodeContext::default(),
    )
    .unwrap();
}
