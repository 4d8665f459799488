//! Every backend this CPU can run, chosen explicitly, against the scalar reference (and the
//! byte-at-a-time oracle): same values, same count, same error kind and offset, on generated
//! inputs and on every length 0..=200 at every alignment around the SIMD block sizes.

mod common;

use common::{check, naive_encode_varint, naive_packed, sweep, xorshift, VarintBytes};
use pbwire::backend::{self, Backend, Kernel};
use pbwire::{packed, Result};

fn kernels() -> Vec<Kernel> {
    backend::available().map(|b| Kernel::new(b).unwrap()).collect()
}

fn reference() -> Kernel {
    Kernel::new(Backend::Scalar).unwrap()
}

/// A decoder of a `Kernel` taking the payload as pointer and length, for the `*_unchecked` ones.
type Unchecked<T> = unsafe fn(&Kernel, *const u8, usize, &mut [T]) -> Result<usize>;

/// Runs one decode on every backend, through the safe entry point and through the unchecked one
/// (the payload copied, at the same alignment, in front of `UNCHECKED_SLOP` bytes of
/// terminators, then of continuation bytes), and compares with the reference: the result, and
/// the values written when it succeeded.
fn same_on_every_backend<T: Copy + Default + PartialEq + core::fmt::Debug>(
    payload: &[u8],
    capacity: usize,
    decode: impl Fn(&Kernel, &[u8], &mut [T]) -> Result<usize>,
    unchecked: Unchecked<T>,
) -> bool {
    let mut want = vec![T::default(); capacity];
    let want_result = decode(&reference(), payload, &mut want);
    let align = payload.as_ptr() as usize % 64;
    let agrees = |k: &Kernel, name: &str, run: &dyn Fn(&mut [T]) -> Result<usize>| {
        let mut got = vec![T::default(); capacity];
        let result = run(&mut got);
        let same = result == want_result && result.map_or(true, |n| got[..n] == want[..n]);
        if !same {
            eprintln!(
                "{} {name}: {result:?} != {want_result:?} on {payload:02x?} (capacity {capacity})",
                k.backend()
            );
        }
        same
    };
    kernels().iter().all(|k| {
        agrees(k, "safe", &|out| decode(k, payload, out))
            && [0x00u8, 0x80].iter().all(|&fill| {
                let mut buf = vec![fill; 64 + payload.len() + packed::UNCHECKED_SLOP];
                let start = (64 + align - buf.as_ptr() as usize % 64) % 64;
                buf[start..start + payload.len()].copy_from_slice(payload);
                // SAFETY: `buf` holds `UNCHECKED_SLOP` initialised bytes after the payload.
                let run =
                    |out: &mut [T]| unsafe { unchecked(k, buf.as_ptr().add(start), payload.len(), out) };
                agrees(k, &format!("unchecked, slop {fill:#04x}"), &run)
            })
    })
}

fn all_types_agree(payload: &[u8], capacity: usize) -> bool {
    same_on_every_backend::<u64>(
        payload,
        capacity,
        |k, p, o| k.decode_u64(p, o),
        Kernel::decode_u64_unchecked,
    ) && same_on_every_backend::<u32>(
        payload,
        capacity,
        |k, p, o| k.decode_u32(p, o),
        Kernel::decode_u32_unchecked,
    ) && same_on_every_backend::<i64>(
        payload,
        capacity,
        |k, p, o| k.decode_i64(p, o),
        Kernel::decode_i64_unchecked,
    ) && same_on_every_backend::<i32>(
        payload,
        capacity,
        |k, p, o| k.decode_i32(p, o),
        Kernel::decode_i32_unchecked,
    ) && same_on_every_backend::<i64>(
        payload,
        capacity,
        |k, p, o| k.decode_sint64(p, o),
        Kernel::decode_sint64_unchecked,
    ) && same_on_every_backend::<i32>(
        payload,
        capacity,
        |k, p, o| k.decode_sint32(p, o),
        Kernel::decode_sint32_unchecked,
    ) && same_on_every_backend::<bool>(
        payload,
        capacity,
        |k, p, o| k.decode_bool(p, o),
        Kernel::decode_bool_unchecked,
    ) && kernels().iter().all(|k| k.count_varints(payload) == reference().count_varints(payload))
        && skips_agree(payload)
}

/// `skip_varints` for none, one, half, all and one more than all of the payload's varints (and
/// around the SIMD windows): equal to the reference, and the reference to `varint::skip` calls.
fn skips_agree(payload: &[u8]) -> bool {
    let count = reference().count_varints(payload);
    let mut ns = vec![0, 1, count / 2, count.saturating_sub(1), count, count + 1, count + 64];
    ns.extend((60..70).filter(|&n| n <= count));
    ns.iter().all(|&n| {
        let mut pos = 0;
        let mut sequential = Ok(0);
        for _ in 0..n {
            match pbwire::varint::skip(&payload[pos..]) {
                Ok(len) => pos += len,
                Err(e) => {
                    sequential = Err(pbwire::Error::new(e.kind(), e.offset() + pos));
                    break;
                }
            }
            sequential = Ok(pos);
        }
        let want = reference().skip_varints(payload, n);
        want == sequential
            && kernels().iter().all(|k| {
                let got = k.skip_varints(payload, n);
                if got != want {
                    eprintln!("{} skip_varints({n}): {got:?} != {want:?} on {payload:02x?}", k.backend());
                }
                got == want
            })
    })
}

#[test]
fn this_machine_offers_its_backends() {
    let names: Vec<_> = backend::available().map(Backend::name).collect();
    assert_eq!(names[0], "scalar");
    #[cfg(target_arch = "x86_64")]
    {
        assert!(names.contains(&"sse2"));
        assert_eq!(Backend::Ssse3.is_available(), std::is_x86_feature_detected!("ssse3"));
        assert_eq!(
            Backend::Avx2.is_available(),
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2")
        );
        assert_eq!(
            Backend::Avx512.is_available(),
            std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512cd")
                && std::is_x86_feature_detected!("avx512vbmi")
                && std::is_x86_feature_detected!("avx512vbmi2")
                && std::is_x86_feature_detected!("avx512bitalg")
        );
    }
    #[cfg(target_arch = "aarch64")]
    assert_eq!(names, ["scalar", "neon"]);
    assert_eq!(Kernel::detected().backend(), backend::detected());
    assert_eq!(Some(&backend::detected()), backend::available().collect::<Vec<_>>().last());
    eprintln!("backends on this machine: {names:?}");
}

#[test]
fn the_reference_is_the_oracle() {
    check(
        (|bytes: VarintBytes, capacity: u8| {
            let mut out = vec![0u64; capacity as usize];
            let got = reference().decode_u64(&bytes.0, &mut out).map(|n| out[..n].to_vec());
            got == naive_packed(&bytes.0, capacity as usize, |v| v)
        }) as fn(VarintBytes, u8) -> bool,
    );
}

#[test]
fn generated_payloads_agree_on_every_backend() {
    check(
        (|bytes: VarintBytes, capacity: u16| {
            // Room for everything most of the time, sometimes short.
            let capacity = if capacity & 3 == 0 { capacity as usize % 300 } else { bytes.0.len() + 1 };
            all_types_agree(&bytes.0, capacity)
        }) as fn(VarintBytes, u16) -> bool,
    );
}

#[test]
fn random_bytes_agree_on_every_backend() {
    check(
        (|bytes: Vec<u8>, capacity: u8| all_types_agree(&bytes, capacity as usize))
            as fn(Vec<u8>, u8) -> bool,
    );
}

/// Deterministic payloads of every length 0..=200, placed at every offset 0..64 of a buffer
/// (so every alignment relative to the 16/32/64-byte blocks), with the output exactly full,
/// one short, and roomy.
#[test]
fn every_length_and_alignment_around_block_sizes() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let patterns: [&dyn Fn(u64) -> u8; 6] = [
        &|_| 0x01,                                            // one-byte runs
        &|r| (r as u8) | if r % 3 == 0 { 0x80 } else { 0 },   // mixed
        &|r| if r % 11 == 0 { 0x01 } else { 0xff },           // long, some overlong
        &|r| if r % 10 == 9 { 0x02 } else { 0x80 | r as u8 }, // 10th byte > 1
        &|r| r as u8,                                         // uniform bytes
        &|r| if r % 40 == 0 { 0x80 } else { 0x7f },           // rare continuation
    ];
    let mut buf = vec![0u8; 64 + 200];
    // Pattern, length, offset: 77,184 cases, under Miri one in 1,999 (a stride prime to the
    // loops' sizes, so the sample takes every pattern and many lengths and offsets).
    let cases =
        patterns.iter().flat_map(|p| (0..=200).flat_map(move |len| (0..64).map(move |off| (p, len, off))));
    for (pattern, len, offset) in sweep(cases, 1999) {
        let payload = &mut buf[offset..offset + len];
        payload.iter_mut().for_each(|b| *b = pattern(next()));
        let payload = &buf[offset..offset + len];
        let count = packed::count_varints(payload);
        for capacity in [count, count.saturating_sub(1), count + 1, len + 1] {
            assert!(all_types_agree(payload, capacity), "len {len} offset {offset} capacity {capacity}");
        }
    }
}

#[test]
fn overlong_and_truncated_at_every_position_in_a_block() {
    // Block, total length, position, kind of bad varint, filler: 5,184 cases, under Miri one in
    // 61 (prime to the loops' sizes).
    let cases = [16usize, 32, 64].into_iter().flat_map(|block| {
        [block + 15, block + 16, block + 17, 3 * block + 16].into_iter().flat_map(move |total| {
            (0..total).flat_map(move |bad_at| {
                (0..3).flat_map(move |kind| [false, true].map(|filler| (block, total, bad_at, kind, filler)))
            })
        })
    });
    for (block, total, bad_at, kind, ten_byte_filler) in sweep(cases, 61) {
        // One-byte values, or ten-byte ones (windows full of long varints), with a single bad
        // varint at `bad_at`: overflowing (11 bytes of continuation), 10th byte 2, or running off
        // the end.
        let mut payload = if ten_byte_filler {
            [0xffu8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01].repeat(total / 10 + 1)
        } else {
            vec![0x05u8; total]
        };
        payload.truncate(total);
        let bad: &[u8] = match kind {
            0 => &[0xff; 11],
            1 => &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
            _ => {
                payload.truncate(bad_at);
                &[0x80; 5]
            }
        };
        payload.splice(bad_at..bad_at, bad.iter().copied());
        assert!(
            all_types_agree(&payload, payload.len()),
            "block {block} total {total} at {bad_at} kind {kind}"
        );
    }
}

/// Varints of lengths uniform in 1..=10 (`u64-mixed`), or one in 50 of 10 bytes among short ones
/// (`sparse`), from xorshift `seed`; every one valid (a 10th byte of 0 or 1).
fn long_varints(seed: u64, count: usize, sparse: bool) -> Vec<u8> {
    let mut next = xorshift(seed);
    let mut out = Vec::new();
    for _ in 0..count {
        let r = next();
        let len = match (sparse, r % 50) {
            (false, _) => 1 + (r >> 8) % 10,
            (true, 0) => 10,
            (true, _) => 1 + (r >> 8) % 2,
        } as usize;
        for i in 0..len {
            let byte = (next() >> 16) as u8;
            out.push(match (i + 1 == len, i) {
                (false, _) => byte | 0x80,
                (true, 9) => byte & 1,
                (true, _) => byte & 0x7f,
            });
        }
    }
    out
}

/// Long stretches of windows full of varints over 8 bytes (where the AVX-512 decoder switches,
/// after a few windows, from redoing them one by one to a second permute in every step),
/// between stretches where they are rare, with an overflowing or cut varint at positions
/// throughout: every backend agrees with the reference.
#[test]
#[cfg_attr(miri, ignore = "the AVX-512 decoder's switch, which Miri does not run; 10 KB payloads")]
fn windows_dense_with_long_varints_agree_on_every_backend() {
    let mut payload = long_varints(1, 700, false);
    payload.extend(long_varints(2, 1500, true));
    payload.extend(long_varints(3, 700, false));
    let count = packed::count_varints(&payload);
    assert!(all_types_agree(&payload, count));
    assert!(all_types_agree(&payload, count - 1));
    for at in (0..payload.len()).step_by(397) {
        // Move to a varint boundary, so that the bad varint is one of its own.
        let at = (at..payload.len()).find(|&i| i == 0 || payload[i - 1] < 0x80).unwrap_or(payload.len());
        damaged_at_agree(&payload, at, false);
    }
}

/// `payload` with, at `at`, an overflowing varint (11 bytes), one with a 10th byte of 2, a cut
/// one (the payload ends in it) and with `short`, a one-byte varint: every backend agrees with
/// the reference on each.
fn damaged_at_agree(payload: &[u8], at: usize, short: bool) {
    let inserts: [&[u8]; 4] =
        [&[0xff; 11], &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02], &[0x80; 5], &[0x05]];
    for (kind, insert) in inserts.iter().enumerate().take(if short { 4 } else { 3 }) {
        let mut damaged = payload.to_vec();
        if kind == 2 {
            damaged.truncate(at);
        }
        damaged.splice(at..at, insert.iter().copied());
        assert!(all_types_agree(&damaged, damaged.len()), "at {at} kind {kind}");
    }
}

/// Payloads of 10-byte varints from their first byte (which the lane decoders of SSE2, SSSE3 and
/// AVX2 send, a whole call, to their variant that decodes bytes 9 and 10 in every lane), with a
/// bad varint (11 bytes, a 10th byte of 2, or cut by the end) or a short one at positions all
/// through the first windows, at every offset of a 10-byte varint, and output room around the
/// count: every backend agrees with the reference.
#[test]
fn payloads_dense_from_the_start_agree_on_every_backend() {
    let filler = [0xffu8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    let payload = filler.repeat(90);
    let count = packed::count_varints(&payload);
    for capacity in [count, count - 1, count - 64, count + 1] {
        assert!(all_types_agree(&payload, capacity), "capacity {capacity}");
    }
    for at in sweep((0..700).step_by(3), 23) {
        damaged_at_agree(&payload, at, true);
    }
}

/// Short varints with one value in `every` a long one of `kind` (from xorshift `seed`): 0, a
/// negative `int32` (ten bytes ending `0xff 0x01`, which the lane decoders' variant for payloads
/// with a few long varints takes on trust and checks after each window); 1, a value of 2^63 or
/// more (ten bytes, most not ending so: a negative `int64` below -2^56, say); 2, a `uint64` of
/// nine bytes; 3, any of those.
fn sparse_long_varints(seed: u64, count: usize, every: u64, kind: u64) -> Vec<u8> {
    let mut next = xorshift(seed);
    let mut out = Vec::new();
    for _ in 0..count {
        let r = next();
        // (A `match`, not `is_multiple_of`, which clippy asks for in an `if`: this file builds
        // with Rust 1.85 for s390x.)
        let value = match r % every {
            0 => match if kind == 3 { (r >> 8) % 3 } else { kind } {
                0 => -(((r >> 8) % (1 << 31)) as i64 + 1) as u64,
                // Bit 63 set, bits 56..63 anything (all set one time in 128).
                1 => 1 << 63 | (r >> 9) ^ (r & 0x7f) << 56,
                _ => 1 << 56 | (r >> 9) & ((1 << 56) - 1),
            },
            _ => (r >> 8) & [0x7f, 0x3fff, 0x1f_ffff][(r >> 40) as usize % 3],
        };
        naive_encode_varint(value, &mut out);
    }
    out
}

/// Payloads that start with a few varints over 8 bytes a window (which sends a whole call to
/// the lane decoders' variant that takes long varints for negative numbers, then checks): only
/// negative `int32`s, or other long varints among them (which the check must send to the redo),
/// and damaged at positions all through them by varints the check must not pass: eleven bytes
/// ending `0xff 0x01`, ten ending `0xff 0x02`, ten ending `0x80 0x01` (valid: 2^63), nine
/// ending `0xff 0x01`... with output room around the count: every backend agrees with the
/// reference.
/// Under Miri, one payload of 400 values (still past the eight windows the choice looks at),
/// undamaged.
#[test]
fn payloads_with_a_few_long_varints_agree_on_every_backend() {
    let cases = [(1, 30, 0), (2, 30, 1), (3, 30, 2), (4, 20, 3), (5, 60, 0), (6, 12, 0)];
    for (seed, every, kind) in sweep(cases.into_iter(), 6) {
        let values = if cfg!(miri) { 400 } else { 1500 };
        let payload = sparse_long_varints(seed, values, every, kind);
        let count = packed::count_varints(&payload);
        for capacity in [count, count - 1, count - 64] {
            assert!(all_types_agree(&payload, capacity), "seed {seed} capacity {capacity}");
        }
        if kind != 0 || cfg!(miri) {
            continue;
        }
        let inserts: [&[u8]; 5] = [
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x01],
            &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xff, 0x01],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
        ];
        for at in (0..payload.len()).step_by(211) {
            let at = (at..payload.len()).find(|&i| i == 0 || payload[i - 1] < 0x80).unwrap_or(payload.len());
            for insert in inserts {
                let mut damaged = payload.clone();
                damaged.splice(at..at, insert.iter().copied());
                assert!(all_types_agree(&damaged, damaged.len()), "seed {seed} at {at} insert {insert:02x?}");
            }
        }
    }
}

/// `len` pseudo-random bytes (xorshift from `seed`) with a continuation bit on about one byte
/// in four: mixed varint lengths, now and then a long or unterminated one.
fn mixed_payload(seed: u64, len: usize) -> Vec<u8> {
    let mut next = xorshift(seed);
    (0..len)
        .map(|_| {
            let r = next();
            (r as u8 & 0x7f) | ((r >> 8) as u8 & (r >> 16) as u8 & 0x80)
        })
        .collect()
}

/// Payloads of a few KiB, where the decoders' bulk loop takes most windows and reads their
/// terminator bits from 64-byte blocks ahead of them: continuation bits on one byte in two,
/// four or eight (so windows that end at every offset of a block), each cut at a varint's end
/// and mid-varint, with output room around the count and the count less 64, and damaged by a
/// run of continuation bytes (an overlong varint) at positions spread over the payload.
#[test]
fn long_payloads_through_the_block_loop_agree_on_every_backend() {
    // Seed and density, then a cut or a damaged payload: 145 cases, under Miri one in 17 (prime
    // to a seed's 29 cases, so the sample takes both kinds and every seed). Miri takes about a
    // minute a case here.
    let seeds = [(1u64, 1u64), (2, 3), (3, 7), (4, 1), (5, 3)];
    let cuts = [2999, 2000, 1501, 777]
        .into_iter()
        .flat_map(|len| (0..5).map(move |room| LongCase::Cut { len, room }));
    let per_seed: Vec<LongCase> =
        cuts.chain((0..2900).step_by(331).map(|at| LongCase::Overlong { at })).collect();
    let cases = seeds.iter().flat_map(|&seed| per_seed.iter().map(move |&case| (seed, case)));
    for ((seed, density), case) in sweep(cases, 17) {
        let mut next = xorshift(seed);
        let mut payload: Vec<u8> = (0..3000)
            .map(|_| {
                let r = next();
                (r as u8 & 0x7f) | if (r >> 32) & density == 0 { 0x80 } else { 0 }
            })
            .collect();
        match case {
            LongCase::Cut { len, room } => {
                // Its own allocation, so that a read past its end is one past the heap block
                // (which valgrind, as CI runs these tests, reports).
                let cut = payload[..len].to_vec();
                let count = cut.iter().filter(|&&b| b < 0x80).count();
                let capacity =
                    [count, count + 1, count.saturating_sub(1), count.saturating_sub(64), count / 2][room];
                assert!(all_types_agree(&cut, capacity), "seed {seed} len {len} capacity {capacity}");
            }
            LongCase::Overlong { at } => {
                payload[at..at + 11].fill(0x80);
                assert!(all_types_agree(&payload, payload.len()), "seed {seed} overlong at {at}");
            }
        }
    }
}

/// A case of [`long_payloads_through_the_block_loop_agree_on_every_backend`].
#[derive(Clone, Copy, Debug)]
enum LongCase {
    /// The payload's first `len` bytes, with output room for the `room`-th of five counts around
    /// its varint count.
    Cut { len: usize, room: usize },
    /// The whole payload with a run of 11 continuation bytes (an overlong varint) from `at`.
    Overlong { at: usize },
}

/// One dispatched decode (`pbwire::packed`) against the reference: the result, and the values
/// written when it succeeded.
fn dispatched_agrees<T: Copy + Default + PartialEq>(
    payload: &[u8],
    capacity: usize,
    dispatched: fn(&[u8], &mut [T]) -> Result<usize>,
    reference_decode: fn(&Kernel, &[u8], &mut [T]) -> Result<usize>,
) -> bool {
    let (mut got, mut want) = (vec![T::default(); capacity], vec![T::default(); capacity]);
    let (result, want_result) =
        (dispatched(payload, &mut got), reference_decode(&reference(), payload, &mut want));
    result == want_result && result.map_or(true, |n| got[..n] == want[..n])
}

/// [`dispatched_agrees`] for every varint type.
fn every_dispatched_decoder_agrees(payload: &[u8], capacity: usize) -> bool {
    dispatched_agrees(payload, capacity, packed::decode_u64, Kernel::decode_u64)
        && dispatched_agrees(payload, capacity, packed::decode_u32, Kernel::decode_u32)
        && dispatched_agrees(payload, capacity, packed::decode_i64, Kernel::decode_i64)
        && dispatched_agrees(payload, capacity, packed::decode_i32, Kernel::decode_i32)
        && dispatched_agrees(payload, capacity, packed::decode_sint64, Kernel::decode_sint64)
        && dispatched_agrees(payload, capacity, packed::decode_sint32, Kernel::decode_sint32)
        && dispatched_agrees(payload, capacity, packed::decode_bool, Kernel::decode_bool)
}

/// The dispatched decoders and `skip_varints` hand payloads shorter than one SIMD window to the
/// reference and longer ones to the detected backend: every type agrees with the reference on
/// both sides of that length, with the output exactly full and one short.
#[test]
fn the_dispatched_decoders_and_skip_agree_across_the_short_payload_cutoff() {
    let payload = mixed_payload(0x2545_f491_4f6c_dd1d, 200);
    for len in sweep(0..=payload.len(), 7) {
        let payload = &payload[..len];
        let count = packed::count_varints(payload);
        for capacity in [count, count.saturating_sub(1)] {
            assert!(every_dispatched_decoder_agrees(payload, capacity), "len {len} capacity {capacity}");
        }
        for n in 0..=count + 1 {
            assert_eq!(
                packed::skip_varints(payload, n),
                reference().skip_varints(payload, n),
                "len {len} n {n}"
            );
        }
    }
}

/// Below one SIMD window the dispatched decoders widen a payload of one-byte varints in one loop
/// (when the output has room for all of it), give one with a longer varint to the backend from
/// its own length on (`short_mixed`: 4 bytes on AVX-512, 8 on SSE2 to AVX2) and to the
/// reference below it: every type agrees with the reference at every length under the cut-off,
/// for payloads of one-byte varints, of longer ones, and of one-byte ones ending mid-varint,
/// with the output exactly full, one short and roomier.
#[test]
fn the_dispatched_decoders_agree_on_every_short_payload() {
    let one_byte: Vec<u8> = (0..70u32).map(|i| (i * 37 % 128) as u8).collect();
    let mixed = mixed_payload(0x9e37_79b9_7f4a_7c15, 70);
    for len in sweep(0..=70usize, 5) {
        let cut = [&one_byte[..len.saturating_sub(1)], &[0x80][..]].concat();
        for payload in [&one_byte[..len], &mixed[..len], &cut[..]] {
            let count = packed::count_varints(payload);
            for capacity in [count, count.saturating_sub(1), count + 3] {
                assert!(
                    every_dispatched_decoder_agrees(payload, capacity),
                    "payload {payload:02x?} capacity {capacity}"
                );
            }
        }
    }
}

/// One `packed::extend_*` against the reference decode with room for every varint: the same
/// result, the values appended after what the vector held, and the vector unchanged on error.
#[cfg(feature = "alloc")]
fn extend_agrees<T: Copy + Default + PartialEq + core::fmt::Debug>(
    payload: &[u8],
    extend: fn(&[u8], &mut Vec<T>) -> Result<usize>,
    reference_decode: fn(&Kernel, &[u8], &mut [T]) -> Result<usize>,
) -> bool {
    let mut want = vec![T::default(); payload.len()];
    let want_result = reference_decode(&reference(), payload, &mut want);
    let mut got = vec![T::default(); 3];
    let result = extend(payload, &mut got);
    let expected: Vec<T> = match want_result {
        Ok(n) => [&[T::default(); 3][..], &want[..n]].concat(),
        Err(_) => vec![T::default(); 3],
    };
    result == want_result && got == expected
}

/// `packed::extend_*` on both sides of the short-payload cut-off (a stack array under 64
/// bytes, count-then-decode above): every type, every length 0..=200.
#[cfg(feature = "alloc")]
#[test]
fn extend_agrees_with_the_reference_across_the_short_payload_cutoff() {
    let mut payload = mixed_payload(0x0123_4567_89ab_cdef, 200);
    // Errors too: an overflowing varint at byte 150.
    payload[150..161].fill(0xff);
    for len in sweep(0..=payload.len(), 7) {
        let p = &payload[..len];
        assert!(
            extend_agrees(p, packed::extend_u64, Kernel::decode_u64)
                && extend_agrees(p, packed::extend_u32, Kernel::decode_u32)
                && extend_agrees(p, packed::extend_i64, Kernel::decode_i64)
                && extend_agrees(p, packed::extend_i32, Kernel::decode_i32)
                && extend_agrees(p, packed::extend_sint64, Kernel::decode_sint64)
                && extend_agrees(p, packed::extend_sint32, Kernel::decode_sint32)
                && extend_agrees(p, packed::extend_bool, Kernel::decode_bool),
            "len {len}"
        );
    }
}

#[test]
fn the_dispatched_entry_points_are_the_detected_backend() {
    check(
        (|bytes: VarintBytes| {
            let mut a = vec![0u64; bytes.0.len()];
            let mut b = vec![0u64; bytes.0.len()];
            let ra = packed::decode_u64(&bytes.0, &mut a);
            let rb = Kernel::detected().decode_u64(&bytes.0, &mut b);
            ra == rb && a == b && packed::count_varints(&bytes.0) == reference().count_varints(&bytes.0)
        }) as fn(VarintBytes) -> bool,
    );
}

/// Runs one encode on every backend and compares with the reference (the portable encoder):
/// the result and the whole output buffer, so that bytes past the payload, and every byte when
/// it does not fit, must be left as they were.
fn encoders_agree<T: Copy>(
    values: &[T],
    capacity: usize,
    encode: impl Fn(&Kernel, &[T], &mut [u8]) -> Result<usize>,
) -> bool {
    let mut want = vec![0xa5u8; capacity];
    let want_result = encode(&reference(), values, &mut want);
    // The reference itself leaves every byte past the payload (every byte, on error) alone.
    let written = *want_result.as_ref().unwrap_or(&0);
    if want[written..].iter().any(|&b| b != 0xa5) {
        eprintln!(
            "the reference wrote past its {written} bytes ({} values, capacity {capacity})",
            values.len()
        );
        return false;
    }
    kernels().iter().all(|k| {
        let mut got = vec![0xa5u8; capacity];
        let result = encode(k, values, &mut got);
        let same = result == want_result && got == want;
        if !same {
            eprintln!(
                "{}: {result:?} != {want_result:?} ({} values, capacity {capacity})",
                k.backend(),
                values.len()
            );
        }
        same
    })
}

/// Every varint type's encoder on every backend, with the output exactly full, one byte short,
/// a little roomy, and the worst case's size (which skips the length pass) and one byte less;
/// and the reference itself against the byte-at-a-time encoder.
fn all_encoders_agree(values: &[u64]) -> bool {
    let mut naive = Vec::new();
    values.iter().for_each(|&v| naive_encode_varint(v, &mut naive));
    let mut reference_out = vec![0u8; naive.len()];
    if reference().encode_u64(values, &mut reference_out) != Ok(naive.len()) || reference_out != naive {
        eprintln!("the reference differs from the naive encoder ({} values)", values.len());
        return false;
    }
    // With room for the worst case (no length pass) too.
    let mut roomy = vec![0u8; values.len() * 10];
    if reference().encode_u64(values, &mut roomy) != Ok(naive.len()) || roomy[..naive.len()] != naive[..] {
        eprintln!("the reference differs from the naive encoder with room ({} values)", values.len());
        return false;
    }
    let u32s: Vec<u32> = values.iter().map(|&v| v as u32).collect();
    let i32s: Vec<i32> = values.iter().map(|&v| v as i32).collect();
    let i64s: Vec<i64> = values.iter().map(|&v| v as i64).collect();
    let bools: Vec<bool> = values.iter().map(|&v| v & 1 == 1).collect();
    // The 64-bit types' length passes (a kernel's own, and the public one, which dispatches
    // from 4 values) against the naive encoder's bytes.
    let mut naive_sint64 = Vec::new();
    i64s.iter().for_each(|&v| naive_encode_varint(((v << 1) ^ (v >> 63)) as u64, &mut naive_sint64));
    let lengths =
        [packed::encoded_len_u64(values), packed::encoded_len_i64(&i64s), packed::encoded_len_sint64(&i64s)];
    let want = [naive.len(), naive.len(), naive_sint64.len()];
    if lengths != want {
        eprintln!("the public 64-bit lengths {lengths:?} != {want:?} ({} values)", values.len());
        return false;
    }
    for k in kernels() {
        let lengths = [k.encoded_len_u64(values), k.encoded_len_i64(&i64s), k.encoded_len_sint64(&i64s)];
        if lengths != want {
            eprintln!("{}: 64-bit lengths {lengths:?} != {want:?} ({} values)", k.backend(), values.len());
            return false;
        }
    }
    // `max_len`: the longest encoding of one value of the type.
    let n = values.len();
    let sizes = |len: usize, max_len: usize| {
        [len, len.saturating_sub(1), len + 17, n * max_len, (n * max_len).saturating_sub(1)]
    };
    sizes(packed::encoded_len_u64(values), 10)
        .iter()
        .all(|&c| encoders_agree(values, c, |k, v, o| k.encode_u64(v, o)))
        && sizes(packed::encoded_len_i64(&i64s), 10)
            .iter()
            .all(|&c| encoders_agree(&i64s, c, |k, v, o| k.encode_i64(v, o)))
        && sizes(packed::encoded_len_sint64(&i64s), 10)
            .iter()
            .all(|&c| encoders_agree(&i64s, c, |k, v, o| k.encode_sint64(v, o)))
        && sizes(packed::encoded_len_u32(&u32s), 5)
            .iter()
            .all(|&c| encoders_agree(&u32s, c, |k, v, o| k.encode_u32(v, o)))
        && sizes(packed::encoded_len_i32(&i32s), 10)
            .iter()
            .all(|&c| encoders_agree(&i32s, c, |k, v, o| k.encode_i32(v, o)))
        && sizes(packed::encoded_len_sint32(&i32s), 5)
            .iter()
            .all(|&c| encoders_agree(&i32s, c, |k, v, o| k.encode_sint32(v, o)))
        && sizes(packed::encoded_len_bool(&bools), 1)
            .iter()
            .all(|&c| encoders_agree(&bools, c, |k, v, o| k.encode_bool(v, o)))
}

/// A value of exactly `len` (1..=10) varint bytes, from the random `r`: the smallest or largest
/// of that length, or one in between.
fn value_of_len(len: u32, r: u64) -> u64 {
    let lo = if len == 1 { 0 } else { 1u64 << (7 * (len - 1)) };
    let hi = if len >= 10 { u64::MAX } else { (1u64 << (7 * len)) - 1 };
    match r % 4 {
        0 => lo,
        1 => hi,
        _ => lo + (r >> 2) % (hi - lo + 1).max(1),
    }
}

/// Every count 0..=150 of values (across the eight-value steps, the 104-byte margin and the
/// tail), and counts around the portable encoder's staging cut-off (256 values), with lengths
/// all one, mixed 1..=5 or 1..=10, mostly short with rare ten-byte ones, sign-extended
/// negatives among those, and `int32`s alone (mostly short, rare negatives: blocks with and
/// without one, which the AVX2 encoder sends down one path); every output size edge.
#[test]
fn every_backend_encodes_like_the_portable_encoder() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let mut values = Vec::new();
    for n in sweep((0..=150usize).chain([200, 254, 255, 256, 257, 288, 300]), 25) {
        for pattern in 0..15u32 {
            values.clear();
            for _ in 0..n {
                let r = next();
                let len = match pattern {
                    0..=9 => pattern + 1,
                    10 => 1 + (r >> 60) as u32 % 5,
                    11 => 1 + (r >> 60) as u32 % 10,
                    _ => [1, 1, 1, 1, 1, 1, 2, 2, 3, 4, 1, 1, 1, 2, 1, 10][(r >> 60) as usize],
                };
                let v = value_of_len(len, r);
                // Pattern 13: negative int32s among small values.
                values.push(if pattern == 13 && r & 15 == 0 {
                    (-((r % 1000) as i64) - 1) as u64
                } else if pattern == 14 {
                    // `int32`s: one in 40 negative (from -1 down to i32::MIN), one in 40 of
                    // five bytes, the rest of one to four.
                    match r % 40 {
                        0 => ((r >> 32) as u32 | 1 << 31) as i32 as i64 as u64,
                        1 => (r >> 33).max(1 << 28),
                        _ => value_of_len(1 + (r >> 60) as u32 % 4, r),
                    }
                } else {
                    v
                });
            }
            assert!(all_encoders_agree(&values), "{n} values, pattern {pattern}");
        }
    }
}

#[test]
fn generated_values_encode_alike_on_every_backend() {
    check(
        (|values: Vec<u64>, shifts: Vec<u8>| {
            // Shift values down so that every length is common.
            let values: Vec<u64> =
                values.iter().zip(shifts.iter().cycle()).map(|(&v, &s)| v >> (s % 64)).collect();
            all_encoders_agree(&values)
        }) as fn(Vec<u64>, Vec<u8>) -> bool,
    );
}

#[test]
fn the_dispatched_encoders_are_the_detected_backend() {
    let values: Vec<u64> = (0..1000u64).map(|i| value_of_len(1 + (i % 10) as u32, i * 7919)).collect();
    let len = packed::encoded_len_u64(&values);
    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
    assert_eq!(packed::encode_u64(&values, &mut a), Kernel::detected().encode_u64(&values, &mut b));
    assert_eq!(a, b);
    let mut c = vec![0u8; len];
    assert_eq!(reference().encode_u64(&values, &mut c), Ok(len));
    assert_eq!(a, c);
}

/// Text of `len` bytes from `seed`: ASCII letters with 2-, 3- and 4-byte characters mixed in
/// when `multibyte` (a character that would pass `len` is replaced by letters).
fn text(mut seed: u64, len: usize, multibyte: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let c = match (seed >> 60, multibyte) {
            (0, true) => 'é',
            (1, true) => '€',
            (2, true) => '😀',
            _ => (b'a' + (seed >> 40) as u8 % 26) as char,
        };
        let mut tmp = [0u8; 4];
        let bytes = c.encode_utf8(&mut tmp).as_bytes();
        if out.len() + bytes.len() <= len {
            out.extend_from_slice(bytes);
        } else {
            out.push(b'x');
        }
    }
    out
}

/// Every backend's `from_utf8` against `core::str::from_utf8`, the result and the error.
fn utf8_agrees(bytes: &[u8]) -> bool {
    let want = core::str::from_utf8(bytes);
    kernels().iter().all(|k| k.from_utf8(bytes) == want) && pbwire::utf8::from_utf8(bytes) == want
}

#[test]
fn every_backend_checks_utf8_like_core() {
    // Valid text of every length 0..=300, ASCII and not, then each byte of it replaced by
    // bytes that break it (a lone continuation byte, a lead byte, 0xff) or truncate a
    // character: the error's position and length must be core's.
    for len in sweep(0..=300, 11) {
        for multibyte in [false, true] {
            let good = text(len as u64, len, multibyte);
            assert!(utf8_agrees(&good), "{len} {multibyte}");
            for at in (0..len).step_by(1 + len / 40) {
                for bad in [0x80u8, 0xc3, 0xe2, 0xf0, 0xff] {
                    let mut b = good.clone();
                    b[at] = bad;
                    assert!(utf8_agrees(&b), "{len} {multibyte} {at} {bad:#x}");
                }
                assert!(utf8_agrees(&good[..at]), "{len} {multibyte} cut at {at}");
            }
        }
    }
    check((|bytes: Vec<u8>| utf8_agrees(&bytes)) as fn(Vec<u8>) -> bool);
    check((|s: String| utf8_agrees(s.as_bytes())) as fn(String) -> bool);
}

/// A message of a few KiB for the field scans: mostly the fields a table takes (1- and 2-byte
/// tags; varints of every length, with tenth bytes of 0..=3; fixed values; short payloads),
/// some it leaves to the scalar paths (payloads of 128 bytes to 3 KiB, groups nested up to 4
/// deep, 3-byte tags), in every other message a rare field number 0; then up to three bytes overwritten, and
/// sometimes cut short.
#[derive(Clone, Debug)]
struct LongMessage(Vec<u8>);

impl quickcheck::Arbitrary for LongMessage {
    fn arbitrary(g: &mut quickcheck::Gen) -> Self {
        let size = 600 + u16::arbitrary(g) as usize % 4500;
        let with_errors = bool::arbitrary(g);
        let mut m = Vec::with_capacity(size + 3100);
        while m.len() < size {
            let number = if bool::arbitrary(g) {
                1 + u8::arbitrary(g) as u32 % 15
            } else {
                16 + u16::arbitrary(g) as u32 % 2032
            };
            let kind = u8::arbitrary(g) % 64;
            let wire_type = match kind {
                0..=15 | 61 | 62 => 0,
                16..=21 => 1,
                22..=27 => 5,
                28..=59 => 2,
                _ => 3,
            };
            let raw = number << 3 | wire_type;
            match kind {
                // A 3-byte tag, or (if errors are on) field number 0 written in two bytes.
                61 => m.extend_from_slice(&[0x80 | raw as u8, 0x80 | (raw >> 7) as u8, 1]),
                62 if with_errors => m.extend_from_slice(&[0x80 | (2 * (u8::arbitrary(g) % 2)), 0]),
                _ => naive_encode_varint(raw as u64, &mut m),
            }
            match kind {
                0..=11 => naive_encode_varint(common::any_length_u64(g), &mut m),
                12..=15 => {
                    // Nine continuation bytes, then a tenth byte of 0..=3.
                    m.extend(std::iter::repeat_n(0x80 | u8::arbitrary(g), 9));
                    m.push(u8::arbitrary(g) % 4);
                }
                16..=27 => m.extend((0..if kind < 22 { 8 } else { 4 }).map(|_| u8::arbitrary(g))),
                28..=57 => {
                    let len = u8::arbitrary(g) as usize % 128;
                    m.push(len as u8);
                    m.extend((0..len).map(|_| u8::arbitrary(g)));
                }
                58 | 59 => {
                    let len = 128 + u16::arbitrary(g) as usize % 3000;
                    naive_encode_varint(len as u64, &mut m);
                    m.extend(std::iter::repeat_n(0x80u8, len));
                }
                // An empty group, closed by its own end tag.
                60 => naive_encode_varint((number << 3 | 4) as u64, &mut m),
                // Groups nested two to four deep around a varint field.
                63 => {
                    let inner = 1 + u8::arbitrary(g) as u64 % 3;
                    m.extend(std::iter::repeat_n(0x1b, inner as usize));
                    m.extend_from_slice(&[0x08, 0x01]);
                    m.extend(std::iter::repeat_n(0x1c, inner as usize));
                    naive_encode_varint((number << 3 | 4) as u64, &mut m);
                }
                _ => m.push(u8::arbitrary(g) % 0x80),
            }
        }
        for _ in 0..u8::arbitrary(g) % 4 {
            let i = usize::arbitrary(g) % m.len();
            m[i] = u8::arbitrary(g);
        }
        if u8::arbitrary(g) % 4 == 0 {
            m.truncate(usize::arbitrary(g) % (m.len() + 1));
        }
        LongMessage(m)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(LongMessage))
    }
}

/// `validate` on long messages (the looks that choose each stretch's loop, with and without a
/// table scan) against the field iterator, another path over the same fields: `Ok` when the
/// iterator reads every field, else the iterator's first error.
#[test]
fn validate_equals_the_field_iterator_on_long_messages() {
    check(
        (|msg: LongMessage| {
            let msg = &msg.0[..];
            let limit = pbwire::wire::DEFAULT_DEPTH_LIMIT;
            let want = pbwire::fields::Fields::with_depth_limit(msg, limit)
                .find_map(|f| f.err())
                .map_or(Ok(()), Err);
            kernels().iter().all(|k| {
                let got = k.validate(msg, limit);
                if got != want {
                    eprintln!("{} validate: {got:?} != {want:?}", k.backend());
                }
                got == want
            })
        }) as fn(LongMessage) -> bool,
    );
}

/// `validate` through every backend's field scan: the same result (error kind and offset) as
/// the scalar loop, with group depth limits 0..=4 and the default, for the whole message and
/// from every field start the scalar loop finds in its first 200 bytes (so the scan starts at
/// every alignment).
#[test]
fn validate_agrees_on_every_backend() {
    check(
        (|msg: LongMessage| {
            let msg = &msg.0[..];
            let mut starts = vec![0];
            for f in pbwire::fields::fields(msg).map_while(|f| f.ok()).take_while(|f| f.end < 200) {
                starts.push(f.end);
            }
            starts.iter().all(|&start| {
                let msg = &msg[start..];
                let want = reference().validate(msg, pbwire::wire::DEFAULT_DEPTH_LIMIT);
                [0, 1, 2, 3, 4, pbwire::wire::DEFAULT_DEPTH_LIMIT].iter().all(|&limit| {
                    let want = reference().validate(msg, limit);
                    kernels().iter().all(|k| {
                        let got = k.validate(msg, limit);
                        if got != want {
                            eprintln!(
                                "{} validate: {got:?} != {want:?} from {start}, limit {limit}",
                                k.backend()
                            );
                        }
                        got == want
                    })
                }) && pbwire::fields::validate(msg) == want
            })
        }) as fn(LongMessage) -> bool,
    );
}
