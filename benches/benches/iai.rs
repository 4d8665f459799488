//! Instruction counts and simulated cache misses (callgrind) for pbwire's kernels and prost's,
//! side by side, on the DESIGN.md distributions at 10,000 values (the scan: 10,000 fields; the
//! message decoders: 10,000 records, or 10,000 TradeOrders one at a time).
//!
//! ```sh
//! cargo install --version 0.16.1 iai-callgrind-runner     # once
//! cargo bench -p pbwire-bench --features iai --bench iai
//! python3 .ci/iai-check                                  # the same, checked against budgets
//! ```
//!
//! The simulated caches are pinned so that miss counts do not depend on the host. Setup (data
//! generation, output allocation) runs outside the measured function, and the inputs are
//! returned from it so that freeing them is not counted either. Every benchmark id is
//! `<group>::<function>::<distribution>[_<backend>]`; `.ci/iai-check` divides by `N` to get
//! instructions per value. The pbwire decode, count and skip kernels run once per backend through
//! `pbwire::backend::Kernel`: scalar, sse2, ssse3 (decode only: its count and skip are sse2's) and avx2. valgrind hides AVX-512 from CPUID (and an
//! AVX-512 instruction under it is SIGILL), so the AVX-512 backend is measured by the wall-clock
//! benches only. The contenders' functions take the same setup and ignore the backend.
//! Encoding dispatches; under valgrind it is the AVX2 backend's encoder (the portable encoder
//! compiled for AVX2 and BMI2): one pbwire row each, plus `encode_short`, the same values as
//! 100 arrays of 100 encoded one call each (the per-call cost and the exact end of each output);
//! `decode_short` is its counterpart, the values as 1,250 payloads of 8 decoded one call each,
//! per backend and dispatched. Field scanning does not dispatch (the field iterator,
//! `decode_tag` + `skip_field`, `Reader::skip_next` and `validate`), nor do the message decoders
//! (`Reader` in the generated-code shape of `pbwire_bench::msgs`, beside prost's derive decode).

use std::hint::black_box;

use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, CallgrindMetrics, LibraryBenchmarkConfig,
};
use pbwire::backend::{Backend, Kernel};
use pbwire::fields::fields;
use pbwire::wire;
use pbwire_bench::data::{self, Dist};
use pbwire_bench::{kernels, msgs};
use prost::encoding::{DecodeContext, WireType as PW};
use prost::Message;

/// Values (or fields) per benchmark.
const N: usize = 10_000;

struct Decode<T> {
    payload: Vec<u8>,
    prefixed: Vec<u8>,
    out: Vec<T>,
    kernel: Kernel,
}

fn setup_decode<T: Clone + Default>(dist: Dist, backend: Backend) -> Decode<T> {
    let values = data::values(dist, N);
    let payload = data::packed(&values);
    let prefixed = data::length_prefixed(&payload);
    Decode { payload, prefixed, out: touched(N), kernel: kernels::kernel(backend) }
}

/// `n` default values, written one by one (not calloc'd pages), so the output is in the cache
/// and mapped before the measured call, as a reused buffer would be.
fn touched<T: Clone + Default>(n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, T::default());
    v
}

fn setup_decode_u64(dist: Dist, backend: Backend) -> Decode<u64> {
    setup_decode(dist, backend)
}

fn setup_decode_u32(dist: Dist, backend: Backend) -> Decode<u32> {
    setup_decode(dist, backend)
}

fn setup_decode_i32(dist: Dist, backend: Backend) -> Decode<i32> {
    setup_decode(dist, backend)
}

/// An empty Vec with room for all values (already touched), as a reused Vec would be.
fn room<T>(mut d: Decode<T>) -> Decode<T> {
    d.out.clear();
    d
}

#[library_benchmark]
#[bench::one_byte_scalar(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_u64)]
#[bench::one_byte_sse2(args = (Dist::OneByte, Backend::Sse2), setup = setup_decode_u64)]
#[bench::one_byte_ssse3(args = (Dist::OneByte, Backend::Ssse3), setup = setup_decode_u64)]
#[bench::one_byte_avx2(args = (Dist::OneByte, Backend::Avx2), setup = setup_decode_u64)]
#[bench::u32_mixed_scalar(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u32_mixed_sse2(args = (Dist::U32Mixed, Backend::Sse2), setup = setup_decode_u64)]
#[bench::u32_mixed_ssse3(args = (Dist::U32Mixed, Backend::Ssse3), setup = setup_decode_u64)]
#[bench::u32_mixed_avx2(args = (Dist::U32Mixed, Backend::Avx2), setup = setup_decode_u64)]
#[bench::u64_mixed_scalar(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u64_mixed_sse2(args = (Dist::U64Mixed, Backend::Sse2), setup = setup_decode_u64)]
#[bench::u64_mixed_ssse3(args = (Dist::U64Mixed, Backend::Ssse3), setup = setup_decode_u64)]
#[bench::u64_mixed_avx2(args = (Dist::U64Mixed, Backend::Avx2), setup = setup_decode_u64)]
#[bench::realistic_scalar(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_u64)]
#[bench::realistic_sse2(args = (Dist::Realistic, Backend::Sse2), setup = setup_decode_u64)]
#[bench::realistic_ssse3(args = (Dist::Realistic, Backend::Ssse3), setup = setup_decode_u64)]
#[bench::realistic_avx2(args = (Dist::Realistic, Backend::Avx2), setup = setup_decode_u64)]
fn pbwire_u64(mut d: Decode<u64>) -> (Decode<u64>, usize) {
    let n = d.kernel.decode_u64(black_box(&d.payload), &mut d.out).unwrap();
    (d, n)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u64_mixed(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_u64)]
fn prost_u64(mut d: Decode<u64>) -> (Decode<u64>, usize) {
    kernels::prost_merge_u64(&mut d.out, black_box(&d.prefixed));
    let n = d.out.len();
    (d, n)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u64_mixed(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_u64)]
fn prost_varint_loop(mut d: Decode<u64>) -> (Decode<u64>, usize) {
    let mut buf: &[u8] = black_box(&d.payload);
    for slot in d.out.iter_mut() {
        *slot = prost::encoding::decode_varint(&mut buf).unwrap();
    }
    (d, N)
}

// The single-value path a message parser inlines: `varint::decode_u64` once per value.
#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u64_mixed(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_u64)]
fn pbwire_varint_loop(mut d: Decode<u64>) -> (Decode<u64>, usize) {
    let p: &[u8] = black_box(&d.payload);
    let mut pos = 0;
    for slot in d.out.iter_mut() {
        let (v, len) = pbwire::varint::decode_u64(&p[pos..]).unwrap();
        *slot = v;
        pos += len;
    }
    (d, N)
}

// The same through `Reader::read_varint`.
#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::u64_mixed(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_u64)]
#[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_u64)]
fn pbwire_reader_loop(mut d: Decode<u64>) -> (Decode<u64>, usize) {
    let mut r = pbwire::reader::Reader::new(black_box(&d.payload));
    for slot in d.out.iter_mut() {
        *slot = r.read_varint().unwrap();
    }
    (d, N)
}

library_benchmark_group!(
    name = decode_u64;
    benchmarks = pbwire_u64, pbwire_varint_loop, pbwire_reader_loop, prost_u64, prost_varint_loop
);

// ---- narrow
#[library_benchmark]
#[bench::one_byte_scalar(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_u32)]
#[bench::one_byte_sse2(args = (Dist::OneByte, Backend::Sse2), setup = setup_decode_u32)]
#[bench::one_byte_ssse3(args = (Dist::OneByte, Backend::Ssse3), setup = setup_decode_u32)]
#[bench::one_byte_avx2(args = (Dist::OneByte, Backend::Avx2), setup = setup_decode_u32)]
#[bench::u32_mixed_scalar(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_u32)]
#[bench::u32_mixed_sse2(args = (Dist::U32Mixed, Backend::Sse2), setup = setup_decode_u32)]
#[bench::u32_mixed_ssse3(args = (Dist::U32Mixed, Backend::Ssse3), setup = setup_decode_u32)]
#[bench::u32_mixed_avx2(args = (Dist::U32Mixed, Backend::Avx2), setup = setup_decode_u32)]
fn pbwire_u32(mut d: Decode<u32>) -> (Decode<u32>, usize) {
    let n = d.kernel.decode_u32(black_box(&d.payload), &mut d.out).unwrap();
    (d, n)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_u32)]
#[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_u32)]
fn prost_u32(d: Decode<u32>) -> (Decode<u32>, usize) {
    let mut d = room(d);
    let mut buf: &[u8] = black_box(&d.prefixed);
    prost::encoding::uint32::merge_repeated(
        PW::LengthDelimited,
        &mut d.out,
        &mut buf,
        DecodeContext::default(),
    )
    .unwrap();
    let n = d.out.len();
    (d, n)
}

#[library_benchmark]
#[bench::realistic_scalar(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_i32)]
#[bench::realistic_sse2(args = (Dist::Realistic, Backend::Sse2), setup = setup_decode_i32)]
#[bench::realistic_ssse3(args = (Dist::Realistic, Backend::Ssse3), setup = setup_decode_i32)]
#[bench::realistic_avx2(args = (Dist::Realistic, Backend::Avx2), setup = setup_decode_i32)]
fn pbwire_i32(mut d: Decode<i32>) -> (Decode<i32>, usize) {
    let n = d.kernel.decode_i32(black_box(&d.payload), &mut d.out).unwrap();
    (d, n)
}

#[library_benchmark]
#[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_i32)]
fn prost_i32(d: Decode<i32>) -> (Decode<i32>, usize) {
    let mut d = room(d);
    let mut buf: &[u8] = black_box(&d.prefixed);
    prost::encoding::int32::merge_repeated(
        PW::LengthDelimited,
        &mut d.out,
        &mut buf,
        DecodeContext::default(),
    )
    .unwrap();
    let n = d.out.len();
    (d, n)
}

library_benchmark_group!(
name = decode_32;
benchmarks = pbwire_u32, prost_u32, pbwire_i32, prost_i32
);

// ---- count
fn setup_count(dist: Dist, backend: Backend) -> (Vec<u8>, Kernel) {
    (data::packed(&data::values(dist, N)), kernels::kernel(backend))
}

/// A count or skip kernel benchmark, once per distribution and backend (scalar, sse2, avx2: the
/// ssse3 backend counts and skips with sse2's code).
macro_rules! per_backend_count {
    ($item:item) => {
        #[library_benchmark]
        #[bench::one_byte_scalar(args = (Dist::OneByte, Backend::Scalar), setup = setup_count)]
        #[bench::one_byte_sse2(args = (Dist::OneByte, Backend::Sse2), setup = setup_count)]
        #[bench::one_byte_avx2(args = (Dist::OneByte, Backend::Avx2), setup = setup_count)]
        #[bench::u32_mixed_scalar(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_count)]
        #[bench::u32_mixed_sse2(args = (Dist::U32Mixed, Backend::Sse2), setup = setup_count)]
        #[bench::u32_mixed_avx2(args = (Dist::U32Mixed, Backend::Avx2), setup = setup_count)]
        #[bench::u64_mixed_scalar(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_count)]
        #[bench::u64_mixed_sse2(args = (Dist::U64Mixed, Backend::Sse2), setup = setup_count)]
        #[bench::u64_mixed_avx2(args = (Dist::U64Mixed, Backend::Avx2), setup = setup_count)]
        #[bench::realistic_scalar(args = (Dist::Realistic, Backend::Scalar), setup = setup_count)]
        #[bench::realistic_sse2(args = (Dist::Realistic, Backend::Sse2), setup = setup_count)]
        #[bench::realistic_avx2(args = (Dist::Realistic, Backend::Avx2), setup = setup_count)]
        $item
    };
}

/// A reference beside the count and skip kernels, once per distribution.
macro_rules! per_dist_count {
    ($item:item) => {
        #[library_benchmark]
        #[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_count)]
        #[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_count)]
        #[bench::u64_mixed(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_count)]
        #[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_count)]
        $item
    };
}

per_backend_count! {
    fn pbwire_count((payload, kernel): (Vec<u8>, Kernel)) -> (Vec<u8>, usize) {
        let n = kernel.count_varints(black_box(&payload));
        (payload, n)
    }
}

per_dist_count! {
    fn iter_filter_count((payload, _): (Vec<u8>, Kernel)) -> (Vec<u8>, usize) {
        let n = black_box(&payload).iter().filter(|&&b| b < 0x80).count();
        (payload, n)
    }
}

// The skip kernels skip every varint of the payload; `varint::skip` in a loop beside them.
per_backend_count! {
    fn pbwire_skip((payload, kernel): (Vec<u8>, Kernel)) -> (Vec<u8>, usize) {
        let n = kernel.skip_varints(black_box(&payload), N).unwrap();
        assert_eq!(n, payload.len());
        (payload, n)
    }
}

per_dist_count! {
    fn varint_skip_loop((payload, _): (Vec<u8>, Kernel)) -> (Vec<u8>, usize) {
        let (p, mut pos) = (black_box(&payload), 0);
        for _ in 0..N {
            pos += pbwire::varint::skip(&p[pos..]).unwrap();
        }
        (payload, pos)
    }
}

library_benchmark_group!(name = count_varints; benchmarks = pbwire_count, iter_filter_count);
library_benchmark_group!(name = skip_varints; benchmarks = pbwire_skip, varint_skip_loop);

// ---- encode
struct Encode {
    values: Vec<u64>,
    out: Vec<u8>,
}

fn setup_encode(dist: Dist) -> Encode {
    let values = data::values(dist, N);
    let len = data::packed(&values).len();
    Encode { values, out: touched(len) }
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte), setup = setup_encode)]
#[bench::u32_mixed(args = (Dist::U32Mixed), setup = setup_encode)]
#[bench::u64_mixed(args = (Dist::U64Mixed), setup = setup_encode)]
#[bench::realistic(args = (Dist::Realistic), setup = setup_encode)]
fn pbwire_encode(mut e: Encode) -> (Encode, usize) {
    let n = pbwire::packed::encode_u64(black_box(&e.values), &mut e.out).unwrap();
    (e, n)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte), setup = setup_encode)]
#[bench::u32_mixed(args = (Dist::U32Mixed), setup = setup_encode)]
#[bench::u64_mixed(args = (Dist::U64Mixed), setup = setup_encode)]
#[bench::realistic(args = (Dist::Realistic), setup = setup_encode)]
fn prost_encode(mut e: Encode) -> (Encode, usize) {
    // Into a Vec with room, as a reused encode buffer.
    let mut vec = std::mem::take(&mut e.out);
    vec.clear();
    for &v in black_box(&e.values) {
        prost::encoding::encode_varint(v, &mut vec);
    }
    let n = vec.len();
    e.out = vec;
    (e, n)
}

library_benchmark_group!(name = encode_u64; benchmarks = pbwire_encode, prost_encode);

// ---- encode, short arrays: the same 10,000 values as 100 arrays of 100, one call each, so
// that each call's fixed cost and the end of its output (the last values, exact stores) count.
const SHORT: usize = 100;

struct EncodeShort {
    values: Vec<u64>,
    out: Vec<u8>,
    /// Each array's byte offset in `out`.
    starts: Vec<usize>,
}

fn setup_encode_short(dist: Dist) -> EncodeShort {
    let values = data::values(dist, N);
    let mut starts = vec![0];
    for array in values.chunks(SHORT) {
        starts.push(starts.last().unwrap() + data::packed(array).len());
    }
    let out = touched(*starts.last().unwrap());
    EncodeShort { values, out, starts }
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte), setup = setup_encode_short)]
#[bench::u32_mixed(args = (Dist::U32Mixed), setup = setup_encode_short)]
#[bench::u64_mixed(args = (Dist::U64Mixed), setup = setup_encode_short)]
#[bench::realistic(args = (Dist::Realistic), setup = setup_encode_short)]
fn pbwire_encode_100(mut e: EncodeShort) -> (EncodeShort, usize) {
    // Each array into exactly its bytes, as a codec that sized the field first would.
    let mut n = 0;
    for (i, array) in black_box(&e.values).chunks(SHORT).enumerate() {
        n += pbwire::packed::encode_u64(array, &mut e.out[e.starts[i]..e.starts[i + 1]]).unwrap();
    }
    (e, n)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte), setup = setup_encode_short)]
#[bench::u32_mixed(args = (Dist::U32Mixed), setup = setup_encode_short)]
#[bench::u64_mixed(args = (Dist::U64Mixed), setup = setup_encode_short)]
#[bench::realistic(args = (Dist::Realistic), setup = setup_encode_short)]
fn prost_encode_100(mut e: EncodeShort) -> (EncodeShort, usize) {
    let mut vec = std::mem::take(&mut e.out);
    vec.clear();
    for array in black_box(&e.values).chunks(SHORT) {
        for &v in array {
            prost::encoding::encode_varint(v, &mut vec);
        }
    }
    let n = vec.len();
    e.out = vec;
    (e, n)
}

library_benchmark_group!(name = encode_short; benchmarks = pbwire_encode_100, prost_encode_100);

// ---- decode, short payloads: the same 10,000 values as 1,250 payloads of 8, one call each,
// so that each call's fixed cost (below a window: the padded tail, the spill) counts.
const FEW: usize = 8;

struct DecodeShort {
    payloads: Vec<Vec<u8>>,
    prefixed: Vec<Vec<u8>>,
    out: Vec<u64>,
    kernel: Kernel,
}

fn setup_decode_short(dist: Dist, backend: Backend) -> DecodeShort {
    let values = data::values(dist, N);
    let payloads: Vec<Vec<u8>> = values.chunks(FEW).map(data::packed).collect();
    let prefixed = payloads.iter().map(|p| data::length_prefixed(p)).collect();
    DecodeShort { payloads, prefixed, out: touched(FEW), kernel: kernels::kernel(backend) }
}

#[library_benchmark]
#[bench::u32_mixed_scalar(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_short)]
#[bench::u32_mixed_sse2(args = (Dist::U32Mixed, Backend::Sse2), setup = setup_decode_short)]
#[bench::u32_mixed_avx2(args = (Dist::U32Mixed, Backend::Avx2), setup = setup_decode_short)]
#[bench::u64_mixed_scalar(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_short)]
#[bench::u64_mixed_sse2(args = (Dist::U64Mixed, Backend::Sse2), setup = setup_decode_short)]
#[bench::u64_mixed_avx2(args = (Dist::U64Mixed, Backend::Avx2), setup = setup_decode_short)]
#[bench::realistic_scalar(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_short)]
#[bench::realistic_sse2(args = (Dist::Realistic, Backend::Sse2), setup = setup_decode_short)]
#[bench::realistic_avx2(args = (Dist::Realistic, Backend::Avx2), setup = setup_decode_short)]
fn pbwire_u64_8(mut d: DecodeShort) -> (DecodeShort, usize) {
    let mut n = 0;
    for p in black_box(&d.payloads) {
        n += d.kernel.decode_u64(p, &mut d.out).unwrap();
    }
    (d, n)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_short)]
#[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_short)]
#[bench::u64_mixed(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_short)]
#[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_short)]
fn pbwire_dispatched_8(mut d: DecodeShort) -> (DecodeShort, usize) {
    // Under valgrind the AVX2 table: payloads from 8 bytes with a longer varint go to its
    // kernel, the others to the reference or the one-byte widening.
    let mut n = 0;
    for p in black_box(&d.payloads) {
        n += pbwire::packed::decode_u64(p, &mut d.out).unwrap();
    }
    (d, n)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte, Backend::Scalar), setup = setup_decode_short)]
#[bench::u32_mixed(args = (Dist::U32Mixed, Backend::Scalar), setup = setup_decode_short)]
#[bench::u64_mixed(args = (Dist::U64Mixed, Backend::Scalar), setup = setup_decode_short)]
#[bench::realistic(args = (Dist::Realistic, Backend::Scalar), setup = setup_decode_short)]
fn prost_u64_8(d: DecodeShort) -> (DecodeShort, usize) {
    let mut vec = Vec::with_capacity(FEW);
    let mut n = 0;
    for p in black_box(&d.prefixed) {
        kernels::prost_merge_u64(&mut vec, p);
        n += vec.len();
    }
    (d, n)
}

library_benchmark_group!(name = decode_short; benchmarks = pbwire_u64_8, pbwire_dispatched_8, prost_u64_8);

// ---- encode, 32-bit types (the bytes are those of the u64 rows: prost's are the same)
fn setup_encode_u32(dist: Dist) -> (Vec<u32>, Vec<u8>) {
    let e = setup_encode(dist);
    (e.values.iter().map(|&v| v as u32).collect(), e.out)
}

fn setup_encode_i32(dist: Dist) -> (Vec<i32>, Vec<u8>) {
    let e = setup_encode(dist);
    (e.values.iter().map(|&v| v as i32).collect(), e.out)
}

#[library_benchmark]
#[bench::one_byte(args = (Dist::OneByte), setup = setup_encode_u32)]
#[bench::u32_mixed(args = (Dist::U32Mixed), setup = setup_encode_u32)]
fn pbwire_encode_u32((values, mut out): (Vec<u32>, Vec<u8>)) -> ((Vec<u32>, Vec<u8>), usize) {
    let n = pbwire::packed::encode_u32(black_box(&values), &mut out).unwrap();
    ((values, out), n)
}

#[library_benchmark]
#[bench::realistic(args = (Dist::Realistic), setup = setup_encode_i32)]
fn pbwire_encode_i32((values, mut out): (Vec<i32>, Vec<u8>)) -> ((Vec<i32>, Vec<u8>), usize) {
    let n = pbwire::packed::encode_i32(black_box(&values), &mut out).unwrap();
    ((values, out), n)
}

library_benchmark_group!(name = encode_32; benchmarks = pbwire_encode_u32, pbwire_encode_i32);

// ---- scan
fn setup_scan() -> Vec<u8> {
    let (msg, count) = data::mixed_message(usize::MAX, N);
    assert_eq!(count, N);
    msg
}

#[library_benchmark]
#[bench::mixed(setup = setup_scan)]
fn pbwire_fields(msg: Vec<u8>) -> (Vec<u8>, u64) {
    let mut s = 0u64;
    for f in fields(black_box(&msg)) {
        s += f.unwrap().number as u64;
    }
    (msg, s)
}

#[library_benchmark]
#[bench::mixed(setup = setup_scan)]
fn pbwire_skip_field(msg: Vec<u8>) -> (Vec<u8>, u64) {
    let (m, mut s, mut pos) = (black_box(&msg[..]), 0u64, 0);
    while pos < m.len() {
        let (tag, tl) = wire::decode_tag(&m[pos..]).unwrap();
        pos += tl;
        pos += wire::skip_field(tag, &m[pos..]).unwrap();
        s += tag.field() as u64;
    }
    (msg, s)
}

#[library_benchmark]
#[bench::mixed(setup = setup_scan)]
fn prost_skip_field(msg: Vec<u8>) -> (Vec<u8>, u64) {
    let mut s = 0u64;
    let mut buf: &[u8] = black_box(&msg);
    while !buf.is_empty() {
        let (tag, wt) = prost::encoding::decode_key(&mut buf).unwrap();
        prost::encoding::skip_field(wt, tag, &mut buf, DecodeContext::default()).unwrap();
        s += tag as u64;
    }
    (msg, s)
}

#[library_benchmark]
#[bench::mixed(setup = setup_scan)]
fn pbwire_reader_skip_next(msg: Vec<u8>) -> (Vec<u8>, u64) {
    let mut s = 0u64;
    let mut r = pbwire::reader::Reader::new(black_box(&msg));
    while !r.is_empty() {
        s += r.skip_next().unwrap().field() as u64;
    }
    (msg, s)
}

#[library_benchmark]
#[bench::mixed(setup = setup_scan)]
fn pbwire_validate(msg: Vec<u8>) -> (Vec<u8>, bool) {
    let ok = pbwire::fields::validate(black_box(&msg)).is_ok();
    (msg, ok)
}

library_benchmark_group!(
name = scan_fields;
benchmarks = pbwire_fields, pbwire_skip_field, pbwire_reader_skip_next, pbwire_validate, prost_skip_field
);

// ---- messages: the generated-code-shape `Reader` decoders of the wall benches, N records or
// N TradeOrders, prost's derive decode beside them.
fn setup_records() -> Vec<u8> {
    data::records_message(&data::records(N))
}

/// The records message and an output with room for every record, allocated outside the
/// measured function.
fn setup_records_out() -> (Vec<u8>, Vec<msgs::RecordRef<'static>>) {
    (setup_records(), Vec::with_capacity(N))
}

#[library_benchmark]
#[bench::records(setup = setup_records_out)]
fn pbwire_records_reader((msg, out): (Vec<u8>, Vec<msgs::RecordRef<'static>>)) -> (Vec<u8>, usize) {
    // Covariance: the empty output may hold records borrowed from `msg`.
    let mut out: Vec<msgs::RecordRef<'_>> = out;
    msgs::reader_records(black_box(&msg), &mut out, msgs::reader_record).unwrap();
    let n = out.len();
    drop(out);
    (msg, n)
}

#[library_benchmark]
#[bench::records(setup = setup_records_out)]
fn pbwire_records_in_order((msg, out): (Vec<u8>, Vec<msgs::RecordRef<'static>>)) -> (Vec<u8>, usize) {
    let mut out: Vec<msgs::RecordRef<'_>> = out;
    msgs::reader_records(black_box(&msg), &mut out, msgs::reader_record_in_order).unwrap();
    let n = out.len();
    drop(out);
    (msg, n)
}

#[library_benchmark]
#[bench::records(setup = setup_records)]
fn prost_records(msg: Vec<u8>) -> (Vec<u8>, usize) {
    let n = msgs::ProstRecords::decode(black_box(&msg[..])).unwrap().records.len();
    (msg, n)
}

#[library_benchmark]
#[bench::trade_order()]
fn pbwire_trade_order_reader() -> u64 {
    let mut s = 0u64;
    for _ in 0..N {
        let m = msgs::reader_trade_order(black_box(&data::TRADE_ORDER)).unwrap();
        s += m.order_id as u64 + m.sku_count as u64;
    }
    s
}

#[library_benchmark]
#[bench::trade_order()]
fn pbwire_trade_order_in_order() -> u64 {
    let mut s = 0u64;
    for _ in 0..N {
        let m = msgs::reader_trade_order_in_order(black_box(&data::TRADE_ORDER)).unwrap();
        s += m.order_id as u64 + m.sku_count as u64;
    }
    s
}

#[library_benchmark]
#[bench::trade_order()]
fn prost_trade_order() -> u64 {
    let mut s = 0u64;
    for _ in 0..N {
        let m = msgs::ProstTradeOrder::decode(black_box(&data::TRADE_ORDER[..])).unwrap();
        s += m.order_id as u64 + m.sku_ids.len() as u64;
    }
    s
}

library_benchmark_group!(
name = messages;
benchmarks = pbwire_records_reader, pbwire_records_in_order, prost_records, pbwire_trade_order_reader,
    pbwire_trade_order_in_order, prost_trade_order
);

main!(
config = LibraryBenchmarkConfig::default().tool(
    Callgrind::with_args(["--cache-sim=yes", "--I1=32768,8,64", "--D1=49152,12,64", "--LL=2097152,16,64"])
        .format([CallgrindMetrics::Default, CallgrindMetrics::CacheMisses])
);
library_benchmark_groups = decode_u64, decode_32, decode_short, count_varints, skip_varints, encode_u64, encode_short, encode_32, scan_fields,
    messages
);
