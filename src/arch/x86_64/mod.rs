//! x86-64 backends and CPU feature detection (CPUID and XGETBV, no `std` needed).

pub(crate) mod avx2;
pub(crate) mod avx2_fields;
pub(crate) mod avx512;
pub(crate) mod avx512_encode;
pub(crate) mod avx512_fields;
pub(crate) mod sse2;
pub(crate) mod ssse3;

use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};

/// `PREFETCHT0` of the line at `ptr`: see [`crate::arch::prefetch`].
#[inline(always)]
pub(crate) fn prefetch(ptr: *const u8) {
    // SAFETY: PREFETCHT0 is SSE, part of x86-64's baseline; a prefetch of any address is a
    // hint that neither faults nor reads or writes anything the program sees.
    unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr.cast()) }
}

/// Whether a prefetch far ahead in a stream of messages may land inside a long message's body
/// at no cost: true on AMD. Measured (`stream::delimited`, 20,000 messages of 200..=1000 bytes):
/// on Sapphire Rapids, prefetching 512 bytes ahead after every message took 22.1 ns a message
/// against 8.1 without it after long ones (the L2 streamer then fetches every line of the
/// bodies), while on Zen 4 it was as fast as without and kept 50..=300-byte messages at 3.4 ns
/// against 5.2 for the Intel-safe choice. Other vendors, not measured, get the Intel-safe one.
#[inline]
pub(crate) fn far_prefetch_is_harmless() -> bool {
    vendor_facts() & AMD != 0
}

/// Whether PEXT and PDEP take a few cycles, as on Intel and on AMD from Zen 3 (family 0x19), not
/// hundreds: Zen 1 and Zen 2 (family 0x17), Hygon's Zen 1 derivative (0x18) and the BMI2 CPUs
/// of AMD's earlier families run them in microcode, in time that grows with the mask's set
/// bits (about 300 cycles is the figure given for Zen 2).
#[inline]
pub(crate) fn pext_is_fast() -> bool {
    vendor_facts() & SLOW_PEXT == 0
}

/// [`vendor_facts`] bits.
const AMD: u8 = 1;
const SLOW_PEXT: u8 = 2;
const UNKNOWN: u8 = 0x80;

/// What the CPUID vendor and family say that feature bits do not, asked once: [`AMD`] for
/// "AuthenticAMD", [`SLOW_PEXT`] for AMD and Hygon ("HygonGenuine") before family 0x19.
#[inline]
fn vendor_facts() -> u8 {
    use core::sync::atomic::{AtomicU8, Ordering};
    static FACTS: AtomicU8 = AtomicU8::new(UNKNOWN);
    match FACTS.load(Ordering::Relaxed) {
        UNKNOWN => {
            let facts = ask_vendor();
            FACTS.store(facts, Ordering::Relaxed);
            facts
        }
        facts => facts,
    }
}

#[cold]
fn ask_vendor() -> u8 {
    if cfg!(miri) {
        // Miri runs no CPUID; no vendor facts.
        return 0;
    }
    let leaf0 = __cpuid(0);
    // The vendor string in EBX, EDX, ECX order.
    let vendor = [leaf0.ebx, leaf0.edx, leaf0.ecx];
    let amd = vendor == [0x6874_7541, 0x6974_6e65, 0x444d_4163]; // "AuthenticAMD"
    let hygon = vendor == [0x6f67_7948, 0x6e65_476e, 0x656e_6975]; // "HygonGenuine"
    let eax = __cpuid(1).eax;
    // The displayed family: the base family, plus the extended family when the base is 0xf.
    let base = eax >> 8 & 0xf;
    let family = if base == 0xf { base + (eax >> 20 & 0xff) } else { base };
    let slow_pext = (amd || hygon) && family < 0x19;
    let amd_bit = if amd { AMD } else { 0 };
    amd_bit | if slow_pext { SLOW_PEXT } else { 0 }
}

/// What the CPU and the OS together allow.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Features {
    /// SSSE3 (`PSHUFB`, `PMADDUBSW`).
    pub ssse3: bool,
    /// AVX2 with BMI1, BMI2, LZCNT and POPCNT, and the OS saves the YMM registers.
    pub avx2_bmi2: bool,
    /// AVX-512 F, BW, VL, CD, VBMI, VBMI2 and BITALG on top of `avx2_bmi2`, and the OS saves the
    /// opmask and ZMM registers.
    pub avx512: bool,
}

/// Asks the CPU (and, through XCR0, the OS) which backends can run.
pub(crate) fn detect() -> Features {
    if cfg!(miri) {
        // Miri runs no CPUID: the features the build enables (`-C target-feature`), whose
        // instructions it then interprets, so that it checks those backends' memory accesses.
        return Features {
            ssse3: cfg!(target_feature = "ssse3"),
            avx2_bmi2: cfg!(all(
                target_feature = "avx2",
                target_feature = "bmi1",
                target_feature = "bmi2",
                target_feature = "lzcnt",
                target_feature = "popcnt"
            )),
            avx512: false,
        };
    }
    let bit = |reg: u32, n: u32| reg >> n & 1 == 1;
    let leaf1 = __cpuid(1);
    let ssse3 = bit(leaf1.ecx, 9);
    let none = Features { ssse3, avx2_bmi2: false, avx512: false };
    if __cpuid(0).eax < 7 {
        return none;
    }
    let leaf7 = __cpuid_count(7, 0);
    let ext = __cpuid(0x8000_0001);
    // The CPU supporting AVX is not enough: the OS must have enabled saving the register state
    // (OSXSAVE, then XCR0 bits), or the first YMM/ZMM instruction faults.
    if !(bit(leaf1.ecx, 27) && bit(leaf1.ecx, 28)) {
        return none;
    }
    // SAFETY: OSXSAVE (CPUID.1:ECX[27]) is set, so XGETBV is available and enabled.
    let xcr0 = unsafe { _xgetbv(0) };
    let os_ymm = xcr0 & 0b110 == 0b110;
    let os_zmm = os_ymm && xcr0 & 0b1110_0000 == 0b1110_0000;
    let popcnt = bit(leaf1.ecx, 23);
    let lzcnt = bit(ext.ecx, 5);
    let (avx2, bmi1, bmi2) = (bit(leaf7.ebx, 5), bit(leaf7.ebx, 3), bit(leaf7.ebx, 8));
    let avx2_bmi2 = os_ymm && avx2 && bmi1 && bmi2 && lzcnt && popcnt;
    let (avx512f, avx512bw, avx512vl) = (bit(leaf7.ebx, 16), bit(leaf7.ebx, 30), bit(leaf7.ebx, 31));
    let avx512cd = bit(leaf7.ebx, 28);
    let (vbmi, vbmi2, bitalg) = (bit(leaf7.ecx, 1), bit(leaf7.ecx, 6), bit(leaf7.ecx, 12));
    let avx512 = avx512f && avx512bw && avx512vl && avx512cd && vbmi && vbmi2 && bitalg;
    Features { ssse3, avx2_bmi2, avx512: avx2_bmi2 && os_zmm && avx512 }
}

// CPUID against /proc/cpuinfo: neither is there under Miri.
#[cfg(all(test, target_os = "linux", not(miri)))]
mod tests {
    /// CPUID's vendor, as the kernel reports it.
    #[test]
    fn far_prefetch_follows_the_vendor() {
        let info = std::fs::read_to_string("/proc/cpuinfo").expect("/proc/cpuinfo");
        let vendor = info
            .lines()
            .find_map(|l| l.strip_prefix("vendor_id").map(|v| v.trim_start_matches([' ', '\t', ':'])))
            .expect("vendor_id line");
        assert_eq!(super::far_prefetch_is_harmless(), vendor == "AuthenticAMD", "{vendor}");
        // Cached: the same answer again.
        assert_eq!(super::far_prefetch_is_harmless(), vendor == "AuthenticAMD");
    }

    /// PEXT is slow on AMD and Hygon CPUs before family 0x19 (Zen 3), by the kernel's
    /// "cpu family" (decimal: 23 is 0x17, 25 is 0x19).
    #[test]
    fn pext_speed_follows_the_family() {
        fn field<'a>(info: &'a str, name: &str) -> &'a str {
            info.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim_start_matches([' ', '\t', ':'])))
                .expect(name)
        }
        let info = std::fs::read_to_string("/proc/cpuinfo").expect("/proc/cpuinfo");
        let (vendor, family) =
            (field(&info, "vendor_id"), field(&info, "cpu family").parse::<u32>().expect("cpu family"));
        let slow = (vendor == "AuthenticAMD" || vendor == "HygonGenuine") && family < 0x19;
        assert_eq!(super::pext_is_fast(), !slow, "{vendor} family {family}");
    }
}
