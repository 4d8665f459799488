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

use crate::error::{Error, ErrorKind, Result};
use crate::{varint, wire};

/// An iterator over the messages of a length-prefixed stream; see [`delimited`].
#[derive(Clone, Debug)]
pub struct Delimited<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

/// Iterates over the messages of `stream`, each preceded by its length as a varint.
///
/// Each item is a message (borrowed from `stream`) or the first error, after which the iterator
/// ends: [`ErrorKind::Truncated`] when the stream ends inside a length prefix or a message (so a
/// reader can wait for more bytes), [`ErrorKind::VarintOverflow`] or
/// [`ErrorKind::LengthOutOfBounds`] for a prefix that is no valid length; offsets point at the
/// length prefix, relative to `stream`. The messages themselves are not looked into.
#[inline]
pub fn delimited(stream: &[u8]) -> Delimited<'_> {
    Delimited { buf: stream, pos: 0, failed: false }
}

impl<'a> Delimited<'a> {
    /// The offset of the next length prefix; after an error, of the one that failed.
    #[inline]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not yet iterated over: after a `Truncated` error, the incomplete tail to keep
    /// until more of the stream arrives.
    #[inline]
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }
}

impl<'a> Iterator for Delimited<'a> {
    type Item = Result<&'a [u8]>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let rest = &self.buf[self.pos..];
        // A one-byte length prefix (messages under 128 bytes): one comparison, one bounds check.
        if let Some(&n) = rest.first() {
            if n < 0x80 {
                if let Some(message) = rest.get(1..1 + n as usize) {
                    self.pos += 1 + n as usize;
                    return Some(Ok(message));
                }
            }
        }
        match wire::decode_len(rest) {
            Ok((message, n)) => {
                self.pos += n;
                Some(Ok(message))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.shifted(self.pos)))
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
}
