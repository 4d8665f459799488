//! Every single-value decode entry point (varint::decode_*, varint::skip, wire::decode_tag,
//! the fixed-width decoders, wire::decode_len) against the byte-at-a-time reference, on every
//! suffix of the input held in an exactly-sized heap buffer: same value, length, error kind and
//! offset.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::{varint, wire};
use pbwire_fuzz::{exact_copy, reference as r};

fn check(buf: &[u8]) {
    let want = r::varint(buf);
    assert_eq!(varint::decode_u64(buf), want);
    assert_eq!(varint::decode_u32(buf), want.map(|(v, n)| (v as u32, n)));
    assert_eq!(varint::decode_i64(buf), want.map(|(v, n)| (v as i64, n)));
    assert_eq!(varint::decode_i32(buf), want.map(|(v, n)| (v as u32 as i32, n)));
    assert_eq!(varint::decode_sint64(buf), want.map(|(v, n)| (r::zigzag64(v), n)));
    assert_eq!(varint::decode_sint32(buf), want.map(|(v, n)| (r::zigzag32(v as u32), n)));
    assert_eq!(varint::decode_bool(buf), want.map(|(v, n)| (v != 0, n)));
    assert_eq!(varint::skip(buf), want.map(|(_, n)| n));

    let tag = wire::decode_tag(buf).map(|(t, n)| (t.field(), t.wire_type() as u8, n));
    assert_eq!(tag, r::tag(buf));
    if let Ok((t, n)) = wire::decode_tag(buf) {
        assert!(t.encoded_len() <= n);
        assert_eq!(wire::Tag::new(t.field(), t.wire_type()), Some(t));
    }

    let f4 = r::fixed(buf, 4);
    let f8 = r::fixed(buf, 8);
    assert_eq!(wire::decode_fixed32(buf), f4.map(|v| v as u32));
    assert_eq!(wire::decode_sfixed32(buf), f4.map(|v| v as u32 as i32));
    assert_eq!(wire::decode_float(buf).map(f32::to_bits), f4.map(|v| v as u32));
    assert_eq!(wire::decode_fixed64(buf), f8);
    assert_eq!(wire::decode_sfixed64(buf), f8.map(|v| v as i64));
    assert_eq!(wire::decode_double(buf).map(f64::to_bits), f8);

    let len = wire::decode_len(buf).map(|(p, n)| (p.as_ptr() as usize - buf.as_ptr() as usize, p.len(), n));
    assert_eq!(len, r::len(buf).map(|(start, end)| (start, end - start, end)));
}

fuzz_target!(|data: &[u8]| {
    let data = &data[..data.len().min(256)];
    let buf = exact_copy(data);
    // Every suffix ends at the end of the allocation.
    for start in 0..=buf.len() {
        check(&buf[start..]);
    }
});
