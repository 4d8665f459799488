//! UTF-8 validation for `string` fields.
//!
//! Protobuf strings are mostly short and mostly ASCII. [`from_utf8`] checks a string of 8 to
//! 32 bytes for ASCII with four overlapping 8-byte loads and one test, without a loop or a
//! branch on the length (shorter ones with one OR over their bytes), and hands everything else (longer strings, and any string with a byte
//! above 0x7f) to `core::str::from_utf8`, so its result, errors included, is always
//! `core::str::from_utf8`'s. The README's Benchmarks section has the measurements behind this
//! choice.
//!
//! ```
//! assert_eq!(pbwire::utf8::from_utf8(b"user_name"), Ok("user_name"));
//! assert_eq!(pbwire::utf8::from_utf8("größe".as_bytes()), Ok("größe"));
//! assert!(pbwire::utf8::from_utf8(&[b'a', 0xff]).is_err());
//! ```

use core::str::Utf8Error;

#[inline(always)]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Whether `bytes` is ASCII, for lengths 1..=32 (overlapping loads cover the whole string);
/// `false` for other lengths.
#[inline(always)]
fn short_ascii(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n < 8 {
        return match bytes {
            [] => false,
            [a, rest @ ..] => rest.iter().fold(*a, |acc, &b| acc | b) < 0x80,
        };
    }
    if n > 32 {
        return false;
    }
    // Four words cover 8..=32 bytes whatever the length, so the length costs no branch: for
    // n <= 16 the middle two repeat bytes the outer two already cover.
    // (The last offset written as `(n - 8).saturating_sub(8)`, not `n.saturating_sub(16)`,
    // lets the compiler see that the word fits: no bounds check.)
    let any = word(bytes, 0)
        | word(bytes, n - 8)
        | word(bytes, (n - 8).min(8))
        | word(bytes, (n - 8).saturating_sub(8));
    any & 0x8080_8080_8080_8080 == 0
}

/// `bytes` as a `&str` if it is UTF-8: exactly `core::str::from_utf8(bytes)`, faster for short
/// ASCII strings.
#[inline]
pub fn from_utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if short_ascii(bytes) {
        // SAFETY: every byte is below 0x80, and ASCII is UTF-8.
        return Ok(unsafe { core::str::from_utf8_unchecked(bytes) });
    }
    core::str::from_utf8(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_core_at_every_length_and_position() {
        let mut buf = [b'a'; 40];
        for n in 0..=40 {
            assert_eq!(from_utf8(&buf[..n]), core::str::from_utf8(&buf[..n]));
            for bad in 0..n {
                for b in [0x80u8, 0xc3, 0xff] {
                    buf[bad] = b;
                    assert_eq!(from_utf8(&buf[..n]), core::str::from_utf8(&buf[..n]), "{n} {bad} {b}");
                    buf[bad] = b'a';
                }
            }
        }
        let s = "aé€😀bcdefgh";
        assert_eq!(from_utf8(s.as_bytes()), Ok(s));
    }
}
