//! The `pbwire` command's implementation, as a library so that its parts are unit-tested.
//!
//! - [`inspect`]: schema-less decoding, `protoc --decode_raw` compatible, plus offsets, JSON,
//!   hex dumps and delimited streams;
//! - [`cpu`]: CPU features and the backend of each kernel;
//! - [`bench`]: the bulk kernels on generated data, per backend;
//! - [`gen`]: the generated data;
//! - [`backends`]: the backend layer the reports are written against.

pub mod backends;
pub mod bench;
pub mod cpu;
pub mod gen;
pub mod input;
pub mod inspect;
mod out;
pub mod protoc;

/// The tour's sample: `{ order_id: 150, buyer: { user_id: 7, user_name: "a" }, sku_ids: [5, 6],
/// paid: true }`, a `TradeOrder`.
pub const SAMPLE: [u8; 16] =
    [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];
