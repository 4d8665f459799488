//! The pbwire kernels as the benches call them, one [`PbKernels`] per backend.
//!
//! Today pbwire has only its scalar kernels behind the safe entry points, so [`pbwire_backends`]
//! returns one entry. When `pbwire::backend` lands (`Backend`, `backend::available()`,
//! `Kernel::new(Backend)`), add an implementation over `Kernel` and return one entry per
//! available backend: every wall-clock and iai table then gains a row per backend.

use pbwire::{packed, Result};

/// The bulk kernels of one pbwire backend.
pub trait PbKernels {
    /// The row label, `pbwire` or `pbwire/<backend>`.
    fn name(&self) -> String;
    /// Packed `uint64` decode.
    fn decode_u64(&self, payload: &[u8], out: &mut [u64]) -> Result<usize>;
    /// Packed `uint32` decode.
    fn decode_u32(&self, payload: &[u8], out: &mut [u32]) -> Result<usize>;
    /// Packed `int32` decode.
    fn decode_i32(&self, payload: &[u8], out: &mut [i32]) -> Result<usize>;
    /// Varint count of a packed payload.
    fn count_varints(&self, payload: &[u8]) -> usize;
    /// Packed `uint64` encode.
    fn encode_u64(&self, values: &[u64], out: &mut [u8]) -> Result<usize>;
    /// Packed `uint32` encode.
    fn encode_u32(&self, values: &[u32], out: &mut [u8]) -> Result<usize>;
    /// Packed `int32` encode.
    fn encode_i32(&self, values: &[i32], out: &mut [u8]) -> Result<usize>;
}

/// The safe entry points of `pbwire::packed` (which dispatch; today always to scalar).
#[derive(Clone, Copy, Debug, Default)]
pub struct Dispatched;

impl PbKernels for Dispatched {
    fn name(&self) -> String {
        "pbwire".into()
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
}

/// Every pbwire backend to benchmark on this machine (see the module docs).
pub fn pbwire_backends() -> Vec<Box<dyn PbKernels>> {
    vec![Box::new(Dispatched)]
}
