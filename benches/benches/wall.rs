//! Wall-clock benchmarks: pbwire against prost, quick-protobuf, rust-protobuf, integer-encoding
//! and varint-simd on the same data, in interleaved rounds, reporting medians.
//!
//! ```sh
//! cargo bench -p pbwire-bench                          # everything (a few minutes)
//! cargo bench -p pbwire-bench -- --quick               # fewer rounds, no 1,000,000- or 16,000,000-value sizes
//! cargo bench -p pbwire-bench -- decode_u64 realistic  # only ids containing every word
//! PBWIRE_BENCH_FILTER=scan PBWIRE_BENCH_QUICK=1 cargo bench -p pbwire-bench   # the same by env
//! ```
//!
//! Each benchmark builds its data, runs every contender once and checks its output against the
//! source values (a contender that disagrees aborts the run), calibrates each contender to a
//! sample of about `TARGET` time, then runs `ROUNDS` rounds in which every contender takes one
//! sample, in an order rotated each round, so that machine noise hits all contenders alike.
//! The table reports the median sample per value (or message, field, record), the
//! interquartile spread, throughput over the encoded bytes, and speed relative to the prost
//! row of the same benchmark measured in the same rounds (> 1 is faster than prost).

use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use integer_encoding::VarInt;
use pbwire::fields::fields;
use pbwire::wire;
use pbwire_bench::data::{self, hash_bytes, hash_values, Dist, Narrow};
use pbwire_bench::kernels::{pbwire_backends, prost_merge_u64, PbKernels};
use pbwire_bench::msgs::{self, TradeOrderRef};
use prost::encoding::{DecodeContext, WireType as PW};
use prost::Message as _;
use quick_protobuf::{BytesReader, MessageRead};

/// One timed contender: `run(true)` returns a full checksum of its output (compared with the
/// benchmark's), `run(false)` something cheap that still depends on the output.
struct Contender {
    name: String,
    /// The checksum `run(true)` must return; `None` for reference rows (fill, copy).
    expect: Option<u64>,
    run: Box<dyn FnMut(bool) -> u64>,
}

struct Bench {
    kernel: &'static str,
    data: String,
    unit: &'static str,
    units: usize,
    bytes: usize,
    /// The name of the contender the speed column divides by.
    baseline: &'static str,
    contenders: Vec<Contender>,
}

impl Bench {
    /// A benchmark over `n` values of `dist` (`bytes` of payload).
    fn per_value(
        kernel: &'static str,
        dist: Dist,
        n: usize,
        bytes: usize,
        baseline: &'static str,
        contenders: Vec<Contender>,
    ) -> Bench {
        Bench { kernel, data: dist.name().into(), unit: "value", units: n, bytes, baseline, contenders }
    }

    /// A benchmark over `n` fixed-width values (`bytes` of payload).
    fn fixed(
        kernel: &'static str,
        n: usize,
        bytes: usize,
        baseline: &'static str,
        contenders: Vec<Contender>,
    ) -> Bench {
        Bench {
            kernel,
            data: "u64-mixed values".into(),
            unit: "value",
            units: n,
            bytes,
            baseline,
            contenders,
        }
    }
}

struct Spec {
    id: String,
    build: Box<dyn Fn() -> Bench>,
}

struct Config {
    rounds: usize,
    target: Duration,
    quick: bool,
    words: Vec<String>,
}

fn contender(
    name: impl Into<String>,
    expect: Option<u64>,
    run: impl FnMut(bool) -> u64 + 'static,
) -> Contender {
    Contender { name: name.into(), expect, run: Box::new(run) }
}

const PROST_PACKED: &str = "prost merge_repeated (Vec)";
const PROST_ENCODE: &str = "prost encode_varint loop (Vec)";
const PROST_LEN: &str = "prost encoded_len_varint sum";
const PROST_FIXED_ENCODE: &str = "prost encode_packed (BytesMut)";

// ------------------------------------------------------------------------------ packed decode

/// A cheap value depending on a decode's output, so the decode cannot be optimised away.
fn last(out: &[u64], c: usize) -> u64 {
    c as u64 ^ out[c.saturating_sub(1)]
}

/// A `decode_u64` row for each pbwire kernel whose name `keep` accepts, each with its own
/// output of `n` values.
fn kernel_rows(
    cs: &mut Vec<Contender>,
    payload: &Rc<Vec<u8>>,
    n: usize,
    e: Option<u64>,
    keep: impl Fn(&str) -> bool,
) {
    for k in pbwire_backends().into_iter().filter(|k| keep(&k.name())) {
        let (p, mut out) = (payload.clone(), vec![0u64; n]);
        cs.push(contender(k.name(), e, move |verify| {
            let c = k.decode_u64(&p, &mut out).unwrap();
            if verify {
                hash_values(out[..c].iter().copied())
            } else {
                last(&out, c)
            }
        }));
    }
}

/// prost's packed decode (the baseline) of the length-prefixed payload with `merge` (its
/// `merge_repeated` of the element type), into a reused `Vec`; `wire` gives an element's value
/// as the checksum takes it.
fn prost_packed_row<T: Copy + 'static>(
    cs: &mut Vec<Contender>,
    prefixed: &Rc<Vec<u8>>,
    e: Option<u64>,
    merge: impl Fn(PW, &mut Vec<T>, &mut &[u8], DecodeContext) -> Result<(), prost::DecodeError> + 'static,
    wire: fn(T) -> u64,
) {
    let (p, mut vec) = (prefixed.clone(), Vec::<T>::new());
    cs.push(contender(PROST_PACKED, e, move |verify| {
        vec.clear();
        let mut buf: &[u8] = &p;
        merge(PW::LengthDelimited, &mut vec, &mut buf, DecodeContext::default()).unwrap();
        if verify {
            hash_values(vec.iter().map(|&v| wire(v)))
        } else {
            vec.len() as u64 ^ wire(vec[vec.len() - 1])
        }
    }));
}

/// A plain fill of `n` `u64`s: the store reference.
fn fill_row(cs: &mut Vec<Contender>, n: usize) {
    let mut out = vec![0u64; n];
    cs.push(contender("out.fill (store reference)", None, move |_| {
        out.fill(black_box(7));
        last(&out, n)
    }));
}

/// `n` values of `dist` (checked against the distribution), packed bare and length-prefixed.
fn packed_data(dist: Dist, n: usize) -> (Vec<u64>, Rc<Vec<u8>>, Rc<Vec<u8>>) {
    let values = data::values(dist, n);
    data::check_distribution(dist, &values);
    let payload = Rc::new(data::packed(&values));
    let prefixed = Rc::new(data::length_prefixed(&payload));
    (values, payload, prefixed)
}

fn decode_u64_bench(dist: Dist, n: usize) -> Bench {
    let (values, payload, prefixed) = packed_data(dist, n);
    let e = Some(hash_values(values.iter().copied()));
    let mut cs = Vec::new();

    kernel_rows(&mut cs, &payload, n, e, |_| true);
    let (p, mut out) = (payload.clone(), vec![0u64; n]);
    cs.push(contender("pbwire varint::decode_u64 loop", e, move |verify| {
        let mut pos = 0;
        for slot in out.iter_mut() {
            let (v, len) = pbwire::varint::decode_u64(&p[pos..]).unwrap();
            *slot = v;
            pos += len;
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    let (p, mut out) = (payload.clone(), vec![0u64; n]);
    cs.push(contender("pbwire Reader::read_varint loop", e, move |verify| {
        let mut r = pbwire::reader::Reader::new(&p);
        for slot in out.iter_mut() {
            *slot = r.read_varint().unwrap();
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    let (p, mut vec) = (payload.clone(), Vec::<u64>::new());
    cs.push(contender("pbwire packed::extend_u64 (Vec)", e, move |verify| {
        vec.clear();
        let c = pbwire::packed::extend_u64(&p, &mut vec).unwrap();
        if verify {
            hash_values(vec.iter().copied())
        } else {
            last(&vec, c)
        }
    }));
    prost_packed_row(
        &mut cs,
        &prefixed,
        e,
        |w, v, b, c| prost::encoding::uint64::merge_repeated(w, v, b, c),
        |v| v,
    );
    let (p, mut out) = (payload.clone(), vec![0u64; n]);
    cs.push(contender("prost decode_varint loop", e, move |verify| {
        let mut buf: &[u8] = &p;
        for slot in out.iter_mut() {
            *slot = prost::encoding::decode_varint(&mut buf).unwrap();
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    let p = prefixed.clone();
    cs.push(contender("quick-protobuf read_packed (new Vec)", e, move |verify| {
        let mut r = BytesReader::from_bytes(&p);
        let vec = r.read_packed(&p, |r, b| r.read_uint64(b)).unwrap();
        if verify {
            hash_values(vec.iter().copied())
        } else {
            last(&vec, vec.len())
        }
    }));
    let (p, mut vec) = (prefixed.clone(), Vec::<u64>::new());
    cs.push(contender("protobuf read_repeated_packed (Vec)", e, move |verify| {
        vec.clear();
        let mut is = protobuf::CodedInputStream::from_bytes(&p);
        is.read_repeated_packed_uint64_into(&mut vec).unwrap();
        if verify {
            hash_values(vec.iter().copied())
        } else {
            last(&vec, vec.len())
        }
    }));
    let (p, mut out) = (payload.clone(), vec![0u64; n]);
    cs.push(contender("integer-encoding decode_var loop", e, move |verify| {
        let mut pos = 0;
        for slot in out.iter_mut() {
            let (v, len) = u64::decode_var(&p[pos..]).unwrap();
            *slot = v;
            pos += len;
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    let (p, mut out) = (payload.clone(), vec![0u64; n]);
    cs.push(contender("varint-simd decode loop", e, move |verify| {
        let mut pos = 0;
        for slot in out.iter_mut() {
            let (v, len) = varint_simd::decode::<u64>(&p[pos..]).unwrap();
            *slot = v;
            pos += len;
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    fill_row(&mut cs, n);
    Bench::per_value("decode_u64", dist, n, payload.len(), PROST_PACKED, cs)
}

/// `decode_u64` of one payload of `n` values whose output (`8n` bytes) is larger than the last
/// level cache, so that the stores go to memory and `out.fill` measures the memory's store
/// bandwidth. At 1,000,000 values the 8 MB output stays in this machine's L3 (the fill then
/// runs at L3 speed, not at the store bandwidth the issue's "within 1.5x of a plain fill"
/// names; this bench shows the memory-bound case beside that target, which stays at 1,000,000.
/// Only the dispatched and AVX2/AVX-512 kernels, beside prost and the fill.
fn decode_u64_dram_bench(dist: Dist, n: usize) -> Bench {
    let (values, payload, prefixed) = packed_data(dist, n);
    let e = Some(hash_values(values.iter().copied()));
    drop(values);
    let mut cs = Vec::new();
    kernel_rows(&mut cs, &payload, n, e, |name| name.contains("dispatch") || name.contains("avx"));
    prost_packed_row(
        &mut cs,
        &prefixed,
        e,
        |w, v, b, c| prost::encoding::uint64::merge_repeated(w, v, b, c),
        |v| v,
    );
    fill_row(&mut cs, n);
    Bench::per_value("decode_u64_dram", dist, n, payload.len(), PROST_PACKED, cs)
}

/// Copies of the data in the `_fresh` benches: each call decodes (or encodes) the next, so that
/// the branch predictor cannot learn the varint lengths across calls (real data is not decoded
/// over and over). Zen 4's predictor learned 16 payloads of 10,000 values (AVX2 `u64-mixed`
/// 1.30 ns/value with 16, 1.62 with 48), and 64 of `realistic` data too: a probe rotating 64
/// payloads, or the same 64 each stored four times over, took AVX2 0.49-0.53 ns/value and
/// AVX-512 0.35-0.36, 256 different ones 0.60 and 0.39-0.40; the AVX-512 encoder on `realistic`
/// arrays 0.38, 0.48-0.52 and 0.76-0.79 (so the footprint also costs it); prost's loops within
/// 1% with 64 or 256 (its branches are per value, too many to learn). With 256 the inputs
/// (4-20 MB a contender) come from L3, as fresh data does.
const FRESH_COPIES: usize = 256;

/// Payloads of a `_fresh` bench of `n` values: [`FRESH_COPIES`], or for short payloads enough
/// for 65,536 values in all, so that the reference's per-value branches (whose outcomes a
/// predictor would learn over 256 payloads of 8 values) meet as many lengths as on long ones.
fn fresh_copies(n: usize) -> usize {
    // A power of two, so that every odd `Walk` step comes round to every copy.
    FRESH_COPIES.max(((1 << 16) / n.max(1)).next_power_of_two())
}

/// Which of a `_fresh` bench's copies a contender takes next: the first when verifying, else the
/// one `step` on, each contender with a step of its own (odd: with a power-of-two number of
/// copies, every copy comes round).
/// All walking one copy a call, the contender after one of about its speed in a round read the
/// copies that one had just brought into L2: `Kernel(avx512)`, after `Kernel(avx2)`, took 0.397
/// ns a value on fresh u32-mixed data against 0.484 for the same kernel dispatched, first in the
/// round, and 0.493 itself when put first (Sapphire Rapids). (A copy of the inputs per
/// contender instead put 10 times the footprint through L3, and every row then measured memory:
/// 0.81-0.89 ns.)
struct Walk {
    at: usize,
    step: usize,
}

impl Walk {
    /// The walk of a bench's `contender`-th contender (distinct steps for up to 64).
    fn new(contender: usize) -> Walk {
        Walk { at: 0, step: 2 * (contender * 37 % 64) + 1 }
    }

    fn next(&mut self, verify: bool, copies: usize) -> usize {
        self.at = if verify { 0 } else { (self.at + self.step) % copies };
        self.at
    }
}

/// Values in the `decode_u64_dram` benches: 128 MB of `u64` output, four times this machine's
/// L3 (32 MB).
const DRAM_VALUES: usize = 16_000_000;

/// The payloads of a `_fresh` bench, shared by its contenders.
type Payloads = Rc<Vec<Vec<u8>>>;

/// The values of `fresh_copies(n)` payloads of `n` values, the payloads bare and length-prefixed,
/// and their mean size in bytes.
fn fresh_payloads(dist: Dist, n: usize) -> (Vec<u64>, Payloads, Payloads, usize) {
    let copies = fresh_copies(n);
    let all = data::values(dist, n * copies);
    data::check_distribution(dist, &all);
    let payloads: Payloads = Rc::new(all.chunks(n).map(data::packed).collect());
    let prefixed: Payloads = Rc::new(payloads.iter().map(|p| data::length_prefixed(p)).collect());
    let bytes = payloads.iter().map(Vec::len).sum::<usize>() / copies;
    (all, payloads, prefixed, bytes)
}

/// `decode_u64` over `fresh_copies(n)` different payloads of the same distribution, one per
/// call. Verification uses the first payload.
fn decode_u64_fresh_bench(dist: Dist, n: usize) -> Bench {
    let (all, payloads, prefixed, bytes) = fresh_payloads(dist, n);
    let e = Some(hash_values(all[..n].iter().copied()));
    let mut cs = Vec::new();
    let mut walks = (0..).map(Walk::new);
    for k in pbwire_backends() {
        let (ps, mut out, mut walk) = (payloads.clone(), vec![0u64; n], walks.next().unwrap());
        cs.push(contender(k.name(), e, move |verify| {
            let i = walk.next(verify, ps.len());
            let c = k.decode_u64(&ps[i], &mut out).unwrap();
            if verify {
                hash_values(out[..c].iter().copied())
            } else {
                last(&out, c)
            }
        }));
    }
    let (ps, mut vec, mut walk) = (prefixed.clone(), Vec::<u64>::new(), walks.next().unwrap());
    cs.push(contender(PROST_PACKED, e, move |verify| {
        let i = walk.next(verify, ps.len());
        prost_merge_u64(&mut vec, &ps[i]);
        if verify {
            hash_values(vec.iter().copied())
        } else {
            last(&vec, vec.len())
        }
    }));
    let (ps, mut out, mut walk) = (payloads.clone(), vec![0u64; n], walks.next().unwrap());
    cs.push(contender("pbwire varint::decode_u64 loop", e, move |verify| {
        let i = walk.next(verify, ps.len());
        let p = &ps[i];
        let mut pos = 0;
        for slot in out.iter_mut() {
            let (v, len) = pbwire::varint::decode_u64(&p[pos..]).unwrap();
            *slot = v;
            pos += len;
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    let (ps, mut out, mut walk) = (payloads.clone(), vec![0u64; n], walks.next().unwrap());
    cs.push(contender("pbwire Reader::read_varint loop", e, move |verify| {
        let i = walk.next(verify, ps.len());
        let mut r = pbwire::reader::Reader::new(&ps[i]);
        for slot in out.iter_mut() {
            *slot = r.read_varint().unwrap();
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    let (ps, mut out, mut walk) = (payloads.clone(), vec![0u64; n], walks.next().unwrap());
    cs.push(contender("prost decode_varint loop", e, move |verify| {
        let i = walk.next(verify, ps.len());
        let mut buf: &[u8] = &ps[i];
        for slot in out.iter_mut() {
            *slot = prost::encoding::decode_varint(&mut buf).unwrap();
        }
        if verify {
            hash_values(out.iter().copied())
        } else {
            last(&out, n)
        }
    }));
    Bench::per_value("decode_u64_fresh", dist, n, bytes, PROST_PACKED, cs)
}

/// `decode_u32` or `decode_i32` over `fresh_copies(n)` different payloads, one per call, as in
/// `decode_u64_fresh` (pbwire's backends and prost's `merge_repeated`). Verification uses the
/// first payload.
fn decode_narrow_fresh_bench(dist: Dist, narrow: Narrow, n: usize) -> Bench {
    let (all, payloads, prefixed, bytes) = fresh_payloads(dist, n);
    let e = Some(hash_values(all[..n].iter().map(|&v| v as u32 as u64)));
    // The payload for this call: the first when verifying, else the next.
    fn result(values: impl Iterator<Item = u32>, verify: bool) -> u64 {
        if verify {
            hash_values(values.map(u64::from))
        } else {
            values.last().map_or(0, u64::from)
        }
    }
    let mut cs = Vec::new();
    let mut walks = (0..).map(Walk::new);
    for k in pbwire_backends() {
        let (ps, mut walk, mut out) = (payloads.clone(), walks.next().unwrap(), vec![0u32; n]);
        let mut signed = vec![0i32; n];
        cs.push(contender(k.name(), e, move |verify| {
            let p = &ps[walk.next(verify, ps.len())];
            match narrow {
                Narrow::Uint32 => {
                    let c = k.decode_u32(p, &mut out).unwrap();
                    result(out[..c].iter().copied(), verify)
                }
                Narrow::Int32 => {
                    let c = k.decode_i32(p, &mut signed).unwrap();
                    result(signed[..c].iter().map(|&v| v as u32), verify)
                }
            }
        }));
    }
    let (ps, mut walk, mut vec, mut signed) =
        (prefixed.clone(), walks.next().unwrap(), Vec::<u32>::new(), Vec::<i32>::new());
    cs.push(contender(PROST_PACKED, e, move |verify| {
        let mut buf: &[u8] = &ps[walk.next(verify, ps.len())];
        let ctx = DecodeContext::default();
        match narrow {
            Narrow::Uint32 => {
                vec.clear();
                prost::encoding::uint32::merge_repeated(PW::LengthDelimited, &mut vec, &mut buf, ctx)
                    .unwrap();
                result(vec.iter().copied(), verify)
            }
            Narrow::Int32 => {
                signed.clear();
                prost::encoding::int32::merge_repeated(PW::LengthDelimited, &mut signed, &mut buf, ctx)
                    .unwrap();
                result(signed.iter().map(|&v| v as u32), verify)
            }
        }
    }));
    Bench::per_value(
        match narrow {
            Narrow::Uint32 => "decode_u32_fresh",
            Narrow::Int32 => "decode_i32_fresh",
        },
        dist,
        n,
        bytes,
        PROST_PACKED,
        cs,
    )
}

/// The rows of a 32-bit packed decode that differ by element type: pbwire's backends (`decode`),
/// prost's `merge_repeated` (`merge`), quick-protobuf's `read_packed` (`quick`) and rust-protobuf's
/// `read_repeated_packed_*_into` (`protobuf`); `wire` gives an element's value as the checksum
/// takes it.
#[allow(clippy::too_many_arguments)]
fn narrow_rows<T: Copy + Default + 'static>(
    cs: &mut Vec<Contender>,
    (payload, prefixed): (&Rc<Vec<u8>>, &Rc<Vec<u8>>),
    n: usize,
    e: Option<u64>,
    decode: impl Fn(&dyn PbKernels, &[u8], &mut [T]) -> pbwire::Result<usize> + Copy + 'static,
    merge: impl Fn(PW, &mut Vec<T>, &mut &[u8], DecodeContext) -> Result<(), prost::DecodeError> + 'static,
    quick: impl FnMut(&mut BytesReader, &[u8]) -> quick_protobuf::Result<T> + Copy + 'static,
    protobuf: impl Fn(&mut protobuf::CodedInputStream, &mut Vec<T>) -> protobuf::Result<()> + 'static,
    wire: fn(T) -> u64,
) {
    let hash = move |s: &[T]| hash_values(s.iter().map(|&v| wire(v)));
    for k in pbwire_backends() {
        let (p, mut out) = (payload.clone(), vec![T::default(); n]);
        cs.push(contender(k.name(), e, move |verify| {
            let c = decode(&*k, &p, &mut out).unwrap();
            if verify {
                hash(&out[..c])
            } else {
                c as u64 ^ wire(out[c - 1])
            }
        }));
    }
    prost_packed_row(cs, prefixed, e, merge, wire);
    let p = prefixed.clone();
    cs.push(contender("quick-protobuf read_packed (new Vec)", e, move |verify| {
        let mut r = BytesReader::from_bytes(&p);
        let vec = r.read_packed(&p, quick).unwrap();
        if verify {
            hash(&vec)
        } else {
            vec.len() as u64 ^ wire(vec[n - 1])
        }
    }));
    let (p, mut vec) = (prefixed.clone(), Vec::<T>::new());
    cs.push(contender("protobuf read_repeated_packed (Vec)", e, move |verify| {
        vec.clear();
        let mut is = protobuf::CodedInputStream::from_bytes(&p);
        protobuf(&mut is, &mut vec).unwrap();
        if verify {
            hash(&vec)
        } else {
            vec.len() as u64 ^ wire(vec[n - 1])
        }
    }));
}

fn decode_narrow_bench(dist: Dist, narrow: Narrow, n: usize) -> Bench {
    let (values, payload, prefixed) = packed_data(dist, n);
    let e = Some(hash_values(values.iter().map(|&v| v as u32 as u64)));
    let h32 = |s: &[u32]| hash_values(s.iter().map(|&v| v as u64));
    let mut cs = Vec::new();
    match narrow {
        Narrow::Uint32 => narrow_rows(
            &mut cs,
            (&payload, &prefixed),
            n,
            e,
            |k, p, out| k.decode_u32(p, out),
            |w, v, b, c| prost::encoding::uint32::merge_repeated(w, v, b, c),
            |r, b| r.read_uint32(b),
            |is, v| is.read_repeated_packed_uint32_into(v),
            |v| v as u64,
        ),
        Narrow::Int32 => narrow_rows(
            &mut cs,
            (&payload, &prefixed),
            n,
            e,
            |k, p, out| k.decode_i32(p, out),
            |w, v, b, c| prost::encoding::int32::merge_repeated(w, v, b, c),
            |r, b| r.read_int32(b),
            |is, v| is.read_repeated_packed_int32_into(v),
            |v| v as u32 as u64,
        ),
    }
    let (p, mut out) = (payload.clone(), vec![0u32; n]);
    cs.push(contender("prost decode_varint loop", e, move |verify| {
        let mut buf: &[u8] = &p;
        for slot in out.iter_mut() {
            *slot = prost::encoding::decode_varint(&mut buf).unwrap() as u32;
        }
        if verify {
            h32(&out)
        } else {
            out[n - 1] as u64
        }
    }));
    let mut out = vec![0u32; n];
    cs.push(contender("out.fill (store reference)", None, move |_| {
        out.fill(black_box(7));
        out[n - 1] as u64
    }));
    Bench::per_value(
        if narrow == Narrow::Uint32 { "decode_u32" } else { "decode_i32" },
        dist,
        n,
        payload.len(),
        PROST_PACKED,
        cs,
    )
}

// ------------------------------------------------------------------------------ fixed width

/// A packed decoder into a slice.
type DecodeInto<T> = fn(&[u8], &mut [T]) -> pbwire::Result<usize>;
/// A packed decoder appending to a `Vec`.
type ExtendInto<T> = fn(&[u8], &mut Vec<T>) -> pbwire::Result<usize>;

/// A decoder's two pbwire rows, named: into a slice of `n` elements, and appended to a `Vec`
/// cleared each call; `wire` gives an element as the checksum takes it.
fn slice_and_vec_rows<T: Copy + Default + 'static>(
    cs: &mut Vec<Contender>,
    payload: &Rc<Vec<u8>>,
    n: usize,
    e: Option<u64>,
    (slice_name, decode): (&str, DecodeInto<T>),
    (vec_name, extend): (&str, ExtendInto<T>),
    wire: fn(T) -> u64,
) {
    let (p, mut out) = (payload.clone(), vec![T::default(); n]);
    cs.push(contender(slice_name, e, move |verify| {
        let c = decode(&p, &mut out).unwrap();
        if verify {
            hash_values(out[..c].iter().map(|&v| wire(v)))
        } else {
            c as u64 ^ wire(out[c - 1])
        }
    }));
    let (p, mut vec) = (payload.clone(), Vec::<T>::new());
    cs.push(contender(vec_name, e, move |verify| {
        vec.clear();
        let c = extend(&p, &mut vec).unwrap();
        if verify {
            hash_values(vec.iter().map(|&v| wire(v)))
        } else {
            c as u64 ^ wire(vec[c - 1])
        }
    }));
}

/// A packed `fixed64` (`wide`) or `fixed32` field of `n` values, both ways: the decoders (a
/// slice, a `Vec`) and the encoder against prost's `merge_repeated` and `encode_packed` for
/// the type, beside a `copy_from_slice` of the same bytes (what either amounts to on a
/// little-endian host). The values are `u64-mixed`'s, `fixed32` their low halves.
///
/// At 100 values a row can take twice the others' time, in every run of one binary: its
/// output sits a few hundred bytes after the payload modulo 4 KiB, so that each call's loads
/// wait on the last call's stores to the same low address bits (4K aliasing). A probe copying
/// 400 bytes at each distance took 5.2-5.7 ns a call at most, 11-17.6 at 320-640 bytes, for
/// `decode_fixed32` and `copy_from_slice` alike.
fn fixed_bench(wide: bool, encode: bool, n: usize) -> Bench {
    let values = data::values(Dist::U64Mixed, n);
    let v64: Rc<Vec<u64>> = Rc::new(values);
    let v32: Rc<Vec<u32>> = Rc::new(v64.iter().map(|&v| v as u32).collect());
    let payload: Rc<Vec<u8>> = Rc::new(if wide {
        v64.iter().flat_map(|v| v.to_le_bytes()).collect()
    } else {
        v32.iter().flat_map(|v| v.to_le_bytes()).collect()
    });
    let mut cs = Vec::new();
    let name = if wide { "fixed64" } else { "fixed32" };
    let baseline = if encode { PROST_FIXED_ENCODE } else { PROST_PACKED };
    if encode {
        let e = Some(hash_bytes(&payload));
        let (v, w, mut out) = (v64.clone(), v32.clone(), vec![0u8; payload.len()]);
        cs.push(contender(format!("pbwire packed::encode_{name}"), e, move |verify| {
            let len = if wide {
                pbwire::packed::encode_fixed64(&v, &mut out)
            } else {
                pbwire::packed::encode_fixed32(&w, &mut out)
            }
            .unwrap();
            if verify {
                hash_bytes(&out[..len])
            } else {
                len as u64 ^ out[len - 1] as u64
            }
        }));
        // prost's generated code: the key, the length, then each value's bytes. Into a
        // `BytesMut`, not a `Vec`: one more caller of prost's `encode_varint::<Vec<u8>>` (for the
        // key and length) made the compiler stop inlining it into the varint encode rows' loop,
        // whose one-byte fresh row then took 1.66-1.71 ns a value against 0.62.
        let (v, w, mut vec) =
            (v64.clone(), v32.clone(), prost::bytes::BytesMut::with_capacity(payload.len() + 16));
        cs.push(contender(PROST_FIXED_ENCODE, e, move |verify| {
            vec.clear();
            if wide {
                prost::encoding::fixed64::encode_packed(1, &v, &mut vec);
            } else {
                prost::encoding::fixed32::encode_packed(1, &w, &mut vec);
            }
            // The payload after prost's key and length prefix.
            let body = &vec[vec.len() - (v.len() << (2 + wide as usize))..];
            if verify {
                hash_bytes(body)
            } else {
                vec.len() as u64 ^ body[body.len() - 1] as u64
            }
        }));
        let (p, mut out) = (payload.clone(), vec![0u8; payload.len()]);
        cs.push(contender("copy_from_slice (copy reference)", None, move |_| {
            out.copy_from_slice(black_box(&p));
            out.len() as u64 ^ out[out.len() - 1] as u64
        }));
        return Bench::fixed(
            if wide { "encode_fixed64" } else { "encode_fixed32" },
            n,
            payload.len(),
            baseline,
            cs,
        );
    }
    let e = Some(if wide {
        hash_values(v64.iter().copied())
    } else {
        hash_values(v32.iter().map(|&v| v as u64))
    });
    let prefixed = Rc::new(data::length_prefixed(&payload));
    if wide {
        let slice = ("pbwire packed::decode_fixed64", pbwire::packed::decode_fixed64 as DecodeInto<u64>);
        let vec = ("pbwire packed::extend_fixed64 (Vec)", pbwire::packed::extend_fixed64 as ExtendInto<u64>);
        slice_and_vec_rows(&mut cs, &payload, n, e, slice, vec, |v| v);
        let merge =
            |w, v: &mut Vec<u64>, b: &mut &[u8], c| prost::encoding::fixed64::merge_repeated(w, v, b, c);
        prost_packed_row(&mut cs, &prefixed, e, merge, |v| v);
    } else {
        let slice = ("pbwire packed::decode_fixed32", pbwire::packed::decode_fixed32 as DecodeInto<u32>);
        let vec = ("pbwire packed::extend_fixed32 (Vec)", pbwire::packed::extend_fixed32 as ExtendInto<u32>);
        slice_and_vec_rows(&mut cs, &payload, n, e, slice, vec, |v| v as u64);
        let merge =
            |w, v: &mut Vec<u32>, b: &mut &[u8], c| prost::encoding::fixed32::merge_repeated(w, v, b, c);
        prost_packed_row(&mut cs, &prefixed, e, merge, |v| v as u64);
    }
    let (p, mut out) = (payload.clone(), vec![0u8; payload.len()]);
    cs.push(contender("copy_from_slice (copy reference)", None, move |_| {
        out.copy_from_slice(black_box(&p));
        out.len() as u64 ^ out[out.len() - 1] as u64
    }));
    Bench::fixed(if wide { "decode_fixed64" } else { "decode_fixed32" }, n, payload.len(), baseline, cs)
}

/// `encoded_len_u64` (the length prefix of a packed field, and the encoders' length pass) per
/// backend, against prost's `encoded_len_varint` summed over the values, as its packed encoders
/// size the prefix.
fn encoded_len_bench(dist: Dist, n: usize) -> Bench {
    let values = Rc::new(data::values(dist, n));
    let payload = data::packed(&values);
    let e = Some(payload.len() as u64);
    let mut cs = Vec::new();
    for k in pbwire_backends() {
        let v = values.clone();
        cs.push(contender(k.name().replace("packed::*", "packed::encoded_len_u64"), e, move |_| {
            k.encoded_len_u64(black_box(&v)) as u64
        }));
    }
    let v = values.clone();
    cs.push(contender(PROST_LEN, e, move |_| {
        black_box(&v).iter().map(|&x| prost::encoding::encoded_len_varint(x)).sum::<usize>() as u64
    }));
    Bench::per_value("encoded_len_u64", dist, n, payload.len(), PROST_LEN, cs)
}

/// `count_varints`, or with `skip` `skip_varints(payload, n)` (the offset after every varint),
/// per backend, against the plain loop each replaces.
fn count_bench(dist: Dist, n: usize, skip: bool) -> Bench {
    let values = data::values(dist, n);
    let payload = Rc::new(data::packed(&values));
    let e = Some(if skip { payload.len() } else { n } as u64);
    let mut cs = Vec::new();
    for k in pbwire_backends() {
        let p = payload.clone();
        cs.push(contender(k.name(), e, move |_| {
            if skip {
                k.skip_varints(&p, n).unwrap() as u64
            } else {
                k.count_varints(&p) as u64
            }
        }));
    }
    let p = payload.clone();
    let baseline = if skip { "varint::skip loop" } else { "iter().filter(b < 0x80).count()" };
    cs.push(contender(baseline, e, move |_| {
        if skip {
            let mut pos = 0;
            for _ in 0..n {
                pos += pbwire::varint::skip(&p[pos..]).unwrap();
            }
            pos as u64
        } else {
            p.iter().filter(|&&b| b < 0x80).count() as u64
        }
    }));
    Bench::per_value(
        if skip { "skip_varints" } else { "count_varints" },
        dist,
        n,
        payload.len(),
        baseline,
        cs,
    )
}

// ------------------------------------------------------------------------------ packed encode

/// Encoding `n` values of `dist` (as `narrow`'s type, or `uint64`). With `copies` > 1, each call
/// encodes the next of that many different arrays (the `_fresh` benches: the branch predictor
/// cannot learn one array's lengths across calls, as the loops of prost and integer-encoding
/// otherwise do at 10,000 values); verification uses the first.
fn encode_bench(dist: Dist, n: usize, narrow: Option<Narrow>, copies: usize) -> Bench {
    let all = data::values(dist, n * copies);
    let arrays: Vec<Vec<u64>> = all.chunks(n).map(<[u64]>::to_vec).collect();
    let payloads: Vec<Vec<u8>> = arrays.iter().map(|v| data::packed(v)).collect();
    let e = Some(hash_bytes(&payloads[0]));
    // Room for the longest; each call's own length is `lens[i]`.
    let size = payloads.iter().map(Vec::len).max().unwrap_or(0);
    let mean = payloads.iter().map(Vec::len).sum::<usize>() / copies;
    let lens: Rc<Vec<usize>> = Rc::new(payloads.iter().map(Vec::len).collect());
    let mut cs = Vec::new();
    // The arrays as the encoder under test takes them (only those of `narrow`'s type: with
    // `FRESH_COPIES` arrays each set is 10-20 MB); prost's rows take the `u64` ones.
    let narrowed = |want: Narrow| narrow == Some(want);
    let v32: Rc<Vec<Vec<u32>>> = Rc::new(if narrowed(Narrow::Uint32) {
        arrays.iter().map(|a| a.iter().map(|&v| v as u32).collect()).collect()
    } else {
        Vec::new()
    });
    let vi32: Rc<Vec<Vec<i32>>> = Rc::new(if narrowed(Narrow::Int32) {
        arrays.iter().map(|a| a.iter().map(|&v| v as i32).collect()).collect()
    } else {
        Vec::new()
    });
    let v64 = Rc::new(arrays);
    // The array of each call (see `Walk`).
    let mut walks = (0..).map(Walk::new);
    for k in pbwire_backends() {
        let (mut out, mut walk) = (vec![0u8; size], walks.next().unwrap());
        let (v, w, wi) = (v64.clone(), v32.clone(), vi32.clone());
        let name =
            k.name().replace("packed::*", &format!("packed::encode_{}", narrow.map_or("u64", Narrow::name)));
        cs.push(contender(name, e, move |verify| {
            let i = walk.next(verify, copies);
            let len = match narrow {
                None => k.encode_u64(&v[i], &mut out),
                Some(Narrow::Uint32) => k.encode_u32(&w[i], &mut out),
                Some(Narrow::Int32) => k.encode_i32(&wi[i], &mut out),
            }
            .unwrap();
            if verify {
                hash_bytes(&out[..len])
            } else {
                len as u64 ^ out[len - 1] as u64
            }
        }));
    }
    // The dispatched encoder given room for the worst case (10 bytes a value, 5 for `uint32`),
    // which spares it the length pass over the whole array.
    let worst = n * if narrow == Some(Narrow::Uint32) { 5 } else { 10 };
    let (mut out, mut walk) = (vec![0u8; worst], walks.next().unwrap());
    let (v, w, wi) = (v64.clone(), v32.clone(), vi32.clone());
    let name =
        format!("pbwire packed::encode_{}, room for the worst case", narrow.map_or("u64", Narrow::name));
    cs.push(contender(name, e, move |verify| {
        let i = walk.next(verify, copies);
        let len = match narrow {
            None => pbwire::packed::encode_u64(&v[i], &mut out),
            Some(Narrow::Uint32) => pbwire::packed::encode_u32(&w[i], &mut out),
            Some(Narrow::Int32) => pbwire::packed::encode_i32(&wi[i], &mut out),
        }
        .unwrap();
        if verify {
            hash_bytes(&out[..len])
        } else {
            len as u64 ^ out[len - 1] as u64
        }
    }));
    // What prost's generated code does per value: widen (int32 sign-extends) and encode_varint.
    let (v, mut vec, mut walk) = (v64.clone(), Vec::<u8>::with_capacity(size), walks.next().unwrap());
    cs.push(contender(PROST_ENCODE, e, move |verify| {
        let i = walk.next(verify, copies);
        vec.clear();
        for &x in v[i].iter() {
            prost::encoding::encode_varint(x, &mut vec);
        }
        if verify {
            hash_bytes(&vec)
        } else {
            vec.len() as u64 ^ vec[vec.len() - 1] as u64
        }
    }));
    let (v, l, mut out, mut walk) = (v64.clone(), lens.clone(), vec![0u8; size], walks.next().unwrap());
    cs.push(contender("prost encode_varint loop (&mut [u8])", e, move |verify| {
        let i = walk.next(verify, copies);
        let mut buf: &mut [u8] = &mut out[..l[i]];
        for &x in v[i].iter() {
            prost::encoding::encode_varint(x, &mut buf);
        }
        if verify {
            hash_bytes(&out[..l[i]])
        } else {
            out[l[i] - 1] as u64
        }
    }));
    let (v, mut out, mut walk) = (v64.clone(), vec![0u8; size], walks.next().unwrap());
    cs.push(contender("integer-encoding encode_var loop", e, move |verify| {
        let i = walk.next(verify, copies);
        let mut pos = 0;
        for &x in v[i].iter() {
            pos += x.encode_var(&mut out[pos..]);
        }
        if verify {
            hash_bytes(&out[..pos])
        } else {
            pos as u64 ^ out[pos - 1] as u64
        }
    }));
    if copies == 1 {
        let (v, mut out) = (v64.clone(), vec![0u8; size]);
        cs.push(contender("varint-simd encode loop", e, move |verify| {
            let mut pos = 0;
            for &x in v[0].iter() {
                let (bytes, len) = varint_simd::encode(x);
                out[pos..pos + len as usize].copy_from_slice(&bytes[..len as usize]);
                pos += len as usize;
            }
            if verify {
                hash_bytes(&out[..pos])
            } else {
                pos as u64 ^ out[size - 1] as u64
            }
        }));
        let (p, mut out) = (Rc::new(payloads[0].clone()), vec![0u8; size]);
        cs.push(contender("copy_from_slice (store reference)", None, move |_| {
            out.copy_from_slice(black_box(&p));
            out[size - 1] as u64
        }));
    }
    let name = match (narrow, copies > 1) {
        (None, false) => "encode_u64",
        (Some(Narrow::Uint32), false) => "encode_u32",
        (Some(Narrow::Int32), false) => "encode_i32",
        (None, true) => "encode_u64_fresh",
        (Some(Narrow::Uint32), true) => "encode_u32_fresh",
        (Some(Narrow::Int32), true) => "encode_i32_fresh",
    };
    Bench::per_value(name, dist, n, mean, PROST_ENCODE, cs)
}

// ------------------------------------------------------------------------------ messages

/// Scanning every top-level field of `message` (of `count` fields), described as `data`.
fn scan_bench(message: (Vec<u8>, usize), data: String) -> Bench {
    let (msg, count) = message;
    let msg = Rc::new(msg);
    let sum: u64 = fields(&msg).map(|f| f.unwrap().number as u64).sum();
    let e = Some(hash_values([count as u64, sum]));
    let mut cs = Vec::new();
    let m = msg.clone();
    cs.push(contender("pbwire fields()", e, move |_| {
        let (mut n, mut s) = (0u64, 0u64);
        for f in fields(&m) {
            s += f.unwrap().number as u64;
            n += 1;
        }
        hash_values([n, s])
    }));
    let m = msg.clone();
    cs.push(contender("pbwire decode_tag + skip_field", e, move |_| {
        let (mut n, mut s, mut pos) = (0u64, 0u64, 0);
        while pos < m.len() {
            let (tag, tl) = wire::decode_tag(&m[pos..]).unwrap();
            pos += tl;
            pos += wire::skip_field(tag, &m[pos..]).unwrap();
            s += tag.field() as u64;
            n += 1;
        }
        hash_values([n, s])
    }));
    let m = msg.clone();
    cs.push(contender("pbwire Reader::skip_next", e, move |_| {
        let (mut n, mut s) = (0u64, 0u64);
        let mut r = pbwire::reader::Reader::new(&m);
        while !r.is_empty() {
            s += r.skip_next().unwrap().field() as u64;
            n += 1;
        }
        hash_values([n, s])
    }));
    let m = msg.clone();
    cs.push(contender("pbwire validate (no per-field output)", None, move |_| {
        pbwire::fields::validate(black_box(&m)).unwrap();
        m.len() as u64
    }));
    // AVX2's table where the dispatch takes AVX-512's: what CPUs without AVX-512 get.
    if pbwire::backend::detected() == pbwire::backend::Backend::Avx512 {
        let m = msg.clone();
        cs.push(contender("pbwire validate, AVX2 table (Kernel(avx2))", None, move |_| {
            let avx2 = pbwire::backend::Kernel::new(pbwire::backend::Backend::Avx2).unwrap();
            avx2.validate(black_box(&m), wire::DEFAULT_DEPTH_LIMIT).unwrap();
            m.len() as u64
        }));
    }
    let m = msg.clone();
    cs.push(contender("pbwire validate, scalar loop only (Kernel(scalar))", None, move |_| {
        let scalar = pbwire::backend::Kernel::new(pbwire::backend::Backend::Scalar).unwrap();
        scalar.validate(black_box(&m), wire::DEFAULT_DEPTH_LIMIT).unwrap();
        m.len() as u64
    }));
    let m = msg.clone();
    cs.push(contender("prost decode_key + skip_field", e, move |_| {
        let (mut n, mut s) = (0u64, 0u64);
        let mut buf: &[u8] = &m;
        while !buf.is_empty() {
            let (tag, wt) = prost::encoding::decode_key(&mut buf).unwrap();
            prost::encoding::skip_field(wt, tag, &mut buf, DecodeContext::default()).unwrap();
            s += tag as u64;
            n += 1;
        }
        hash_values([n, s])
    }));
    let m = msg.clone();
    cs.push(contender("quick-protobuf next_tag + read_unknown", e, move |_| {
        let (mut n, mut s) = (0u64, 0u64);
        let mut r = BytesReader::from_bytes(&m);
        while !r.is_eof() {
            let tag = r.next_tag(&m).unwrap();
            r.read_unknown(&m, tag).unwrap();
            s += (tag >> 3) as u64;
            n += 1;
        }
        hash_values([n, s])
    }));
    let m = msg.clone();
    cs.push(contender("protobuf read_raw_tag_or_eof + skip_field", e, move |_| {
        let (mut n, mut s) = (0u64, 0u64);
        let mut is = protobuf::CodedInputStream::from_bytes(&m);
        while let Some(tag) = is.read_raw_tag_or_eof().unwrap() {
            is.skip_field(protobuf::rt::WireType::new(tag & 7).unwrap()).unwrap();
            s += (tag >> 3) as u64;
            n += 1;
        }
        hash_values([n, s])
    }));
    Bench {
        kernel: "scan",
        data,
        unit: "field",
        units: count,
        bytes: msg.len(),
        baseline: "prost decode_key + skip_field",
        contenders: cs,
    }
}

/// Scanning small messages one by one, each as a message of its own (as a log pipeline or a
/// dynamic decoder meets the records of a stream): the 100,000 records' bytes, every field of
/// each (`count` in all). A record is 39-93 bytes, so its last 15 are the path for a message's
/// end (`fields()` and `Reader::skip_next` read 16 bytes from a tag on their fast paths).
fn scan_records_bench(n: usize) -> Bench {
    let msg = data::records_message(&data::records(n));
    let spans: Vec<(usize, usize)> = fields(&msg)
        .map(|f| {
            let f = f.unwrap();
            (f.value_offset, f.end)
        })
        .collect();
    let count: usize = spans.iter().map(|&(a, b)| fields(&msg[a..b]).count()).sum();
    let sum: u64 =
        spans.iter().flat_map(|&(a, b)| fields(&msg[a..b])).map(|f| f.unwrap().number as u64).sum();
    let e = Some(hash_values([count as u64, sum]));
    let (msg, spans) = (Rc::new(msg), Rc::new(spans));
    let each = |scan: fn(&[u8], &mut u64, &mut u64)| {
        let (m, sp) = (msg.clone(), spans.clone());
        move |_: bool| {
            let (mut n, mut s) = (0u64, 0u64);
            for &(a, b) in sp.iter() {
                scan(&m[a..b], &mut n, &mut s);
            }
            hash_values([n, s])
        }
    };
    let cs = vec![
        contender(
            "pbwire fields()",
            e,
            each(|r, n, s| {
                for f in fields(r) {
                    *s += f.unwrap().number as u64;
                    *n += 1;
                }
            }),
        ),
        contender(
            "pbwire Reader::skip_next",
            e,
            each(|r, n, s| {
                let mut r = pbwire::reader::Reader::new(r);
                while !r.is_empty() {
                    *s += r.skip_next().unwrap().field() as u64;
                    *n += 1;
                }
            }),
        ),
        {
            let (m, sp) = (msg.clone(), spans.clone());
            contender("pbwire Fields::within(record, buffer)", e, move |_| {
                let (mut n, mut s) = (0u64, 0u64);
                for &(a, b) in sp.iter() {
                    for f in pbwire::fields::Fields::within(&m[a..b], &m) {
                        s += f.unwrap().number as u64;
                        n += 1;
                    }
                }
                hash_values([n, s])
            })
        },
        {
            let (m, sp) = (msg.clone(), spans.clone());
            contender("pbwire Reader::within(record, buffer) + skip_next", e, move |_| {
                let (mut n, mut s) = (0u64, 0u64);
                for &(a, b) in sp.iter() {
                    let mut r = pbwire::reader::Reader::within(&m[a..b], &m);
                    while !r.is_empty() {
                        s += r.skip_next().unwrap().field() as u64;
                        n += 1;
                    }
                }
                hash_values([n, s])
            })
        },
        contender(
            "prost decode_key + skip_field",
            e,
            each(|mut buf, n, s| {
                while !buf.is_empty() {
                    let (tag, wt) = prost::encoding::decode_key(&mut buf).unwrap();
                    prost::encoding::skip_field(wt, tag, &mut buf, DecodeContext::default()).unwrap();
                    *s += tag as u64;
                    *n += 1;
                }
            }),
        ),
    ];
    Bench {
        kernel: "scan",
        data: format!("{n} records, each a message of its own, {count} fields"),
        unit: "field",
        units: count,
        bytes: spans.iter().map(|&(a, b)| b - a).sum(),
        baseline: "prost decode_key + skip_field",
        contenders: cs,
    }
}

/// A pbwire row of the records bench: `decode` appends the message's records, borrowed, to a new
/// `Vec` each call (prost allocates its own too).
fn records_row(
    cs: &mut Vec<Contender>,
    name: &str,
    msg: &Rc<Vec<u8>>,
    e: Option<u64>,
    decode: impl for<'a> Fn(&'a [u8], &mut Vec<msgs::RecordRef<'a>>) + 'static,
) {
    let m = msg.clone();
    cs.push(contender(name, e, move |verify| {
        let mut out = Vec::new();
        decode(&m, &mut out);
        if verify {
            data::records_checksum(out.iter().map(|r| (r.a, r.b, r.c, r.x, r.y)))
        } else {
            out.len() as u64 ^ out[out.len() - 1].x as u64
        }
    }));
}

fn records_bench(n: usize) -> Bench {
    let records = data::records(n);
    let msg = Rc::new(data::records_message(&records));
    let e = Some(data::records_checksum(records.iter().map(|r| (&r.a[..], &r.b[..], &r.c[..], r.x, r.y))));
    let mut cs = Vec::new();
    records_row(&mut cs, "pbwire fields() zero-copy (&str, utf8::from_utf8)", &msg, e, |m, out| {
        msgs::pbwire_records(m, out).unwrap()
    });
    records_row(&mut cs, "pbwire Reader, generated-code shape (&str, utf8::from_utf8)", &msg, e, |m, out| {
        msgs::reader_records(m, out, msgs::reader_record).unwrap()
    });
    records_row(&mut cs, "pbwire Reader, fields in declaration order (read_tag_if)", &msg, e, |m, out| {
        msgs::reader_records(m, out, msgs::reader_record_in_order).unwrap()
    });
    records_row(
        &mut cs,
        "pbwire Reader, generated-code shape (&str, core::str::from_utf8)",
        &msg,
        e,
        |m, out| msgs::reader_records(m, out, msgs::reader_record_core_utf8).unwrap(),
    );
    let m = msg.clone();
    cs.push(contender("prost derive decode (owned)", e, move |verify| {
        let d = msgs::ProstRecords::decode(&m[..]).unwrap();
        if verify {
            data::records_checksum(d.records.iter().map(|r| (&r.a[..], &r.b[..], &r.c[..], r.x, r.y)))
        } else {
            d.records.len() as u64 ^ d.records[d.records.len() - 1].x as u64
        }
    }));
    let m = msg.clone();
    cs.push(contender("quick-protobuf MessageRead (borrowed)", e, move |verify| {
        let mut r = BytesReader::from_bytes(&m);
        let d = msgs::QuickRecords::from_reader(&mut r, &m).unwrap();
        if verify {
            data::records_checksum(d.records.iter().map(|r| (r.0.a, r.0.b, r.0.c, r.0.x, r.0.y)))
        } else {
            d.records.len() as u64 ^ d.records[d.records.len() - 1].0.x as u64
        }
    }));
    Bench {
        kernel: "records message",
        data: format!("{n} records, {} bytes", msg.len()),
        unit: "record",
        units: n,
        bytes: msg.len(),
        baseline: "prost derive decode (owned)",
        contenders: cs,
    }
}

fn trade_order_bench() -> Bench {
    let e = Some(TradeOrderRef::checksum(150, 7, "a", &[5, 6], true));
    let msg: &'static [u8] = &data::TRADE_ORDER;
    let cs = vec![
        contender("call + checksum only (reference)", None, move |_| {
            TradeOrderRef::checksum(black_box(150), 7, "a", black_box(&[5, 6]), true)
        }),
        contender("pbwire fields() zero-copy", e, move |_| {
            let m = msgs::pbwire_trade_order(black_box(msg)).unwrap();
            TradeOrderRef::checksum(m.order_id, m.user_id, m.user_name, &m.sku_ids[..m.sku_count], m.paid)
        }),
        contender("pbwire Reader, generated-code shape", e, move |_| {
            let m = msgs::reader_trade_order(black_box(msg)).unwrap();
            TradeOrderRef::checksum(m.order_id, m.user_id, m.user_name, &m.sku_ids[..m.sku_count], m.paid)
        }),
        contender("pbwire Reader, fields in declaration order (read_tag_if)", e, move |_| {
            let m = msgs::reader_trade_order_in_order(black_box(msg)).unwrap();
            TradeOrderRef::checksum(m.order_id, m.user_id, m.user_name, &m.sku_ids[..m.sku_count], m.paid)
        }),
        contender("pbwire Reader, declaration order, merged into the caller's message", e, move |_| {
            let mut m = TradeOrderRef::default();
            msgs::reader_trade_order_merge(black_box(msg), &mut m).unwrap();
            TradeOrderRef::checksum(m.order_id, m.user_id, m.user_name, &m.sku_ids[..m.sku_count], m.paid)
        }),
        contender("prost derive decode (owned)", e, move |_| {
            let m = msgs::ProstTradeOrder::decode(black_box(msg)).unwrap();
            let b = m.buyer.unwrap_or_default();
            TradeOrderRef::checksum(m.order_id, b.user_id, &b.user_name, &m.sku_ids, m.paid)
        }),
        contender("quick-protobuf MessageRead (borrowed)", e, move |_| {
            let msg = black_box(msg);
            let mut r = BytesReader::from_bytes(msg);
            let m = msgs::QuickTradeOrder::from_reader(&mut r, msg).unwrap();
            let b = m.buyer.unwrap_or_default();
            TradeOrderRef::checksum(m.order_id, b.user_id, b.user_name, &m.sku_ids, m.paid)
        }),
    ];
    Bench {
        kernel: "TradeOrder",
        data: "16 bytes, one message per call".into(),
        unit: "msg",
        units: 1,
        bytes: msg.len(),
        baseline: "prost derive decode (owned)",
        contenders: cs,
    }
}

// ------------------------------------------------------------------------------ streams

/// Splitting a stream of `count` length-prefixed messages of `lo..=hi` bytes: every message's
/// bytes found, none parsed (the checksum is the count and the lengths' sum).
fn stream_bench(count: usize, lo: u64, hi: u64) -> Bench {
    let (stream, total) = data::delimited_stream(count, lo, hi);
    let stream = Rc::new(stream);
    let e = Some(hash_values([count as u64, total as u64]));
    let s = stream.clone();
    let pbwire = contender("pbwire stream::delimited", e, move |_| {
        let (mut n, mut sum) = (0u64, 0u64);
        for m in pbwire::stream::delimited(&s) {
            sum += m.unwrap().len() as u64;
            n += 1;
        }
        hash_values([n, sum])
    });
    let s = stream.clone();
    let prost = contender("prost decode_length_delimiter + advance", e, move |_| {
        let (mut n, mut sum) = (0u64, 0u64);
        let mut buf: &[u8] = &s;
        while !buf.is_empty() {
            let len = prost::decode_length_delimiter(&mut buf).unwrap();
            assert!(len <= buf.len(), "message past the end");
            buf = &buf[len..];
            sum += len as u64;
            n += 1;
        }
        hash_values([n, sum])
    });
    let s = stream.clone();
    let quick = contender("quick-protobuf read_bytes", e, move |_| {
        let (mut n, mut sum) = (0u64, 0u64);
        let mut r = BytesReader::from_bytes(&s);
        while !r.is_eof() {
            sum += r.read_bytes(&s).unwrap().len() as u64;
            n += 1;
        }
        hash_values([n, sum])
    });
    Bench {
        kernel: "stream",
        data: format!("{count} messages of {lo}..={hi} bytes"),
        unit: "msg",
        units: count,
        bytes: stream.len(),
        baseline: "prost decode_length_delimiter + advance",
        contenders: vec![pbwire, prost, quick],
    }
}

// ------------------------------------------------------------------------------ UTF-8

const CORE_UTF8: &str = "core::str::from_utf8 (what prost runs)";

/// String validation as a decoder meets it: `count` strings of `lo..=hi` bytes, one call each;
/// pbwire's check against core's (prost's) and simdutf8's (a SIMD validator), the candidate
/// optional dependency #5 names.
fn utf8_bench(lo: usize, hi: usize, multibyte: bool) -> Bench {
    let count = 10_000;
    let (buf, spans) = data::utf8_strings(count, lo, hi, multibyte);
    let bytes = buf.len();
    let (buf, spans) = (Rc::new(buf), Rc::new(spans));
    let e = Some(hash_values(spans.iter().map(|&(_, n)| n as u64)));
    let mut cs = Vec::new();
    let mut add = |name: &str, check: fn(&[u8]) -> Option<usize>| {
        let (b, s) = (buf.clone(), spans.clone());
        cs.push(contender(name, e, move |verify| {
            if verify {
                return hash_values(s.iter().map(|&(at, n)| check(&b[at..at + n]).unwrap() as u64));
            }
            s.iter().map(|&(at, n)| check(black_box(&b[at..at + n])).unwrap_or(0) as u64).sum()
        }));
    };
    // The benches build pbwire with its `simdutf8` feature; the scalar kernel's check is what
    // the default build runs past the short ASCII check (core's).
    add("pbwire utf8::from_utf8 (feature simdutf8)", |b| pbwire::utf8::from_utf8(b).ok().map(str::len));
    add("pbwire without the feature (Kernel(scalar))", |b| {
        pbwire::backend::Kernel::new(pbwire::backend::Backend::Scalar)
            .unwrap()
            .from_utf8(b)
            .ok()
            .map(str::len)
    });
    add(CORE_UTF8, |b| core::str::from_utf8(b).ok().map(str::len));
    add("simdutf8 basic::from_utf8", |b| simdutf8::basic::from_utf8(b).ok().map(str::len));
    add("simdutf8 compat::from_utf8", |b| simdutf8::compat::from_utf8(b).ok().map(str::len));
    let kind = if multibyte { "some 2- and 3-byte chars" } else { "ASCII" };
    Bench {
        kernel: "utf8",
        data: format!("{count} strings of {lo}..={hi} bytes, {kind}"),
        unit: "string",
        units: count,
        bytes,
        baseline: CORE_UTF8,
        contenders: cs,
    }
}

// ------------------------------------------------------------------------------ harness

fn specs(quick: bool) -> Vec<Spec> {
    let sizes: &[usize] = if quick { &data::SIZES[..2] } else { &data::SIZES };
    let mut specs = Vec::new();
    let mut add = |id: String, build: Box<dyn Fn() -> Bench>| specs.push(Spec { id, build });
    for &dist in &Dist::ALL {
        for &n in sizes {
            add(format!("decode_u64/{}/{n}", dist.name()), Box::new(move || decode_u64_bench(dist, n)));
        }
    }
    // Short payloads, as packed fields inside messages usually are: where a bulk kernel's fixed
    // cost decides. The dispatched entry points hand payloads under 64 bytes (`SMALL_PAYLOAD`
    // in src/packed.rs) to the scalar reference; the Kernel rows show each backend on its own.
    for &dist in &Dist::ALL {
        for n in data::SHORT_SIZES {
            add(format!("decode_u64/{}/{n}", dist.name()), Box::new(move || decode_u64_bench(dist, n)));
        }
    }
    if !quick {
        for &dist in &Dist::ALL {
            let n = DRAM_VALUES;
            add(
                format!("decode_u64_dram/{}/{n}", dist.name()),
                Box::new(move || decode_u64_dram_bench(dist, n)),
            );
        }
    }
    for &dist in &Dist::ALL {
        // Short payloads too: packed fields inside messages, where a branch per value costs
        // the reference its lead unless the payload repeats (the `decode_u64` rows above).
        for n in [8, 32, 10_000] {
            add(
                format!("decode_u64_fresh/{}/{n}", dist.name()),
                Box::new(move || decode_u64_fresh_bench(dist, n)),
            );
        }
    }
    for &dist in &Dist::ALL {
        if let Some(narrow) = dist.narrow() {
            for &n in sizes {
                let id = format!("decode_{}/{}/{n}", narrow.name(), dist.name());
                add(id, Box::new(move || decode_narrow_bench(dist, narrow, n)));
            }
            let n = 10_000;
            let id = format!("decode_{}_fresh/{}/{n}", narrow.name(), dist.name());
            add(id, Box::new(move || decode_narrow_fresh_bench(dist, narrow, n)));
        }
    }
    for &dist in &Dist::ALL {
        for &n in data::SHORT_SIZES.iter().chain(sizes) {
            add(format!("count_varints/{}/{n}", dist.name()), Box::new(move || count_bench(dist, n, false)));
            add(format!("skip_varints/{}/{n}", dist.name()), Box::new(move || count_bench(dist, n, true)));
        }
    }
    for &dist in &Dist::ALL {
        for &n in sizes {
            add(format!("encode_u64/{}/{n}", dist.name()), Box::new(move || encode_bench(dist, n, None, 1)));
            if let Some(narrow) = dist.narrow() {
                let id = format!("encode_{}/{}/{n}", narrow.name(), dist.name());
                add(id, Box::new(move || encode_bench(dist, n, Some(narrow), 1)));
            }
        }
    }
    for &dist in &Dist::ALL {
        // Short arrays too (a repeated field inside a message): 65,536 values' worth of
        // different arrays, as for the short decode rows.
        for n in [8, 32] {
            let id = format!("encode_u64_fresh/{}/{n}", dist.name());
            add(id, Box::new(move || encode_bench(dist, n, None, fresh_copies(n))));
        }
        let n = 10_000;
        let id = format!("encode_u64_fresh/{}/{n}", dist.name());
        add(id, Box::new(move || encode_bench(dist, n, None, FRESH_COPIES)));
        if let Some(narrow) = dist.narrow() {
            let id = format!("encode_{}_fresh/{}/{n}", narrow.name(), dist.name());
            add(id, Box::new(move || encode_bench(dist, n, Some(narrow), FRESH_COPIES)));
        }
    }
    for &dist in &Dist::ALL {
        let n = 10_000;
        add(format!("encoded_len_u64/{}/{n}", dist.name()), Box::new(move || encoded_len_bench(dist, n)));
    }
    for n in [100, 10_000] {
        for wide in [true, false] {
            let name = if wide { "fixed64" } else { "fixed32" };
            add(format!("decode_{name}/{n}"), Box::new(move || fixed_bench(wide, false, n)));
            add(format!("encode_{name}/{n}"), Box::new(move || fixed_bench(wide, true, n)));
        }
    }
    add(
        "scan/1MiB".into(),
        Box::new(|| {
            let message = data::scan_message();
            let data = format!("1 MiB mixed, {} fields", message.1);
            scan_bench(message, data)
        }),
    );
    add(
        "scan/strings".into(),
        Box::new(|| {
            let message = data::strings_message(1 << 20, 20, 150);
            let data = format!("1 MiB of 20..=150-byte strings, {} fields", message.1);
            scan_bench(message, data)
        }),
    );
    add("scan/records".into(), Box::new(|| scan_records_bench(100_000)));
    add("records/100000".into(), Box::new(|| records_bench(100_000)));
    add("stream/20-100".into(), Box::new(|| stream_bench(100_000, 20, 100)));
    add("stream/50-300".into(), Box::new(|| stream_bench(50_000, 50, 300)));
    add("stream/200-1000".into(), Box::new(|| stream_bench(20_000, 200, 1000)));
    add("stream/128-255".into(), Box::new(|| stream_bench(50_000, 128, 255)));
    add("trade_order".into(), Box::new(trade_order_bench));
    for (lo, hi) in [(8, 24), (64, 64), (1024, 1024)] {
        for multibyte in [false, true] {
            let id = format!("utf8/{}/{lo}-{hi}", if multibyte { "multibyte" } else { "ascii" });
            add(id, Box::new(move || utf8_bench(lo, hi, multibyte)));
        }
    }
    specs
}

fn time(run: &mut dyn FnMut(bool) -> u64, iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        black_box(run(false));
    }
    start.elapsed()
}

fn calibrate(run: &mut dyn FnMut(bool) -> u64, target: Duration) -> u64 {
    let mut iters = 1u64;
    loop {
        let t = time(run, iters);
        if t >= target / 4 || iters >= 1 << 30 {
            let scaled = (iters as f64 * target.as_secs_f64() / t.as_secs_f64().max(1e-9)).ceil();
            return (scaled as u64).clamp(1, 1 << 32);
        }
        iters *= 4;
    }
}

struct Row {
    kernel: &'static str,
    data: String,
    size: usize,
    name: String,
    unit: &'static str,
    ns: f64,
    spread: f64,
    gbps: f64,
    speed: Option<f64>,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn run_bench(mut b: Bench, cfg: &Config) -> Vec<Row> {
    for c in &mut b.contenders {
        let got = (c.run)(true);
        if let Some(want) = c.expect {
            assert_eq!(got, want, "{} {}: {} disagrees with the source data", b.kernel, b.data, c.name);
        }
    }
    let iters: Vec<u64> = b.contenders.iter_mut().map(|c| calibrate(&mut c.run, cfg.target)).collect();
    let k = b.contenders.len();
    let mut samples = vec![Vec::with_capacity(cfg.rounds); k];
    // A new order every round (a fixed seed: the same orders in every run): with the order
    // rotated, each contender always followed the same one, and the first, after prost's slow
    // per-value loop, ran 10-20% slower than the same kernel later in the round (fresh u64-mixed
    // data, the dispatched row against `Kernel(avx512)`, Sapphire Rapids).
    let mut rng = data::Rng::new(0x0bde_5eed);
    let mut order: Vec<usize> = (0..k).collect();
    for _ in 0..cfg.rounds {
        for j in (1..k).rev() {
            order.swap(j, rng.range(0, j as u64) as usize);
        }
        for &i in &order {
            let t = time(&mut b.contenders[i].run, iters[i]);
            samples[i].push(t.as_secs_f64() * 1e9 / iters[i] as f64);
        }
    }
    let medians: Vec<f64> = samples
        .iter_mut()
        .map(|s| {
            s.sort_by(f64::total_cmp);
            quantile(s, 0.5)
        })
        .collect();
    let base = b.contenders.iter().position(|c| c.name == b.baseline).map(|i| medians[i]);
    b.contenders
        .iter()
        .zip(samples.iter().zip(&medians))
        .map(|(c, (s, &med))| Row {
            kernel: b.kernel,
            data: b.data.clone(),
            size: b.units,
            name: c.name.clone(),
            unit: b.unit,
            ns: med / b.units as f64,
            spread: (quantile(s, 0.75) - quantile(s, 0.25)) / med * 100.0,
            gbps: b.bytes as f64 / med,
            speed: base.map(|base| base / med),
        })
        .collect()
}

fn print_table(rows: &[Row], baseline_note: bool) {
    println!("| benchmark | data | n | contender | ns/unit | IQR | GB/s | speed vs prost |");
    println!("|---|---|---:|---|---:|---:|---:|---:|");
    for r in rows {
        let speed = r.speed.map_or("-".into(), |s| format!("{s:.2}x"));
        println!(
            "| {} | {} | {} | {} | {:.3} ns/{} | {:.0}% | {:.2} | {} |",
            r.kernel, r.data, r.size, r.name, r.ns, r.unit, r.spread, r.gbps, speed
        );
    }
    if baseline_note {
        println!();
        println!(
            "speed = baseline median / contender median in the same rounds (> 1: faster). Baseline: prost's"
        );
        println!(
            "merge_repeated (decode), encode_varint loop into a Vec (encode; encode_packed for fixed-width),"
        );
        println!("decode_key + skip_field (scan),");
        println!("derive decode (messages); for count_varints, which prost lacks, the iterator filter.");
    }
}

fn main() {
    let mut words = Vec::new();
    let mut quick = std::env::var_os("PBWIRE_BENCH_QUICK").is_some_and(|v| v != "0");
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => quick = true,
            "--bench" => {}
            a if a.starts_with('-') => {}
            a => words.push(a.to_owned()),
        }
    }
    if let Ok(filter) = std::env::var("PBWIRE_BENCH_FILTER") {
        words.extend(filter.split_whitespace().map(str::to_owned));
    }
    let cfg = Config {
        rounds: if quick { 5 } else { 25 },
        target: Duration::from_millis(if quick { 1 } else { 4 }),
        quick,
        words,
    };
    let mut rows = Vec::new();
    let started = Instant::now();
    for spec in specs(cfg.quick) {
        // A word ending in `$` must end the id (`/100$` picks the 100-value rows only); a word
        // of alternatives joined by `|` matches when one of them does (`stream|trade_order`
        // runs both kinds of spec in one process, in the full run's order).
        let matches = |w: &String| {
            w.split('|').any(|w| match w.strip_suffix('$') {
                Some(suffix) => spec.id.ends_with(suffix),
                None => spec.id.contains(w),
            })
        };
        if !cfg.words.iter().all(matches) {
            continue;
        }
        eprintln!("[{:6.1}s] {}", started.elapsed().as_secs_f64(), spec.id);
        let bench = (spec.build)();
        let new = run_bench(bench, &cfg);
        for r in &new {
            eprintln!(
                "    {:<42} {:>9.3} ns/{:<6} {:>4.0}%  {}",
                r.name,
                r.ns,
                r.unit,
                r.spread,
                r.speed.map_or("-".into(), |s| format!("{s:.2}x"))
            );
        }
        rows.extend(new);
    }
    eprintln!(
        "[{:6.1}s] done: {} rows, {} rounds each",
        started.elapsed().as_secs_f64(),
        rows.len(),
        cfg.rounds
    );
    print_table(&rows, true);
}
