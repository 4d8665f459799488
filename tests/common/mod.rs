//! Independent oracles and generators shared by the integration tests. The oracles are written
//! byte at a time, for obviousness rather than speed, and share no code with the library.
#![allow(dead_code)]

use pbwire::{Error, ErrorKind};
use quickcheck::{Arbitrary, Gen};

/// A varint decoded one byte at a time.
pub fn naive_varint(buf: &[u8]) -> Result<(u64, usize), Error> {
    let mut value = 0u64;
    for i in 0..10 {
        let Some(&b) = buf.get(i) else {
            return Err(Error::new(ErrorKind::Truncated, 0));
        };
        if i == 9 && b > 1 {
            return Err(Error::new(ErrorKind::VarintOverflow, 0));
        }
        value |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            return Ok((value, i + 1));
        }
    }
    unreachable!()
}

/// Packed varint decoding by the documented rule: in element order, a full output is
/// OutputTooSmall at the element, else the element's own error.
pub fn naive_packed<T>(payload: &[u8], capacity: usize, map: impl Fn(u64) -> T) -> Result<Vec<T>, Error> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < payload.len() {
        if out.len() == capacity {
            return Err(Error::new(ErrorKind::OutputTooSmall, pos));
        }
        let (v, n) = naive_varint(&payload[pos..]).map_err(|e| e.shifted(pos))?;
        out.push(map(v));
        pos += n;
    }
    Ok(out)
}

/// A u64 whose bit length is uniform in 0..=64, so every varint length is as likely.
pub fn any_length_u64(g: &mut Gen) -> u64 {
    let bits = u32::arbitrary(g) % 65;
    if bits == 0 {
        0
    } else {
        u64::arbitrary(g) >> (64 - bits) | 1u64 << (bits - 1)
    }
}

/// Bytes shaped like packed varints: mostly valid ones of every length, with the occasional
/// overlong run, so that decoders are exercised past their first byte.
#[derive(Clone, Debug)]
pub struct VarintBytes(pub Vec<u8>);

impl Arbitrary for VarintBytes {
    fn arbitrary(g: &mut Gen) -> Self {
        let count = usize::arbitrary(g) % (g.size() + 1);
        let mut bytes = Vec::new();
        for _ in 0..count {
            match u8::arbitrary(g) % 16 {
                0 => bytes.extend(std::iter::repeat_n(0xffu8, 1 + usize::arbitrary(g) % 12)),
                1 => bytes.push(u8::arbitrary(g)),
                _ => {
                    let mut buf = [0u8; 10];
                    let n = pbwire::varint::encode_u64(any_length_u64(g), &mut buf).unwrap();
                    bytes.extend_from_slice(&buf[..n]);
                }
            }
        }
        VarintBytes(bytes)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(VarintBytes))
    }
}

/// A field of a generated message.
#[derive(Clone, Debug, PartialEq)]
pub enum GenField {
    Varint(u32, u64),
    I64(u32, u64),
    I32(u32, u32),
    Len(u32, Vec<u8>),
    Group(u32, Vec<GenField>),
}

/// A well-formed message of random fields (groups nest a few levels).
#[derive(Clone, Debug, PartialEq)]
pub struct GenMessage(pub Vec<GenField>);

fn field_number(g: &mut Gen) -> u32 {
    match u8::arbitrary(g) % 4 {
        0 => 1 + u32::arbitrary(g) % pbwire::wire::MAX_FIELD_NUMBER,
        _ => 1 + u32::arbitrary(g) % 20,
    }
}

fn gen_fields(g: &mut Gen, depth: usize) -> Vec<GenField> {
    // Top level up to the generator size; nested groups stay small so messages stay small.
    let most = if depth == 0 { g.size() / 4 } else { 6 };
    let count = usize::arbitrary(g) % (most + 1);
    (0..count)
        .map(|_| match u8::arbitrary(g) % 9 {
            0..=2 => GenField::Varint(field_number(g), any_length_u64(g)),
            3 => GenField::I64(field_number(g), u64::arbitrary(g)),
            4 => GenField::I32(field_number(g), u32::arbitrary(g)),
            5 if depth < 4 => GenField::Group(field_number(g), gen_fields(g, depth + 1)),
            _ => {
                let len = usize::arbitrary(g) % if u8::arbitrary(g) % 8 == 0 { 300 } else { 20 };
                GenField::Len(field_number(g), (0..len).map(|_| u8::arbitrary(g)).collect())
            }
        })
        .collect()
}

impl Arbitrary for GenMessage {
    fn arbitrary(g: &mut Gen) -> Self {
        GenMessage(gen_fields(g, 0))
    }
}

/// Encodes generated fields with pbwire's encoders.
pub fn encode_fields(fields: &[GenField], out: &mut Vec<u8>) {
    use pbwire::wire::{encode_tag, Tag, WireType};
    let mut tmp = [0u8; 10];
    let mut tag = |out: &mut Vec<u8>, n: u32, wt: WireType| {
        let len = encode_tag(Tag::new(n, wt).unwrap(), &mut tmp).unwrap();
        out.extend_from_slice(&tmp[..len]);
    };
    let varint = |out: &mut Vec<u8>, v: u64| {
        let mut b = [0u8; 10];
        let len = pbwire::varint::encode_u64(v, &mut b).unwrap();
        out.extend_from_slice(&b[..len]);
    };
    for f in fields {
        match f {
            GenField::Varint(n, v) => {
                tag(out, *n, WireType::Varint);
                varint(out, *v);
            }
            GenField::I64(n, v) => {
                tag(out, *n, WireType::I64);
                out.extend_from_slice(&v.to_le_bytes());
            }
            GenField::I32(n, v) => {
                tag(out, *n, WireType::I32);
                out.extend_from_slice(&v.to_le_bytes());
            }
            GenField::Len(n, payload) => {
                tag(out, *n, WireType::Len);
                varint(out, payload.len() as u64);
                out.extend_from_slice(payload);
            }
            GenField::Group(n, inner) => {
                tag(out, *n, WireType::StartGroup);
                encode_fields(inner, out);
                tag(out, *n, WireType::EndGroup);
            }
        }
    }
}

/// Runs a quickcheck property: 2000 cases of size 200 unless `QUICKCHECK_TESTS` says how many
/// (a short run under valgrind, a long one when hunting).
pub fn check<A: quickcheck::Testable>(property: A) {
    let tests = std::env::var("QUICKCHECK_TESTS").ok().and_then(|t| t.parse().ok()).unwrap_or(2000);
    quickcheck::QuickCheck::new().tests(tests).max_tests(tests * 10).rng(Gen::new(200)).quickcheck(property);
}

/// `cases` whole, or under Miri every `miri_every`-th of them. Miri interprets each instruction
/// (a decode of a few hundred bytes on every backend takes it seconds), so the exhaustive
/// sweeps run thinned there; they run whole natively and under valgrind.
pub fn sweep<I: Iterator>(cases: I, miri_every: usize) -> core::iter::StepBy<I> {
    cases.step_by(if cfg!(miri) { miri_every } else { 1 })
}

/// A xorshift64 generator from `seed` (non-zero): the tests' reproducible pseudo-random numbers.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// A varint written one byte at a time.
pub fn naive_encode_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Values for the bulk encoders: runs of one kind (one-byte, below 2^32, `int32`-range
/// sign-extended, any length) of random lengths, so that blocks of every kind and mixed blocks
/// occur, in arrays long enough (0..=300) to cross several block boundaries; plus how many
/// spare bytes the output gets.
#[derive(Clone, Debug)]
pub struct EncodeCase {
    pub values: Vec<u64>,
    pub spare: usize,
}

impl Arbitrary for EncodeCase {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 301;
        let mut values = Vec::with_capacity(n);
        while values.len() < n {
            let kind = u8::arbitrary(g) % 5;
            let run = 1 + usize::arbitrary(g) % 80;
            for _ in 0..run.min(n - values.len()) {
                let v = any_length_u64(g);
                values.push(match kind {
                    0 => v & 0x7f,
                    1 => v as u32 as u64,
                    2 => v as i32 as i64 as u64,
                    3 => v,
                    // Edges: powers of two around every length boundary.
                    _ => {
                        let shift = u32::arbitrary(g) % 64;
                        (1u64 << shift).wrapping_add(u64::arbitrary(g) % 3).wrapping_sub(1)
                    }
                });
            }
        }
        EncodeCase { values, spare: usize::arbitrary(g) % 24 }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let spare = self.spare;
        Box::new(self.values.shrink().map(move |values| EncodeCase { values, spare }))
    }
}

/// One top-level field as the byte-at-a-time field oracle reads it: number, tag offset, value
/// offset (after a length prefix), end, and the value (`Len` payloads as `(start, end)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NaiveField {
    pub number: u32,
    pub offset: usize,
    pub value_offset: usize,
    pub end: usize,
    pub value: NaiveValue,
}

/// The value of a [`NaiveField`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NaiveValue {
    Varint(u64),
    I64(u64),
    I32(u32),
    Len(usize, usize),
}

/// The top-level fields of `msg` by the documented rules, one byte at a time, up to the first
/// error (included) or the first start-group tag (where it stops, returning `None` last: groups
/// are the reference implementation's business, checked by the other properties).
pub fn naive_fields(msg: &[u8]) -> Vec<Option<Result<NaiveField, Error>>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < msg.len() {
        let item = (|| {
            let (raw, tag_len) = naive_varint(&msg[pos..]).map_err(|e| e.shifted(pos))?;
            if raw > u32::MAX as u64 || raw >> 3 == 0 {
                return Err(Error::new(ErrorKind::InvalidFieldNumber, pos));
            }
            let number = (raw >> 3) as u32;
            let v = pos + tag_len;
            let rest = &msg[v..];
            let fixed = |n: usize| {
                if rest.len() < n {
                    return Err(Error::new(ErrorKind::Truncated, v));
                }
                Ok(rest[..n].iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
            };
            let field = |value_offset, end, value| {
                Ok(Some(NaiveField { number, offset: pos, value_offset, end, value }))
            };
            match raw & 7 {
                0 => {
                    let (x, n) = naive_varint(rest).map_err(|e| e.shifted(v))?;
                    field(v, v + n, NaiveValue::Varint(x))
                }
                1 => field(v, v + 8, NaiveValue::I64(fixed(8)?)),
                5 => field(v, v + 4, NaiveValue::I32(fixed(4)? as u32)),
                2 => {
                    let (len, n) = naive_varint(rest).map_err(|e| e.shifted(v))?;
                    if len > i32::MAX as u64 {
                        return Err(Error::new(ErrorKind::LengthOutOfBounds, v));
                    }
                    if (len as usize) > rest.len() - n {
                        return Err(Error::new(ErrorKind::Truncated, v));
                    }
                    let start = v + n;
                    field(start, start + len as usize, NaiveValue::Len(start, start + len as usize))
                }
                3 => Ok(None),
                4 => Err(Error::new(ErrorKind::GroupMismatch, pos)),
                _ => Err(Error::new(ErrorKind::InvalidWireType, pos)),
            }
        })();
        match item {
            Ok(Some(f)) => {
                pos = f.end;
                out.push(Some(Ok(f)));
            }
            Ok(None) => {
                out.push(None);
                break;
            }
            Err(e) => {
                out.push(Some(Err(e)));
                break;
            }
        }
    }
    out
}

/// A generated message, then damaged: some bytes overwritten with random ones (0 to 3), and
/// sometimes cut short, so that every fast path meets its refusals and errors.
#[derive(Clone, Debug)]
pub struct DamagedMessage(pub Vec<u8>);

impl Arbitrary for DamagedMessage {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut bytes = Vec::new();
        encode_fields(&GenMessage::arbitrary(g).0, &mut bytes);
        if !bytes.is_empty() {
            for _ in 0..u8::arbitrary(g) % 4 {
                let i = usize::arbitrary(g) % bytes.len();
                bytes[i] = u8::arbitrary(g);
            }
            if bool::arbitrary(g) {
                bytes.truncate(usize::arbitrary(g) % (bytes.len() + 1));
            }
        }
        DamagedMessage(bytes)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(DamagedMessage))
    }
}
