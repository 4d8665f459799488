//! A cursor over one message: what a codec's generated `merge` loop embeds.
//!
//! Generated code reads a tag, matches its raw value (`field << 3 | wire type`) against the
//! fields it knows, reads each known field with the typed call of its kind, and skips the rest
//! ([`Reader::read_raw_tag`] and [`Reader::skip_raw`]; [`Reader::read_tag`] and
//! [`Reader::skip`] work on checked [`Tag`]s):
//!
//! ```
//! use pbwire::reader::Reader;
//!
//! // { order_id: 150, buyer: { user_id: 7, user_name: "a" }, sku_ids: [5, 6], paid: true }
//! let msg = [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];
//! let (mut order_id, mut user_name, mut paid) = (0, "", false);
//! let mut r = Reader::new(&msg);
//! while !r.is_empty() {
//!     match r.read_raw_tag()? {
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
//!         raw => r.skip_raw(raw)?,
//!     }
//! }
//! assert_eq!((order_id, user_name, paid), (150, "a", true));
//! # Ok::<(), pbwire::Error>(())
//! ```
//!
//! Every call either reads one element and moves past it, or fails and stays where it was,
//! with an [`Error`] whose offset is relative to the start of the reader's buffer. The results
//! are those of the single-value functions of [`varint`] and [`wire`]; the only additions are
//! [`Reader::read_str`] (UTF-8 checked with [`crate::utf8::from_utf8`]),
//! [`Reader::read_packed`] (a payload through a [`crate::packed`] decoder, its errors at this
//! reader's offsets) and [`Reader::skip_next`], the scanning primitive.
//!
//! Two calls are for speed alone. [`Reader::read_message`] gives a nested message's reader that
//! may look at the bytes after the message, so that its last fields take the same fast paths
//! as the rest; [`Reader::read_tag_if`] tests for an expected tag with one comparison, for
//! generated code that reads the fields in declaration order before its loop over tags.

use crate::error::{Error, ErrorKind, Result};
use crate::varint;
use crate::wire::{self, Tag};

/// A cursor over a message; see the [module documentation](self).
#[derive(Clone)]
pub struct Reader<'a> {
    /// The bytes not yet read: a read is a look at its first bytes and a step forward. (The
    /// state was a position into the buffer until every read's re-slicing, a bounds check and
    /// the base pointer kept live across the decoder's loop, showed up in the instruction counts.)
    rest: &'a [u8],
    /// The whole buffer's length (offsets are `len - rest.len()`).
    len: usize,
    /// `rest.len()` where the last tag read with [`Reader::read_raw_tag`] starts (for
    /// [`Reader::skip_raw`]'s errors).
    tag_rest: usize,
    /// The buffer from this message's start to the end of what may be read: for a reader
    /// from [`Reader::read_message`] or [`Reader::within`], the bytes that follow the message
    /// in its parent's buffer too (read, never used as data); for [`Reader::new`], the buffer.
    /// Lets a varint near the message's end be read a word at a time. A slice, not a count of
    /// bytes past `rest`: a pointer derived from `rest` may not read outside `rest`. Every
    /// constructor keeps it starting where the message does and at least `len` bytes long,
    /// which [`Reader::window_chunk`]'s unchecked read relies on.
    window: &'a [u8],
    /// How many length-delimited fields in a row [`Reader::skip_next`] has just skipped (up to
    /// [`LEN_RUN`]): from there on it tries [`wire::len_field_at`]'s branches first. Only
    /// `skip_next` reads it, so a decoder that never calls it keeps no such value live.
    len_run: u8,
}

/// After this many length-delimited fields in a row, [`Reader::skip_next`] expects more (as
/// `fields()` does: a message of strings or nested messages).
const LEN_RUN: u8 = 8;

/// The position, the message's length and the bytes not yet read (not the bytes after the
/// message that a nested reader may look at).
impl core::fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Reader")
            .field("position", &self.position())
            .field("len", &self.len)
            .field("remaining", &self.rest)
            .finish()
    }
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    #[inline]
    pub const fn new(buf: &'a [u8]) -> Self {
        Reader { rest: buf, len: buf.len(), tag_rest: buf.len(), window: buf, len_run: 0 }
    }

    /// A reader at the start of `message`, a part of `buf`, that may look at the bytes of `buf`
    /// after the message (read, never used as data), as a reader from
    /// [`Reader::read_message`] does: the message's last fields then take the same fast paths
    /// as the rest, where [`Reader::new`]'s reader takes a slower path for those in its last
    /// 15 bytes (and for every field of a message that short). For messages that lie in a
    /// larger buffer: a stream's (from [`crate::stream::delimited`]), a file's, a batch's.
    /// Results, positions and errors are those of `Reader::new(message)`; a `message` that is
    /// not within `buf` gives that reader.
    ///
    /// ```
    /// use pbwire::{reader::Reader, stream};
    ///
    /// // Two length-prefixed messages: { 1: 150 } and { 2: "a" }.
    /// let buf = [0x03, 0x08, 0x96, 0x01, 0x03, 0x12, 0x01, 0x61];
    /// let mut numbers = Vec::new();
    /// for message in stream::delimited(&buf) {
    ///     let mut r = Reader::within(message?, &buf);
    ///     while !r.is_empty() {
    ///         numbers.push(r.skip_next()?.field());
    ///     }
    /// }
    /// assert_eq!(numbers, [1, 2]);
    /// # Ok::<(), pbwire::Error>(())
    /// ```
    #[inline]
    pub fn within(message: &'a [u8], buf: &'a [u8]) -> Self {
        let window = wire::window_after(message, buf);
        Reader { rest: message, len: message.len(), tag_rest: message.len(), window, len_run: 0 }
    }

    /// The offset of the next byte to read.
    #[inline]
    pub const fn position(&self) -> usize {
        self.len - self.rest.len()
    }

    /// Whether the whole buffer has been read.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> &'a [u8] {
        self.rest
    }

    #[inline(always)]
    fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Moves past `n` bytes that a read has just checked are there.
    #[inline(always)]
    fn advance(&mut self, n: usize) {
        self.rest = &self.rest[n..];
    }

    /// The `N` bytes from the next one to read, running past the message's end into
    /// [`window`](Self::window) if need be, if the window has them: one comparison, the
    /// window's invariant standing in for `get`'s bounds checks (which took eleven
    /// instructions, two of them comparisons, on the records' closing `int32`s).
    #[inline(always)]
    fn window_chunk<const N: usize>(&self) -> Option<&'a [u8; N]> {
        // The window runs from the message's start to its end or past it, so the position
        // (at most `len`) is within it and the subtraction does not wrap.
        if self.window.len() - self.position() >= N {
            // The next byte's address with the window's provenance: a pointer derived from
            // `rest` may not read past `rest`.
            let next = self.window.as_ptr().with_addr(self.rest.as_ptr().addr());
            // SAFETY: the window starts where the message does, so `next` is at offset
            // `position()` of it, and the `window.len() - position() >= N` bytes from there
            // to the window's end are readable; `[u8; N]` has alignment 1.
            Some(unsafe { &*(next as *const [u8; N]) })
        } else {
            None
        }
    }

    #[inline(always)]
    fn at<T>(&self, r: Result<T>) -> Result<T> {
        r.map_err(|e| e.shifted(self.position()))
    }

    /// Reads a tag ([`wire::decode_tag`]; one-byte tags take one comparison).
    #[inline]
    pub fn read_tag(&mut self) -> Result<Tag> {
        let (tag, n) = self.at(wire::decode_tag(self.rest()))?;
        self.advance(n);
        Ok(tag)
    }

    /// Reads a tag as its raw value, `field << 3 | wire type`, checking only that it is a
    /// varint that fits 32 bits ([`ErrorKind::InvalidFieldNumber`] otherwise, as
    /// [`wire::decode_tag`]). For generated code: match the value against the raw tags of the
    /// known fields (all valid), and hand any other to [`Reader::skip_raw`], which checks the
    /// field number and wire type and reports a bad tag at its own offset. One-byte tags take
    /// one comparison.
    #[inline]
    pub fn read_raw_tag(&mut self) -> Result<u32> {
        let rest = self.rest;
        self.tag_rest = rest.len();
        if let [b, after @ ..] = rest {
            if *b < 0x80 {
                self.rest = after;
                return Ok(*b as u32);
            }
        }
        let (raw, n) = self.at(varint::decode_u64(rest))?;
        if raw > u32::MAX as u64 {
            return Err(Error::new(ErrorKind::InvalidFieldNumber, self.position()));
        }
        self.advance(n);
        Ok(raw as u32)
    }

    /// Reads the next tag if it is `raw` (`field << 3 | wire type`) in its shortest encoding,
    /// and says whether it did; otherwise reads nothing. Generated code that expects the fields
    /// in the order they are declared (the order encoders write them) can test for each one's
    /// tag in turn, a comparison and a predictable branch, where the general loop's `match` on
    /// [`Reader::read_raw_tag`] takes a jump through a table; it then runs that loop for whatever
    /// is left (fields out of order, repeated or unknown, a tag written in more bytes than it
    /// needs). As [`Reader::read_raw_tag`], a match can be skipped with [`Reader::skip_raw`].
    /// An invalid `raw` (field 0, wire type 6 or 7) never matches.
    ///
    /// ```
    /// use pbwire::reader::Reader;
    ///
    /// // { id: 150, name: "a" } in field order, then an unknown field 3.
    /// let msg = [0x08, 0x96, 0x01, 0x12, 0x01, b'a', 0x18, 0x01];
    /// let (mut id, mut name) = (0, "");
    /// let mut r = Reader::new(&msg);
    /// if r.read_tag_if(0x08) {
    ///     id = r.read_u32()?;
    /// }
    /// if r.read_tag_if(0x12) {
    ///     name = r.read_str()?;
    /// }
    /// assert!(!r.read_tag_if(0x08));
    /// while !r.is_empty() {
    ///     match r.read_raw_tag()? {
    ///         0x08 => id = r.read_u32()?,
    ///         0x12 => name = r.read_str()?,
    ///         raw => r.skip_raw(raw)?,
    ///     }
    /// }
    /// assert_eq!((id, name), (150, "a"));
    /// # Ok::<(), pbwire::Error>(())
    /// ```
    #[inline(always)]
    pub fn read_tag_if(&mut self, raw: u32) -> bool {
        let rest = self.rest;
        // `raw` is a constant in generated code: all but one arm fold away.
        let after = if Tag::from_raw(raw).is_err() {
            None
        } else if raw < 0x80 {
            match rest {
                [b, after @ ..] if *b as u32 == raw => Some(after),
                _ => None,
            }
        } else if raw < 0x4000 {
            match rest {
                [b0, b1, after @ ..] if [*b0, *b1] == [raw as u8 | 0x80, (raw >> 7) as u8] => Some(after),
                _ => None,
            }
        } else {
            after_long_tag(raw, rest)
        };
        // No `tag_rest` to record: `skip_raw` uses it only to report an invalid tag, and a
        // matched one is valid.
        match after {
            Some(after) => {
                self.rest = after;
                true
            }
            None => false,
        }
    }

    /// Skips the field whose raw tag [`Reader::read_raw_tag`] just returned: checks the tag
    /// ([`ErrorKind::InvalidFieldNumber`], [`ErrorKind::InvalidWireType`] at the tag, as
    /// [`wire::decode_tag`]), then [`Reader::skip`]s its value.
    ///
    /// The work is out of line (unknown fields are the uncommon case), in a function that takes
    /// the remaining bytes and offsets rather than the reader: a call that took `&mut self`
    /// would keep the reader in memory for the whole of the caller's loop, every read storing
    /// its step there (measured on the 100,000-record decoder, which calls this in its match's
    /// default arm).
    #[inline(always)]
    pub fn skip_raw(&mut self, raw: u32) -> Result<()> {
        let n = skip_raw_value(raw, self.rest, self.len - self.tag_rest, self.position())?;
        self.advance(n);
        Ok(())
    }

    /// Reads a varint (the result of [`varint::decode_u64`]): a one-byte varint is one
    /// comparison and a step of the remaining slice; a longer one, while ten bytes remain, the
    /// word-at-a-time decode inline (one word load and a trailing-zero count, no branch on its
    /// length up to eight bytes). Within ten bytes of the end of a reader from
    /// [`Reader::read_message`], every length takes the word path, one-byte values included.
    /// Fewer bytes, and errors, go to `decode_u64`. (An inline two-byte case as well measured
    /// 2% faster on the 100,000-record message and 8-16% slower in a loop over mixed 1- to
    /// 10-byte values, where its branch mispredicts.)
    #[inline(always)]
    pub fn read_varint(&mut self) -> Result<u64> {
        self.read_varint_as::<varint::Full>()
    }

    /// [`Reader::read_varint`], keeping `W`'s part of the value (the low 32 bits, or whether it
    /// is non-zero, take fewer instructions than the whole). With [`varint::Width::SHORT_FIRST`]
    /// the word path is [`varint::decode_from_10_short_first`]: fewer instructions for varints
    /// of up to eight bytes, a branch for nine and ten. For the 32-bit types, whose values take
    /// one to five bytes, or ten for a negative `int32`, never nine in what encoders write: the
    /// ten-byte ones take a branch either way.
    #[inline(always)]
    fn read_varint_as<W: varint::Width>(&mut self) -> Result<W::Value> {
        // Within ten bytes of a nested message's end (its last fields), with the bytes after it
        // to read: the word-at-a-time decode for every length, with no branch on it. A message
        // has few such reads and nothing loops on their positions, so a branch that mispredicts
        // on mixed lengths (a record's closing `int32`s) costs more than the decode's extra
        // instructions. The result counts only if the varint ends within the message.
        if self.rest.len() < varint::MAX_LEN {
            if let Some(head) = self.window_chunk::<{ varint::MAX_LEN }>() {
                // n is 0 for an overlong varint.
                let (v, n) = varint::decode_from_10_short_first::<W>(head);
                if n.wrapping_sub(1) < self.rest.len() {
                    self.advance(n);
                    return Ok(v);
                }
            }
        }
        // Elsewhere a one-byte varint is a comparison, so that a loop over them runs at the
        // speed of a predicted branch.
        if let [b, after @ ..] = self.rest {
            if *b < 0x80 {
                self.rest = after;
                return Ok(W::of_u64(*b as u64));
            }
        }
        // Ten bytes of the message's own to read: the word-at-a-time decode. n is 0 for an
        // overlong varint, else at most 10; tested as one comparison against the remaining
        // length, which also spares `advance` its bounds check (3.9 -> 3.5 ns/value on fresh
        // `u32-mixed` data against `n != 0`).
        if let Some(head) = self.rest.first_chunk::<{ varint::MAX_LEN }>() {
            let (v, n) = if W::SHORT_FIRST {
                varint::decode_from_10_short_first::<W>(head)
            } else {
                let (v, n) = varint::decode_from_10(head);
                (W::of_u64(v), n)
            };
            if n.wrapping_sub(1) < self.rest.len() {
                self.advance(n);
                return Ok(v);
            }
        }
        // Fewer than ten bytes, or an error (a varint past the message's end, an overlong one):
        // the reference path gives the result and the exact error.
        match varint::decode_u64(self.rest) {
            Ok((v, n)) => {
                self.advance(n);
                Ok(W::of_u64(v))
            }
            Err(e) => Err(e.shifted(self.position())),
        }
    }

    /// Reads a `uint64`.
    #[inline]
    pub fn read_u64(&mut self) -> Result<u64> {
        self.read_varint()
    }

    /// Reads a `uint32` (the low 32 bits).
    #[inline]
    pub fn read_u32(&mut self) -> Result<u32> {
        self.read_varint_as::<varint::Low32>()
    }

    /// Reads an `int64`.
    #[inline]
    pub fn read_i64(&mut self) -> Result<i64> {
        self.read_varint().map(|v| v as i64)
    }

    /// Reads an `int32` or enum value (the low 32 bits).
    #[inline]
    pub fn read_i32(&mut self) -> Result<i32> {
        self.read_varint_as::<varint::Low32>().map(|v| v as i32)
    }

    /// Reads a `sint64`.
    #[inline]
    pub fn read_sint64(&mut self) -> Result<i64> {
        self.read_varint().map(varint::zigzag_decode_64)
    }

    /// Reads a `sint32`.
    #[inline]
    pub fn read_sint32(&mut self) -> Result<i32> {
        self.read_varint_as::<varint::Low32>().map(varint::zigzag_decode_32)
    }

    /// Reads a `bool` (any non-zero varint is `true`).
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool> {
        self.read_varint_as::<varint::NonZero>()
    }

    /// Reads a `fixed32`.
    #[inline]
    pub fn read_fixed32(&mut self) -> Result<u32> {
        let v = self.at(wire::decode_fixed32(self.rest()))?;
        self.advance(4);
        Ok(v)
    }

    /// Reads a `fixed64`.
    #[inline]
    pub fn read_fixed64(&mut self) -> Result<u64> {
        let v = self.at(wire::decode_fixed64(self.rest()))?;
        self.advance(8);
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
        if let [n, after @ ..] = self.rest {
            let n = *n as usize;
            if n < 0x80 && n <= after.len() {
                let (payload, next) = after.split_at(n);
                self.rest = next;
                return Ok(payload);
            }
        }
        let (payload, n) = self.at(wire::decode_len(self.rest))?;
        self.advance(n);
        Ok(payload)
    }

    /// Reads a length-delimited value as a nested message: a reader over its bytes, as
    /// `Reader::new(self.read_bytes()?)` gives (positions and error offsets from the nested
    /// message's start), except that it knows the bytes after the message in this reader's
    /// buffer are there to be read. Its varint reads then take the word-at-a-time path up to
    /// the message's last byte (a message's last fields are otherwise within ten bytes of its
    /// end, where a varint is read byte by byte); results and errors are unchanged, since a
    /// varint that runs past the message's end is read again by the reference path.
    ///
    /// Nesting depth is the caller's to bound: a decoder that recurses into nested messages
    /// must stop at a limit of its own (Google's parsers stop at 100), or hostile input nested
    /// deeply enough exhausts its stack. pbwire's own calls do not recurse (groups are skipped
    /// with a loop and a fixed stack of field numbers).
    ///
    /// ```
    /// use pbwire::reader::Reader;
    ///
    /// // { 2: { 1: 150 } } then { 3: 1 }
    /// let msg = [0x12, 0x03, 0x08, 0x96, 0x01, 0x18, 0x01];
    /// let mut r = Reader::new(&msg);
    /// assert_eq!(r.read_raw_tag()?, 0x12);
    /// let mut inner = r.read_message()?;
    /// assert_eq!((inner.read_raw_tag()?, inner.read_u32()?, inner.is_empty()), (0x08, 150, true));
    /// assert_eq!((r.read_raw_tag()?, r.read_bool()?), (0x18, true));
    /// # Ok::<(), pbwire::Error>(())
    /// ```
    #[inline]
    pub fn read_message(&mut self) -> Result<Reader<'a>> {
        let payload = self.read_bytes()?;
        // The payload and what this reader may read after it: the window from the payload's
        // start (its offset in the window is the position before the payload).
        let start = self.position() - payload.len();
        // SAFETY: `start` is a position in this message, at most `len`, and the window is at
        // least `len` bytes long (the invariant of `window`). The nested reader's window then
        // starts where its message does and runs at least to its end, its own invariant.
        let window = unsafe { self.window.get_unchecked(start..) };
        Ok(Reader { rest: payload, len: payload.len(), tag_rest: payload.len(), window, len_run: 0 })
    }

    /// Reads a `string`: [`Reader::read_bytes`], then [`crate::utf8::from_utf8`];
    /// [`ErrorKind::InvalidUtf8`] at the length prefix if it is not UTF-8.
    #[inline(always)]
    pub fn read_str(&mut self) -> Result<&'a str> {
        let start = self.rest;
        let bytes = self.read_bytes()?;
        match crate::utf8::from_utf8(bytes) {
            Ok(s) => Ok(s),
            Err(_) => {
                self.rest = start;
                Err(Error::new(ErrorKind::InvalidUtf8, self.position()))
            }
        }
    }

    /// Reads a length-delimited value and hands it to `decode`, with the offset of any error
    /// `decode` returns moved from the payload's start to this reader's buffer, as every
    /// `Reader` error is; on an error the reader stays where it was. For packed repeated fields:
    /// `decode` is a [`crate::packed`] decoder (`decode_*`, `extend_*`) on the payload, or any
    /// other reading of it that returns a [`Result`] (shifting the offset by hand, with the
    /// payload's start rather than its end, is an easy mistake to make).
    ///
    /// ```
    /// use pbwire::{packed, reader::Reader, ErrorKind};
    ///
    /// // { 3: [5, 6] } (packed), then { 3: [5, <cut varint>] }
    /// let msg = [0x1a, 0x02, 0x05, 0x06, 0x1a, 0x02, 0x05, 0x80];
    /// let mut ids = [0u32; 8];
    /// let mut r = Reader::new(&msg);
    /// assert_eq!(r.read_raw_tag()?, 0x1a);
    /// assert_eq!(r.read_packed(|p| packed::decode_u32(p, &mut ids))?, 2);
    /// assert_eq!(ids[..2], [5, 6]);
    /// assert_eq!(r.read_raw_tag()?, 0x1a);
    /// let e = r.read_packed(|p| packed::decode_u32(p, &mut ids)).unwrap_err();
    /// assert_eq!((e.kind(), e.offset()), (ErrorKind::Truncated, 7));
    /// assert_eq!(r.position(), 5); // still at the length prefix
    /// # Ok::<(), pbwire::Error>(())
    /// ```
    #[inline(always)]
    pub fn read_packed<R>(&mut self, decode: impl FnOnce(&'a [u8]) -> Result<R>) -> Result<R> {
        let before = self.rest;
        let payload = self.read_bytes()?;
        let start = self.position() - payload.len();
        decode(payload).map_err(|e| {
            self.rest = before;
            e.shifted(start)
        })
    }

    /// Skips the value of a field whose `tag` was just read ([`wire::skip_field`]: groups
    /// included, up to their end tag).
    #[inline]
    pub fn skip(&mut self, tag: Tag) -> Result<()> {
        let n = self.at(wire::skip_field(tag, self.rest()))?;
        self.advance(n);
        Ok(())
    }

    /// Reads a tag and skips its field: the scanning primitive, equal to
    /// [`Reader::read_tag`] then [`Reader::skip`] (the same tag, position and errors), with
    /// no branch per wire type for the common fields (1- and 2-byte tags, wire types 0, 1, 2
    /// and 5, length prefixes of up to 2 bytes, at least 16 bytes from the end, or from the end
    /// of the bytes after it for a reader from [`Reader::read_message`]). After eight
    /// length-delimited fields in a row it takes the next ones by branches instead, which
    /// predict in such a run (a message of strings or nested messages) and chain a load and
    /// an add from one field to the next (1 MiB of 20..=150-byte strings: 4.7 -> 2.5 ns a
    /// field; the mixed message 4.70 -> 4.74), and fetches the line 1024 bytes ahead after a
    /// field under 256 bytes, where that chain would otherwise wait on L2 (the same message,
    /// Sapphire Rapids: 5.2-5.6 -> 4.0 ns, then 512 bytes ahead).
    #[inline(always)]
    pub fn skip_next(&mut self) -> Result<Tag> {
        if self.len_run >= LEN_RUN {
            if let Some(f) = wire::len_field_at(self.rest, 0) {
                crate::arch::prefetch_after(self.rest.as_ptr(), f.end);
                self.advance(f.end);
                return Ok(Tag::from_fast_raw(f.number << 3 | 2));
            }
            self.len_run = 0;
        }
        // Sixteen bytes to look at: the message's own, or within 16 bytes of a nested message's
        // end, with those after it (the field must still end within the message).
        let window = match self.rest.first_chunk::<16>() {
            Some(w) => Some(w),
            None => self.window_chunk::<16>(),
        };
        if let Some(w) = window {
            if let Some(f) = wire::fast_field(w, self.rest.len()) {
                self.advance(f.end);
                self.len_run = if f.raw & 7 == 2 { self.len_run + 1 } else { 0 };
                return Ok(Tag::from_fast_raw(f.raw));
            }
        }
        // Out of line and given values, not `&mut self` (as in `skip_raw`).
        let (tag, n) = skip_next_reference(self.rest, self.position())?;
        self.advance(n);
        Ok(tag)
    }
}

/// The reference path of [`Reader::skip_next`]: the tag of the field at the start of `rest`
/// and the field's length, or the error (relative to `at`, the offset of `rest`).
/// Cold as well as out of line: without `#[cold]` the run count cost [`Reader::skip_next`]'s
/// loop over the mixed message 6% (4.69 -> 4.98 ns a field), with it 1%.
///
/// Where a top-level message has no 16-byte window left (its last 15 bytes, all of a short
/// message), a one-byte tag with a one- or two-byte varint or a one-byte length prefix first
/// goes by `fields()`'s few branches (`fields::short_field`): here, not inline in
/// `skip_next`, where the same branches cost the loop over the 1 MiB mixed message 5% (min of
/// five rounds 4.77 -> 5.03 ns a field).
#[cold]
#[inline(never)]
fn skip_next_reference(rest: &[u8], at: usize) -> Result<(Tag, usize)> {
    if let Some(f) = crate::fields::short_field(rest, 0) {
        return Ok((Tag::from_fast_raw(f.number << 3 | f.value.wire_type() as u32), f.end));
    }
    decode_tag_and_skip(rest, at)
}

/// `wire::decode_tag` and `wire::skip_field`, what [`Reader::skip_next`] equals.
#[inline(always)]
fn decode_tag_and_skip(rest: &[u8], at: usize) -> Result<(Tag, usize)> {
    let (tag, tag_len) = wire::decode_tag(rest).map_err(|e| e.shifted(at))?;
    let value_len = wire::skip_field(tag, &rest[tag_len..]).map_err(|e| e.shifted(at + tag_len))?;
    Ok((tag, tag_len + value_len))
}

/// The bytes after a tag of three to five bytes, if `rest` starts with `raw`'s shortest
/// encoding ([`Reader::read_tag_if`]'s rare case: field numbers from 2048).
#[inline(never)]
fn after_long_tag(raw: u32, rest: &[u8]) -> Option<&[u8]> {
    let mut encoded = [0u8; varint::MAX_LEN];
    let n = varint::encode_u64(raw as u64, &mut encoded).ok()?;
    rest.strip_prefix(&encoded[..n])
}

/// [`Reader::skip_raw`]'s work: the length of the value of the field with raw tag `raw` at the
/// start of `rest`, or the error at the tag (`tag_at`) or in the value (relative to `at`).
#[inline(never)]
fn skip_raw_value(raw: u32, rest: &[u8], tag_at: usize, at: usize) -> Result<usize> {
    match Tag::from_raw(raw) {
        Ok(tag) => wire::skip_field(tag, rest).map_err(|e| e.shifted(at)),
        Err(kind) => Err(Error::new(kind, tag_at)),
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
        // Raw tags: checked only when skipped, and reported at the tag.
        let mut r = Reader::new(&[0x08, 0x01, 0x0f, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10]);
        assert_eq!(r.read_raw_tag(), Ok(0x08));
        assert_eq!(r.skip_raw(0x08), Ok(()));
        assert_eq!(r.read_raw_tag(), Ok(0x0f));
        assert_eq!(r.skip_raw(0x0f), Err(Error::new(ErrorKind::InvalidWireType, 2)));
        let mut r = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x10]);
        assert_eq!(r.read_raw_tag(), Err(Error::new(ErrorKind::InvalidFieldNumber, 0)));
    }

    #[test]
    fn debug_shows_the_message_not_what_follows_it() {
        extern crate std;
        let msg = [0x0a, 0x02, 0x08, 0x01, 0x10, 0x02];
        let mut r = Reader::new(&msg);
        assert_eq!(r.read_raw_tag(), Ok(0x0a));
        let mut inner = r.read_message().unwrap();
        assert_eq!(inner.read_raw_tag(), Ok(0x08));
        assert_eq!(std::format!("{inner:?}"), "Reader { position: 1, len: 2, remaining: [1] }");
    }

    #[test]
    fn read_tag_if_takes_only_the_shortest_encoding_of_a_valid_tag() {
        // Field 1 varint (1 byte), field 16 varint (2 bytes), field 2048 varint (3 bytes).
        let msg = [0x08, 0x01, 0x80, 0x01, 0x02, 0x80, 0x80, 0x01, 0x03];
        let mut r = Reader::new(&msg);
        assert!(!r.read_tag_if(0x10));
        assert!(r.read_tag_if(0x08));
        assert_eq!(r.read_u32(), Ok(1));
        assert!(!r.read_tag_if(0x08));
        assert!(r.read_tag_if(16 << 3));
        assert_eq!(r.skip_raw(16 << 3), Ok(()));
        assert!(r.read_tag_if(2048 << 3));
        assert_eq!((r.read_u32(), r.is_empty()), (Ok(3), true));
        assert!(!r.read_tag_if(0x08));
        // An overlong encoding of tag 0x08 is not matched (read_raw_tag reads it), nor are
        // invalid tags, even when their bytes are there.
        let mut r = Reader::new(&[0x88, 0x00, 0x00, 0x07, 0x01]);
        assert!(!r.read_tag_if(0x08));
        assert_eq!(r.read_raw_tag(), Ok(0x08));
        assert_eq!(r.read_u32(), Ok(0));
        assert!(!r.read_tag_if(0x00));
        assert!(!r.read_tag_if(0x07));
        assert_eq!(r.position(), 3);
        // Truncated input: nothing matches, nothing moves.
        let mut r = Reader::new(&[0x80]);
        assert!(!r.read_tag_if(16 << 3));
        assert_eq!(r.position(), 0);
    }

    #[test]
    fn within_reads_the_message_and_only_looks_past_it() {
        // Two records and what follows them; the second ends in a one-byte varint.
        let buf = [0x08, 0x96, 0x01, 0x10, 0x07, 0x18, 0x05, 0x12, 0x01, 0x61, 0xff, 0xff, 0xff];
        let (first, second) = (&buf[..5], &buf[5..10]);
        for (message, want) in [(first, [1u32, 2].as_slice()), (second, [3, 2].as_slice())] {
            for outer in [&buf[..], &buf[..10], message, &buf[1..], &[][..]] {
                let mut r = Reader::within(message, outer);
                let mut got = [0u32; 2];
                for slot in &mut got {
                    *slot = r.skip_next().unwrap().field();
                }
                assert_eq!((&got[..], r.is_empty(), r.position()), (want, true, 5));
            }
        }
        // The same reads and errors as `Reader::new`: a varint cut at the message's end, with
        // continuation bytes after it in the buffer.
        let buf = [0x08, 0x96, 0x01, 0x10, 0x80, 0x80, 0x01];
        let (mut inside, mut alone) = (Reader::within(&buf[..5], &buf), Reader::new(&buf[..5]));
        assert_eq!((inside.read_tag_if(0x08), inside.read_u32()), (true, Ok(150)));
        assert_eq!((alone.read_tag_if(0x08), alone.read_u32()), (true, Ok(150)));
        assert_eq!(inside.read_raw_tag(), Ok(0x10));
        assert_eq!(alone.read_raw_tag(), Ok(0x10));
        assert_eq!(inside.read_u64(), Err(Error::new(ErrorKind::Truncated, 4)));
        assert_eq!(inside.read_u64(), alone.read_u64());
        let mut inside = Reader::within(&buf[3..5], &buf);
        assert_eq!(inside.skip_next(), Err(Error::new(ErrorKind::Truncated, 1)));
        assert_eq!(inside.skip_next(), Reader::new(&buf[3..5]).skip_next());
    }

    /// Every tag and first two bytes after it, in messages of two to four bytes (all within
    /// `skip_next`'s tail, which tries `fields::short_field` before `decode_tag_and_skip`): the
    /// same tag, position and error as `decode_tag_and_skip` alone.
    #[test]
    #[cfg_attr(miri, ignore = "a million cases of safe code: run natively")]
    fn skip_next_tails_are_the_reference() {
        for tag in 0..=255u8 {
            for first in 0..=255u8 {
                for second in [0x00, 0x61, 0x7f, 0x80, 0xff] {
                    for len in 1..=4usize {
                        let msg = &[tag, first, second, 0x62][..len];
                        let mut r = Reader::new(msg);
                        let got = r.skip_next().map(|t| (t, r.position()));
                        assert_eq!(got, decode_tag_and_skip(msg, 0), "{msg:02x?}");
                        if got.is_err() {
                            assert_eq!(r.position(), 0, "{msg:02x?}");
                        }
                    }
                }
            }
        }
    }
}
