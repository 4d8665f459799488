//! Bulk packed decode of every element type on every backend `backend::available()` offers
//! (through `Kernel`; on x86-64 also the AVX2 table for CPUs with a slow PEXT), plus the
//! dispatched `packed::*` and `extend_*` entry points, against element-by-element reference
//! decoding and against `Backend::Scalar`: same count, values, error kind and offset. Payloads
//! and outputs are exactly-sized heap allocations, so a SIMD load or store past either is an
//! AddressSanitizer report. The output size comes from the fuzzer (exactly full, one short,
//! one spare, or anything).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::backend::{Backend, Kernel};
use pbwire::{packed, Error, Result};
use pbwire_fuzz::{exact_copy, exact_out, gen, kernels, reference as r, Unstructured};

/// Runs `decode` on every backend with an exact output of `capacity` and checks it against the
/// reference result `want` (values already mapped to `T`) and against the scalar backend.
fn every_backend<T: Copy + Default + PartialEq + core::fmt::Debug>(
    name: &str,
    payload: &[u8],
    capacity: usize,
    want: &(Vec<T>, Option<Error>),
    decode: impl Fn(&Kernel, &[u8], &mut [T]) -> Result<usize>,
) {
    let expected: Result<usize> = match want.1 {
        Some(e) => Err(e),
        None => Ok(want.0.len()),
    };
    let mut scalar_out = exact_out::<T>(capacity);
    let scalar = decode(&Kernel::new(Backend::Scalar).unwrap(), payload, &mut scalar_out);
    for (b, k) in kernels() {
        let mut out = exact_out::<T>(capacity);
        let got = decode(&k, payload, &mut out);
        assert_eq!(got, expected, "{name} on {b}, capacity {capacity}, payload {payload:02x?}");
        assert_eq!(got, scalar, "{name} on {b} vs scalar");
        if let Ok(n) = got {
            assert_eq!(&out[..n], &want.0[..], "{name} values on {b}");
            assert_eq!(&out[..n], &scalar_out[..n], "{name} values on {b} vs scalar");
        }
    }
}

/// One dispatched entry point (`packed::*`: the detected backend from one window up, its own
/// short paths below: the reference, a widening loop for one-byte varints, the backend from its
/// `short_mixed` length) against the reference result `want`.
fn dispatched<T: Copy + Default + PartialEq + core::fmt::Debug>(
    name: &str,
    payload: &[u8],
    capacity: usize,
    want: &(Vec<T>, Option<Error>),
    decode: impl Fn(&[u8], &mut [T]) -> Result<usize>,
) {
    let expected: Result<usize> = match want.1 {
        Some(e) => Err(e),
        None => Ok(want.0.len()),
    };
    let mut out = exact_out::<T>(capacity);
    let got = decode(payload, &mut out);
    assert_eq!(got, expected, "{name}, capacity {capacity}, payload {payload:02x?}");
    if let Ok(n) = got {
        assert_eq!(&out[..n], &want.0[..], "{name} values");
    }
}

fn mapped<T>(want: &(Vec<u64>, Option<Error>), f: impl Fn(u64) -> T) -> (Vec<T>, Option<Error>) {
    (want.0.iter().map(|&v| f(v)).collect(), want.1)
}

fn check_varints(payload: &[u8], capacity: usize) {
    let want = r::packed(payload, capacity);
    every_backend("u64", payload, capacity, &want, |k, p, o| k.decode_u64(p, o));
    every_backend("u32", payload, capacity, &mapped(&want, |v| v as u32), |k, p, o| k.decode_u32(p, o));
    every_backend("i64", payload, capacity, &mapped(&want, |v| v as i64), |k, p, o| k.decode_i64(p, o));
    every_backend("i32", payload, capacity, &mapped(&want, |v| v as u32 as i32), |k, p, o| {
        k.decode_i32(p, o)
    });
    let zz64 = mapped(&want, r::zigzag64);
    every_backend("sint64", payload, capacity, &zz64, |k, p, o| k.decode_sint64(p, o));
    let zz32 = mapped(&want, |v| r::zigzag32(v as u32));
    every_backend("sint32", payload, capacity, &zz32, |k, p, o| k.decode_sint32(p, o));
    every_backend("bool", payload, capacity, &mapped(&want, |v| v != 0), |k, p, o| k.decode_bool(p, o));

    // The dispatched entry points, every type (each has its own widening loop for short
    // payloads of one-byte varints).
    dispatched("packed::decode_u64", payload, capacity, &want, packed::decode_u64);
    dispatched("packed::decode_u32", payload, capacity, &mapped(&want, |v| v as u32), packed::decode_u32);
    dispatched("packed::decode_i64", payload, capacity, &mapped(&want, |v| v as i64), packed::decode_i64);
    dispatched(
        "packed::decode_i32",
        payload,
        capacity,
        &mapped(&want, |v| v as u32 as i32),
        packed::decode_i32,
    );
    dispatched("packed::decode_sint64", payload, capacity, &zz64, packed::decode_sint64);
    dispatched("packed::decode_sint32", payload, capacity, &zz32, packed::decode_sint32);
    dispatched("packed::decode_bool", payload, capacity, &mapped(&want, |v| v != 0), packed::decode_bool);

    // The unchecked entry points, with exactly `UNCHECKED_SLOP` bytes after the payload in its
    // allocation (the payload's bytes again, then continuation bytes): a read past the slop is
    // an AddressSanitizer report, and the slop must not change a result.
    let slop = (0..packed::UNCHECKED_SLOP).map(|i| payload.get(i).copied().unwrap_or(0x80));
    let slopped = exact_copy(&payload.iter().copied().chain(slop).collect::<Vec<u8>>());
    let (p, len) = (slopped.as_ptr(), payload.len());
    // SAFETY (all below): `p` has `len + UNCHECKED_SLOP` initialised bytes.
    every_backend("u64 unchecked", payload, capacity, &want, |k, _, o| unsafe {
        k.decode_u64_unchecked(p, len, o)
    });
    let want32 = mapped(&want, |v| v as u32);
    every_backend("u32 unchecked", payload, capacity, &want32, |k, _, o| unsafe {
        k.decode_u32_unchecked(p, len, o)
    });
    every_backend("sint64 unchecked", payload, capacity, &zz64, |k, _, o| unsafe {
        k.decode_sint64_unchecked(p, len, o)
    });
    every_backend("sint32 unchecked", payload, capacity, &zz32, |k, _, o| unsafe {
        k.decode_sint32_unchecked(p, len, o)
    });
    let bools = mapped(&want, |v| v != 0);
    every_backend("bool unchecked", payload, capacity, &bools, |k, _, o| unsafe {
        k.decode_bool_unchecked(p, len, o)
    });
    every_backend("packed::decode_u64_unchecked", payload, capacity, &want, |_, _, o| unsafe {
        packed::decode_u64_unchecked(p, len, o)
    });

    let terminators = payload.iter().filter(|&&b| b < 0x80).count();
    for (b, k) in kernels() {
        assert_eq!(k.count_varints(payload), terminators, "count on {b}");
    }
    assert_eq!(packed::count_varints(payload), terminators);

    // skip_varints: `varint::skip` n times, for n around the count and the fuzzer's capacity.
    for n in [capacity, terminators / 2, terminators, terminators + 1] {
        let mut pos = 0;
        let mut want = Ok(0);
        for _ in 0..n {
            match r::varint(&payload[pos..]) {
                Ok((_, len)) => pos += len,
                Err(e) => {
                    want = Err(Error::new(e.kind(), e.offset() + pos));
                    break;
                }
            }
            want = Ok(pos);
        }
        for (b, k) in kernels() {
            assert_eq!(k.skip_varints(payload, n), want, "skip_varints({n}) on {b}");
        }
        assert_eq!(packed::skip_varints(payload, n), want);
    }
}

/// `extend_*`: the whole payload or the error, and the Vec untouched on error.
fn check_extend(payload: &[u8]) {
    let want = r::packed(payload, usize::MAX);
    let mut v = vec![7u64];
    let got = packed::extend_u64(payload, &mut v);
    match want.1 {
        Some(e) => {
            assert_eq!(got, Err(e));
            assert_eq!(v, [7]);
        }
        None => {
            assert_eq!(got, Ok(want.0.len()));
            assert_eq!(&v[1..], &want.0[..]);
        }
    }
    let mut b = Vec::new();
    let got = packed::extend_bool(payload, &mut b);
    assert_eq!(got, want.1.map_or(Ok(want.0.len()), Err));
}

fn check_fixed(payload: &[u8], capacity: usize, offset: usize) {
    /// One fixed-width type: decode into an exact output, and the zero-copy view.
    fn one<T: Copy + Default + core::fmt::Debug>(
        payload: &[u8],
        capacity: usize,
        size: usize,
        same: impl Fn(T, u64) -> bool,
        decode: impl Fn(&[u8], &mut [T]) -> Result<usize>,
        view: impl Fn(&[u8]) -> Option<&[T]>,
    ) {
        let (values, error) = r::packed_fixed(payload, size, capacity);
        let mut out = exact_out::<T>(capacity);
        let got = decode(payload, &mut out);
        match error {
            Some(e) => assert_eq!(got, Err(e), "fixed{} capacity {capacity}", size * 8),
            None => {
                assert_eq!(got, Ok(values.len()), "fixed{} capacity {capacity}", size * 8);
                assert!(out[..values.len()].iter().zip(&values).all(|(&a, &b)| same(a, b)));
            }
        }
        let aligned = payload.as_ptr() as usize % size == 0 && payload.len() % size == 0;
        let viewed = view(payload);
        assert_eq!(viewed.is_some(), aligned && cfg!(target_endian = "little"));
        if let Some(v) = viewed {
            let (all, _) = r::packed_fixed(payload, size, usize::MAX);
            assert!(v.len() == all.len() && v.iter().zip(&all).all(|(&a, &b)| same(a, b)));
        }
    }
    let p = &payload[offset.min(payload.len())..];
    one(p, capacity, 4, |a: u32, b| a as u64 == b, packed::decode_fixed32, packed::view_fixed32);
    one(p, capacity, 8, |a: u64, b| a == b, packed::decode_fixed64, packed::view_fixed64);
    one(p, capacity, 4, |a: i32, b| a as u32 as u64 == b, packed::decode_sfixed32, packed::view_sfixed32);
    one(p, capacity, 8, |a: i64, b| a as u64 == b, packed::decode_sfixed64, packed::view_sfixed64);
    one(p, capacity, 4, |a: f32, b| a.to_bits() as u64 == b, packed::decode_f32, packed::view_f32);
    one(p, capacity, 8, |a: f64, b| a.to_bits() == b, packed::decode_f64, packed::view_f64);
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let cap_mode: u8 = u.arbitrary().unwrap_or(0);
    let cap_extra: u16 = u.arbitrary().unwrap_or(0);
    let offset: u8 = u.arbitrary().unwrap_or(0);
    let payload = gen::packed_payload(&mut u);
    let payload = exact_copy(&payload);
    let natural = r::packed(&payload, usize::MAX).0.len();
    let capacity = match cap_mode % 6 {
        0 => natural,
        1 => natural.saturating_sub(1),
        2 => natural + 1,
        3 => payload.len() + 1,
        4 => natural.saturating_sub(1 + cap_extra as usize % 70),
        _ => cap_extra as usize % 300,
    };
    check_varints(&payload, capacity);
    // The same payload at the end of the allocation but starting later (other alignments).
    let skip = (offset % 64) as usize;
    if skip < payload.len() {
        let tail = &payload[skip..];
        let natural = r::packed(tail, usize::MAX).0.len();
        check_varints(tail, natural);
    }
    check_extend(&payload);
    check_fixed(&payload, capacity.min(payload.len() / 4 + 2), offset as usize % 8);
});
