//! Tags, wire types, fixed-width values, length-delimited values, and skipping whole fields.
//!
//! ```
//! use pbwire::wire::{self, Tag, WireType};
//! // field 1, varint; then the varint 150
//! let msg = [0x08, 0x96, 0x01];
//! let (tag, n) = wire::decode_tag(&msg).unwrap();
//! assert_eq!(tag, Tag::new(1, WireType::Varint).unwrap());
//! assert_eq!(wire::skip_field(tag, &msg[n..]), Ok(2));
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::varint;

/// The largest valid field number, 2^29 - 1.
pub const MAX_FIELD_NUMBER: u32 = (1 << 29) - 1;

/// How deep groups may nest unless the caller says otherwise (Google's parsers use 100 too).
pub const DEFAULT_DEPTH_LIMIT: u8 = 100;

/// The six wire types protobuf defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum WireType {
    /// A varint (`int32`, `int64`, `uint32`, `uint64`, `sint32`, `sint64`, `bool`, `enum`).
    Varint = 0,
    /// Eight little-endian bytes (`fixed64`, `sfixed64`, `double`).
    I64 = 1,
    /// A varint length, then that many bytes (strings, bytes, messages, packed arrays).
    Len = 2,
    /// The start of a group (proto2, deprecated but still on the wire).
    StartGroup = 3,
    /// The end of a group.
    EndGroup = 4,
    /// Four little-endian bytes (`fixed32`, `sfixed32`, `float`).
    I32 = 5,
}

impl WireType {
    /// The wire type with number `value`, if it is one of 0..=5.
    #[inline]
    pub const fn from_u8(value: u8) -> Option<WireType> {
        Some(match value {
            0 => WireType::Varint,
            1 => WireType::I64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::I32,
            _ => return None,
        })
    }
}

/// A field number and wire type: the key in front of every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tag {
    field: u32,
    wire_type: WireType,
}

impl Tag {
    /// The tag for `field` with `wire_type`, or `None` if `field` is outside
    /// 1..=[`MAX_FIELD_NUMBER`].
    #[inline]
    pub const fn new(field: u32, wire_type: WireType) -> Option<Tag> {
        if field == 0 || field > MAX_FIELD_NUMBER {
            return None;
        }
        Some(Tag { field, wire_type })
    }

    /// Splits a raw tag value (`field << 3 | wire_type`), checking both parts.
    #[inline]
    pub const fn from_raw(raw: u32) -> Result<Tag, ErrorKind> {
        let field = raw >> 3;
        if field == 0 {
            return Err(ErrorKind::InvalidFieldNumber);
        }
        match WireType::from_u8((raw & 7) as u8) {
            Some(wire_type) => Ok(Tag { field, wire_type }),
            None => Err(ErrorKind::InvalidWireType),
        }
    }

    /// The tag of a raw value that [`fast_field`] accepted (field number at least 1, wire type
    /// 0, 1, 2 or 5), without checking it again: the scan loops' chain is this short.
    #[inline(always)]
    pub(crate) const fn from_fast_raw(raw: u32) -> Tag {
        debug_assert!(raw >= 8 && matches!(raw & 7, 0 | 1 | 2 | 5));
        let wire_type = match raw & 7 {
            0 => WireType::Varint,
            1 => WireType::I64,
            2 => WireType::Len,
            _ => WireType::I32,
        };
        Tag { field: raw >> 3, wire_type }
    }

    /// The field number, 1..=[`MAX_FIELD_NUMBER`].
    #[inline]
    pub const fn field(self) -> u32 {
        self.field
    }

    /// The wire type.
    #[inline]
    pub const fn wire_type(self) -> WireType {
        self.wire_type
    }

    /// The raw tag value, `field << 3 | wire_type`.
    #[inline]
    pub const fn raw(self) -> u32 {
        self.field << 3 | self.wire_type as u32
    }

    /// How many bytes the tag takes on the wire (1..=5).
    #[inline]
    pub const fn encoded_len(self) -> usize {
        varint::encoded_len(self.raw() as u64)
    }
}

/// Decodes the tag at the start of `buf`: the tag and its length in bytes.
///
/// Errors, all at offset 0: those of [`varint::decode_u64`]; [`ErrorKind::InvalidFieldNumber`]
/// for field 0 or a tag that does not fit in 32 bits; [`ErrorKind::InvalidWireType`] for wire
/// types 6 and 7 (the field number is checked first). Padded tags (`88 00`) are accepted.
#[inline]
pub fn decode_tag(buf: &[u8]) -> Result<(Tag, usize)> {
    // One- and two-byte tags (fields 1..=2047) are nearly all tags; take them without the
    // general varint decoder.
    let (raw, len) = match buf {
        [b0, ..] if *b0 < 0x80 => (*b0 as u64, 1),
        [b0, b1, ..] if *b1 < 0x80 => ((*b0 & 0x7f) as u64 | (*b1 as u64) << 7, 2),
        _ => varint::decode_u64(buf)?,
    };
    if raw > u32::MAX as u64 {
        return Err(Error::new(ErrorKind::InvalidFieldNumber, 0));
    }
    match Tag::from_raw(raw as u32) {
        Ok(tag) => Ok((tag, len)),
        Err(kind) => Err(Error::new(kind, 0)),
    }
}

/// Writes `tag` into `out` and returns its length; [`ErrorKind::OutputTooSmall`] at offset 0 if
/// it does not fit.
#[inline]
pub fn encode_tag(tag: Tag, out: &mut [u8]) -> Result<usize> {
    varint::encode_u64(tag.raw() as u64, out)
}

#[inline]
fn read_array<const N: usize>(buf: &[u8]) -> Result<[u8; N]> {
    match buf.get(..N) {
        Some(bytes) => {
            let mut array = [0u8; N];
            array.copy_from_slice(bytes);
            Ok(array)
        }
        None => Err(Error::new(ErrorKind::Truncated, 0)),
    }
}

/// Reads a `fixed32` (four little-endian bytes); [`ErrorKind::Truncated`] if fewer remain.
#[inline]
pub fn decode_fixed32(buf: &[u8]) -> Result<u32> {
    read_array(buf).map(u32::from_le_bytes)
}

/// Reads a `fixed64` (eight little-endian bytes).
#[inline]
pub fn decode_fixed64(buf: &[u8]) -> Result<u64> {
    read_array(buf).map(u64::from_le_bytes)
}

/// Reads an `sfixed32`.
#[inline]
pub fn decode_sfixed32(buf: &[u8]) -> Result<i32> {
    read_array(buf).map(i32::from_le_bytes)
}

/// Reads an `sfixed64`.
#[inline]
pub fn decode_sfixed64(buf: &[u8]) -> Result<i64> {
    read_array(buf).map(i64::from_le_bytes)
}

/// Reads a `float`; every bit pattern (NaN payloads included) comes back unchanged.
#[inline]
pub fn decode_float(buf: &[u8]) -> Result<f32> {
    read_array(buf).map(f32::from_le_bytes)
}

/// Reads a `double`.
#[inline]
pub fn decode_double(buf: &[u8]) -> Result<f64> {
    read_array(buf).map(f64::from_le_bytes)
}

/// Reads a length-delimited value: a varint length, then the payload. Returns the payload and
/// the number of bytes consumed (prefix and payload).
///
/// Errors, at offset 0 (the length prefix): the varint's errors;
/// [`ErrorKind::LengthOutOfBounds`] for a length above `i32::MAX`; [`ErrorKind::Truncated`]
/// for a length past the end of `buf`.
///
/// ```
/// let (payload, n) = pbwire::wire::decode_len(&[0x03, b'a', b'b', b'c', 0x99]).unwrap();
/// assert_eq!((payload, n), (&b"abc"[..], 4));
/// ```
#[inline]
pub fn decode_len(buf: &[u8]) -> Result<(&[u8], usize)> {
    let (len, prefix) = varint::decode_u64(buf)?;
    if len > i32::MAX as u64 {
        return Err(Error::new(ErrorKind::LengthOutOfBounds, 0));
    }
    let end = prefix + len as usize;
    match buf.get(prefix..end) {
        Some(payload) => Ok((payload, end)),
        None => Err(Error::new(ErrorKind::Truncated, 0)),
    }
}

/// Skips the value of a field whose tag has just been read: `buf` starts right after the tag.
/// Returns how many bytes of `buf` the value takes; for a start-group tag, that is everything
/// up to and including the matching end-group tag.
///
/// Errors are relative to `buf`: those of the value's decoder; for groups also those of every
/// tag inside, [`ErrorKind::GroupMismatch`] for an end-group tag of another field,
/// [`ErrorKind::DepthLimit`] past [`DEFAULT_DEPTH_LIMIT`] levels, and
/// [`ErrorKind::Truncated`] at `buf.len()` (where the missing end-group tag would be) if the
/// input ends before the group does. An
/// end-group `tag` itself cannot be skipped: [`ErrorKind::GroupMismatch`] at offset 0.
#[inline]
pub fn skip_field(tag: Tag, buf: &[u8]) -> Result<usize> {
    skip_field_with_depth_limit(tag, buf, DEFAULT_DEPTH_LIMIT)
}

/// [`skip_field`] with groups allowed to nest `depth_limit` levels deep (a group at the top
/// level is depth 1, so 0 allows no group).
#[inline]
pub fn skip_field_with_depth_limit(tag: Tag, buf: &[u8], depth_limit: u8) -> Result<usize> {
    match fast_skip(tag.wire_type, buf) {
        Some(n) => {
            // A loop of `decode_tag` and `skip_field` chains each field's position to the
            // last one's length, as the field scans' runs do, and waits on L2 the same way
            // where fields span lines: the same prefetch, with no run count to keep (1 MiB of
            // 20..=150-byte strings on Sapphire Rapids: 7.0 -> 5.8 ns a field, 12 MiB of
            // 200..=1000-byte ones 31 -> 25, the mixed message 5.77 -> 5.70).
            crate::arch::prefetch_after(buf.as_ptr(), n);
            Ok(n)
        }
        None => skip_field_reference(tag, buf, depth_limit),
    }
}

/// The reference path of [`skip_field_with_depth_limit`]: every wire type and error, out of
/// line so that the fast path inlines into the caller.
#[inline(never)]
fn skip_field_reference(tag: Tag, buf: &[u8], depth_limit: u8) -> Result<usize> {
    match tag.wire_type {
        WireType::Varint => varint::skip(buf),
        WireType::I64 => fixed_len(buf, 8),
        WireType::Len => decode_len(buf).map(|(_, n)| n),
        WireType::I32 => fixed_len(buf, 4),
        WireType::StartGroup => {
            if depth_limit == 0 {
                // The start tag is just before `buf`; offset 0 is as close as `buf` gets.
                return Err(Error::new(ErrorKind::DepthLimit, 0));
            }
            skip_group(tag.field, buf, depth_limit).map(|group| group.end)
        }
        WireType::EndGroup => Err(Error::new(ErrorKind::GroupMismatch, 0)),
    }
}

#[inline]
fn fixed_len(buf: &[u8], n: usize) -> Result<usize> {
    if buf.len() >= n {
        Ok(n)
    } else {
        Err(Error::new(ErrorKind::Truncated, 0))
    }
}

/// Where one field lies, found by [`fast_field`]: all offsets relative to the field's tag.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastField {
    /// The raw tag, `field << 3 | wire type` (wire type 0, 1, 2 or 5; field number non-zero).
    pub raw: u32,
    /// The tag's length (1 or 2).
    pub tag_len: usize,
    /// Where the value starts: after the tag, and for `Len` after the length prefix too.
    pub value_start: usize,
    /// One past the field's last byte.
    pub end: usize,
}

const STOPS: u64 = 0x8080_8080_8080_8080;

/// The little-endian word of `window` at byte `at` (a constant after inlining: one load).
#[inline(always)]
fn word_at(window: &[u8; 16], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&window[at..at + 8]);
    u64::from_le_bytes(bytes)
}

/// The little-endian 16-bit value of `window` at byte `at`.
#[inline(always)]
fn u16_at(window: &[u8; 16], at: usize) -> u64 {
    u16::from_le_bytes([window[at], window[at + 1]]) as u64
}

/// A value's extent, read by [`value_extent`].
#[derive(Clone, Copy)]
struct Extent {
    /// The value's bytes after its first one (its first byte is always there).
    rest: usize,
    /// A `Len` value's prefix length minus one (0 or 1 when not `bad`).
    prefix_rest: usize,
    /// The value is not one the fast path takes: a refused wire type, a varint of ten bytes
    /// whose last is above 1, a length prefix of more than two bytes.
    bad: bool,
}

/// For each wire type, the first varint stop index (the varint's or prefix's length minus
/// one, 0..=8) from which the fast path refuses the value: 2 for a `Len` prefix (longer than
/// two bytes), 0 for the types it never takes (3, 4, 6, 7), never (255) for the others.
const STOP_LIMITS: u64 = u64::from_le_bytes([255, 255, 2, 0, 0, 255, 0, 0]);

/// The extent of a value of wire type `wt` (0..=7) starting at byte `t` of `window`, with
/// every candidate computed from loads at constant offsets of the window and picked with
/// conditional moves, so that none waits for another and nothing branches on the wire type.
/// A caller loops over fields with this, so the instructions per field are what it costs:
/// the checks share one varint stop index and fold into one flag.
#[inline(always)]
fn value_extent(window: &[u8; 16], t: usize, wt: usize) -> Extent {
    let word = word_at(window, t);
    let tail = u16_at(window, t + 8);
    // The first byte without a continuation bit: in the first eight bytes one trailing-zero
    // count (8 when there is none); then a ninth byte with a continuation bit makes it a
    // ten-byte varint, valid only if the tenth byte is 0 or 1.
    let stops = !word & STOPS;
    let k = (stops.trailing_zeros() >> 3) as usize;
    let ten = (stops == 0) & (tail & 0x80 != 0);
    // A one- or two-byte length prefix's value (a longer prefix is refused by the limit).
    let two = (word >> 7) & 1;
    let payload = ((word & 0x7f) | ((word >> 1) & 0x3f80 & two.wrapping_neg())) as usize;
    // Fixed types: 7 more bytes for wire type 1, 3 for wire type 5; varint and `Len`: the
    // stop index (for `Len` the prefix's bytes after its first), plus the payload.
    let fixed = 7 ^ (wt & 4);
    let base = if wt & 1 == 1 { fixed } else { k + ten as usize };
    let limit = ((STOP_LIMITS >> (8 * wt)) & 0xff) as usize;
    Extent {
        rest: base + when(wt == 2, payload),
        prefix_rest: two as usize,
        // The ten-byte check is exact for varints; for a fixed value that happens to look
        // like one it only sends the field to the reference path.
        bad: (k >= limit) | (ten & (tail >> 8 > 1)),
    }
}

/// The length of a valid varint, fixed-width or length-delimited (prefix of 1 or 2 bytes)
/// value at the start of `buf` when at least 16 bytes remain, selected without a branch per
/// wire type (as in [`fast_field`]); `None` for everything else (groups, errors, the last 16
/// bytes), which the reference path then handles.
#[inline(always)]
fn fast_skip(wire_type: WireType, buf: &[u8]) -> Option<usize> {
    let window = window(buf, 0)?;
    let v = value_extent(window, 0, wire_type as usize);
    let n = 1 + v.rest;
    if v.bad | (n > buf.len()) {
        None
    } else {
        Some(n)
    }
}

/// Finds the extent of the field whose tag starts `window`, branch-free, for the common case:
/// a 1- or 2-byte tag of wire type 0, 1, 2 or 5 with a non-zero field number; a varint value
/// of at most ten bytes that is valid; a length prefix of 1 or 2 bytes. `remaining` is the
/// number of input bytes from the tag on (at least 16); a field that would end past them is
/// left to the reference path too. Everything else (and every error) is `None`: the caller then
/// takes the reference path, which gives the exact result and error.
///
/// The loop over fields is bound by the chain from one field's position to the next, so that
/// chain is kept short: the value is read for both tag lengths at once from loads at constant
/// offsets (no load waits for the tag's length), the varint's length is one trailing-zero count
/// over one word, and the wire type and tag length pick among the candidates with conditional
/// moves. All the conditions for the fast path fold into one predictable branch, off the chain.
#[inline(always)]
pub(crate) fn fast_field(window: &[u8; 16], remaining: usize) -> Option<FastField> {
    // The tag's length is the one branch: it is the same for most fields of a message (1 for
    // fields 1..=15, 2 for 16..=2047), so it predicts well, and knowing it lets every load of
    // the value be at a constant offset.
    if window[0] < 0x80 {
        fast_field_after::<1>(window, remaining)
    } else {
        fast_field_after::<2>(window, remaining)
    }
}

/// [`fast_field`] for a tag of `T` bytes (1 or 2; byte 0's continuation bit says which).
#[inline(always)]
fn fast_field_after<const T: usize>(window: &[u8; 16], remaining: usize) -> Option<FastField> {
    let (raw, long_tag) = if T == 1 {
        (window[0] as u32, false)
    } else {
        let w = u16_at(window, 0) as u32;
        ((w & 0x7f) | ((w >> 1) & 0x3f80), w & 0x8000 != 0)
    };
    let wt = (raw & 7) as usize;
    let v = value_extent(window, T, wt);
    let end = T + 1 + v.rest;
    let value_start = T + when(wt == 2, 1 + v.prefix_rest);
    if long_tag | (raw < 8) | v.bad | (end > remaining) {
        return None;
    }
    Some(FastField { raw, tag_len: T, value_start, end })
}

/// The value of the varint of `len` bytes (1..=10, checked by [`fast_field`]) that starts at
/// byte `start` (1 or 2) of `window`: masks, no branch on the length.
#[inline(always)]
pub(crate) fn varint_in_window(window: &[u8; 16], start: usize, len: usize) -> u64 {
    let (word, tail) = if start == 2 {
        (word_at(window, 2), u16_at(window, 10))
    } else {
        (word_at(window, 1), u16_at(window, 9))
    };
    // The varint's bytes among the first eight (`len.min(8)` is 1..=8, so the shift is 0..=56).
    let keep = u64::MAX >> (64 - 8 * len.clamp(1, 8));
    let low = varint::compress_7bit_groups(word & keep);
    let b8 = when(len > 8, (tail & 0x7f) as usize) as u64;
    let b9 = when(len > 9, ((tail >> 8) & 1) as usize) as u64;
    low | b8 << 56 | b9 << 63
}

/// `value` where `flag`, else 0: a mask, not a branch.
#[inline(always)]
fn when(flag: bool, value: usize) -> usize {
    value & (flag as usize).wrapping_neg()
}

/// The 16 bytes at `pos`, if that many remain.
#[inline(always)]
pub(crate) fn window(buf: &[u8], pos: usize) -> Option<&[u8; 16]> {
    buf.get(pos..pos.checked_add(16)?).and_then(|w| w.try_into().ok())
}

/// `buf` from `message`'s first byte to its end, if `message` lies within `buf`; else
/// `message`. Either way a slice that starts where `message` does and is at least as long (the
/// window of [`crate::reader::Reader::within`] and [`crate::fields::Fields::within`]).
#[inline]
pub(crate) fn window_after<'a>(message: &'a [u8], buf: &'a [u8]) -> &'a [u8] {
    // The message's offset in `buf`, if it lies there (addresses compared, never used as
    // pointers: the window is a slice of `buf`, starting at the message's first byte).
    let start = (message.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
    match buf.get(start..) {
        Some(after) if after.len() >= message.len() => after,
        _ => message,
    }
}

/// A length-delimited field found by [`len_field_at`]: offsets in the buffer it was given.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LenField {
    /// The field number (non-zero, below 2048).
    pub number: u32,
    /// Where the payload starts.
    pub value_start: usize,
    /// One past the payload's last byte.
    pub end: usize,
}

/// The length-delimited field at `pos` in `buf`, if its tag and length prefix take one or two
/// bytes each, 16 bytes are there to look at and the payload ends within `buf`; `None` for
/// anything else (the caller's other paths then read it). Taken by branches, for runs of such
/// fields, where they predict (a message of strings or nested messages): its chain from one
/// field to the next is a load and an add, where the branch-free [`fast_field`]'s runs
/// through every wire type's candidate.
#[inline(always)]
pub(crate) fn len_field_at(buf: &[u8], pos: usize) -> Option<LenField> {
    let w = window(buf, pos)?;
    let (tag_len, number) = if w[0] < 0x80 {
        (1, (w[0] >> 3) as u32)
    } else if w[1] < 0x80 {
        (2, ((w[0] & 0x7f) as u32 | (w[1] as u32) << 7) >> 3)
    } else {
        return None;
    };
    if w[0] & 7 != 2 || number == 0 {
        return None;
    }
    let (p0, p1) = (w[tag_len] as usize, w[tag_len + 1] as usize);
    let (value_start, len) = if p0 < 0x80 {
        (pos + tag_len + 1, p0)
    } else if p1 < 0x80 {
        (pos + tag_len + 2, (p0 & 0x7f) | p1 << 7)
    } else {
        return None;
    };
    let end = value_start + len;
    (end <= buf.len()).then_some(LenField { number, value_start, end })
}

/// Where a group ends, relative to the bytes after its start tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupEnd {
    /// Length of the content (before the end-group tag).
    pub content_len: usize,
    /// Length of content plus end-group tag.
    pub end: usize,
}

/// Finds the end-group tag that closes the group `field` whose content starts `buf`, checking
/// every field inside. Loops rather than recursing, keeping the open groups' field numbers in a
/// fixed stack, so hostile nesting costs no stack beyond this frame. The group being skipped is
/// at depth 1 and `depth_limit >= 1`.
#[inline(never)]
pub(crate) fn skip_group(field: u32, buf: &[u8], depth_limit: u8) -> Result<GroupEnd> {
    let mut open = [0u32; u8::MAX as usize];
    open[0] = field;
    let mut depth = 1usize;
    let mut pos = 0usize;
    loop {
        let rest = &buf[pos..];
        if rest.is_empty() {
            // The input ended with the group (or an inner one) still open: the missing
            // end-group tag would start here.
            return Err(Error::new(ErrorKind::Truncated, pos));
        }
        let (tag, tag_len) = decode_tag(rest).map_err(|e| e.shifted(pos))?;
        let value = &rest[tag_len..];
        match tag.wire_type {
            WireType::StartGroup => {
                if depth == depth_limit as usize {
                    return Err(Error::new(ErrorKind::DepthLimit, pos));
                }
                open[depth] = tag.field;
                depth += 1;
                pos += tag_len;
            }
            WireType::EndGroup => {
                depth -= 1;
                if open[depth] != tag.field {
                    return Err(Error::new(ErrorKind::GroupMismatch, pos));
                }
                if depth == 0 {
                    return Ok(GroupEnd { content_len: pos, end: pos + tag_len });
                }
                pos += tag_len;
            }
            WireType::Varint => pos += tag_len + varint::skip(value).map_err(|e| e.shifted(pos + tag_len))?,
            WireType::I64 => pos += tag_len + fixed_len(value, 8).map_err(|e| e.shifted(pos + tag_len))?,
            WireType::I32 => pos += tag_len + fixed_len(value, 4).map_err(|e| e.shifted(pos + tag_len))?,
            WireType::Len => pos += tag_len + decode_len(value).map_err(|e| e.shifted(pos + tag_len))?.1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        assert_eq!(decode_tag(&[0x08]), Ok((Tag::new(1, WireType::Varint).unwrap(), 1)));
        assert_eq!(decode_tag(&[0x88, 0x00]), Ok((Tag::new(1, WireType::Varint).unwrap(), 2)));
        let max = Tag::new(MAX_FIELD_NUMBER, WireType::I32).unwrap();
        let mut buf = [0u8; 5];
        assert_eq!(encode_tag(max, &mut buf), Ok(5));
        assert_eq!(decode_tag(&buf), Ok((max, 5)));
        assert_eq!(decode_tag(&[0x00]).unwrap_err().kind(), ErrorKind::InvalidFieldNumber);
        assert_eq!(decode_tag(&[0x0e]).unwrap_err().kind(), ErrorKind::InvalidWireType);
        assert_eq!(decode_tag(&[0x0f]).unwrap_err().kind(), ErrorKind::InvalidWireType);
        // 2^32 does not fit a tag.
        assert_eq!(
            decode_tag(&[0x80, 0x80, 0x80, 0x80, 0x10]).unwrap_err().kind(),
            ErrorKind::InvalidFieldNumber
        );
        assert_eq!(Tag::new(0, WireType::Len), None);
        assert_eq!(Tag::new(MAX_FIELD_NUMBER + 1, WireType::Len), None);
    }

    #[test]
    fn lengths() {
        assert_eq!(decode_len(&[0x02, 1]).unwrap_err(), Error::new(ErrorKind::Truncated, 0));
        // 2^31 is above i32::MAX whatever the input size.
        let big = [0x80, 0x80, 0x80, 0x80, 0x08];
        assert_eq!(decode_len(&big).unwrap_err().kind(), ErrorKind::LengthOutOfBounds);
    }

    #[test]
    fn groups() {
        let start = Tag::new(1, WireType::StartGroup).unwrap();
        // { 2: 5, group 3 { } } end 1
        let buf = [0x10, 0x05, 0x1b, 0x1c, 0x0c, 0xff];
        assert_eq!(skip_field(start, &buf), Ok(5));
        assert_eq!(skip_group(1, &buf, 100), Ok(GroupEnd { content_len: 4, end: 5 }));
        // end group for field 2 inside group 1
        assert_eq!(skip_field(start, &[0x14]), Err(Error::new(ErrorKind::GroupMismatch, 0)));
        assert_eq!(skip_field(start, &[0x10, 0x05]), Err(Error::new(ErrorKind::Truncated, 2)));
        assert_eq!(skip_field_with_depth_limit(start, &buf, 1), Err(Error::new(ErrorKind::DepthLimit, 2)));
        assert_eq!(skip_field_with_depth_limit(start, &buf, 0), Err(Error::new(ErrorKind::DepthLimit, 0)));
        let end = Tag::new(1, WireType::EndGroup).unwrap();
        assert_eq!(skip_field(end, &buf).unwrap_err().kind(), ErrorKind::GroupMismatch);
    }

    #[test]
    fn deep_groups_hit_the_limit_not_the_stack() {
        let mut buf = [0x0bu8; 4096]; // start group 1, over and over
        buf[4095] = 0x0c;
        let start = Tag::new(1, WireType::StartGroup).unwrap();
        assert_eq!(skip_field(start, &buf), Err(Error::new(ErrorKind::DepthLimit, 99)));
        assert_eq!(
            skip_field_with_depth_limit(start, &buf, 255),
            Err(Error::new(ErrorKind::DepthLimit, 254))
        );
    }
}
