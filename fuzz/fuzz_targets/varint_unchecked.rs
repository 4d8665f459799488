//! `varint::decode_u64_unchecked` with exactly the ten readable bytes its contract promises:
//! the bytes live at the very end of a heap allocation, so AddressSanitizer reports any read
//! past them. Same result as `decode_u64` and the reference on those ten bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::varint;
use pbwire_fuzz::{exact_copy, reference as r};

fuzz_target!(|data: &[u8]| {
    let data = &data[..data.len().min(64)];
    // Ten bytes at least: pad a short input with continuation bytes and a final terminator
    // choice taken from its first byte.
    let mut bytes = data.to_vec();
    let fill = if data.first().is_some_and(|b| b & 1 == 1) { 0xff } else { 0x80 };
    while bytes.len() < varint::MAX_LEN {
        bytes.push(fill);
    }
    let buf = exact_copy(&bytes);
    // Every start that leaves exactly ten or more bytes; the last has exactly ten.
    for start in 0..=buf.len() - varint::MAX_LEN {
        let window = &buf[start..];
        // SAFETY: `window` has at least 10 readable bytes.
        let got = unsafe { varint::decode_u64_unchecked(window.as_ptr()) };
        assert_eq!(got, r::varint(&window[..varint::MAX_LEN]), "at {start}");
        assert_eq!(got, varint::decode_u64(window));
    }
    // A varint in an allocation of exactly 10 bytes, alone.
    let ten = exact_copy(&buf[buf.len() - varint::MAX_LEN..]);
    // SAFETY: `ten` has exactly 10 readable bytes.
    let got = unsafe { varint::decode_u64_unchecked(ten.as_ptr()) };
    assert_eq!(got, r::varint(&ten));
});
