//! A model of how `protoc --decode_raw` (protobuf 3.21) reads the wire, where it differs from
//! pbwire's own (stricter, documented) semantics.
//!
//! protoc reads the input with two different parsers, and each has its own leniencies, found
//! by experiment against protoc 3.21.12 (see `tests/protoc_diff.rs`):
//!
//! | | top level (`ParseContext`) | guessing nested payloads (`CodedInputStream`) |
//! |---|---|---|
//! | tag | at most 5 bytes, low 32 bits kept (a 5th byte >= 0x10 is truncated) | at most 10 bytes, low 32 bits kept |
//! | varint | at most 10 bytes, low 64 bits kept (10th byte may be up to 0x7f) | same |
//! | length prefix | at most 5 bytes, no truncation | at most 10 bytes, low 32 bits kept |
//! | groups | nest at most 100 deep | nest at most as deep as the guessing budget left |
//!
//! Everything else (field number 0, wire types 6 and 7, truncation, unmatched end-group tags) is
//! rejected by both, as pbwire rejects it. pbwire's decoders are the fast path; the lenient
//! reads run only when pbwire rejects a value.

use pbwire::fields::{Field, Value};
use pbwire::{varint, wire, Error, ErrorKind};

/// Which of protoc's parsers to model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// The parse of the input itself.
    Top,
    /// The attempt to parse a length-delimited payload as a message.
    Nested,
}

/// protoc's default recursion limit for the top-level parse.
pub const TOP_GROUP_DEPTH: i64 = 100;

/// A varint of at most `max` bytes, keeping its low 64 bits; `None` if no byte within `max`
/// (and within `buf`) ends it.
#[inline]
fn lenient_varint(buf: &[u8], max: usize) -> Option<(u64, usize)> {
    if let Ok((v, n)) = varint::decode_u64(buf) {
        return (n <= max).then_some((v, n));
    }
    let mut v = 0u64;
    for (i, &b) in buf.iter().take(max).enumerate() {
        if i < 10 {
            v |= u64::from(b & 0x7f).wrapping_shl(7 * i as u32);
        }
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Iterates over the fields of a message as protoc reads them; see [`fields`].
#[derive(Clone, Debug)]
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    rules: Rules,
    depth_left: i64,
    failed: bool,
}

/// The fields of `message` read by protoc's `rules`, groups allowed to nest `depth_left` deep.
/// Items are pbwire's [`Field`]s; errors carry pbwire's [`ErrorKind`]s.
pub fn fields(message: &[u8], rules: Rules, depth_left: i64) -> Fields<'_> {
    Fields { buf: message, pos: 0, rules, depth_left, failed: false }
}

/// Whether protoc would print `payload` as a nested message with `budget` left.
pub fn parses_as_message(payload: &[u8], budget: i64) -> bool {
    !payload.is_empty() && budget > 0 && fields(payload, Rules::Nested, budget).all(|f| f.is_ok())
}

enum Tag {
    Field(u32, u8),
    End(u32),
}

impl<'a> Fields<'a> {
    fn tag(&self, at: usize) -> Result<(Tag, usize), Error> {
        let buf = &self.buf[at..];
        let (raw, n) = match wire::decode_tag(buf) {
            Ok((t, n)) if n <= 5 => (t.raw(), n),
            _ => {
                let max = if self.rules == Rules::Top { 5 } else { 10 };
                let (v, n) = lenient_varint(buf, max).ok_or(Error::new(ErrorKind::Truncated, at))?;
                (v as u32, n)
            }
        };
        let (number, wt) = (raw >> 3, (raw & 7) as u8);
        if number == 0 {
            return Err(Error::new(ErrorKind::InvalidFieldNumber, at));
        }
        match wt {
            4 => Ok((Tag::End(number), n)),
            6 | 7 => Err(Error::new(ErrorKind::InvalidWireType, at)),
            _ => Ok((Tag::Field(number, wt), n)),
        }
    }

    fn varint(&self, at: usize) -> Result<(u64, usize), Error> {
        let rest = &self.buf[at..];
        lenient_varint(rest, 10).ok_or_else(|| {
            Error::new(if rest.len() >= 10 { ErrorKind::VarintOverflow } else { ErrorKind::Truncated }, at)
        })
    }

    fn len(&self, at: usize) -> Result<(usize, usize), Error> {
        let rest = &self.buf[at..];
        let (len, n) = match self.rules {
            Rules::Top => {
                let (v, n) = lenient_varint(rest, 5).ok_or(Error::new(ErrorKind::Truncated, at))?;
                (v, n)
            }
            Rules::Nested => {
                let (v, n) = lenient_varint(rest, 10).ok_or(Error::new(ErrorKind::Truncated, at))?;
                (u64::from(v as u32), n)
            }
        };
        if len > (rest.len() - n) as u64 {
            return Err(Error::new(ErrorKind::Truncated, at));
        }
        Ok((len as usize, n))
    }

    /// Reads the field at `at`, whose tag is `tag` of `tag_len` bytes; groups are read whole
    /// with `depth_left` levels allowed.
    fn field_at(
        &self,
        at: usize,
        number: u32,
        wt: u8,
        tag_len: usize,
        depth_left: i64,
    ) -> Result<Field<'a>, Error> {
        let v = at + tag_len;
        let buf = self.buf;
        let truncated = Error::new(ErrorKind::Truncated, v);
        let (value, value_offset, end) = match wt {
            0 => {
                let (x, n) = self.varint(v)?;
                (Value::Varint(x), v, v + n)
            }
            1 => {
                let b = buf.get(v..v + 8).ok_or(truncated)?;
                (Value::I64(u64::from_le_bytes(b.try_into().expect("8 bytes"))), v, v + 8)
            }
            5 => {
                let b = buf.get(v..v + 4).ok_or(truncated)?;
                (Value::I32(u32::from_le_bytes(b.try_into().expect("4 bytes"))), v, v + 4)
            }
            2 => {
                let (len, n) = self.len(v)?;
                (Value::Len(&buf[v + n..v + n + len]), v + n, v + n + len)
            }
            _ => {
                // Start group: its fields, then its own end tag.
                if depth_left <= 0 {
                    return Err(Error::new(ErrorKind::DepthLimit, at));
                }
                let mut pos = v;
                loop {
                    if pos >= buf.len() {
                        return Err(Error::new(ErrorKind::Truncated, pos));
                    }
                    match self.tag(pos)? {
                        (Tag::End(n), len) if n == number => {
                            break (Value::Group(&buf[v..pos]), v, pos + len);
                        }
                        (Tag::End(_), _) => return Err(Error::new(ErrorKind::GroupMismatch, pos)),
                        (Tag::Field(n, w), len) => pos = self.field_at(pos, n, w, len, depth_left - 1)?.end,
                    }
                }
            }
        };
        Ok(Field { number, offset: at, value_offset, end, value })
    }

    fn read(&self) -> Result<Field<'a>, Error> {
        match self.tag(self.pos)? {
            (Tag::End(_), _) => Err(Error::new(ErrorKind::GroupMismatch, self.pos)),
            (Tag::Field(number, wt), n) => self.field_at(self.pos, number, wt, n, self.depth_left),
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.read();
        match &r {
            Ok(f) => self.pos = f.end,
            Err(_) => self.failed = true,
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(b: &[u8]) -> Result<Vec<Field<'_>>, Error> {
        fields(b, Rules::Top, TOP_GROUP_DEPTH).collect()
    }

    #[test]
    fn leniencies_protoc_has() {
        // 5-byte tag whose 5th byte overflows 32 bits: the low 32 bits count.
        assert_eq!(top(b"\xf8\xff\xff\xff\x1f\x01").unwrap()[0].number, 536_870_911);
        // ... but only 5 bytes of tag at the top level; up to 10 when guessing.
        assert!(top(b"\x88\x80\x80\x80\x80\x00\x01").is_err());
        assert!(parses_as_message(b"\x88\x80\x80\x80\x80\x00\x01", 10));
        // 10th varint byte above 1: truncated to 64 bits.
        let f = top(b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02").unwrap();
        assert_eq!(f[0].value, Value::Varint(i64::MAX as u64));
        assert!(top(b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01").is_err());
        // Length prefixes: 5 bytes at most at the top; 10 (low 32 bits) when guessing.
        assert!(top(b"\x0a\x81\x80\x80\x80\x80\x00a").is_err());
        assert!(parses_as_message(b"\x0a\x81\x80\x80\x80\x80\x00a", 10));
        assert!(parses_as_message(b"\x0a\x81\x80\x80\x80\x10a", 10));
        assert!(top(b"\x0a\x81\x80\x80\x80\x10a").is_err());
    }

    #[test]
    fn what_both_reject() {
        for bad in [
            &b"\x00"[..],
            b"\x02\x00",
            b"\x0e",
            b"\x08",
            b"\x0a\x05ab",
            b"\x0b\x08\x01",
            b"\x0c",
            b"\x0b\x14",
        ] {
            assert!(top(bad).is_err(), "{bad:?}");
            assert!(!parses_as_message(bad, 10), "{bad:?}");
        }
        // A tag that truncates to 0.
        assert!(!parses_as_message(b"\x80\x80\x80\x80\x10\x01", 10));
    }

    #[test]
    fn group_depth() {
        let nest = |d: usize| [vec![0x0b; d], vec![0x0c; d]].concat();
        assert!(top(&nest(100)).is_ok());
        assert_eq!(top(&nest(101)).unwrap_err().kind(), ErrorKind::DepthLimit);
        assert!(parses_as_message(&nest(3), 3));
        assert!(!parses_as_message(&nest(4), 3));
    }
}
