//! The kernels the `cpu` and `bench` commands report on, by backend.
//!
//! pbwire's runtime-dispatched backend layer (`pbwire::backend`) is not in the library yet, so
//! this module stands in for it with the API planned for it: a [`Backend`] enum, [`available`],
//! [`detected`] and a [`Kernel`] per backend. Today there is one backend, the scalar reference.
//! When `pbwire::backend` lands, this module becomes `pub use pbwire::backend::*;` (plus
//! whatever the planned API ends up naming differently).

use pbwire::packed;

/// A family of kernel implementations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The portable scalar reference (pbwire's only kernels so far).
    Scalar,
}

impl Backend {
    /// A short name for tables.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
        }
    }
}

/// Every backend this CPU can run, scalar first.
pub fn available() -> impl Iterator<Item = Backend> {
    [Backend::Scalar].into_iter()
}

/// The backend the dispatching entry points use on this CPU.
pub fn detected() -> Backend {
    Backend::Scalar
}

/// The bulk kernels of one backend.
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    backend: Backend,
}

impl Kernel {
    /// The kernels of `backend`, if this CPU can run them.
    pub fn new(backend: Backend) -> Option<Kernel> {
        available().any(|b| b == backend).then_some(Kernel { backend })
    }

    /// Which backend these kernels are.
    pub const fn backend(&self) -> Backend {
        self.backend
    }

    /// `packed::decode_u64`.
    pub fn decode_u64(&self, payload: &[u8], out: &mut [u64]) -> pbwire::Result<usize> {
        packed::decode_u64(payload, out)
    }

    /// `packed::decode_u32`.
    pub fn decode_u32(&self, payload: &[u8], out: &mut [u32]) -> pbwire::Result<usize> {
        packed::decode_u32(payload, out)
    }

    /// `packed::decode_sint64`.
    pub fn decode_sint64(&self, payload: &[u8], out: &mut [i64]) -> pbwire::Result<usize> {
        packed::decode_sint64(payload, out)
    }

    /// `packed::count_varints`.
    pub fn count_varints(&self, payload: &[u8]) -> usize {
        packed::count_varints(payload)
    }
}
