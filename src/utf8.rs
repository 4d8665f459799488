//! UTF-8 validation for `string` fields.
//!
//! Protobuf strings are mostly short and mostly ASCII. [`from_utf8`] checks a string of 8 to
//! 32 bytes for ASCII with four overlapping 8-byte loads and one test, without a loop or a
//! branch on the length (shorter ones with one OR over their bytes; 33 to 64 bytes with eight
//! loads, out of line), and hands everything else (longer strings, and any string with a byte
//! above 0x7f) to `core::str::from_utf8`, or with the `simdutf8` feature to simdutf8's SIMD
//! validator where the CPU has one (AVX2, which the AVX-512 backend uses too, and NEON; chosen
//! at run time with the rest of the backend), with core's error for a string it refuses.
//! Either way its result, errors included, is `core::str::from_utf8`'s. The measurements
//! behind this choice are the `utf8` rows of the wall bench (`benches/results/`) and "UTF-8
//! validation" in `benches/results/HISTORY.md`: core's validator is slow on short strings and
//! very slow on text with non-ASCII characters, simdutf8's is faster from about 64 bytes and on
//! non-ASCII text of any length, and neither matches the word check on short ASCII strings.
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

/// Whether `bytes` is ASCII, for lengths 1..=64 (overlapping loads cover the whole string);
/// `false` for other lengths. (For a packed payload: whether every varint in it is one byte.)
#[inline(always)]
pub(crate) fn short_ascii(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n < 8 {
        return match bytes {
            [] => false,
            [a, rest @ ..] => rest.iter().fold(*a, |acc, &b| acc | b) < 0x80,
        };
    }
    if n > 32 {
        return medium_ascii(bytes);
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

/// Whether `bytes` is ASCII, for lengths 33..=64 (eight words, four from each end); `false`
/// for other lengths. Out of line: inline, it made the short check's callers slower (the
/// 100,000-record decoder 14.2 -> 20.0 ns/record). At 64 ASCII bytes `from_utf8` then takes
/// 3.0-3.3 ns a string against 4.8 through simdutf8's validator and 7.9 through core's; a
/// string of that length with a non-ASCII byte pays about 0.8 ns for the check (5.7 -> 6.5).
#[inline(never)]
fn medium_ascii(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if !(33..=64).contains(&n) {
        return false;
    }
    let any = word(bytes, 0)
        | word(bytes, 8)
        | word(bytes, 16)
        | word(bytes, 24)
        | word(bytes, n - 32)
        | word(bytes, n - 24)
        | word(bytes, n - 16)
        | word(bytes, n - 8);
    any & 0x8080_8080_8080_8080 == 0
}

/// `bytes` as a `&str` if it is UTF-8: exactly `core::str::from_utf8(bytes)`, faster for short
/// ASCII strings, and with the `simdutf8` feature for the rest on AVX2, AVX-512 and NEON.
#[inline]
pub fn from_utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if short_ascii(bytes) {
        // SAFETY: every byte is below 0x80, and ASCII is UTF-8.
        return Ok(unsafe { core::str::from_utf8_unchecked(bytes) });
    }
    // The backend's table only past the short check, which most strings pass.
    #[cfg(feature = "simdutf8")]
    {
        // SAFETY: `active` hands out only a table the CPU supports.
        unsafe { checked_by(crate::backend::active().validate_utf8, bytes) }
    }
    #[cfg(not(feature = "simdutf8"))]
    {
        core::str::from_utf8(bytes)
    }
}

/// [`from_utf8`] with `validate` (a backend's check) past the short ASCII check.
///
/// # Safety
/// `validate` must be a backend table's check for a backend this CPU supports.
#[inline]
pub(crate) unsafe fn from_utf8_with(
    validate: unsafe fn(&[u8]) -> bool,
    bytes: &[u8],
) -> Result<&str, Utf8Error> {
    if short_ascii(bytes) {
        // SAFETY: every byte is below 0x80, and ASCII is UTF-8.
        return Ok(unsafe { core::str::from_utf8_unchecked(bytes) });
    }
    // SAFETY: forwarded from the caller.
    unsafe { checked_by(validate, bytes) }
}

/// `bytes` as a `&str` if `validate` accepts them, else core's error for them: core's result
/// either way, since every table's check is an exact validator.
///
/// # Safety
/// As [`from_utf8_with`].
#[inline]
unsafe fn checked_by(validate: unsafe fn(&[u8]) -> bool, bytes: &[u8]) -> Result<&str, Utf8Error> {
    // SAFETY: the caller guarantees the CPU runs `validate`.
    if unsafe { validate(bytes) } {
        // SAFETY: `validate` accepted the bytes.
        return Ok(unsafe { core::str::from_utf8_unchecked(bytes) });
    }
    core::str::from_utf8(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_core_at_every_length_and_position() {
        let mut buf = [b'a'; 80];
        for n in 0..=80 {
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
