//! Benchmarks for pbwire: shared data generation, the pbwire kernels per backend, and the
//! message decoders of every contender. The timing lives in `benches/wall.rs` (wall clock,
//! interleaved rounds) and `benches/iai.rs` (instruction counts under callgrind).

pub mod data;
pub mod kernels;
pub mod msgs;
