//! The field iterator (and `Fields::within` on payloads against the iterator alone),
//! `fields::validate` (through every backend), `wire::skip_field` and `stream::delimited` against
//! the reference parser (recursive, bounded by the depth limit): every field's number, offsets
//! and value (sub-slices by position), the first error's kind and offset, the iterator's
//! position afterwards. Inputs are generated messages (nested messages, groups balanced or not,
//! runs of start tags past the depth limits, invalid tags and lengths) or raw bytes, sometimes
//! repeated to over 600 bytes for the backends' field scans, with depth limits 0..=255.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::fields::{self, Value};
use pbwire::{backend, stream, wire, ErrorKind};
use pbwire_fuzz::{exact_copy, exact_out, gen, reference as r, Unstructured};

fn offset_in(buf: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - buf.as_ptr() as usize
}

fn convert(buf: &[u8], f: fields::Field) -> r::Field {
    let value = match f.value {
        Value::Varint(v) => r::Value::Varint(v),
        Value::I64(v) => r::Value::I64(v),
        Value::I32(v) => r::Value::I32(v),
        Value::Len(p) => r::Value::Len(offset_in(buf, p), offset_in(buf, p) + p.len()),
        Value::Group(p) => r::Value::Group(offset_in(buf, p), offset_in(buf, p) + p.len()),
    };
    r::Field { number: f.number, offset: f.offset, value_offset: f.value_offset, end: f.end, value }
}

/// The iterator and validate on `msg` with `limit`; recurses into length-delimited payloads
/// and groups `levels` more times (a constant bound, not the input's).
fn check_message(msg: &[u8], limit: u8, levels: u32) {
    let want = r::fields(msg, limit);
    let mut it = fields::Fields::with_depth_limit(msg, limit);
    let got: Vec<_> = it.by_ref().map(|f| f.map(|f| convert(msg, f))).collect();
    assert_eq!(got, want, "limit {limit} on {msg:02x?}");
    assert!(it.next().is_none(), "fused");
    // Position: the end on success, the failing field's offset after an error.
    match want.last() {
        Some(Err(_)) => {
            let failing_at = want.iter().rev().nth(1).map_or(0, |f| f.as_ref().unwrap().end);
            assert_eq!(it.position(), failing_at);
        }
        _ => assert_eq!(it.position(), msg.len()),
    }
    assert_eq!(it.remaining().len(), msg.len() - it.position());
    let first_error = want.iter().find_map(|f| f.as_ref().err().copied());
    assert_eq!(fields::validate_with_depth_limit(msg, limit), first_error.map_or(Ok(()), Err));
    // Every backend's field scan (a table of field lengths on AVX-512) changes nothing.
    for b in backend::available() {
        let k = backend::Kernel::new(b).unwrap();
        assert_eq!(k.validate(msg, limit), first_error.map_or(Ok(()), Err), "{b} limit {limit}");
    }
    if limit == wire::DEFAULT_DEPTH_LIMIT {
        assert_eq!(fields::validate(msg), first_error.map_or(Ok(()), Err));
        assert_eq!(fields::fields(msg).count(), want.len());
    }
    for e in want.iter().filter_map(|f| f.as_ref().err()) {
        assert!(e.offset() <= msg.len());
    }

    // skip_field at every field start, including the failing one.
    for f in &want {
        let at = match f {
            Ok(f) => f.offset,
            Err(_) => want.iter().rev().nth(1).map_or(0, |f| f.as_ref().unwrap().end),
        };
        check_skip(&msg[at..], limit);
    }

    if levels > 0 {
        for f in want.iter().flatten() {
            match f.value {
                r::Value::Len(s, e) => {
                    // The payload within this message, looking at what follows it: the same
                    // fields as alone.
                    let within = fields::Fields::within(&msg[s..e], msg);
                    assert!(within.eq(fields::fields(&msg[s..e])), "within at {s}..{e}");
                    check_message(&msg[s..e], limit, levels - 1)
                }
                // A group's content, with the limit it has inside (one level used).
                r::Value::Group(s, e) => check_message(&msg[s..e], limit.saturating_sub(1), levels - 1),
                _ => {}
            }
        }
    }
}

fn check_skip(at_tag: &[u8], limit: u8) {
    let Ok((field, wire_type, tl)) = r::tag(at_tag) else {
        assert!(wire::decode_tag(at_tag).is_err());
        return;
    };
    let (tag, n) = wire::decode_tag(at_tag).unwrap();
    assert_eq!((tag.field(), tag.wire_type() as u8, n), (field, wire_type, tl));
    let rest = &at_tag[tl..];
    let want = r::skip(field, wire_type, rest, limit);
    assert_eq!(wire::skip_field_with_depth_limit(tag, rest, limit), want, "skip limit {limit}");
    if let Err(e) = want {
        assert!(e.offset() <= rest.len());
    }
    assert_eq!(wire::skip_field(tag, rest), r::skip(field, wire_type, rest, wire::DEFAULT_DEPTH_LIMIT));
}

fn check_stream(buf: &[u8], out_size: usize) {
    let want = r::delimited(buf);
    let mut it = stream::delimited(buf);
    let got: Vec<_> =
        it.by_ref().map(|m| m.map(|m| (offset_in(buf, m), offset_in(buf, m) + m.len()))).collect();
    assert_eq!(got, want);
    match want.last() {
        Some(Err(e)) => {
            assert_eq!(it.position(), e.offset());
            assert_eq!(it.remaining(), &buf[e.offset()..]);
        }
        _ => assert_eq!(it.position(), buf.len()),
    }
    // write_delimited: re-framing the messages gives the canonical prefix each time.
    for (s, e) in want.iter().flatten() {
        let message = &buf[*s..*e];
        let framed_len = r::encode(message.len() as u64).len() + message.len();
        let mut out = exact_out::<u8>(out_size.min(framed_len + 1));
        match stream::write_delimited(message, &mut out) {
            Ok(n) => {
                assert_eq!(n, framed_len);
                assert_eq!(stream::delimited(&out[..n]).collect::<Vec<_>>(), [Ok(message)]);
            }
            Err(err) => {
                assert_eq!((err.kind(), err.offset()), (ErrorKind::OutputTooSmall, 0));
                assert!(out.len() < framed_len);
                assert!(out.iter().all(|&b| b == 0), "nothing written");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mode: u8 = u.arbitrary().unwrap_or(0);
    let limit_byte: u8 = u.arbitrary().unwrap_or(0);
    let out_size: u8 = u.arbitrary().unwrap_or(0);
    let limit = match limit_byte % 5 {
        0 | 1 => wire::DEFAULT_DEPTH_LIMIT,
        2 => 255,
        3 => limit_byte / 5 % 8,
        _ => limit_byte,
    };
    let reps: u8 = u.arbitrary().unwrap_or(0);
    let mut msg = if mode % 4 == 0 { u.take_rest().to_vec() } else { gen::message(&mut u, 0) };
    if mode & 0x30 == 0x30 && !msg.is_empty() {
        // Long messages (the same fields again and again), for the backends' field scans,
        // which only run from 512 bytes on; the last copy sometimes cut.
        let one = msg.clone();
        while msg.len() < 600 + 40 * reps as usize {
            msg.extend_from_slice(&one);
        }
        msg.truncate(msg.len() - (reps as usize % 3 == 0) as usize * (reps as usize % one.len()));
    }
    let msg = exact_copy(&msg);
    check_message(&msg, limit, if msg.len() > 4096 { 0 } else { 2 });
    check_stream(&msg, out_size as usize);
});
