//! A cursor over one message: what a codec's generated `merge` loop embeds.
//!
//! Generated code reads a tag, matches its raw value (`field << 3 | wire type`) against the
//! fields it knows, reads each known field with the typed call of its kind, and skips the rest:
//!
//! ```
//! use pbwire::reader::Reader;
//!
//! // { order_id: 150, buyer: { user_id: 7, user_name: "a" }, sku_ids: [5, 6], paid: true }
//! let msg = [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];
//! let (mut order_id, mut user_name, mut paid) = (0, "", false);
//! let mut r = Reader::new(&msg);
//! while !r.is_empty() {
//!     let tag = r.read_tag()?;
//!     match tag.raw() {
//!         0x08 => order_id = r.read_i32()?,
//!         0x12 => {
//!             let mut buyer = Reader::new(r.read_bytes()?);
//!             while !buyer.is_empty() {
//!                 match buyer.read_tag()? {
//!                     t if t.raw() == 0x12 => user_name = buyer.read_str()?,
//!                     t => buyer.skip(t)?,
//!                 }
//!             }
//!         }
//!         0x20 => paid = r.read_bool()?,
//!         _ => r.skip(tag)?,
//!     }
//! }
//! assert_eq!((order_id, user_name, paid), (150, "a", true));
//! # Ok::<(), pbwire::Error>(())
//! ```
//!
//! Every call either reads one element and moves past it, or fails and stays where it was,
//! with an [`Error`] whose offset is relative to the start of the reader's buffer. The results
//! are those of the single-value functions of [`varint`] and [`wire`]; the only additions are
//! [`Reader::read_str`] (UTF-8 checked with [`crate::utf8::from_utf8`]) and
//! [`Reader::skip_next`], the scanning primitive.

use crate::error::{Error, ErrorKind, Result};
use crate::varint;
use crate::wire::{self, Tag};

/// A cursor over a message; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    #[inline]
    pub const fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// The offset of the next byte to read.
    #[inline]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// Whether the whole buffer has been read.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    #[inline(always)]
    fn rest(&self) -> &'a [u8] {
        // `pos` never passes the end.
        &self.buf[self.pos..]
    }

    #[inline(always)]
    fn at<T>(&self, r: Result<T>) -> Result<T> {
        r.map_err(|e| e.shifted(self.pos))
    }

    /// Reads a tag ([`wire::decode_tag`]; one-byte tags take one comparison).
    #[inline]
    pub fn read_tag(&mut self) -> Result<Tag> {
        let (tag, n) = self.at(wire::decode_tag(self.rest()))?;
        self.pos += n;
        Ok(tag)
    }

    /// Reads a varint ([`varint::decode_u64`]; one- and two-byte varints take no call).
    #[inline]
    pub fn read_varint(&mut self) -> Result<u64> {
        let rest = self.rest();
        match rest {
            [b0, ..] if *b0 < 0x80 => {
                self.pos += 1;
                return Ok(*b0 as u64);
            }
            [b0, b1, ..] if *b1 < 0x80 => {
                self.pos += 2;
                return Ok((*b0 & 0x7f) as u64 | (*b1 as u64) << 7);
            }
            _ => {}
        }
        let (v, n) = self.at(varint::decode_u64(rest))?;
        self.pos += n;
        Ok(v)
    }

    /// Reads a `uint64`.
    #[inline]
    pub fn read_u64(&mut self) -> Result<u64> {
        self.read_varint()
    }

    /// Reads a `uint32` (the low 32 bits).
    #[inline]
    pub fn read_u32(&mut self) -> Result<u32> {
        self.read_varint().map(|v| v as u32)
    }

    /// Reads an `int64`.
    #[inline]
    pub fn read_i64(&mut self) -> Result<i64> {
        self.read_varint().map(|v| v as i64)
    }

    /// Reads an `int32` or enum value (the low 32 bits).
    #[inline]
    pub fn read_i32(&mut self) -> Result<i32> {
        self.read_varint().map(|v| v as i32)
    }

    /// Reads a `sint64`.
    #[inline]
    pub fn read_sint64(&mut self) -> Result<i64> {
        self.read_varint().map(varint::zigzag_decode_64)
    }

    /// Reads a `sint32`.
    #[inline]
    pub fn read_sint32(&mut self) -> Result<i32> {
        self.read_varint().map(|v| varint::zigzag_decode_32(v as u32))
    }

    /// Reads a `bool` (any non-zero varint is `true`).
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool> {
        self.read_varint().map(|v| v != 0)
    }

    /// Reads a `fixed32`.
    #[inline]
    pub fn read_fixed32(&mut self) -> Result<u32> {
        let v = self.at(wire::decode_fixed32(self.rest()))?;
        self.pos += 4;
        Ok(v)
    }

    /// Reads a `fixed64`.
    #[inline]
    pub fn read_fixed64(&mut self) -> Result<u64> {
        let v = self.at(wire::decode_fixed64(self.rest()))?;
        self.pos += 8;
        Ok(v)
    }

    /// Reads an `sfixed32`.
    #[inline]
    pub fn read_sfixed32(&mut self) -> Result<i32> {
        self.read_fixed32().map(|v| v as i32)
    }

    /// Reads an `sfixed64`.
    #[inline]
    pub fn read_sfixed64(&mut self) -> Result<i64> {
        self.read_fixed64().map(|v| v as i64)
    }

    /// Reads a `float`.
    #[inline]
    pub fn read_float(&mut self) -> Result<f32> {
        self.read_fixed32().map(f32::from_bits)
    }

    /// Reads a `double`.
    #[inline]
    pub fn read_double(&mut self) -> Result<f64> {
        self.read_fixed64().map(f64::from_bits)
    }

    /// Reads a length-delimited value ([`wire::decode_len`]): `bytes`, a nested message, a
    /// packed payload. A one-byte length prefix takes one comparison and one bounds check.
    #[inline]
    pub fn read_bytes(&mut self) -> Result<&'a [u8]> {
        let rest = self.rest();
        if let Some(&n) = rest.first() {
            if n < 0x80 {
                if let Some(payload) = rest.get(1..1 + n as usize) {
                    self.pos += 1 + n as usize;
                    return Ok(payload);
                }
            }
        }
        let (payload, n) = self.at(wire::decode_len(rest))?;
        self.pos += n;
        Ok(payload)
    }

    /// Reads a `string`: [`Reader::read_bytes`], then [`crate::utf8::from_utf8`];
    /// [`ErrorKind::InvalidUtf8`] at the length prefix if it is not UTF-8.
    #[inline]
    pub fn read_str(&mut self) -> Result<&'a str> {
        let start = self.pos;
        let bytes = self.read_bytes()?;
        match crate::utf8::from_utf8(bytes) {
            Ok(s) => Ok(s),
            Err(_) => {
                self.pos = start;
                Err(Error::new(ErrorKind::InvalidUtf8, start))
            }
        }
    }

    /// Skips the value of a field whose `tag` was just read ([`wire::skip_field`]: groups
    /// included, up to their end tag).
    #[inline]
    pub fn skip(&mut self, tag: Tag) -> Result<()> {
        let n = self.at(wire::skip_field(tag, self.rest()))?;
        self.pos += n;
        Ok(())
    }

    /// Reads a tag and skips its field: the scanning primitive, equal to
    /// [`Reader::read_tag`] then [`Reader::skip`] (the same tag, position and errors), with
    /// no branch per wire type for the common fields (1- and 2-byte tags, wire types 0, 1, 2
    /// and 5, length prefixes of up to 2 bytes, at least 16 bytes from the end).
    #[inline]
    pub fn skip_next(&mut self) -> Result<Tag> {
        if let Some(w) = wire::window(self.buf, self.pos) {
            if let Some(f) = wire::fast_field(w, self.buf.len() - self.pos) {
                if let Ok(tag) = Tag::from_raw(f.raw) {
                    self.pos += f.end;
                    return Ok(tag);
                }
            }
        }
        let start = self.pos;
        let tag = self.read_tag()?;
        if let Err(e) = self.skip(tag) {
            self.pos = start;
            return Err(e);
        }
        Ok(tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_absolute_and_leave_the_position() {
        let msg = [0x08, 0x96, 0x01, 0x12, 0x03, b'a', 0xff, b'c', 0x1a, 0x05, 0x01];
        let mut r = Reader::new(&msg);
        assert_eq!(r.read_tag().map(|t| t.raw()), Ok(0x08));
        assert_eq!(r.read_u32(), Ok(150));
        assert_eq!(r.read_tag().map(|t| t.raw()), Ok(0x12));
        assert_eq!(r.read_str(), Err(Error::new(ErrorKind::InvalidUtf8, 4)));
        assert_eq!(r.position(), 4);
        assert_eq!(r.read_bytes(), Ok(&[b'a', 0xff, b'c'][..]));
        assert_eq!(r.skip_next(), Err(Error::new(ErrorKind::Truncated, 9)));
        assert_eq!(r.position(), 8);
        assert_eq!(r.read_fixed64(), Err(Error::new(ErrorKind::Truncated, 8)));
    }
}
