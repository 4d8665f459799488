//! Every single-value decode entry point (varint::decode_*, varint::skip, wire::decode_tag,
//! the fixed-width decoders, wire::decode_len) against the byte-at-a-time reference, on every
//! suffix of the input held in an exactly-sized heap buffer: same value, length, error kind and
//! offset. And each `Reader` call on a reader over that suffix against the single-value
//! functions it is defined by (`read_packed` against the reference packed decoder): same
//! result and position afterwards; a reader from `read_message` or `Reader::within` against a
//! reader over the same bytes alone; and every backend's UTF-8 check (simdutf8's where the CPU has one: the fuzz
//! build enables the feature) against core's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::backend::{self, Kernel};
use pbwire::reader::Reader;
use pbwire::{varint, wire, Error, ErrorKind};
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

/// One `Reader` call on a fresh reader over `buf`: its result and the position after it.
fn read(buf: &[u8], call: impl FnOnce(&mut Reader) -> Result<u64, Error>) -> (Result<u64, Error>, usize) {
    let mut r = Reader::new(buf);
    let got = call(&mut r);
    assert_eq!(r.remaining(), &buf[r.position()..]);
    (got, r.position())
}

/// What a call that reads `n` bytes or fails, as `r`, leaves: the result and the position.
fn step(r: Result<(u64, usize), Error>) -> (Result<u64, Error>, usize) {
    match r {
        Ok((v, n)) => (Ok(v), n),
        Err(e) => (Err(e), 0),
    }
}

fn check_reader(buf: &[u8]) {
    let varint = varint::decode_u64(buf);
    assert_eq!(read(buf, |r| r.read_u64()), step(varint));
    // The 32-bit reads take a word path of their own: `read_u64`'s result, converted.
    let narrow = |f: fn(u64) -> u64| step(varint.map(|(v, n)| (f(v), n)));
    assert_eq!(read(buf, |r| r.read_u32().map(u64::from)), narrow(|v| v as u32 as u64));
    assert_eq!(read(buf, |r| r.read_i32().map(|v| v as u32 as u64)), narrow(|v| v as u32 as u64));
    assert_eq!(
        read(buf, |r| r.read_sint32().map(|v| v as u32 as u64)),
        narrow(|v| varint::zigzag_decode_32(v as u32) as u32 as u64)
    );
    assert_eq!(read(buf, |r| r.read_bool().map(u64::from)), narrow(|v| (v != 0) as u64));
    let raw_tag = match varint {
        Ok((v, _)) if v > u32::MAX as u64 => Err(Error::new(ErrorKind::InvalidFieldNumber, 0)),
        r => r,
    };
    assert_eq!(read(buf, |r| r.read_raw_tag().map(u64::from)), step(raw_tag));
    if let Ok((raw, n)) = raw_tag {
        let skipped = match wire::Tag::from_raw(raw as u32) {
            Ok(tag) => wire::skip_field(tag, &buf[n..]).map(|m| (0, n + m)).map_err(|e| e.shifted(n)),
            Err(kind) => Err(Error::new(kind, 0)),
        };
        let got = read(buf, |r| {
            let raw = r.read_raw_tag()?;
            r.skip_raw(raw).map(|()| 0)
        });
        // A failed skip leaves the reader after the tag.
        let want = match step(skipped) {
            (Err(e), _) => (Err(e), n),
            ok => ok,
        };
        assert_eq!(got, want);
    }
    // read_tag_if: a match exactly when read_raw_tag reads that valid tag from its shortest
    // encoding, and then the same step; otherwise no step. The tag that is there (a run-time
    // value) and constants (the folded one-, two- and three-byte paths).
    let there = raw_tag.map_or(0x08, |(raw, _)| raw as u32);
    let if_tag = |raw: u32, got: (Result<u64, Error>, usize)| {
        let want = match raw_tag {
            Ok((v, n))
                if v == raw as u64 && wire::Tag::from_raw(raw).is_ok() && n == varint::encoded_len(v) =>
            {
                (Ok(1), n)
            }
            _ => (Ok(0), 0),
        };
        assert_eq!(got, want, "read_tag_if({raw:#x})");
    };
    if_tag(there, read(buf, |r| Ok(r.read_tag_if(there) as u64)));
    if_tag(0x08, read(buf, |r| Ok(r.read_tag_if(0x08) as u64)));
    if_tag(0x12, read(buf, |r| Ok(r.read_tag_if(0x12) as u64)));
    if_tag(0x07, read(buf, |r| Ok(r.read_tag_if(0x07) as u64)));
    if_tag(16 << 3 | 2, read(buf, |r| Ok(r.read_tag_if(16 << 3 | 2) as u64)));
    if_tag(2048 << 3, read(buf, |r| Ok(r.read_tag_if(2048 << 3) as u64)));
    let len = wire::decode_len(buf).map(|(p, n)| (p.len() as u64, n));
    assert_eq!(read(buf, |r| r.read_bytes().map(|p| p.len() as u64)), step(len));
    let str_len = wire::decode_len(buf).and_then(|(p, n)| match core::str::from_utf8(p) {
        Ok(s) => Ok((s.len() as u64, n)),
        Err(_) => Err(Error::new(ErrorKind::InvalidUtf8, 0)),
    });
    assert_eq!(read(buf, |r| r.read_str().map(|s| s.len() as u64)), step(str_len));
    // read_packed: the payload's values (a count and a sum here), its errors at the payload's
    // start plus their offset, no step on any error. Capacity 3, so that some payloads overflow.
    let packed = r::len(buf).and_then(|(start, end)| match r::packed(&buf[start..end], 3) {
        (values, None) => {
            Ok((values.len() as u64 ^ values.iter().fold(0, |a: u64, &v| a.wrapping_add(v)), end))
        }
        (_, Some(e)) => Err(e.shifted(start)),
    });
    let got = read(buf, |r| {
        let mut out = [0u64; 3];
        let n = r.read_packed(|p| pbwire::packed::decode_u64(p, &mut out))?;
        Ok(n as u64 ^ out[..n].iter().fold(0, |a: u64, &v| a.wrapping_add(v)))
    });
    assert_eq!(got, step(packed));
    assert_eq!(
        read(buf, |r| r.read_fixed32().map(u64::from)),
        step(wire::decode_fixed32(buf).map(|v| (v as u64, 4)))
    );
    assert_eq!(read(buf, |r| r.read_fixed64()), step(wire::decode_fixed64(buf).map(|v| (v, 8))));
    let tag = wire::decode_tag(buf);
    assert_eq!(
        read(buf, |r| r.read_tag().map(|t| u64::from(t.raw()))),
        step(tag.map(|(t, n)| (u64::from(t.raw()), n)))
    );
    let field = tag.and_then(|(t, n)| {
        wire::skip_field(t, &buf[n..]).map(|m| (u64::from(t.raw()), n + m)).map_err(|e| e.shifted(n))
    });
    assert_eq!(read(buf, |r| r.skip_next().map(|t| u64::from(t.raw()))), step(field));
}

/// One `Reader` call chosen by `op`, as a comparable value.
fn call(r: &mut Reader, op: u8) -> Result<u64, Error> {
    match op % 8 {
        0 => r.read_u64(),
        1 => r.read_raw_tag().map(u64::from),
        2 => r.read_bytes().map(|p| p.len() as u64),
        3 => r.read_str().map(|s| s.len() as u64),
        4 => r.read_fixed32().map(u64::from),
        5 => r.skip_next().map(|t| u64::from(t.raw())),
        6 => r.read_message().map(|m| m.remaining().len() as u64),
        _ => r.read_i32().map(|v| v as u64),
    }
}

/// A reader from `read_message`, and one from `Reader::within`, over `data[..cut]` (which may
/// read the bytes after it) against a reader over an exact copy of those bytes alone: the same
/// results and positions, call for call, for every cut; the calls are chosen by the data's own
/// bytes.
fn check_nested(data: &[u8]) {
    for cut in 0..=data.len() {
        let mut outer_bytes = vec![0x0a];
        let mut prefix = [0u8; 10];
        let n = varint::encode_u64(cut as u64, &mut prefix).unwrap();
        outer_bytes.extend_from_slice(&prefix[..n]);
        outer_bytes.extend_from_slice(data);
        let (outer_buf, plain_buf) = (exact_copy(&outer_bytes), exact_copy(&data[..cut]));
        let mut outer = Reader::new(&outer_buf);
        assert_eq!(outer.read_raw_tag(), Ok(0x0a));
        let mut nested = outer.read_message().unwrap();
        assert_eq!(outer.remaining(), &data[cut..]);
        let mut plain = Reader::new(&plain_buf);
        // `Reader::within`, over the same bytes in the outer buffer, likewise.
        let start = outer_buf.len() - data.len();
        let mut within = Reader::within(&outer_buf[start..start + cut], &outer_buf);
        for &op in data.iter().rev().take(16) {
            let want = call(&mut plain, op);
            assert_eq!(call(&mut nested, op), want, "cut {cut} op {op}");
            assert_eq!(nested.remaining(), plain.remaining());
            assert_eq!(call(&mut within, op), want, "within: cut {cut} op {op}");
            assert_eq!(within.remaining(), plain.remaining());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let data = &data[..data.len().min(256)];
    let buf = exact_copy(data);
    // Every suffix ends at the end of the allocation.
    for start in 0..=buf.len() {
        check(&buf[start..]);
        check_reader(&buf[start..]);
        let want = core::str::from_utf8(&buf[start..]);
        for b in backend::available() {
            assert_eq!(Kernel::new(b).unwrap().from_utf8(&buf[start..]), want, "{b}");
        }
    }
    check_nested(&data[..data.len().min(64)]);
});
