//! The kernels behind the bulk entry points, one module per instruction set.

pub(crate) mod scalar;
