//! Single varints: decode, encode, length, zigzag.
//!
//! These are the `#[inline]` paths a message parser calls once per field, so they never go
//! through runtime dispatch. Decoding reads the (up to) ten bytes of a varint as one 64-bit word
//! plus two bytes and finds the terminator with a trailing-zero count, so the cost does not
//! depend on a mispredicted branch per byte. Bulk decoding of packed arrays lives in
//! [`crate::packed`].
//!
//! Semantics (shared by every backend): a varint is at most 10 bytes; a continuation bit on the
//! 10th byte, or a 10th byte above 1, is [`ErrorKind::VarintOverflow`]; non-canonical padding
//! (`80 00` is 0) is accepted; the narrower types take the low bits of the 64-bit value, exactly
//! as Google's parsers do.
//!
//! ```
//! use pbwire::varint;
//! assert_eq!(varint::decode_u64(&[0x96, 0x01]), Ok((150, 2)));
//! // int32 -1 is written as a ten-byte sign-extended varint.
//! let minus_one = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
//! assert_eq!(varint::decode_i32(&minus_one), Ok((-1, 10)));
//! let mut buf = [0u8; varint::MAX_LEN];
//! let n = varint::encode_u64(300, &mut buf).unwrap();
//! assert_eq!(&buf[..n], &[0xac, 0x02]);
//! assert_eq!(varint::encoded_len(300), 2);
//! ```

use crate::error::{Error, ErrorKind, Result};

/// The longest a varint may be, in bytes.
pub const MAX_LEN: usize = 10;

/// The most bytes a varint of a 32-bit value takes (`uint32`, `sint32`; a negative `int32` is
/// sign-extended to 64 bits and takes [`MAX_LEN`]).
pub(crate) const MAX_LEN_32: usize = 5;

const CONTINUATION_BITS: u64 = 0x8080_8080_8080_8080;

/// Packs the low seven bits of each of the eight bytes of `word` into 56 contiguous bits.
///
/// (An additive form, each step adding a masked copy of the lower groups to itself and one
/// shift at the end, takes three instructions and three 64-bit constants fewer; on the Zen 4
/// machine it sped up message decoding 1-6% and slowed the `Reader::read_varint` loop (+1.6%,
/// +5% for a variant) and the scalar kernel (+3%) on mixed lengths, so it was dropped.)
#[inline(always)]
pub(crate) const fn compress_7bit_groups(word: u64) -> u64 {
    let x = word & 0x7f7f_7f7f_7f7f_7f7f;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
}

/// Decodes the varint at the start of `bytes`, which holds at least the ten bytes a varint can
/// span (bytes after the varint are ignored), as a `(value, length)` pair where length 0 means
/// overflow (see `decode_multi` for why a pair). Every length, one byte included, takes the
/// word path; the [`crate::reader::Reader`] calls it directly, checking the length against
/// its message itself.
///
/// Up to nine bytes: one word, a trailing-zero count for the terminator (64 when the word has
/// none, which is length 9), no branch on the length. Ten bytes, and overflow, take one branch
/// on one test. (Folding byte 9 in with masks as well was measured slower on `u32-mixed` data:
/// the longer dependency chain costs every value, the branch only the ten-byte ones. Taking
/// nine bytes by a branch too, as before, cost `u64-mixed` loops a misprediction on one value
/// in five instead of one in ten: 5.62 -> 4.53 ns/value without it.)
#[inline(always)]
pub(crate) fn decode_from_10(bytes: &[u8; MAX_LEN]) -> (u64, usize) {
    let mut low = [0u8; 8];
    low.copy_from_slice(&bytes[..8]);
    let word = u64::from_le_bytes(low);
    let stops = !word & CONTINUATION_BITS;
    let b8 = bytes[8];
    // Ten bytes or more: no terminator in the word and byte 8 continues. One test of one
    // value, so one branch, taken by one varint in ten of the `u64-mixed` distribution.
    if (stops | (!(b8 as u64) & 0x80)) == 0 {
        let b9 = bytes[9];
        if b9 > 1 {
            return (OVERFLOWED, 0);
        }
        return (compress_7bit_groups(word) | ((b8 & 0x7f) as u64) << 56 | (b9 as u64) << 63, 10);
    }
    // Up to nine bytes without a branch: with no terminator in the word, `stops - 1` wraps to
    // all ones (the whole word kept), the trailing-zero count is 64 (length 9), and byte 8
    // (below 0x80 here) fills bits 56..63.
    let keep = stops ^ stops.wrapping_sub(1);
    let len = (stops.trailing_zeros() as usize >> 3) + 1;
    let ninth = ((b8 as u64) << 56) & ((stops == 0) as u64).wrapping_neg();
    (compress_7bit_groups(word & keep) | ninth, len)
}

/// What a read keeps of a varint, and how the word path builds it from a varint of up to
/// eight bytes: the 64-bit value ([`Full`]), its low 32 bits for the 32-bit types ([`Low32`]),
/// or whether it is non-zero for `bool` ([`NonZero`]). The narrower two need fewer
/// instructions than assembling all 56 bits and then dropping some.
pub(crate) trait Width {
    /// The part of the value kept.
    type Value: Copy;
    /// Whether the reader's word path takes [`decode_from_10_short_first`] (a branch for nine
    /// and ten bytes) rather than [`decode_from_10`] (nine bytes without one): for the types
    /// whose values take one to five bytes, or ten (a negative `int32`), never nine in what
    /// encoders write.
    const SHORT_FIRST: bool;
    /// The part kept of a decoded 64-bit value.
    fn of_u64(value: u64) -> Self::Value;
    /// The part kept of the value of a varint of up to eight bytes, given as the little-endian
    /// word of its bytes with every byte after it cleared (continuation bits still set).
    fn of_word(varint: u64) -> Self::Value;
}

/// The whole 64-bit value.
pub(crate) struct Full;

impl Width for Full {
    type Value = u64;
    const SHORT_FIRST: bool = false;
    #[inline(always)]
    fn of_u64(value: u64) -> u64 {
        value
    }
    #[inline(always)]
    fn of_word(varint: u64) -> u64 {
        compress_7bit_groups(varint)
    }
}

/// The low 32 bits (`uint32`, `int32`, `sint32`): the groups of the first five bytes only,
/// gathered with 32-bit masks (immediates, where the 64-bit ones are six constants to load).
pub(crate) struct Low32;

impl Width for Low32 {
    type Value = u32;
    const SHORT_FIRST: bool = true;
    #[inline(always)]
    fn of_u64(value: u64) -> u32 {
        value as u32
    }
    #[inline(always)]
    fn of_word(varint: u64) -> u32 {
        let low = varint as u32;
        // Bytes 0-3's groups in pairs, 14 bits in each 16-bit half, then the two halves.
        let pairs = (low & 0x007f_007f) | ((low >> 1) & 0x3f80_3f80);
        let low28 = (pairs & 0x3fff) | ((pairs >> 2) & 0x0fff_c000);
        // Byte 4's low four bits are bits 28-31.
        low28 | ((varint >> 4) as u32 & 0xf000_0000)
    }
}

/// Whether the value is non-zero (`bool`): any group bit set, nothing gathered.
pub(crate) struct NonZero;

impl Width for NonZero {
    type Value = bool;
    const SHORT_FIRST: bool = true;
    #[inline(always)]
    fn of_u64(value: u64) -> bool {
        value != 0
    }
    #[inline(always)]
    fn of_word(varint: u64) -> bool {
        varint & !CONTINUATION_BITS != 0
    }
}

/// [`decode_from_10`] with the fewest instructions for varints of up to eight bytes: nine and
/// ten bytes take a branch after the word's. For the reader's reads within ten bytes of a
/// nested message's end, where every length, one byte included, takes the word path and
/// nothing loops on mixed lengths (on the 100,000-record message, 14.0 ns/record with this
/// form, 15.1 with `decode_from_10`'s), where fewer than ten bytes of the message remain; and
/// for the reader's 32-bit reads everywhere (`read_u32`, `read_i32`, `read_sint32`,
/// `read_bool`), whose values never take nine bytes. It returns `W`'s part of what
/// `decode_from_10` returns for every input, ten-byte varints included; length 0 is overflow
/// (the value then means nothing).
#[inline(always)]
pub(crate) fn decode_from_10_short_first<W: Width>(bytes: &[u8; MAX_LEN]) -> (W::Value, usize) {
    let mut low = [0u8; 8];
    low.copy_from_slice(&bytes[..8]);
    let word = u64::from_le_bytes(low);
    let stops = !word & CONTINUATION_BITS;
    if stops != 0 {
        // Bits up to and including the first terminator's (clear) top bit.
        let keep = stops ^ (stops - 1);
        let len = (stops.trailing_zeros() as usize >> 3) + 1;
        return (W::of_word(word & keep), len);
    }
    let low56 = compress_7bit_groups(word);
    let b8 = bytes[8];
    if b8 < 0x80 {
        return (W::of_u64(low56 | (b8 as u64) << 56), 9);
    }
    let b9 = bytes[9];
    if b9 > 1 {
        return (W::of_u64(OVERFLOWED), 0);
    }
    (W::of_u64(low56 | ((b8 & 0x7f) as u64) << 56 | (b9 as u64) << 63), 10)
}

/// The value half of a failed `(value, 0)` pair: which error it was.
const TRUNCATED: u64 = 0;
const OVERFLOWED: u64 = 1;

/// The error a failed `(value, 0)` pair stands for, at offset 0.
#[inline(always)]
fn pair_error(kind: u64) -> Error {
    Error::new(if kind == TRUNCATED { ErrorKind::Truncated } else { ErrorKind::VarintOverflow }, 0)
}

/// The path for fewer than ten readable bytes (the end of every message): byte at a time, at
/// most nine bytes, so no shift overflows and there is no tenth byte to check. A pair as
/// `decode_from_10` gives; length 0 is truncated.
#[inline(never)]
fn decode_short(buf: &[u8]) -> (u64, usize) {
    let mut value = 0u64;
    for (i, &b) in buf.iter().enumerate().take(MAX_LEN - 1) {
        value |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            return (value, i + 1);
        }
    }
    (TRUNCATED, 0)
}

/// Decodes a varint from the start of `buf`: the value and the number of bytes it took.
///
/// Errors: [`ErrorKind::Truncated`] if `buf` ends inside the varint (or is empty),
/// [`ErrorKind::VarintOverflow`] if it does not fit in 64 bits; both at offset 0.
///
/// A one-byte varint costs one load, one comparison and one branch, and while ten bytes remain
/// a longer one is one unaligned word load and a trailing-zero count read in place (no staging
/// copy). Fewer than ten bytes (the end of a message) go to an out-of-line byte loop.
///
/// Split in two so that message decoders stay small: this always-inlined part is the one-byte
/// check (a load, a comparison, a branch, as in prost), and every longer varint goes to
/// `decode_multi`, one out-of-line, branch-light word-at-a-time routine shared by every call
/// site. (Forcing the whole decoder inline made sequential loops faster but the 100,000-record
/// message decoder slower, 52 against 32 ns/record, from the code copied to each call site.)
#[inline(always)]
pub fn decode_u64(buf: &[u8]) -> Result<(u64, usize)> {
    if let Some(&b) = buf.first() {
        if b < 0x80 {
            return Ok((b as u64, 1));
        }
    }
    match decode_multi(buf) {
        (kind, 0) => Err(pair_error(kind)),
        (value, len) => Ok((value, len)),
    }
}

/// The multi-byte path of [`decode_u64`] (also correct for one-byte input): while ten bytes
/// remain, one unaligned word load and a trailing-zero count; otherwise the byte loop. An error
/// is length 0, with `TRUNCATED` or `OVERFLOWED` for the value, so that the pair comes back
/// in two registers and the caller builds the error without another call: a `Result` comes
/// back through memory, a store and a reload on a decode loop's chain from one varint's
/// position to the next. (The pieces return pairs too: converting a `Result` here was compiled
/// into the same store and reload inside this function.)
#[inline(never)]
fn decode_multi(buf: &[u8]) -> (u64, usize) {
    match buf.first_chunk::<MAX_LEN>() {
        Some(head) => decode_from_10(head),
        // Also the empty slice: the loop does not run, and the result is truncated.
        None => decode_short(buf),
    }
}

/// Decodes a varint from `ptr` without knowing where the input ends.
///
/// Returns what [`decode_u64`] returns for the same bytes; it never reads a byte past the ten a
/// varint can span, and reads bytes after the varint's end only within those ten.
///
/// # Safety
/// `ptr` must be valid for reads of [`MAX_LEN`] (10) bytes, even when the varint is shorter.
#[inline]
pub unsafe fn decode_u64_unchecked(ptr: *const u8) -> Result<(u64, usize)> {
    // SAFETY: the caller guarantees 10 readable bytes at `ptr`; `[u8; 10]` has alignment 1.
    let bytes = unsafe { &*(ptr as *const [u8; MAX_LEN]) };
    if bytes[0] < 0x80 {
        return Ok((bytes[0] as u64, 1));
    }
    match decode_from_10(bytes) {
        (kind, 0) => Err(pair_error(kind)),
        pair => Ok(pair),
    }
}

/// Decodes a `uint32` (the low 32 bits of the varint, as Google's parsers do).
#[inline]
pub fn decode_u32(buf: &[u8]) -> Result<(u32, usize)> {
    decode_u64(buf).map(|(v, n)| (v as u32, n))
}

/// Decodes an `int64`.
#[inline]
pub fn decode_i64(buf: &[u8]) -> Result<(i64, usize)> {
    decode_u64(buf).map(|(v, n)| (v as i64, n))
}

/// Decodes an `int32` or enum value: the low 32 bits, so the ten-byte sign-extended form of a
/// negative value gives that value.
#[inline]
pub fn decode_i32(buf: &[u8]) -> Result<(i32, usize)> {
    decode_u64(buf).map(|(v, n)| (v as i32, n))
}

/// Decodes a `sint64` (zigzag).
#[inline]
pub fn decode_sint64(buf: &[u8]) -> Result<(i64, usize)> {
    decode_u64(buf).map(|(v, n)| (zigzag_decode_64(v), n))
}

/// Decodes a `sint32` (zigzag of the low 32 bits).
#[inline]
pub fn decode_sint32(buf: &[u8]) -> Result<(i32, usize)> {
    decode_u64(buf).map(|(v, n)| (zigzag_decode_32(v as u32), n))
}

/// Decodes a `bool`: any non-zero varint is `true`.
#[inline]
pub fn decode_bool(buf: &[u8]) -> Result<(bool, usize)> {
    decode_u64(buf).map(|(v, n)| (v != 0, n))
}

/// The length of the varint at the start of `buf`, with the same errors as [`decode_u64`].
#[inline]
pub fn skip(buf: &[u8]) -> Result<usize> {
    decode_u64(buf).map(|(_, n)| n)
}

/// How many bytes the varint encoding of `value` takes (1..=10).
#[inline]
pub const fn encoded_len(value: u64) -> usize {
    // ceil(significant_bits / 7), with 0 taking one byte; `* 9 / 64` is `/ 7` for 1..=64 bits.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    (bits * 9 + 64) / 64
}

/// Writes the varint encoding of `value` into `out` and returns its length.
///
/// Error: [`ErrorKind::OutputTooSmall`] at offset 0 if `out` is shorter than
/// [`encoded_len`]`(value)`; nothing is written then.
#[inline]
pub fn encode_u64(value: u64, out: &mut [u8]) -> Result<usize> {
    if let Some(head) = out.get_mut(..MAX_LEN) {
        let mut bytes = [0u8; MAX_LEN];
        let len = encode_to_array(value, &mut bytes);
        head[..len].copy_from_slice(&bytes[..len]);
        return Ok(len);
    }
    let len = encoded_len(value);
    match out.get_mut(..len) {
        Some(dst) => {
            let mut bytes = [0u8; MAX_LEN];
            encode_to_array(value, &mut bytes);
            dst.copy_from_slice(&bytes[..len]);
            Ok(len)
        }
        None => Err(Error::new(ErrorKind::OutputTooSmall, 0)),
    }
}

/// Writes the varint encoding of `value` at the start of `out` and returns its length.
#[inline(always)]
pub(crate) fn encode_to_array(mut value: u64, out: &mut [u8; MAX_LEN]) -> usize {
    let mut i = 0;
    while value >= 0x80 {
        out[i] = value as u8 | 0x80;
        value >>= 7;
        i += 1;
    }
    out[i] = value as u8;
    i + 1
}

/// Spreads the low 56 bits of `value` into the low seven bits of each of eight bytes (the
/// inverse of `compress_7bit_groups`, a portable `pdep(value, 0x7f7f_7f7f_7f7f_7f7f)`).
#[inline(always)]
pub(crate) const fn spread_7bit_groups(value: u64) -> u64 {
    let x = value & 0x00ff_ffff_ffff_ffff;
    let x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x00ff_ffff_f000_0000) << 4);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
    (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1)
}

/// `[encoded length, continuation bits of the first eight bytes]` of a varint, indexed by the
/// leading-zero count of `value | 1`: the whole length computation of an encoder in one load.
const fn len_table() -> [(u8, u64); 64] {
    let mut t = [(0u8, 0u64); 64];
    let mut lz = 0usize;
    while lz < 64 {
        let bits = 64 - lz;
        let len = bits.div_ceil(7);
        let cont =
            if len >= 9 { CONTINUATION_BITS } else { CONTINUATION_BITS & ((1u64 << (8 * (len - 1))) - 1) };
        t[lz] = (len as u8, cont);
        lz += 1;
    }
    t
}

static LEN_TABLE: [(u8, u64); 64] = len_table();

/// The varint encoding of `value` as two little-endian words: bytes 0..8 and bytes 8..10 (the
/// second is zero unless `value >= 2^56`), and its length. Branch-free: a leading-zero count,
/// one table load, the 7-bit spread, and a few shifts for bytes 8 and 9.
#[inline(always)]
pub(crate) fn encode_words(value: u64) -> (u64, u64, usize) {
    encode_words_with(value, spread_7bit_groups)
}

/// [`encode_words`] with `spread` for the 7-bit groups of bytes 0..8 (as
/// [`spread_7bit_groups`]; a backend with a fast `PDEP` passes that).
#[inline(always)]
pub(crate) fn encode_words_with(value: u64, spread: impl FnOnce(u64) -> u64) -> (u64, u64, usize) {
    let (len, cont) = LEN_TABLE[(value | 1).leading_zeros() as usize & 63];
    let low = spread(value) | cont;
    // Byte 8: bits 56..63 as they are (bit 63 is its continuation bit); byte 9: bit 63 again.
    let high = value >> 56 | (value >> 63) << 8;
    (low, high, len as usize)
}

/// Writes a `uint32`.
#[inline]
pub fn encode_u32(value: u32, out: &mut [u8]) -> Result<usize> {
    encode_u64(value as u64, out)
}

/// Writes an `int64`.
#[inline]
pub fn encode_i64(value: i64, out: &mut [u8]) -> Result<usize> {
    encode_u64(value as u64, out)
}

/// Writes an `int32` or enum value; a negative value is sign-extended to ten bytes, as
/// protobuf requires.
#[inline]
pub fn encode_i32(value: i32, out: &mut [u8]) -> Result<usize> {
    encode_u64(value as i64 as u64, out)
}

/// Writes a `sint64` (zigzag).
#[inline]
pub fn encode_sint64(value: i64, out: &mut [u8]) -> Result<usize> {
    encode_u64(zigzag_encode_64(value), out)
}

/// Writes a `sint32` (zigzag).
#[inline]
pub fn encode_sint32(value: i32, out: &mut [u8]) -> Result<usize> {
    encode_u64(zigzag_encode_32(value) as u64, out)
}

/// Writes a `bool` (one byte, 0 or 1).
#[inline]
pub fn encode_bool(value: bool, out: &mut [u8]) -> Result<usize> {
    encode_u64(value as u64, out)
}

/// Zigzag-encodes a `sint32`: 0, -1, 1, -2 ... become 0, 1, 2, 3 ...
#[inline]
pub const fn zigzag_encode_32(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

/// Zigzag-encodes a `sint64`.
#[inline]
pub const fn zigzag_encode_64(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// Inverse of [`zigzag_encode_32`].
#[inline]
pub const fn zigzag_decode_32(value: u32) -> i32 {
    (value >> 1) as i32 ^ -((value & 1) as i32)
}

/// Inverse of [`zigzag_encode_64`].
#[inline]
pub const fn zigzag_decode_64(value: u64) -> i64 {
    (value >> 1) as i64 ^ -((value & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_len_is_the_encodings_length() {
        // Every count of significant bits, at both ends of its range.
        for bits in 0..=64u32 {
            let low = if bits == 0 { 0 } else { 1u64 << (bits - 1) };
            let high = if bits == 64 { u64::MAX } else { (1u64 << bits).wrapping_sub(1).max(low) };
            for v in [low, high] {
                assert_eq!(encoded_len(v), encode_to_array(v, &mut [0; MAX_LEN]), "{v:#x}");
            }
        }
    }

    /// Byte-at-a-time decoding, written for obviousness, to check the word-at-a-time one.
    fn decode_naive(buf: &[u8]) -> Result<(u64, usize)> {
        let mut value = 0u64;
        for i in 0..MAX_LEN {
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
        unreachable!("the tenth byte either ends the varint or overflows")
    }

    #[test]
    fn spec_vectors() {
        assert_eq!(decode_u64(&[0x01]), Ok((1, 1)));
        assert_eq!(decode_u64(&[0x96, 0x01]), Ok((150, 2)));
        assert_eq!(decode_u64(&[0x80, 0x00]), Ok((0, 2)));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(decode_u64(&max), Ok((u64::MAX, 10)));
        assert_eq!(decode_i32(&max), Ok((-1, 10)));
        assert_eq!(decode_sint32(&[0x03]), Ok((-2, 1)));
        assert_eq!(decode_bool(&[0x80, 0x01]), Ok((true, 2)));
    }

    #[test]
    fn overflow_and_truncation() {
        let mut ten = [0xffu8; 11];
        ten[9] = 0x02;
        assert_eq!(decode_u64(&ten).unwrap_err().kind(), ErrorKind::VarintOverflow);
        ten[9] = 0x80;
        assert_eq!(decode_u64(&ten).unwrap_err().kind(), ErrorKind::VarintOverflow);
        for n in 0..10 {
            assert_eq!(decode_u64(&[0xff; 10][..n]).unwrap_err().kind(), ErrorKind::Truncated);
        }
    }

    /// The word compress against a group-at-a-time one: words whose groups are all 0x7f or 0xff,
    /// each single group, and pseudo-random words.
    #[test]
    fn compress_7bit_groups_matches_group_at_a_time() {
        fn naive(word: u64) -> u64 {
            (0..8).map(|i| ((word >> (8 * i)) & 0x7f) << (7 * i)).fold(0, |a, g| a | g)
        }
        let mut words = std::vec![0, u64::MAX, 0x7f7f_7f7f_7f7f_7f7f, 0x8080_8080_8080_8080];
        for i in 0..8 {
            words.extend_from_slice(&[0x7f << (8 * i), 0xff << (8 * i), !(0xff << (8 * i))]);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            words.push(x ^ (x >> 29));
        }
        for w in words {
            assert_eq!(compress_7bit_groups(w), naive(w), "{w:#018x}");
        }
    }

    #[test]
    fn narrow_widths_match_the_full_value() {
        // Words as the word path hands them over: bytes up to the first terminator, the rest
        // cleared. Every length of one to eight bytes, group bits all set, none set, and random.
        let mut words = std::vec::Vec::new();
        for len in 1..=8 {
            let cont = CONTINUATION_BITS & ((1u128 << (8 * (len - 1))) - 1) as u64;
            let groups = !CONTINUATION_BITS & ((1u128 << (8 * len)) - 1) as u64;
            words.extend_from_slice(&[cont, cont | groups, cont | (groups & 0x0f0f_0f0f_0f0f_0f0f)]);
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let w = x ^ (x >> 31);
            let stops = !w & CONTINUATION_BITS;
            if stops != 0 {
                words.push(w & (stops ^ (stops - 1)));
            }
        }
        for w in words {
            let full = Full::of_word(w);
            assert_eq!(Low32::of_word(w), full as u32, "{w:#018x}");
            assert_eq!(NonZero::of_word(w), full != 0, "{w:#018x}");
        }
    }

    #[test]
    fn every_length_and_boundary_matches_naive() {
        let mut cases = std::vec::Vec::new();
        for shift in 0..64 {
            let v = 1u64 << shift;
            cases.extend_from_slice(&[v - 1, v, v + 1, !v, v.wrapping_neg()]);
        }
        for v in cases {
            let mut buf = [0u8; 16];
            let n = encode_u64(v, &mut buf).unwrap();
            assert_eq!(n, encoded_len(v));
            for end in 0..=16 {
                assert_eq!(decode_u64(&buf[..end]), decode_naive(&buf[..end]), "{v} {end}");
            }
            // SAFETY: `buf` has 16 readable bytes.
            assert_eq!(unsafe { decode_u64_unchecked(buf.as_ptr()) }, Ok((v, n)));
        }
    }

    /// Every buffer shorter than ten bytes (the out-of-line short path) against the naive
    /// decoder: all of length 0..=4 over bytes chosen around the continuation bit, and
    /// pseudo-random ones of length 5..=9, continuation-heavy so that long varints and
    /// truncation both occur.
    #[test]
    fn short_buffers_match_naive() {
        const BYTES: [u8; 6] = [0x00, 0x01, 0x7f, 0x80, 0x81, 0xff];
        for len in 0..=4u32 {
            for mut k in 0..BYTES.len().pow(len) {
                let mut buf = [0u8; 4];
                for b in buf.iter_mut().take(len as usize) {
                    *b = BYTES[k % BYTES.len()];
                    k /= BYTES.len();
                }
                let buf = &buf[..len as usize];
                assert_eq!(decode_u64(buf), decode_naive(buf), "{buf:02x?}");
            }
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 5..=9 {
            for _ in 0..20_000 {
                let mut buf = [0u8; 9];
                for b in buf.iter_mut() {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // A terminator one byte in eight.
                    *b = (seed as u8) | if seed >> 61 == 0 { 0 } else { 0x80 };
                }
                let buf = &buf[..len];
                assert_eq!(decode_u64(buf), decode_naive(buf), "{buf:02x?}");
            }
        }
    }

    #[test]
    fn short_encode_buffer() {
        let mut out = [0u8; 2];
        assert_eq!(encode_u64(300, &mut out), Ok(2));
        assert_eq!(encode_u64(1 << 14, &mut out).unwrap_err().kind(), ErrorKind::OutputTooSmall);
        assert_eq!(encode_i32(-1, &mut [0u8; 9]).unwrap_err().kind(), ErrorKind::OutputTooSmall);
    }

    #[test]
    fn zigzag() {
        for (v, z) in [(0i64, 0u64), (-1, 1), (1, 2), (-2, 3), (i64::MAX, u64::MAX - 1), (i64::MIN, u64::MAX)]
        {
            assert_eq!(zigzag_encode_64(v), z);
            assert_eq!(zigzag_decode_64(z), v);
        }
        assert_eq!(zigzag_encode_32(i32::MIN), u32::MAX);
        assert_eq!(zigzag_decode_32(u32::MAX), i32::MIN);
    }
}
