//! Shared pieces of pbwire's fuzz targets:
//!
//! - [`reference`]: byte-at-a-time decoders written for this crate from the README's semantics
//!   table. They share no code with pbwire (only its `Error` type, to compare results), and the
//!   group parser recurses (bounded by the depth limit, at most 255) where pbwire loops.
//! - [`gen`]: generators that turn fuzzer bytes into structured inputs (packed payloads with long
//!   varints placed around the SIMD windows, messages with nested and broken groups), so that a
//!   mutation of a few bytes moves whole fields.
//! - [`exact_copy`]: the input in a heap allocation of exactly its size, so that AddressSanitizer
//!   reports a read one byte past the slice.

pub use libfuzzer_sys::arbitrary::Unstructured;

/// Every kernel the targets check, with a name for messages: one per backend this CPU runs
/// (`backend::available()`), and on x86-64 with AVX2 the AVX2 table for CPUs with a slow PEXT
/// (`Kernel::avx2_slow_pext`, there only under `cargo fuzz`'s `--cfg fuzzing`), which this CPU
/// may not choose.
pub fn kernels() -> Vec<(String, pbwire::backend::Kernel)> {
    use pbwire::backend::{self, Kernel};
    #[allow(unused_mut)]
    let mut all: Vec<(String, Kernel)> =
        backend::available().map(|b| (b.name().to_string(), Kernel::new(b).expect("available"))).collect();
    #[cfg(all(fuzzing, target_arch = "x86_64"))]
    all.extend(Kernel::avx2_slow_pext().map(|k| ("avx2 (slow-PEXT table)".to_string(), k)));
    all
}

/// `bytes` in a heap allocation of exactly `bytes.len()` bytes.
pub fn exact_copy(bytes: &[u8]) -> Box<[u8]> {
    let mut v = Vec::with_capacity(bytes.len());
    v.extend_from_slice(bytes);
    assert_eq!(v.capacity(), bytes.len());
    v.into_boxed_slice()
}

/// An output buffer of exactly `len` elements on the heap.
pub fn exact_out<T: Clone + Default>(len: usize) -> Box<[T]> {
    let mut v = Vec::with_capacity(len);
    v.resize(len, T::default());
    v.into_boxed_slice()
}

pub mod reference {
    //! The oracles. Offsets are relative to the slice each function is given.
    use pbwire::{Error, ErrorKind};

    pub type R<T> = Result<T, Error>;

    fn err<T>(kind: ErrorKind, at: usize) -> R<T> {
        Err(Error::new(kind, at))
    }

    /// One varint, a byte at a time: value and length.
    pub fn varint(buf: &[u8]) -> R<(u64, usize)> {
        let mut value = 0u64;
        let mut i = 0;
        loop {
            let Some(&b) = buf.get(i) else { return err(ErrorKind::Truncated, 0) };
            if i == 9 {
                // The tenth byte holds bit 63 only and must end the varint.
                if b > 1 {
                    return err(ErrorKind::VarintOverflow, 0);
                }
                return Ok((value | (b as u64) << 63, 10));
            }
            value |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((value, i + 1));
            }
            i += 1;
        }
    }

    /// The canonical (shortest) encoding of `value`.
    pub fn encode(mut value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let low = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(low);
                return out;
            }
            out.push(low | 0x80);
        }
    }

    /// A tag: field number, wire type (0..=5) and length.
    pub fn tag(buf: &[u8]) -> R<(u32, u8, usize)> {
        let (raw, n) = varint(buf)?;
        if raw > 0xffff_ffff || raw >> 3 == 0 {
            return err(ErrorKind::InvalidFieldNumber, 0);
        }
        let wire = (raw & 7) as u8;
        if wire > 5 {
            return err(ErrorKind::InvalidWireType, 0);
        }
        Ok(((raw >> 3) as u32, wire, n))
    }

    /// `n` little-endian bytes.
    pub fn fixed(buf: &[u8], n: usize) -> R<u64> {
        if buf.len() < n {
            return err(ErrorKind::Truncated, 0);
        }
        Ok(buf[..n].iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
    }

    /// A length-delimited value: (payload start, end).
    pub fn len(buf: &[u8]) -> R<(usize, usize)> {
        let (len, n) = varint(buf)?;
        if len > 0x7fff_ffff {
            return err(ErrorKind::LengthOutOfBounds, 0);
        }
        if ((buf.len() - n) as u64) < len {
            return err(ErrorKind::Truncated, 0);
        }
        Ok((n, n + len as usize))
    }

    /// Length of a value of wire type 0, 1, 2 or 5 at the start of `buf`.
    fn plain_len(wire: u8, buf: &[u8]) -> R<usize> {
        match wire {
            0 => varint(buf).map(|(_, n)| n),
            1 => fixed(buf, 8).map(|_| 8),
            2 => len(buf).map(|(_, end)| end),
            5 => fixed(buf, 4).map(|_| 4),
            _ => unreachable!("not a plain wire type"),
        }
    }

    /// The group `field` at depth `depth` (the outermost is 1) whose content starts at `start`:
    /// (where its end tag starts, where it ends). Offsets in `buf`. Recursive: depth <= 255.
    pub fn group(buf: &[u8], start: usize, field: u32, depth: u32, limit: u8) -> R<(usize, usize)> {
        let mut pos = start;
        loop {
            if pos == buf.len() {
                return err(ErrorKind::Truncated, pos);
            }
            let (f, wire, tl) = tag(&buf[pos..]).map_err(|e| e.shifted(pos))?;
            match wire {
                3 => {
                    if depth >= limit as u32 {
                        return err(ErrorKind::DepthLimit, pos);
                    }
                    pos = group(buf, pos + tl, f, depth + 1, limit)?.1;
                }
                4 => {
                    if f != field {
                        return err(ErrorKind::GroupMismatch, pos);
                    }
                    return Ok((pos, pos + tl));
                }
                _ => pos += tl + plain_len(wire, &buf[pos + tl..]).map_err(|e| e.shifted(pos + tl))?,
            }
        }
    }

    /// `wire::skip_field_with_depth_limit`: `buf` starts after a tag of `field`/`wire`.
    pub fn skip(field: u32, wire: u8, buf: &[u8], limit: u8) -> R<usize> {
        match wire {
            3 if limit == 0 => err(ErrorKind::DepthLimit, 0),
            3 => group(buf, 0, field, 1, limit).map(|(_, end)| end),
            4 => err(ErrorKind::GroupMismatch, 0),
            _ => plain_len(wire, buf),
        }
    }

    /// A field's value; slices as (start, end) offsets in the message.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Value {
        Varint(u64),
        I64(u64),
        Len(usize, usize),
        Group(usize, usize),
        I32(u32),
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Field {
        pub number: u32,
        pub offset: usize,
        pub value_offset: usize,
        pub end: usize,
        pub value: Value,
    }

    fn field(buf: &[u8], offset: usize, limit: u8) -> R<Field> {
        let (number, wire, tl) = tag(&buf[offset..]).map_err(|e| e.shifted(offset))?;
        let vo = offset + tl;
        let rest = &buf[vo..];
        let at = |e: Error| e.shifted(vo);
        let (value, value_offset, end) = match wire {
            0 => {
                let (v, n) = varint(rest).map_err(at)?;
                (Value::Varint(v), vo, vo + n)
            }
            1 => (Value::I64(fixed(rest, 8).map_err(at)?), vo, vo + 8),
            5 => (Value::I32(fixed(rest, 4).map_err(at)? as u32), vo, vo + 4),
            2 => {
                let (start, end) = len(rest).map_err(at)?;
                (Value::Len(vo + start, vo + end), vo + start, vo + end)
            }
            3 => {
                if limit == 0 {
                    return err(ErrorKind::DepthLimit, offset);
                }
                let (content_end, end) = group(buf, vo, number, 1, limit)?;
                (Value::Group(vo, content_end), vo, end)
            }
            _ => return err(ErrorKind::GroupMismatch, offset),
        };
        Ok(Field { number, offset, value_offset, end, value })
    }

    /// Every top-level field, then the first error if any.
    pub fn fields(buf: &[u8], limit: u8) -> Vec<R<Field>> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < buf.len() {
            match field(buf, pos, limit) {
                Ok(f) => {
                    pos = f.end;
                    out.push(Ok(f));
                }
                Err(e) => {
                    out.push(Err(e));
                    break;
                }
            }
        }
        out
    }

    /// Length-prefixed messages as (start, end), then the first error if any.
    pub fn delimited(buf: &[u8]) -> Vec<R<(usize, usize)>> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < buf.len() {
            match len(&buf[pos..]) {
                Ok((start, end)) => {
                    out.push(Ok((pos + start, pos + end)));
                    pos += end;
                }
                Err(e) => {
                    out.push(Err(e.shifted(pos)));
                    break;
                }
            }
        }
        out
    }

    /// Packed varints into an output of `capacity` elements: the raw u64 values decoded, and
    /// the error that stopped decoding (full output before an element: OutputTooSmall there;
    /// else the element's own error).
    pub fn packed(payload: &[u8], capacity: usize) -> (Vec<u64>, Option<Error>) {
        let mut values = Vec::new();
        let mut pos = 0;
        while pos < payload.len() {
            if values.len() == capacity {
                return (values, Some(Error::new(ErrorKind::OutputTooSmall, pos)));
            }
            match varint(&payload[pos..]) {
                Ok((v, n)) => {
                    values.push(v);
                    pos += n;
                }
                Err(e) => return (values, Some(e.shifted(pos))),
            }
        }
        (values, None)
    }

    /// Packed fixed-width elements of `size` bytes, by the same element-order rule.
    pub fn packed_fixed(payload: &[u8], size: usize, capacity: usize) -> (Vec<u64>, Option<Error>) {
        let mut values = Vec::new();
        let mut pos = 0;
        while pos < payload.len() {
            if values.len() == capacity {
                return (values, Some(Error::new(ErrorKind::OutputTooSmall, pos)));
            }
            match fixed(&payload[pos..], size) {
                Ok(v) => values.push(v),
                Err(e) => return (values, Some(e.shifted(pos))),
            }
            pos += size;
        }
        (values, None)
    }

    pub fn zigzag64(v: u64) -> i64 {
        if v & 1 == 0 {
            (v >> 1) as i64
        } else {
            !((v >> 1) as i64)
        }
    }

    pub fn zigzag32(v: u32) -> i32 {
        if v & 1 == 0 {
            (v >> 1) as i32
        } else {
            !((v >> 1) as i32)
        }
    }

    pub fn unzigzag64(v: i64) -> u64 {
        if v >= 0 {
            (v as u64) << 1
        } else {
            ((!v as u64) << 1) | 1
        }
    }

    pub fn unzigzag32(v: i32) -> u32 {
        if v >= 0 {
            (v as u32) << 1
        } else {
            ((!v as u32) << 1) | 1
        }
    }
}

pub mod gen {
    //! Fuzzer bytes to structured inputs. Every generator stops when the bytes run out.
    use super::reference::encode;
    use super::Unstructured;

    fn pick(u: &mut Unstructured, max: u32) -> u32 {
        u.int_in_range(0..=max).unwrap_or(0)
    }

    fn byte(u: &mut Unstructured) -> u8 {
        u.arbitrary().unwrap_or(0)
    }

    /// A u64 of `bits` significant bits (0..=64), the rest from the fuzzer.
    pub fn value_of_bits(u: &mut Unstructured, bits: u32) -> u64 {
        let raw: u64 = u.arbitrary().unwrap_or(0);
        match bits {
            0 => 0,
            64 => raw | 1 << 63,
            b => (raw & ((1u64 << b) - 1)) | 1 << (b - 1),
        }
    }

    /// A value whose varint length (1..=10) is uniform.
    pub fn any_length_value(u: &mut Unstructured) -> u64 {
        let len = 1 + pick(u, 9);
        let bits = if len == 1 { pick(u, 7) } else { (7 * (len - 1) + 1 + pick(u, 6)).min(64) };
        value_of_bits(u, bits)
    }

    /// A varint that may be padded (non-canonical), overlong, overflowing in its 10th byte, or
    /// unterminated (then it swallows what follows).
    pub fn varint(u: &mut Unstructured, out: &mut Vec<u8>) {
        match pick(u, 15) {
            0 => {
                // Padded with 0x80 bytes to 2..=10 bytes.
                let bits = pick(u, 20);
                let mut bytes = encode(value_of_bits(u, bits));
                let total = 2 + pick(u, 8) as usize;
                while bytes.len() < total {
                    *bytes.last_mut().unwrap() |= 0x80;
                    bytes.push(0);
                }
                out.extend_from_slice(&bytes);
            }
            1 => {
                // Overlong: 10..=24 continuation bytes, then a terminator.
                let n = 10 + pick(u, 14) as usize;
                out.extend(std::iter::repeat_n(0x80 | byte(u), n));
                out.push(byte(u) & 0x7f);
            }
            2 => {
                // Tenth byte above 1.
                out.extend(std::iter::repeat_n(0xff, 9));
                out.push(2 + byte(u) % 0x7e);
            }
            3 => {
                // Unterminated run of 1..=9 continuation bytes.
                let n = 1 + pick(u, 8) as usize;
                out.extend(std::iter::repeat_n(0x80 | byte(u), n));
            }
            4 => out.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
            _ => out.extend_from_slice(&encode(any_length_value(u))),
        }
    }

    /// A packed varint payload (up to 4 KiB): runs of one-byte values, varints of every length,
    /// the odd malformed one, runs of `realistic` values with negative `int32`s, and padding that puts the next piece at a chosen offset (around
    /// the 64-byte windows and their 16-byte margin: 48..=80 and 112..=144 especially).
    pub fn packed_payload(u: &mut Unstructured) -> Vec<u8> {
        let mut out = Vec::new();
        while !u.is_empty() && out.len() < 4096 {
            match pick(u, 10) {
                0 => {
                    let n = 1 + pick(u, 79) as usize;
                    let b = byte(u) & 0x7f;
                    out.extend(std::iter::repeat_n(b, n));
                }
                1 | 2 => out.extend_from_slice(&encode(any_length_value(u))),
                3 => varint(u, &mut out),
                4 => {
                    let target = match pick(u, 3) {
                        0 => 48 + pick(u, 32) as usize,
                        1 => 112 + pick(u, 32) as usize,
                        2 => 64 * pick(u, 8) as usize + pick(u, 80) as usize,
                        _ => pick(u, 255) as usize,
                    };
                    let b = byte(u) & 0x7f;
                    while out.len() < target {
                        out.push(b);
                    }
                }
                5 => {
                    let n = 1 + pick(u, 31) as usize;
                    for _ in 0..n {
                        out.push(byte(u));
                    }
                }
                6 => {
                    // Long varints back to back (windows of many 9..=10-byte values; up to 64,
                    // enough for the AVX-512 decoder's switch to its long-varint loop).
                    let n = 1 + pick(u, 63);
                    for _ in 0..n {
                        let bits = 57 + pick(u, 7);
                        out.extend_from_slice(&encode(value_of_bits(u, bits)));
                    }
                }
                7 => {
                    let n = 1 + pick(u, 40) as usize;
                    for _ in 0..n {
                        out.extend_from_slice(&encode(any_length_value(u)));
                    }
                }
                8 => {
                    // `realistic` values: short ones, about one in sixteen a negative `int32`
                    // (ten bytes ending 0xff 0x01; a few of them in a payload's first windows
                    // send the lane decoders to their variant that takes long varints for such).
                    let n = 1 + pick(u, 199);
                    for _ in 0..n {
                        let value = match pick(u, 15) {
                            0 => -(1 + pick(u, i32::MAX as u32 - 1) as i64) as u64,
                            k => value_of_bits(u, 1 + k % 14),
                        };
                        out.extend_from_slice(&encode(value));
                    }
                }
                _ => {
                    // Truncate (drop the end of what is there).
                    let cut = pick(u, 16) as usize;
                    out.truncate(out.len().saturating_sub(cut));
                }
            }
        }
        out
    }

    fn field_number(u: &mut Unstructured) -> u32 {
        match pick(u, 7) {
            0 => 1 + pick(u, (1 << 29) - 2),
            1 => 16 + pick(u, 2047),
            _ => 1 + pick(u, 14),
        }
    }

    fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
        out.extend_from_slice(&encode((field as u64) << 3 | wire as u64));
    }

    /// A message (up to 8 KiB): well-formed fields of every wire type, nested messages in
    /// length-delimited fields, groups (balanced, unbalanced, mismatched, runs of hundreds of
    /// start tags past the depth limits), invalid tags, bad lengths and stray bytes.
    pub fn message(u: &mut Unstructured, nesting: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut open: Vec<u32> = Vec::new();
        let close_at_end = pick(u, 3) != 0;
        while !u.is_empty() && out.len() < 8192 {
            match pick(u, 17) {
                0..=2 => {
                    tag(&mut out, field_number(u), 0);
                    if pick(u, 5) == 0 {
                        varint(u, &mut out);
                    } else {
                        out.extend_from_slice(&encode(any_length_value(u)));
                    }
                }
                3 => {
                    tag(&mut out, field_number(u), 1);
                    out.extend((0..8).map(|_| byte(u)));
                }
                4 => {
                    tag(&mut out, field_number(u), 5);
                    out.extend((0..4).map(|_| byte(u)));
                }
                5 => {
                    tag(&mut out, field_number(u), 2);
                    let n = pick(u, 40) as usize;
                    out.extend_from_slice(&encode(n as u64));
                    out.extend((0..n).map(|_| byte(u)));
                }
                6 if nesting < 3 => {
                    tag(&mut out, field_number(u), 2);
                    let inner = message(u, nesting + 1);
                    out.extend_from_slice(&encode(inner.len() as u64));
                    out.extend_from_slice(&inner);
                }
                7 => {
                    let f = field_number(u);
                    tag(&mut out, f, 3);
                    open.push(f);
                }
                8 => {
                    if let Some(f) = open.pop() {
                        tag(&mut out, f, 4);
                    }
                }
                9 => {
                    // A run of start tags, near or past the limits (100 by default, 255 at most).
                    let n = match pick(u, 3) {
                        0 => 95 + pick(u, 10),
                        1 => 250 + pick(u, 10),
                        _ => 1 + pick(u, 300),
                    };
                    let f = field_number(u);
                    for _ in 0..n {
                        tag(&mut out, f, 3);
                        open.push(f);
                    }
                }
                10 => tag(&mut out, field_number(u), 4),
                11 => match pick(u, 4) {
                    0 => tag(&mut out, field_number(u), 6 + pick(u, 1) as u8),
                    1 => out.extend_from_slice(&encode(pick(u, 7) as u64)), // field 0
                    2 => out.extend_from_slice(&encode(0x1_0000_0000 | (byte(u) as u64) << 24 | 2)),
                    3 => {
                        // A padded tag (accepted), then a varint.
                        let mut t = encode((field_number(u) as u64) << 3);
                        *t.last_mut().unwrap() |= 0x80;
                        t.push(0);
                        out.extend_from_slice(&t);
                        out.push(byte(u) & 0x7f);
                    }
                    _ => varint(u, &mut out),
                },
                12 => {
                    tag(&mut out, field_number(u), 2);
                    let len: u64 = match pick(u, 4) {
                        0 => 1 << 31,
                        1 => 0xffff_ffff,
                        2 => u64::MAX,
                        3 => 0x7fff_ffff,
                        _ => 1 + pick(u, 300) as u64,
                    };
                    out.extend_from_slice(&encode(len));
                }
                13 => {
                    let n = 1 + pick(u, 15) as usize;
                    out.extend((0..n).map(|_| byte(u)));
                }
                14 => {
                    while let Some(f) = open.pop() {
                        tag(&mut out, f, 4);
                    }
                }
                15 => {
                    let cut = pick(u, 16) as usize;
                    out.truncate(out.len().saturating_sub(cut));
                }
                _ => {
                    // Fields 1..=4 of a common message, one-byte tags.
                    tag(&mut out, 1 + pick(u, 3), pick(u, 5) as u8 & 0x7);
                    out.push(byte(u) & 0x7f);
                }
            }
        }
        if close_at_end {
            while let Some(f) = open.pop() {
                tag(&mut out, f, 4);
            }
        }
        out
    }
}
