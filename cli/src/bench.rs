//! `pbwire bench`: the bulk kernels on generated data, on every backend this CPU has.

use std::hint::black_box;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use pbwire::fields::fields;

use crate::backends::{self, Backend, Kernel};
use crate::gen::Distribution;

/// How long and on how much data.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Values per generated payload (and fields per generated message).
    pub values: usize,
    /// Measuring time per table cell.
    pub time: Duration,
    /// Different payloads (and messages) per distribution, run in turn; `None` for enough of
    /// them to hold [`FRESH_VALUES`] values (at most [`MAX_AUTO_PAYLOADS`]).
    pub payloads: Option<usize>,
}

impl Default for Config {
    fn default() -> Self {
        Config { values: 100_000, time: Duration::from_millis(250), payloads: None }
    }
}

/// How many values the payloads of a distribution hold at least, by default. One payload run
/// over and over lets the branch predictor learn its varint lengths, which real data never
/// allows: on an AMD Zen 4, `decode_u64` of one payload of 100,000 `realistic` values, again
/// and again, ran 16-18% (scalar), 20% (AVX2) and 12% (AVX-512) faster than of 26 such
/// payloads in turn, and the wall-clock benches found 640,000 values in turn still learned
/// (`FRESH_COPIES` in `benches/benches/wall.rs`).
pub const FRESH_VALUES: usize = 2_600_000;

/// The most payloads [`Config::payload_count`] chooses by itself: a tiny `--values` would
/// otherwise ask for millions of allocations (2,600,000 of one value).
pub const MAX_AUTO_PAYLOADS: usize = 4096;

impl Config {
    /// The number of payloads per distribution: [`Config::payloads`], or enough for
    /// [`FRESH_VALUES`] values, up to [`MAX_AUTO_PAYLOADS`].
    pub fn payload_count(&self) -> usize {
        let auto = || FRESH_VALUES.div_ceil(self.values.max(1)).min(MAX_AUTO_PAYLOADS);
        self.payloads.unwrap_or_else(auto).max(1)
    }
}

/// The kernels measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `decode_u64` of a packed payload.
    DecodeU64,
    /// `decode_u32` of a packed payload.
    DecodeU32,
    /// `decode_sint64` of a packed payload.
    DecodeSint64,
    /// `count_varints` of a packed payload.
    CountVarints,
    /// Iterating a message of varint fields with `fields`.
    Fields,
    /// `validate` of the same message, by each backend's field scan (`Kernel::validate`).
    Validate,
}

impl Op {
    /// All of them, in table order.
    pub const ALL: [Op; 6] =
        [Op::DecodeU64, Op::DecodeU32, Op::DecodeSint64, Op::CountVarints, Op::Fields, Op::Validate];

    /// The kernel's name.
    pub const fn name(self) -> &'static str {
        match self {
            Op::DecodeU64 => "decode_u64",
            Op::DecodeU32 => "decode_u32",
            Op::DecodeSint64 => "decode_sint64",
            Op::CountVarints => "count_varints",
            Op::Fields => "fields",
            Op::Validate => "validate",
        }
    }

    /// Whether the kernel scans a message rather than a packed payload.
    pub const fn on_message(self) -> bool {
        matches!(self, Op::Fields | Op::Validate)
    }

    /// Whether the kernel is inline scalar code, the same on every backend (one row).
    pub const fn scalar_only(self) -> bool {
        matches!(self, Op::Fields)
    }
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Row {
    /// The kernel.
    pub op: Op,
    /// The data.
    pub dist: Distribution,
    /// The backend.
    pub backend: Backend,
    /// Values (or fields) per second.
    pub values_per_sec: f64,
    /// Input bytes per second / 1e9.
    pub gb_per_sec: f64,
    /// Speed relative to the scalar backend on the same kernel and data.
    pub ratio: f64,
}

struct Scratch {
    u64s: Vec<u64>,
    u32s: Vec<u32>,
    i64s: Vec<i64>,
}

/// Runs `op` once over `data`; returns the number of values it handled.
fn run_once(op: Op, k: &Kernel, data: &[u8], s: &mut Scratch) -> usize {
    let r = match op {
        Op::DecodeU64 => k.decode_u64(data, &mut s.u64s).expect("generated data is well-formed"),
        Op::DecodeU32 => k.decode_u32(data, &mut s.u32s).expect("generated data is well-formed"),
        Op::DecodeSint64 => k.decode_sint64(data, &mut s.i64s).expect("generated data is well-formed"),
        Op::CountVarints => k.count_varints(data),
        Op::Fields => fields(data).map(|f| f.map_or(0, |f| f.end)).fold(0, |a, e| a ^ e),
        Op::Validate => k.validate(data, pbwire::wire::DEFAULT_DEPTH_LIMIT).map_or(0, |()| 1),
    };
    black_box(r)
}

/// Runs `op` for about `time` over the payloads `data` in turn, in five samples; returns
/// (values, bytes, seconds) of the fastest sample (the least disturbed by other work on the
/// machine).
fn measure(
    op: Op,
    k: &Kernel,
    data: &[Vec<u8>],
    values: usize,
    time: Duration,
    s: &mut Scratch,
) -> (f64, f64, f64) {
    run_once(op, k, black_box(&data[0]), s); // warm up
    let mut best: Option<(f64, f64, f64)> = None;
    let mut next = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let (mut reps, mut bytes) = (0u64, 0usize);
        let secs = loop {
            run_once(op, k, black_box(&data[next]), s);
            bytes += data[next].len();
            next = (next + 1) % data.len();
            reps += 1;
            let el = start.elapsed();
            if el >= time / 5 {
                break el.as_secs_f64();
            }
        };
        let sample = (reps as f64 * values as f64, bytes as f64, secs);
        if best.is_none_or(|b| sample.0 / sample.2 > b.0 / b.2) {
            best = Some(sample);
        }
    }
    best.expect("five samples")
}

/// Measures every kernel on every distribution and backend (`fields`, which pbwire does not
/// dispatch, on the scalar code only); reports progress to `progress`.
pub fn run(cfg: &Config, mut progress: impl Write) -> Vec<Row> {
    let backends: Vec<Backend> = backends::available().collect();
    let per_dist = Op::ALL.iter().map(|op| if op.scalar_only() { 1 } else { backends.len() }).sum::<usize>();
    let total = per_dist * Distribution::ALL.len();
    let mut s = Scratch { u64s: vec![0; cfg.values], u32s: vec![0; cfg.values], i64s: vec![0; cfg.values] };
    let mut rows = Vec::with_capacity(total);
    let count = cfg.payload_count() as u64;
    for dist in Distribution::ALL {
        let packed: Vec<_> =
            (0..count).map(|i| dist.packed(cfg.values, 0x5eed ^ dist as u64 ^ i << 8)).collect();
        let message: Vec<_> =
            (0..count).map(|i| dist.message(cfg.values, 0xfeed ^ dist as u64 ^ i << 8)).collect();
        for op in Op::ALL {
            let data = if op.on_message() { &message } else { &packed };
            let mut scalar = None;
            let on: &[Backend] = if op.scalar_only() { &[Backend::Scalar] } else { &backends };
            for &b in on {
                let _ = write!(
                    progress,
                    "\rbench {:>3}/{total}: {:<14} {:<10} {:<8}",
                    rows.len() + 1,
                    op.name(),
                    dist.name(),
                    b.name()
                );
                let _ = progress.flush();
                let Some(k) = Kernel::new(b) else { continue };
                let (vals, bytes, secs) = measure(op, &k, data, cfg.values, cfg.time, &mut s);
                let vps = vals / secs;
                let base = *scalar.get_or_insert(vps);
                rows.push(Row {
                    op,
                    dist,
                    backend: b,
                    values_per_sec: vps,
                    gb_per_sec: bytes / secs / 1e9,
                    ratio: vps / base,
                });
            }
        }
    }
    let _ = write!(progress, "\r{:60}\r", "");
    let _ = progress.flush();
    rows
}

/// Writes `rows` as a table.
pub fn table(rows: &[Row], mut w: impl Write) -> io::Result<()> {
    writeln!(
        w,
        "{:<14} {:<10} {:<8} {:>12} {:>8} {:>9}",
        "kernel", "data", "backend", "Mvalues/s", "GB/s", "vs scalar"
    )?;
    for r in rows {
        writeln!(
            w,
            "{:<14} {:<10} {:<8} {:>12.1} {:>8.2} {:>8.2}x",
            r.op.name(),
            r.dist.name(),
            r.backend.name(),
            r.values_per_sec / 1e6,
            r.gb_per_sec,
            r.ratio
        )?;
    }
    writeln!(w, "(fields is inline scalar code, not dispatched: one row; validate is each backend's field scan, the scalar loop where it has none)")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_handles_every_value() {
        let k = Kernel::new(Backend::Scalar).unwrap();
        let mut s = Scratch { u64s: vec![0; 1000], u32s: vec![0; 1000], i64s: vec![0; 1000] };
        for dist in Distribution::ALL {
            let packed = dist.packed(1000, 1);
            for op in [Op::DecodeU64, Op::DecodeU32, Op::DecodeSint64, Op::CountVarints] {
                assert_eq!(run_once(op, &k, &packed, &mut s), 1000, "{op:?} {dist:?}");
            }
            assert_eq!(run_once(Op::Validate, &k, &dist.message(1000, 1), &mut s), 1);
        }
    }

    #[test]
    fn a_tiny_run_fills_the_table() {
        let cfg = Config { values: 100, time: Duration::from_micros(200), payloads: Some(3) };
        let mut progress = Vec::new();
        let rows = run(&cfg, &mut progress);
        let n = backends::available().count();
        assert_eq!(rows.len(), (5 * n + 1) * Distribution::ALL.len());
        assert!(rows.iter().all(|r| r.values_per_sec > 0.0 && r.gb_per_sec > 0.0));
        assert!(rows.iter().filter(|r| r.backend == Backend::Scalar).all(|r| r.ratio == 1.0));
        assert!(String::from_utf8(progress).unwrap().contains("bench   1/"));
        let mut out = Vec::new();
        table(&rows, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), rows.len() + 2);
    }
}
