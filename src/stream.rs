//! Streams of length-prefixed messages: a varint length before each message, as Java's
//! `writeDelimitedTo`, C++'s `SerializeDelimitedToOstream` and many log pipelines write them.
//!
//! ```
//! use pbwire::stream;
//! let mut buf = [0u8; 16];
//! let mut n = stream::write_delimited(&[0x08, 0x01], &mut buf).unwrap();
//! n += stream::write_delimited(&[], &mut buf[n..]).unwrap();
//! let messages: Result<Vec<&[u8]>, _> = stream::delimited(&buf[..n]).collect();
//! assert_eq!(messages.unwrap(), [&[0x08, 0x01][..], &[][..]]);
//! ```

use crate::arch::PREFETCH_AHEAD;
use crate::error::{Error, ErrorKind, Result};
use crate::{varint, wire};

/// An iterator over the messages of a length-prefixed stream; see [`delimited`].
#[derive(Clone, Debug)]
pub struct Delimited<'a> {
    /// The bytes not yet iterated over (a step is a re-slice, no offset to add to a base).
    rest: &'a [u8],
    /// The stream's length (positions are `len - rest.len()`).
    len: usize,
    /// How many one-byte length prefixes in a row the last messages had, up to [`SMALL_RUN`].
    small_run: u8,
    /// How many two-byte length prefixes in a row the last messages had, up to [`SMALL_RUN`];
    /// in such a run, `SMALL_RUN + 1` after a message under 256 bytes.
    wide_run: u8,
    failed: bool,
    /// Whether to prefetch far ahead after long messages too (`arch::far_prefetch_is_harmless`,
    /// asked once a stream rather than once a message).
    far_after_long: bool,
}

/// After this many messages under 128 bytes in a row, [`Delimited`] expects another: a stream
/// of small messages takes one comparison a message, on a branch that then predicts. Likewise
/// for messages of 128 bytes to 16 KiB (two-byte prefixes).
const SMALL_RUN: u8 = 8;

/// Iterates over the messages of `stream`, each preceded by its length as a varint.
///
/// Each item is a message (borrowed from `stream`) or the first error, after which the iterator
/// ends: [`ErrorKind::Truncated`] when the stream ends inside a length prefix or a message (so a
/// reader can wait for more bytes), [`ErrorKind::VarintOverflow`] or
/// [`ErrorKind::LengthOutOfBounds`] for a prefix that is no valid length; offsets point at the
/// length prefix, relative to `stream`. The messages themselves are not looked into; to read
/// one, [`crate::reader::Reader::within`]`(message, stream)` gives a reader whose last fields
/// take the fast paths (it may look at the stream's bytes after the message).
#[inline]
pub fn delimited(stream: &[u8]) -> Delimited<'_> {
    Delimited {
        rest: stream,
        len: stream.len(),
        small_run: 0,
        wide_run: 0,
        failed: false,
        far_after_long: crate::arch::far_prefetch_is_harmless(),
    }
}

impl<'a> Delimited<'a> {
    /// The offset of the next length prefix; after an error, of the one that failed.
    #[inline]
    pub const fn position(&self) -> usize {
        self.len - self.rest.len()
    }

    /// The bytes not yet iterated over: after a `Truncated` error, the incomplete tail to keep
    /// until more of the stream arrives.
    #[inline]
    pub fn remaining(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a> Iterator for Delimited<'a> {
    type Item = Result<&'a [u8]>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest;
        if self.failed || rest.is_empty() {
            return None;
        }
        // In a run of small messages: a one-byte prefix is one comparison, and the line
        // `PREFETCH_AHEAD` bytes on is fetched (with messages under 128 bytes, nearly every
        // line holds a prefix to be read soon): 100,000 messages of 20..=100 bytes took 2.2 ns
        // a message against 4.0 without (Sapphire Rapids, 512 bytes on; prost 4.2).
        if self.small_run >= SMALL_RUN {
            crate::arch::prefetch(rest.as_ptr().wrapping_add(PREFETCH_AHEAD));
            if let [b0, after @ ..] = rest {
                let n = *b0 as usize;
                if n < 0x80 && n <= after.len() {
                    let (message, next) = after.split_at(n);
                    self.rest = next;
                    return Some(Ok(message));
                }
            }
            self.small_run = 0;
        }
        // The prefix a few messages on is in a line the hardware has not fetched yet: fetching
        // 512 bytes ahead (now `PREFETCH_AHEAD`) halved the time a message where they are
        // 50..=300 bytes long. On AMD (Zen 4) always, at an address that waits on nothing
        // (3.45 ns a 50..=300-byte message, against 3.74 with the address chosen after the
        // prefix is read, and 5.26 for Intel's choice below). On Intel (Sapphire Rapids) that
        // far after a long message is inside a message body, and fetching those lines took
        // messages of 200..=1000 bytes 22.1 ns against 8.1 (the hardware then streams every
        // body line in): there, after a message of 256 bytes or more, nothing is fetched
        // (`arch::prefetch_after`; fetching the next prefix's line there, the line read next
        // anyway, took 5% longer a message than fetching nothing).
        let far_always = self.far_after_long;
        if far_always {
            crate::arch::prefetch(rest.as_ptr().wrapping_add(PREFETCH_AHEAD));
        }
        // In a run of messages of 128 bytes to 16 KiB: a two-byte prefix is one comparison, and
        // the next prefix's address two loads, a shift and two adds from this one's. The
        // branchless path below puts about four cycles more on that chain, which is what a
        // stream of long messages waits on (Sapphire Rapids, 20,000 messages of 200..=1000
        // bytes: 0.90x prost's time without this path, 0.97x with it).
        if self.wide_run >= SMALL_RUN {
            if let [b0, b1, after @ ..] = rest {
                if *b0 >= 0x80 && *b1 < 0x80 {
                    let n = *b0 as usize + ((*b1 as usize) << 7) - 0x80;
                    if !far_always {
                        // Far only after two short messages in a row (`wide_run` is one more
                        // than `SMALL_RUN` after a short one): after a short one among long ones,
                        // `PREFETCH_AHEAD` bytes on is most likely a long body (200..=1000
                        // bytes: 0.96x -> 1.03x prost; 128..=255 bytes unchanged).
                        let both_short = n < 256 && self.wide_run > SMALL_RUN;
                        crate::arch::prefetch_after(rest.as_ptr(), if both_short { n } else { 256 });
                    }
                    if n <= after.len() {
                        let (message, next) = after.split_at(n);
                        self.rest = next;
                        self.wide_run = SMALL_RUN + (n < 256) as u8;
                        return Some(Ok(message));
                    }
                }
            }
            self.wide_run = 0;
        }
        // Outside such runs, a prefix of one or two bytes, no branch between the two: streams
        // that mix messages under and over 128 bytes mispredict a branch on the prefix's
        // length. One comparison for both, one bounds check.
        if let [b0, b1, ..] = *rest {
            if b0 & b1 < 0x80 {
                let one = (b0 < 0x80) as usize;
                let n = (b0 & 0x7f) as usize | ((b1 as usize) << 7 & one.wrapping_sub(1));
                let prefix = 2 - one;
                if !far_always {
                    crate::arch::prefetch_after(rest.as_ptr(), n);
                }
                if let Some(message) = rest.get(prefix..prefix + n) {
                    self.rest = &rest[prefix + n..];
                    self.small_run = (self.small_run + 1) * one as u8;
                    self.wide_run = (self.wide_run + 1) * (1 - one as u8);
                    return Some(Ok(message));
                }
            }
        }
        match wire::decode_len(rest) {
            Ok((message, n)) => {
                self.rest = &rest[n..];
                Some(Ok(message))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.shifted(Delimited::position(self))))
            }
        }
    }
}

impl core::iter::FusedIterator for Delimited<'_> {}

/// Writes `message` with its length prefix into `out`; returns the bytes written.
///
/// Errors: [`ErrorKind::LengthOutOfBounds`] for a message over `i32::MAX` bytes,
/// [`ErrorKind::OutputTooSmall`] if it does not fit (nothing is written then); both at offset 0.
pub fn write_delimited(message: &[u8], out: &mut [u8]) -> Result<usize> {
    if message.len() > i32::MAX as usize {
        return Err(Error::new(ErrorKind::LengthOutOfBounds, 0));
    }
    let prefix = varint::encoded_len(message.len() as u64);
    let Some(dst) = out.get_mut(..prefix + message.len()) else {
        return Err(Error::new(ErrorKind::OutputTooSmall, 0));
    };
    varint::encode_u64(message.len() as u64, dst)?;
    dst[prefix..].copy_from_slice(message);
    Ok(prefix + message.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_point_at_the_prefix() {
        let mut it = delimited(&[0x01, 0xaa, 0x03, 0xbb]);
        assert_eq!(it.next(), Some(Ok(&[0xaa][..])));
        assert_eq!(it.next(), Some(Err(Error::new(ErrorKind::Truncated, 2))));
        assert_eq!(it.remaining(), &[0x03, 0xbb]);
        assert_eq!(it.next(), None);
        assert_eq!(write_delimited(&[1, 2], &mut [0u8; 2]), Err(Error::new(ErrorKind::OutputTooSmall, 0)));
    }

    /// After a run of two-byte prefixes, three-byte ones whose second byte is 0x80 (an overlong
    /// 5, and 16,384) leave the run's one-comparison path for the general one.
    #[test]
    fn three_byte_prefixes_end_a_run_of_two_byte_ones() {
        let (body, five, big) = ([0x11u8; 200], [0x22u8; 5], [0x33u8; 16384]);
        let mut buf = [0u8; 21_000];
        let mut n = 0;
        let run = |buf: &mut [u8], n: &mut usize| {
            for _ in 0..10 {
                *n += write_delimited(&body, &mut buf[*n..]).unwrap();
            }
        };
        run(&mut buf, &mut n);
        buf[n..n + 3].copy_from_slice(&[0x85, 0x80, 0x00]);
        buf[n + 3..n + 8].copy_from_slice(&five);
        n += 8;
        run(&mut buf, &mut n);
        n += write_delimited(&big, &mut buf[n..]).unwrap();
        assert_eq!(buf[n - big.len() - 3..n - big.len()], [0x80, 0x80, 0x01]);
        let mut it = delimited(&buf[..n]);
        let mut want = [&body[..]; 22];
        (want[10], want[21]) = (&five[..], &big[..]);
        for w in want {
            assert_eq!(it.next(), Some(Ok(w)));
        }
        assert_eq!(it.next(), None);
    }
}
