//! Deterministic generated data: the benchmark's varint distributions and a large, realistic
//! message for throughput measurements.

use pbwire::varint;
use pbwire::wire::{encode_tag, Tag, WireType};

/// A small, fast, deterministic PRNG (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub const fn new(seed: u64) -> Self {
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

    /// Uniform in `0..n` (`n > 0`; the tiny modulo bias does not matter here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A value whose varint encoding is exactly `len` bytes (1..=10), at most `max`.
    pub fn value_of_len(&mut self, len: u32, max: u64) -> u64 {
        let lo = if len == 1 { 0 } else { 1u64 << (7 * (len - 1)) };
        let hi = if len >= 10 { u64::MAX } else { ((1u64 << (7 * len)) - 1).min(max) };
        lo + self.next_u64() % (hi - lo).saturating_add(1).max(1)
    }
}

/// The benchmark's value distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Every value < 128 (one byte).
    OneByte,
    /// `u32` values whose encoded length is uniform in 1..=5.
    U32Mixed,
    /// `u64` values whose encoded length is uniform in 1..=10.
    U64Mixed,
    /// 70% one byte, 20% two bytes, 8% three or four bytes, 2% ten-byte negative `int32`s.
    Realistic,
}

impl Distribution {
    /// All of them, in table order.
    pub const ALL: [Distribution; 4] =
        [Distribution::OneByte, Distribution::U32Mixed, Distribution::U64Mixed, Distribution::Realistic];

    /// A short name for tables.
    pub const fn name(self) -> &'static str {
        match self {
            Distribution::OneByte => "1-byte",
            Distribution::U32Mixed => "u32-mixed",
            Distribution::U64Mixed => "u64-mixed",
            Distribution::Realistic => "realistic",
        }
    }

    /// One value drawn from the distribution.
    pub fn sample(self, rng: &mut Rng) -> u64 {
        match self {
            Distribution::OneByte => rng.below(128),
            Distribution::U32Mixed => {
                let len = 1 + rng.below(5) as u32;
                rng.value_of_len(len, u64::from(u32::MAX))
            }
            Distribution::U64Mixed => {
                let len = 1 + rng.below(10) as u32;
                rng.value_of_len(len, u64::MAX)
            }
            Distribution::Realistic => match rng.below(100) {
                0..70 => rng.value_of_len(1, u64::MAX),
                70..90 => rng.value_of_len(2, u64::MAX),
                90..98 => {
                    let len = 3 + rng.below(2) as u32;
                    rng.value_of_len(len, u64::MAX)
                }
                _ => (-1 - rng.below(1 << 31) as i64) as u64,
            },
        }
    }

    /// `count` values drawn with a fixed seed, as a packed varint payload.
    pub fn packed(self, count: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng::new(seed);
        let mut out = Vec::with_capacity(count * 2);
        for _ in 0..count {
            push_varint(&mut out, self.sample(&mut rng));
        }
        out
    }

    /// A message of `count` varint fields (numbers 1..=15, one-byte tags) whose values are
    /// drawn from the distribution.
    pub fn message(self, count: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng::new(seed);
        let mut out = Vec::with_capacity(count * 3);
        for _ in 0..count {
            push_tag(&mut out, 1 + rng.below(15) as u32, WireType::Varint);
            push_varint(&mut out, self.sample(&mut rng));
        }
        out
    }
}

/// Appends `v` as a varint.
pub fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; varint::MAX_LEN];
    let n = varint::encode_u64(v, &mut buf).expect("10 bytes hold any varint");
    out.extend_from_slice(&buf[..n]);
}

/// Appends a tag.
pub fn push_tag(out: &mut Vec<u8>, field: u32, wire_type: WireType) {
    let mut buf = [0u8; 5];
    let tag = Tag::new(field, wire_type).expect("valid field number");
    let n = encode_tag(tag, &mut buf).expect("5 bytes hold any tag");
    out.extend_from_slice(&buf[..n]);
}

/// Appends a length-delimited field.
pub fn push_len(out: &mut Vec<u8>, field: u32, payload: &[u8]) {
    push_tag(out, field, WireType::Len);
    push_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// A message of at least `size` bytes made of log-record-like nested messages (ids,
/// timestamps, names, packed ids, a nested location, an occasional opaque blob), for
/// throughput measurements of `inspect`.
pub fn large_message(size: usize, seed: u64) -> Vec<u8> {
    const WORDS: [&str; 8] = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(size + 512);
    let mut record = Vec::new();
    let mut scratch = Vec::new();
    while out.len() < size {
        record.clear();
        push_tag(&mut record, 1, WireType::Varint);
        push_varint(&mut record, Distribution::Realistic.sample(&mut rng));
        push_tag(&mut record, 2, WireType::I64);
        record.extend_from_slice(&(1_700_000_000_000_000 + rng.below(1 << 40)).to_le_bytes());
        let name =
            format!("{}-{}.{}", WORDS[rng.below(8) as usize], rng.below(1000), WORDS[rng.below(8) as usize]);
        push_len(&mut record, 3, name.as_bytes());
        scratch.clear();
        for _ in 0..rng.below(12) {
            push_varint(&mut scratch, Distribution::U32Mixed.sample(&mut rng));
        }
        push_len(&mut record, 4, &scratch);
        scratch.clear();
        push_tag(&mut scratch, 1, WireType::I32);
        scratch.extend_from_slice(&(rng.next_u64() as f32).to_bits().to_le_bytes());
        push_tag(&mut scratch, 2, WireType::I32);
        scratch.extend_from_slice(&(rng.next_u64() as u32).to_le_bytes());
        push_len(&mut scratch, 3, WORDS[rng.below(8) as usize].as_bytes());
        push_len(&mut record, 5, &scratch);
        if rng.below(8) == 0 {
            scratch.clear();
            scratch.extend((0..rng.below(64)).map(|_| rng.next_u64() as u8));
            push_len(&mut record, 6, &scratch);
        }
        push_len(&mut out, 1, &record);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_have_the_promised_lengths() {
        let mut rng = Rng::new(1);
        let mut hist = [[0usize; 11]; 4];
        for (d, h) in Distribution::ALL.iter().zip(&mut hist) {
            for _ in 0..20_000 {
                h[varint::encoded_len(d.sample(&mut rng))] += 1;
            }
        }
        assert_eq!(hist[0][1], 20_000);
        assert!((1..=5).all(|l| (3600..4400).contains(&hist[1][l])), "{:?}", hist[1]);
        assert!((1..=10).all(|l| (1700..2300).contains(&hist[2][l])), "{:?}", hist[2]);
        let r = hist[3];
        assert!((13_400..14_600).contains(&r[1]) && (3600..4400).contains(&r[2]), "{r:?}");
        assert!((1400..1800).contains(&(r[3] + r[4])) && (300..500).contains(&r[10]), "{r:?}");
        assert_eq!(r[5..10].iter().sum::<usize>(), 0);
    }

    #[test]
    fn large_message_is_well_formed() {
        let m = large_message(100_000, 7);
        assert!(m.len() >= 100_000);
        pbwire::fields::validate(&m).unwrap();
        assert_eq!(large_message(1000, 7), large_message(1000, 7));
    }
}
