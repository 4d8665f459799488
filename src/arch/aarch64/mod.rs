//! aarch64 backends. NEON is part of the base aarch64 target, so there is nothing to detect.

pub(crate) mod neon;
