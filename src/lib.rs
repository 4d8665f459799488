//! pbwire: a Protocol Buffers wire-format kernel.
//!
//! The layer under a protobuf codec that turns bytes into varints, tags, lengths, packed arrays
//! and zero-copy field views, and back. `#![no_std]`, no allocator unless the `alloc` feature
//! is on, no panics on any input, and byte-for-byte agreement with Google's encoder and parsers.
//!
//! | module | what it does |
//! |---|---|
//! | [`varint`] | one varint: decode, encode, length, zigzag (inline, no dispatch) |
//! | [`wire`] | tags, wire types, fixed-width and length-delimited values, skipping fields and groups |
//! | [`fields`] | a zero-copy iterator over a message's fields, and structural validation |
//! | [`packed`] | packed repeated fields: bulk decode into slices, encode, zero-copy fixed views |
//! | [`reader`] | a cursor over a message, the shape generated code embeds: tags, values, skipping |
//! | [`stream`] | streams of length-prefixed messages |
//! | [`utf8`] | UTF-8 validation tuned for short strings |
//! | [`backend`] | which SIMD backend runs the bulk kernels; calling a chosen one |
//!
//! Every error is an [`Error`]: an [`ErrorKind`] and the byte offset where it was found.
//!
//! ```
//! use pbwire::fields::{fields, Value};
//! use pbwire::packed;
//!
//! // { order_id: 150, buyer: { user_id: 7, user_name: "a" }, sku_ids: [5, 6], paid: true }
//! let msg = [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];
//! let mut sku_ids = [0u64; 8];
//! let mut count = 0;
//! for field in fields(&msg) {
//!     let field = field?;
//!     if let (3, Value::Len(payload)) = (field.number, field.value) {
//!         count = packed::decode_u64(payload, &mut sku_ids)?;
//!     }
//! }
//! assert_eq!(&sku_ids[..count], &[5, 6]);
//! # Ok::<(), pbwire::Error>(())
//! ```
#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

mod arch;
pub mod backend;
mod error;
pub mod fields;
pub mod packed;
pub mod reader;
pub mod stream;
pub mod utf8;
pub mod varint;
pub mod wire;

pub use error::{Error, ErrorKind, Result};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
