//! `pbwire cpu`: the CPU features pbwire's backends care about, and the backend each kernel
//! uses.

use std::io::{self, Write};

use crate::backends::{self, Backend, Kernel};

/// The features detected at run time, as (name, present) pairs, for this architecture.
pub fn features() -> Vec<(&'static str, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        vec![
            ("sse2", std::is_x86_feature_detected!("sse2")),
            ("ssse3", std::is_x86_feature_detected!("ssse3")),
            ("avx2", std::is_x86_feature_detected!("avx2")),
            ("bmi1", std::is_x86_feature_detected!("bmi1")),
            ("bmi2", std::is_x86_feature_detected!("bmi2")),
            ("lzcnt", std::is_x86_feature_detected!("lzcnt")),
            ("popcnt", std::is_x86_feature_detected!("popcnt")),
            ("avx512f", std::is_x86_feature_detected!("avx512f")),
            ("avx512bw", std::is_x86_feature_detected!("avx512bw")),
            ("avx512vl", std::is_x86_feature_detected!("avx512vl")),
            ("avx512vbmi2", std::is_x86_feature_detected!("avx512vbmi2")),
            ("avx512bitalg", std::is_x86_feature_detected!("avx512bitalg")),
        ]
    }
    #[cfg(target_arch = "aarch64")]
    {
        vec![("neon", std::arch::is_aarch64_feature_detected!("neon"))]
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Vec::new()
    }
}

/// The kernels and the backend each one runs on this CPU.
pub fn kernel_backends() -> Vec<(&'static str, Backend)> {
    let d = backends::detected();
    // The bulk kernels go through the dispatch (`pbwire::backend`); `validate` too, with a
    // field scan of its own on some backends; the single-value reads, `Reader` and the field
    // iterator are inline scalar code by design.
    let validate = Kernel::new(d).map_or(Backend::Scalar, |k| k.validate_backend());
    vec![
        ("packed decode (varint types)", d),
        ("packed encode (varint types)", d),
        ("count_varints, skip_varints", d),
        ("validate (512 bytes and more)", validate),
        ("fields(), Reader, single values", Backend::Scalar),
    ]
}

/// Writes the report.
pub fn report(mut w: impl Write) -> io::Result<()> {
    writeln!(w, "arch: {}", std::env::consts::ARCH)?;
    let feats = features();
    if feats.is_empty() {
        writeln!(w, "features: (none probed on this architecture)")?;
    }
    for (name, on) in feats {
        writeln!(w, "  {name:<12} {}", if on { "yes" } else { "no" })?;
    }
    let names: Vec<&str> = backends::available().map(Backend::name).collect();
    writeln!(w, "backends available: {}", names.join(", "))?;
    writeln!(w, "backend detected:   {}", backends::detected().name())?;
    if Kernel::detected().avoids_slow_pext() {
        // The AVX2 table without PEXT (see `Kernel::avoids_slow_pext`).
        writeln!(w, "  (its kernels without PEXT, which this CPU runs in microcode)")?;
    }
    writeln!(w, "kernels:")?;
    for (kernel, b) in kernel_backends() {
        writeln!(w, "  {kernel:<32} {}", b.name())?;
    }
    Ok(())
}
