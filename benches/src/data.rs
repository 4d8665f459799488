//! Deterministic benchmark data: the value distributions and messages of `shared/DESIGN.md`.
//!
//! Everything comes from a seeded SplitMix64, so every run, machine and contender sees the same
//! bytes. Packed payloads are encoded with prost's `encode_varint` (an independent encoder), and
//! every contender's output is checked against the source values before anything is timed.

use pbwire::wire::{self, Tag, WireType};

/// SplitMix64: small, fast, and good enough to draw benchmark data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (modulo bias is below 2^-60 for the spans used here).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + self.next_u64() % (span + 1)
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.range(0, 99) < percent
    }
}

/// A value distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    /// Values < 128.
    OneByte,
    /// Encoded length uniform in 1..=5, value uniform within that length, < 2^32.
    U32Mixed,
    /// Encoded length uniform in 1..=10.
    U64Mixed,
    /// 70% 1-byte, 20% 2-byte, 8% 3..=4-byte, 2% negative int32 (10 bytes).
    Realistic,
}

impl Dist {
    /// All distributions, in table order.
    pub const ALL: [Dist; 4] = [Dist::OneByte, Dist::U32Mixed, Dist::U64Mixed, Dist::Realistic];

    /// The name used in tables and benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Dist::OneByte => "one-byte",
            Dist::U32Mixed => "u32-mixed",
            Dist::U64Mixed => "u64-mixed",
            Dist::Realistic => "realistic",
        }
    }

    /// The 32-bit protobuf type whose packed kernels this distribution exercises, if any:
    /// `uint32` for values < 2^32, `int32` for `realistic` (its negatives are 10-byte varints).
    pub fn narrow(self) -> Option<Narrow> {
        match self {
            Dist::OneByte | Dist::U32Mixed => Some(Narrow::Uint32),
            Dist::Realistic => Some(Narrow::Int32),
            Dist::U64Mixed => None,
        }
    }

    fn seed(self) -> u64 {
        match self {
            Dist::OneByte => 1,
            Dist::U32Mixed => 2,
            Dist::U64Mixed => 3,
            Dist::Realistic => 4,
        }
    }
}

/// The 32-bit type a distribution is decoded as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrow {
    /// `uint32`.
    Uint32,
    /// `int32` (negatives sign-extended to 10 bytes on the wire).
    Int32,
}

impl Narrow {
    /// The protobuf type name.
    pub fn name(self) -> &'static str {
        match self {
            Narrow::Uint32 => "u32",
            Narrow::Int32 => "i32",
        }
    }
}

/// Benchmark sizes in values: call overhead, L1/L2, memory.
pub const SIZES: [usize; 3] = [100, 10_000, 1_000_000];
/// Short packed payloads (values), where a bulk kernel's fixed cost outweighs its speed.
pub const SHORT_SIZES: [usize; 4] = [4, 8, 16, 32];

/// The smallest and largest value whose varint is `len` bytes (1..=10).
fn len_range(len: u32) -> (u64, u64) {
    let lo = if len == 1 { 0 } else { 1u64 << (7 * (len - 1)) };
    let hi = if len >= 10 { u64::MAX } else { (1u64 << (7 * len)) - 1 };
    (lo, hi)
}

/// `n` values of `dist` as they stand on the wire (u64; a negative int32 is sign-extended).
pub fn values(dist: Dist, n: usize) -> Vec<u64> {
    let mut rng = Rng::new(dist.seed() * 1_000_003 + n as u64);
    (0..n)
        .map(|_| match dist {
            Dist::OneByte => rng.range(0, 127),
            Dist::U32Mixed => {
                let (lo, hi) = len_range(rng.range(1, 5) as u32);
                rng.range(lo, hi.min(u32::MAX as u64))
            }
            Dist::U64Mixed => {
                let (lo, hi) = len_range(rng.range(1, 10) as u32);
                rng.range(lo, hi)
            }
            Dist::Realistic => {
                let p = rng.range(0, 99);
                let len = match p {
                    0..=69 => 1,
                    70..=89 => 2,
                    90..=97 => rng.range(3, 4) as u32,
                    _ => return (-(rng.range(1, 1 << 31) as i64)) as u64,
                };
                let (lo, hi) = len_range(len);
                rng.range(lo, hi)
            }
        })
        .collect()
}

/// The packed payload (no tag, no length prefix) of `values`.
pub fn packed(values: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 2);
    for &v in values {
        prost::encoding::encode_varint(v, &mut out);
    }
    out
}

/// `payload` behind its length prefix, as prost, quick-protobuf and rust-protobuf read a packed
/// field once its tag has been consumed.
pub fn length_prefixed(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 10);
    prost::encoding::encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

/// An order-sensitive checksum of a sequence of values.
pub fn hash_values<I: IntoIterator<Item = u64>>(values: I) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in values {
        h = (h ^ v).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(5);
    }
    h
}

/// [`hash_values`] of bytes.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    hash_values(bytes.iter().map(|&b| b as u64))
}

/// The 16-byte `TradeOrder` of the README:
/// `{ order_id: 150, buyer: { user_id: 7, user_name: "a" }, sku_ids: [5, 6], paid: true }`.
pub const TRADE_ORDER: [u8; 16] =
    [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];

/// One record of the records message, as generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordData {
    /// Field 1.
    pub a: String,
    /// Field 2.
    pub b: String,
    /// Field 3.
    pub c: String,
    /// Field 4.
    pub x: i32,
    /// Field 5.
    pub y: i32,
}

/// `n` records: strings of 8..=24 lowercase ASCII letters, `x` and `y` from `realistic`.
pub fn records(n: usize) -> Vec<RecordData> {
    let mut rng = Rng::new(0x5eed_0000 + n as u64);
    let xs = values(Dist::Realistic, 2 * n);
    let string = |rng: &mut Rng| -> String {
        let len = rng.range(8, 24) as usize;
        (0..len).map(|_| (b'a' + rng.range(0, 25) as u8) as char).collect()
    };
    (0..n)
        .map(|i| RecordData {
            a: string(&mut rng),
            b: string(&mut rng),
            c: string(&mut rng),
            x: xs[2 * i] as i32,
            y: xs[2 * i + 1] as i32,
        })
        .collect()
}

/// The records message: each record a nested message in field 1 of the outer message.
/// Encoded by hand with prost's primitives in canonical field order (proto3: zero ints omitted).
pub fn records_message(records: &[RecordData]) -> Vec<u8> {
    use prost::encoding::{encode_key, encode_varint, WireType as W};
    let mut out = Vec::new();
    let mut rec = Vec::new();
    for r in records {
        rec.clear();
        for (field, s) in [(1, &r.a), (2, &r.b), (3, &r.c)] {
            encode_key(field, W::LengthDelimited, &mut rec);
            encode_varint(s.len() as u64, &mut rec);
            rec.extend_from_slice(s.as_bytes());
        }
        for (field, v) in [(4, r.x), (5, r.y)] {
            if v != 0 {
                encode_key(field, W::Varint, &mut rec);
                encode_varint(v as i64 as u64, &mut rec);
            }
        }
        encode_key(1, W::LengthDelimited, &mut out);
        encode_varint(rec.len() as u64, &mut out);
        out.extend_from_slice(&rec);
    }
    out
}

/// The checksum every records decoder returns: over each record's string lengths, x and y.
pub fn records_checksum<'a, I: IntoIterator<Item = (&'a str, &'a str, &'a str, i32, i32)>>(
    records: I,
) -> u64 {
    hash_values(records.into_iter().flat_map(|(a, b, c, x, y)| {
        [a.len() as u64, b.len() as u64, c.len() as u64, x as u32 as u64, y as u32 as u64]
    }))
}

/// A message of mixed top-level fields for scanning: field numbers 1..=2047 (1- and 2-byte
/// tags), each field a `u64-mixed` varint, a fixed32, a fixed64 or a 0..=64-byte payload with
/// equal odds. It stops at the first field that reaches `min_bytes` or at `max_fields` fields.
/// Returns the message and its number of fields.
pub fn mixed_message(min_bytes: usize, max_fields: usize) -> (Vec<u8>, usize) {
    let mut rng = Rng::new(0x5ca7);
    let varints = values(Dist::U64Mixed, 4096);
    let mut out = Vec::with_capacity(min_bytes + 128);
    let mut buf = [0u8; 16];
    let mut count = 0;
    while out.len() < min_bytes && count < max_fields {
        let number = rng.range(1, 2047) as u32;
        let kind = rng.range(0, 3);
        let wire_type = [WireType::Varint, WireType::I32, WireType::I64, WireType::Len][kind as usize];
        let tag = Tag::new(number, wire_type).expect("valid tag");
        let n = wire::encode_tag(tag, &mut buf).expect("room");
        out.extend_from_slice(&buf[..n]);
        match kind {
            0 => prost::encoding::encode_varint(varints[count % varints.len()], &mut out),
            1 => out.extend_from_slice(&(rng.next_u64() as u32).to_le_bytes()),
            2 => out.extend_from_slice(&rng.next_u64().to_le_bytes()),
            _ => {
                let len = rng.range(0, 64) as usize;
                out.push(len as u8);
                out.extend((0..len).map(|_| rng.next_u64() as u8));
            }
        }
        count += 1;
    }
    (out, count)
}

/// A message of top-level string fields of `lo..=hi` bytes (field 1; 1- and 2-byte length
/// prefixes past 127) up to `min_bytes`: long fields, where a scan costs per field, not per
/// byte. Returns the message and its number of fields.
pub fn strings_message(min_bytes: usize, lo: u64, hi: u64) -> (Vec<u8>, usize) {
    let mut rng = Rng::new(0x57a1);
    let mut out = Vec::with_capacity(min_bytes + hi as usize + 8);
    let mut count = 0;
    while out.len() < min_bytes {
        let len = rng.range(lo, hi) as usize;
        out.push(0x0a);
        prost::encoding::encode_varint(len as u64, &mut out);
        out.extend((0..len).map(|_| b'a' + (rng.next_u64() % 26) as u8));
        count += 1;
    }
    (out, count)
}

/// A stream of `count` length-prefixed messages (as `writeDelimitedTo` writes them) of
/// `lo..=hi` bytes each (1- and 2-byte prefixes past 127; the bytes are zeros, since splitting
/// the stream never looks at them). Returns the stream and the sum of the messages' lengths.
pub fn delimited_stream(count: usize, lo: u64, hi: u64) -> (Vec<u8>, usize) {
    let mut rng = Rng::new(0xde11);
    let mut out = Vec::new();
    let mut total = 0;
    for _ in 0..count {
        let len = rng.range(lo, hi) as usize;
        prost::encoding::encode_varint(len as u64, &mut out);
        out.resize(out.len() + len, 0);
        total += len;
    }
    (out, total)
}

/// The 1 MiB scanning message of DESIGN.md.
pub fn scan_message() -> (Vec<u8>, usize) {
    mixed_message(1 << 20, usize::MAX)
}

/// Panics unless every value has an encoded length that `dist` allows (run by the benches
/// before timing, so the data is checked without a test in the normal test run).
pub fn check_distribution(dist: Dist, values: &[u64]) {
    for &v in values {
        let len = pbwire::varint::encoded_len(v);
        let ok = match dist {
            Dist::OneByte => len == 1,
            Dist::U32Mixed => len <= 5 && v <= u32::MAX as u64,
            Dist::U64Mixed => len <= 10,
            Dist::Realistic => len <= 4 || (len == 10 && (v as i64) < 0 && v as i64 >= i32::MIN as i64),
        };
        assert!(ok, "{}: {v:#x} is out of the distribution", dist.name());
    }
}

/// Strings for the UTF-8 validation bench, as one buffer and each string's `(start, len)`:
/// `count` strings of `lo..=hi` bytes, ASCII lowercase letters, or (for `multibyte`) with
/// about one character in four `é` or `€` (2 and 3 bytes), so that every string holds some.
pub fn utf8_strings(count: usize, lo: usize, hi: usize, multibyte: bool) -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut rng = Rng::new(0x0075_7466_0000 + (lo * 1000 + hi) as u64 + multibyte as u64);
    let (mut buf, mut spans) = (Vec::new(), Vec::with_capacity(count));
    for _ in 0..count {
        let len = rng.range(lo as u64, hi as u64) as usize;
        let start = buf.len();
        while buf.len() - start < len {
            let room = len - (buf.len() - start);
            let c = match rng.range(0, 7) {
                0 if multibyte && room >= 3 => '€',
                1 if multibyte && room >= 2 => 'é',
                _ => (b'a' + rng.range(0, 25) as u8) as char,
            };
            let mut tmp = [0u8; 4];
            buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        }
        spans.push((start, len));
    }
    (buf, spans)
}
