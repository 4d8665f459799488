//! Zero-copy iteration over the fields of a message, and structural validation.
//!
//! Nothing is copied: strings, bytes, nested messages, packed arrays and group contents come out
//! as sub-slices of the input. Whether a length-delimited payload is a string, a nested message
//! or a packed array is the schema's business, not the wire's, so it is left to the caller.
//!
//! ```
//! use pbwire::fields::{fields, Value};
//! // { order_id: 150, buyer: { user_id: 7, user_name: "a" }, sku_ids: [5, 6], paid: true }
//! let msg = [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];
//! let mut it = fields(&msg);
//! let order_id = it.next().unwrap().unwrap();
//! assert_eq!((order_id.number, order_id.value), (1, Value::Varint(150)));
//! let buyer = it.next().unwrap().unwrap();
//! assert_eq!(buyer.offset, 3);
//! let Value::Len(buyer_bytes) = buyer.value else { panic!() };
//! assert_eq!(fields(buyer_bytes).count(), 2);
//! assert_eq!(it.count(), 2);
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::varint;
use crate::wire::{self, WireType, DEFAULT_DEPTH_LIMIT};

/// A field's value as the wire gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value<'a> {
    /// Wire type 0: the 64-bit varint (narrow it with `as` for `int32`, `uint32`, `enum`; see
    /// [`varint::zigzag_decode_64`] for `sint*`).
    Varint(u64),
    /// Wire type 1: eight bytes read little-endian (`fixed64`; `as i64`; `f64::from_bits`).
    I64(u64),
    /// Wire type 2: the payload, without its length prefix.
    Len(&'a [u8]),
    /// Wire type 3: the bytes between the start-group tag and its matching end-group tag,
    /// already checked to be well-formed fields (iterate them with [`fields`]).
    Group(&'a [u8]),
    /// Wire type 5: four bytes read little-endian (`fixed32`; `as i32`; `f32::from_bits`).
    I32(u32),
}

impl Value<'_> {
    /// The wire type this value was encoded with.
    pub const fn wire_type(&self) -> WireType {
        match self {
            Value::Varint(_) => WireType::Varint,
            Value::I64(_) => WireType::I64,
            Value::Len(_) => WireType::Len,
            Value::Group(_) => WireType::StartGroup,
            Value::I32(_) => WireType::I32,
        }
    }
}

/// One field of a message, with where it sits in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field<'a> {
    /// The field number, 1..=2^29 - 1.
    pub number: u32,
    /// The byte offset of the field's tag.
    pub offset: usize,
    /// The byte offset of the value: after the tag, and for `Len` after the length prefix too
    /// (so `Len` and `Group` payloads are `input[value_offset..][..payload.len()]`).
    pub value_offset: usize,
    /// One past the field's last byte (for groups, past the end-group tag).
    pub end: usize,
    /// The value.
    pub value: Value<'a>,
}

/// An iterator over the fields of a message; see [`fields`].
#[derive(Clone)]
pub struct Fields<'a> {
    buf: &'a [u8],
    /// The buffer from the message's start to the end of what may be read: for
    /// [`Fields::within`], the bytes after the message too (read, never used as data); else
    /// `buf`. At least as long as `buf`.
    window: &'a [u8],
    pos: usize,
    depth_limit: u8,
    /// How many length-delimited fields in a row the fast path has just taken (up to
    /// [`LEN_RUN`]; from there on [`len_field`] is tried first), or [`FAILED`] after an error.
    state: u8,
}

/// The message and the position (not the bytes after the message that [`Fields::within`] may
/// look at).
impl core::fmt::Debug for Fields<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Fields")
            .field("buf", &self.buf)
            .field("pos", &self.pos)
            .field("depth_limit", &self.depth_limit)
            .field("state", &self.state)
            .finish()
    }
}

/// [`Fields::state`] after an error: the iterator has ended.
const FAILED: u8 = u8::MAX;

/// After this many length-delimited fields in a row, the iterator expects more: a message of
/// strings or nested messages (a log batch, a repeated message field) then goes by
/// [`len_field`]'s branches, which predict there, rather than by the branch-free path,
/// whose chain through every wire type's candidate is about twice as long. Mixed messages
/// seldom have such a run, so they keep to the branch-free path, which does not mispredict
/// on their wire types. Keeping the count costs the mixed message's loop instructions (71 -> 82
/// a field under callgrind) but no time measurable in the wall bench (4.76 against 4.73-4.80
/// ns a field); 1 MiB of 20..=150-byte strings went from 4.7 to 3.0-3.1 ns a field. In a run
/// the line `arch::PREFETCH_AHEAD` (1024) bytes ahead is fetched after a field under 256
/// bytes, as [`crate::stream::Delimited`] does (`arch::prefetch_after`): the same message on
/// Sapphire Rapids 5.6-6.0 -> 5.1-5.2 ns a field, then 512 bytes ahead (on Zen 4 a prefetch
/// in `Reader::skip_next`'s runs had changed nothing: its prefetchers kept up).
const LEN_RUN: u8 = 8;

/// Iterates over the top-level fields of `message`, in wire order.
///
/// Each item is a [`Field`] or the first error, after which the iterator ends. A group comes
/// out whole, as one [`Value::Group`]; groups nest at most [`DEFAULT_DEPTH_LIMIT`] deep.
#[inline]
pub fn fields(message: &[u8]) -> Fields<'_> {
    Fields::with_depth_limit(message, DEFAULT_DEPTH_LIMIT)
}

impl<'a> Fields<'a> {
    /// Like [`fields`], with groups allowed to nest `depth_limit` deep (0: no groups at all).
    /// When iterating the content of a group found at depth `d`, pass `limit - d` to keep one
    /// limit across the levels.
    #[inline]
    pub const fn with_depth_limit(message: &'a [u8], depth_limit: u8) -> Self {
        Fields { buf: message, window: message, pos: 0, depth_limit, state: 0 }
    }

    /// Like [`fields`] over `message`, a part of `buf`, looking at the bytes of `buf` after the
    /// message where that lets the last fields (all of a small message's) take the fast path
    /// (read, never used as data; see [`crate::reader::Reader::within`]). The same fields and
    /// errors as `fields(message)` (groups nest at most [`DEFAULT_DEPTH_LIMIT`] deep); a
    /// `message` that is not within `buf` gives that iterator.
    ///
    /// ```
    /// use pbwire::{fields::Fields, stream};
    ///
    /// // Two length-prefixed messages: { 1: 150 } and { 2: "a" }.
    /// let buf = [0x03, 0x08, 0x96, 0x01, 0x03, 0x12, 0x01, 0x61];
    /// let mut numbers = Vec::new();
    /// for message in stream::delimited(&buf) {
    ///     for field in Fields::within(message?, &buf) {
    ///         numbers.push(field?.number);
    ///     }
    /// }
    /// assert_eq!(numbers, [1, 2]);
    /// # Ok::<(), pbwire::Error>(())
    /// ```
    #[inline]
    pub fn within(message: &'a [u8], buf: &'a [u8]) -> Self {
        let mut it = Fields::with_depth_limit(message, DEFAULT_DEPTH_LIMIT);
        it.window = wire::window_after(message, buf);
        it
    }

    /// The offset of the next field (after an error: of the element that failed).
    #[inline]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not yet iterated over.
    #[inline]
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// The fast path of [`Iterator::next`]: a field [`wire::fast_field`] can bound, with its
    /// value read from the same 16-byte window.
    #[inline(always)]
    fn fast_next(&self) -> Option<Field<'a>> {
        let buf = self.buf;
        let offset = self.pos;
        let window = wire::window(self.window, offset)?;
        let f = wire::fast_field(window, buf.len() - offset)?;
        let value_at = |n: usize| {
            let mut bytes = [0u8; 8];
            bytes[..n].copy_from_slice(&window[f.tag_len..f.tag_len + n]);
            u64::from_le_bytes(bytes)
        };
        let value = match f.raw & 7 {
            0 => Value::Varint(wire::varint_in_window(window, f.tag_len, f.end - f.tag_len)),
            1 => Value::I64(value_at(8)),
            2 => Value::Len(buf.get(offset + f.value_start..offset + f.end).unwrap_or_default()),
            _ => Value::I32(value_at(4) as u32),
        };
        Some(Field {
            number: f.raw >> 3,
            offset,
            value_offset: offset + f.value_start,
            end: offset + f.end,
            value,
        })
    }

    /// The reference path of [`Iterator::next`]: every wire type, groups, and every error.
    #[inline(always)]
    fn read_field(&self) -> Result<Field<'a>> {
        read_field(self.buf, self.pos, self.depth_limit)
    }
}

/// The field at `offset` of `buf` if its tag takes one byte and its value is a varint of one or
/// two bytes or a payload with a one-byte length prefix, by branches. Tried whenever
/// [`Fields::fast_next`] declines, which for such fields happens only where it has no 16-byte
/// window: the last fields of a message (all of a short message's), which would otherwise call
/// the reference path out of line. `None` for anything else, which that path then reads.
/// [`crate::reader::Reader::skip_next`] takes its tail fields here too.
#[inline(always)]
pub(crate) fn short_field(buf: &[u8], offset: usize) -> Option<Field<'_>> {
    let [tag, first, rest @ ..] = buf.get(offset..)? else {
        return None;
    };
    let (tag, first) = (*tag, *first);
    // Field number 0 and two-byte tags are not for this path.
    if !(8..0x80).contains(&tag) {
        return None;
    }
    // A varint's value starts after the tag; a payload after its length prefix too.
    let (value, value_offset, end) = match (tag & 7, first < 0x80) {
        (0, true) => (Value::Varint(first as u64), offset + 1, offset + 2),
        (0, false) => match rest.first() {
            Some(&second) if second < 0x80 => {
                (Value::Varint((first & 0x7f) as u64 | (second as u64) << 7), offset + 1, offset + 3)
            }
            _ => return None,
        },
        (2, true) => (Value::Len(rest.get(..first as usize)?), offset + 2, offset + 2 + first as usize),
        _ => return None,
    };
    Some(Field { number: (tag >> 3) as u32, offset, value_offset, end, value })
}

/// [`Fields::read_field`]'s work: out of line and cold, so that the fast paths inline into
/// the caller's loop and are laid out for it (without `#[cold]`, `validate` on 1 MiB of strings
/// measured 8% slower with the run counter in `next`), taking plain values rather than the
/// iterator.
#[cold]
#[inline(never)]
fn read_field(buf: &[u8], offset: usize, depth_limit: u8) -> Result<Field<'_>> {
    let (tag, tag_len) = wire::decode_tag(&buf[offset..]).map_err(|e| e.shifted(offset))?;
    let value_offset = offset + tag_len;
    let rest = &buf[value_offset..];
    let at_value = |e: Error| e.shifted(value_offset);
    let (value, value_offset, end) = match tag.wire_type() {
        WireType::Varint => {
            let (v, n) = varint::decode_u64(rest).map_err(at_value)?;
            (Value::Varint(v), value_offset, value_offset + n)
        }
        WireType::I64 => {
            let v = wire::decode_fixed64(rest).map_err(at_value)?;
            (Value::I64(v), value_offset, value_offset + 8)
        }
        WireType::I32 => {
            let v = wire::decode_fixed32(rest).map_err(at_value)?;
            (Value::I32(v), value_offset, value_offset + 4)
        }
        WireType::Len => {
            let (payload, n) = wire::decode_len(rest).map_err(at_value)?;
            let end = value_offset + n;
            (Value::Len(payload), end - payload.len(), end)
        }
        WireType::StartGroup => {
            if depth_limit == 0 {
                return Err(Error::new(ErrorKind::DepthLimit, offset));
            }
            let group = wire::skip_group(tag.field(), rest, depth_limit).map_err(at_value)?;
            (Value::Group(&rest[..group.content_len]), value_offset, value_offset + group.end)
        }
        WireType::EndGroup => return Err(Error::new(ErrorKind::GroupMismatch, offset)),
    };
    Ok(Field { number: tag.field(), offset, value_offset, end, value })
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.state == FAILED || self.pos >= self.buf.len() {
            return None;
        }
        if self.state >= LEN_RUN {
            if let Some(field) = len_field(self.buf, self.pos) {
                crate::arch::prefetch_after(self.buf.as_ptr().wrapping_add(self.pos), field.end - self.pos);
                self.pos = field.end;
                return Some(Ok(field));
            }
            self.state = 0;
        }
        if let Some(field) = self.fast_next() {
            self.pos = field.end;
            let is_len = matches!(field.value, Value::Len(_));
            self.state = if is_len { self.state + 1 } else { 0 };
            return Some(Ok(field));
        }
        if let Some(field) = short_field(self.buf, self.pos) {
            self.pos = field.end;
            return Some(Ok(field));
        }
        match self.read_field() {
            Ok(field) => {
                self.pos = field.end;
                Some(Ok(field))
            }
            Err(e) => {
                self.state = FAILED;
                Some(Err(e))
            }
        }
    }
}

impl core::iter::FusedIterator for Fields<'_> {}

/// Checks that `message` is a well-formed sequence of fields: valid tags, complete values,
/// lengths in bounds, groups closed by their own end tags within [`DEFAULT_DEPTH_LIMIT`].
/// Length-delimited payloads are not looked into (only the schema knows which are messages).
///
/// ```
/// assert!(pbwire::fields::validate(&[0x08, 0x96, 0x01]).is_ok());
/// let err = pbwire::fields::validate(&[0x08, 0x96]).unwrap_err();
/// assert_eq!((err.kind(), err.offset()), (pbwire::ErrorKind::Truncated, 1));
/// ```
pub fn validate(message: &[u8]) -> Result<()> {
    validate_with_depth_limit(message, DEFAULT_DEPTH_LIMIT)
}

/// [`validate`] with another group depth limit.
pub fn validate_with_depth_limit(message: &[u8], depth_limit: u8) -> Result<()> {
    // SAFETY: the dispatched table is one this CPU runs.
    unsafe { validate_with(crate::backend::active().scan_fields, message, depth_limit) }
}

/// Messages shorter than this are not worth a table scan (it builds a table of 1 KiB first), nor
/// the looks that choose between the loops.
const SCAN_MIN_LEN: usize = 512;

/// A look at whether a table scan would pay: this many fields by the scalar path...
const PROBE_FIELDS: usize = 16;

/// ... and it does if they averaged this many bytes or fewer (a table costs about the same for
/// every byte, the scalar loop for every field).
const DENSE_FIELD_LEN: usize = 24;

/// The bytes the scalar loop takes alone after a look, at first and at most (doubling while
/// looks find long fields or scans stop early).
const GAP: core::ops::RangeInclusive<usize> = 1024..=64 * 1024;

/// [`validate_with_depth_limit`] with a backend's field scan, if it has one: `scan` checks the
/// common fields as far as it can, the scalar loop the rest (and finds every error).
///
/// # Safety
/// The CPU must support the backend `scan` belongs to.
pub(crate) unsafe fn validate_with(
    scan: Option<crate::arch::ScanFields>,
    message: &[u8],
    depth_limit: u8,
) -> Result<()> {
    if message.len() < SCAN_MIN_LEN {
        return validate_scalar(message, depth_limit);
    }
    // SAFETY: forwarded.
    unsafe { validate_looking(scan, &mut Fields::with_depth_limit(message, depth_limit)) }
}

/// The scalar loop, a stretch at a time, each chosen by a look at the fields before it: where
/// they are short, `scan` (or without one the loop that tries every wire type alike); where
/// they are long, the loop that tries a length-delimited field first.
///
/// # Safety
/// The CPU must support the backend `scan` belongs to.
unsafe fn validate_looking(scan: Option<crate::arch::ScanFields>, it: &mut Fields<'_>) -> Result<()> {
    let (message, depth_limit) = (it.buf, it.depth_limit);
    let mut gap = *GAP.start();
    loop {
        let from = it.pos;
        scalar_fields(it, PROBE_FIELDS)?;
        if it.pos == message.len() {
            return Ok(());
        }
        let short = it.pos - from <= PROBE_FIELDS * DENSE_FIELD_LEN;
        if let (true, Some(scan)) = (short, scan) {
            let at = it.pos;
            // SAFETY: forwarded; `it.pos` is a field's start. Every field before the offset it
            // returns is valid, and that offset is a field's start too.
            it.pos = unsafe { scan(message, at, depth_limit) };
            // A scan that went far stopped at an error or at a stretch of long fields.
            let far = it.pos - at >= 4 * crate::arch::field_table::CHUNK;
            gap = if far { *GAP.start() } else { (gap * 2).min(*GAP.end()) };
        } else {
            gap = (gap * 2).min(*GAP.end());
        }
        let stop = message.len().min(it.pos + gap);
        it.pos = if short && scan.is_none() {
            scalar_until::<false>(message, it.pos, depth_limit, stop)?
        } else {
            scalar_until::<true>(message, it.pos, depth_limit, stop)?
        };
    }
}

/// The scalar loop alone, to the end.
#[inline(never)]
fn validate_scalar(message: &[u8], depth_limit: u8) -> Result<()> {
    scalar_until::<false>(message, 0, depth_limit, message.len()).map(drop)
}

/// The scalar loop over `n` fields (fewer at the end).
#[inline(never)]
fn scalar_fields(fields: &mut Fields<'_>, n: usize) -> Result<()> {
    for _ in 0..n {
        if fields.pos == fields.buf.len() {
            break;
        }
        fields.pos = match fast_end(fields.buf, fields.pos) {
            Some(end) => end,
            None => fields.read_field()?.end,
        };
    }
    Ok(())
}

/// The scalar loop from the field at `pos`, up to the first field that starts at or past
/// `stop` (at most the length); returns where that is. (Its own function, taking and returning
/// plain values: sharing a function with the scanning path, or stepping a `Fields` through a
/// reference, cost the loop registers, 65 -> 71-77 instructions a field.)
#[inline(always)]
fn scalar_until<const LONG: bool>(message: &[u8], pos: usize, depth_limit: u8, stop: usize) -> Result<usize> {
    // A fresh iterator from plain values, kept in registers.
    let mut it = Fields { pos, ..Fields::with_depth_limit(message, depth_limit) };
    // The fast path looks at the bytes before `stop` only, so that the loop needs no more
    // registers than one to the end (a field it cannot bound there goes the reference path,
    // which sees them all).
    let before = &message[..stop];
    while it.pos < before.len() {
        if LONG {
            if let Some(end) = len_field_end(before, it.pos) {
                // Stretches of long fields: fetch ahead, as in `next`'s runs (1 MiB of strings
                // on Sapphire Rapids: 5.0-5.3 -> 4.3-4.4 ns a field; the mixed message
                // unchanged).
                crate::arch::prefetch_after(message.as_ptr().wrapping_add(it.pos), end - it.pos);
                it.pos = end;
                continue;
            }
        }
        if let Some(end) = fast_end(before, it.pos) {
            it.pos = end;
            continue;
        }
        // The reference path itself, not `next` (whose other fast paths would cost this loop
        // registers: 65 -> 70 instructions a field).
        it.pos = it.read_field()?.end;
    }
    Ok(it.pos)
}

/// The iterator's path for runs of length-delimited fields ([`wire::len_field_at`]), as a
/// [`Field`]; `None` for any other field, which the other paths then read.
#[inline(always)]
fn len_field(buf: &[u8], offset: usize) -> Option<Field<'_>> {
    let f = wire::len_field_at(buf, offset)?;
    let payload = buf.get(f.value_start..f.end)?;
    Some(Field {
        number: f.number,
        offset,
        value_offset: f.value_start,
        end: f.end,
        value: Value::Len(payload),
    })
}

/// Where the field at `pos` ends if it is length-delimited with a tag and a length prefix of
/// one or two bytes each, taken by branches: the scanning path's stretches of long fields,
/// where these are nearly all the fields and the branches predict, run about twice as fast
/// this way as through the branch-free [`fast_end`], whose chain through the candidates of
/// every wire type is longer (1 MiB of 20..=150-byte strings: 2.4 against 4.4 ns a field in a
/// probe). Mixed wire types would mispredict: the plain loop keeps to `fast_end`.
#[inline(always)]
fn len_field_end(bytes: &[u8], pos: usize) -> Option<usize> {
    wire::len_field_at(bytes, pos).map(|f| f.end)
}

/// Where the field at `pos` ends, if the fast path bounds it within `bytes` (fields it bounds
/// need no value, only their end).
#[inline(always)]
fn fast_end(bytes: &[u8], pos: usize) -> Option<usize> {
    wire::window(bytes, pos).and_then(|w| wire::fast_field(w, bytes.len() - pos)).map(|f| pos + f.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_come_out_whole() {
        // 1: group { 2: 1 }, 3: fixed32 7
        let msg = [0x0b, 0x10, 0x01, 0x0c, 0x1d, 7, 0, 0, 0];
        let all: std::vec::Vec<_> = fields(&msg).collect();
        assert_eq!(
            all,
            [
                Ok(Field {
                    number: 1,
                    offset: 0,
                    value_offset: 1,
                    end: 4,
                    value: Value::Group(&[0x10, 0x01])
                }),
                Ok(Field { number: 3, offset: 4, value_offset: 5, end: 9, value: Value::I32(7) }),
            ]
        );
    }

    /// Every tag and first two bytes after it, in messages of two to four bytes (where
    /// `short_field` takes the place of the reference path): the same field, or `None` where
    /// the reference reads something else (an error, a longer tag or varint, another wire type).
    #[test]
    #[cfg_attr(miri, ignore = "a million cases of safe code: run natively")]
    fn short_fields_are_the_reference_fields() {
        let mut taken = 0;
        for tag in 0..=255u8 {
            for first in 0..=255u8 {
                for second in [0x00, 0x61, 0x7f, 0x80, 0xff] {
                    for len in 2..=4usize {
                        let msg = &[tag, first, second, 0x62][..len];
                        if let Some(f) = short_field(msg, 0) {
                            assert_eq!(Ok(f), read_field(msg, 0, DEFAULT_DEPTH_LIMIT), "{msg:02x?}");
                            taken += 1;
                        }
                    }
                }
            }
        }
        // For each of the 15 one-byte field numbers: 128 one-byte varints in 5 x 3 messages,
        // 128 two-byte ones in 3 x 2 (a second byte below 0x80, three or four bytes), and
        // payloads of 0..=2 bytes in 5 x (1 + 2 + 3).
        assert_eq!(taken, 15 * (128 * 15 + 128 * 6 + 5 * 6));
        assert_eq!(short_field(&[0x08], 0), None);
    }

    #[test]
    fn errors_carry_offsets_and_end_iteration() {
        let mut it = fields(&[0x08, 0x01, 0x12, 0x05, 0x00]);
        assert!(it.next().unwrap().is_ok());
        assert_eq!(it.next(), Some(Err(Error::new(ErrorKind::Truncated, 3))));
        assert_eq!(it.next(), None);
        assert_eq!(validate(&[0x0c]), Err(Error::new(ErrorKind::GroupMismatch, 0)));
        assert_eq!(validate(&[0x08, 0x01, 0x0b, 0x08, 0x01]), Err(Error::new(ErrorKind::Truncated, 5)));
        assert_eq!(validate(&[0x0b, 0x14]), Err(Error::new(ErrorKind::GroupMismatch, 1)));
        assert_eq!(validate_with_depth_limit(&[0x0b, 0x0c], 0), Err(Error::new(ErrorKind::DepthLimit, 0)));
        assert_eq!(validate(&[0x08, 0x01, 0x0f]), Err(Error::new(ErrorKind::InvalidWireType, 2)));
    }
}
