//! AVX-512 (F, BW, VL, CD, VBMI, VBMI2) with BMI2: 64-byte blocks in one register, and windows
//! of short varints decoded eight at a time without touching general registers per varint. The
//! encoders are in `avx512_encode`.

use crate::arch::generic::{self, Compress};
use core::arch::x86_64::{
    __m128i, __m512i, _bzhi_u64, _mm512_add_epi8, _mm512_andnot_si512, _mm512_cmpeq_epi8_mask,
    _mm512_cmpgt_epi8_mask, _mm512_cmpgt_epu8_mask, _mm512_loadu_si512, _mm512_madd_epi16,
    _mm512_maddubs_epi16, _mm512_mask_storeu_epi8, _mm512_maskz_and_epi64, _mm512_maskz_compress_epi8,
    _mm512_maskz_loadu_epi8, _mm512_movepi8_mask, _mm512_or_si512, _mm512_permutexvar_epi8,
    _mm512_set1_epi64, _mm512_set1_epi8, _mm512_slli_epi64, _mm512_srai_epi64, _mm512_srli_epi64,
    _mm512_storeu_si512, _mm512_sub_epi64, _mm512_ternarylogic_epi64, _mm512_testn_epi64_mask,
    _mm_maskz_loadu_epi8, _mm_storeu_si128,
};

#[derive(Clone, Copy)]
pub(crate) struct Avx512(__m512i);

impl generic::Vector for Avx512 {
    const BYTES: usize = 64;

    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 64 readable bytes and AVX-512F.
        Avx512(unsafe { _mm512_loadu_si512(ptr as *const __m512i) })
    }

    #[inline(always)]
    fn continuation_bits(self) -> u64 {
        // SAFETY: only instantiated inside functions compiled with AVX-512BW enabled.
        unsafe { _mm512_movepi8_mask(self.0) }
    }

    #[inline(always)]
    fn above_one_bits(self) -> u64 {
        // A signed compare: continuation bytes are negative.
        // SAFETY: only instantiated inside functions compiled with AVX-512BW enabled.
        unsafe { _mm512_cmpgt_epi8_mask(self.0, _mm512_set1_epi8(1)) }
    }

    #[inline(always)]
    fn equal_bits(self, byte: u8) -> u64 {
        // SAFETY: only instantiated inside functions compiled with AVX-512BW enabled.
        unsafe { _mm512_cmpeq_epi8_mask(self.0, _mm512_set1_epi8(byte as i8)) }
    }

    /// Two byte-masked loads and two whole stores instead of a `memcpy` call: no call (which
    /// also spilled the decoder's constant registers around it), and the window's later
    /// 64-byte load reads one 64-byte store, which the CPU can forward.
    #[inline(always)]
    unsafe fn copy_tail(src: *const u8, len: usize, dst: &mut [u8; generic::WINDOW + 16]) {
        let head = len.min(64);
        // SAFETY: AVX-512BW/VL and BMI2 (the caller). A masked load reads only the bytes its
        // mask selects, the first `head` and then the `len - head` after them, all within the
        // `len` readable at `src`; a lane with its mask bit clear is not accessed (so the
        // second load, with an empty mask when `len <= 64`, reads nothing). The stores write
        // bytes 0..64 and 64..80 of `dst`.
        unsafe {
            let low = _mm512_maskz_loadu_epi8(_bzhi_u64(u64::MAX, head as u32), src as *const i8);
            _mm512_storeu_si512(dst.as_mut_ptr() as *mut __m512i, low);
            let high_mask = _bzhi_u64(u64::MAX, (len - head) as u32) as u16;
            let high = _mm_maskz_loadu_epi8(high_mask, src.wrapping_add(64) as *const i8);
            _mm_storeu_si128(dst.as_mut_ptr().add(64) as *mut __m128i, high);
        }
    }

    /// 64 bytes a step, the last step byte-masked: no `memcpy` call (see `copy_tail`).
    #[inline(always)]
    unsafe fn copy_out(src: *const u8, dst: *mut u8, bytes: usize) {
        let mut at = 0;
        while at < bytes {
            // SAFETY: AVX-512BW and BMI2 (the caller); the mask selects bytes `at..bytes` at
            // most, all within the `bytes` readable at `src` and writable at `dst`, and
            // masked-off lanes are neither read nor written.
            unsafe {
                let mask = _bzhi_u64(u64::MAX, (bytes - at).min(64) as u32);
                let chunk = _mm512_maskz_loadu_epi8(mask, src.add(at) as *const i8);
                _mm512_mask_storeu_epi8(dst.add(at) as *mut i8, mask, chunk);
            }
            at += 64;
        }
    }
}

/// 64 bytes as a constant register image.
#[repr(align(64))]
pub(super) struct Bytes64([u8; 64]);

/// Byte `i` is `i`: compressed by the window's start bits, the varints' start offsets in order.
pub(super) static IOTA: Bytes64 = Bytes64(pattern(1, 64));
/// Byte `i` is `i / 8`: spreads the start offsets of eight varints, one to each 8-byte lane.
static LANE_OF_BYTE: Bytes64 = Bytes64(pattern(8, 64));
/// Byte `i` is `i % 8`: added to a lane's start offset, the offsets of its eight bytes.
static BYTE_IN_LANE: Bytes64 = Bytes64(pattern(1, 8));
/// Multipliers pairing 7-bit groups: `1, 128` repeated, for `b0 + 128 * b1` (unsigned bytes).
static PAIR_BYTES: Bytes64 = Bytes64(pair_multipliers());

/// Byte `i` is `(i / div) % modulo`.
const fn pattern(div: usize, modulo: usize) -> [u8; 64] {
    let mut a = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        a[i] = ((i / div) % modulo) as u8;
        i += 1;
    }
    a
}

const fn pair_multipliers() -> [u8; 64] {
    let mut a = pattern(1, 2);
    let mut i = 0;
    while i < 64 {
        a[i] = if a[i] == 0 { 1 } else { 128 };
        i += 1;
    }
    a
}

/// Loads one of the constant images.
#[inline(always)]
pub(super) fn image(bytes: &Bytes64) -> __m512i {
    // SAFETY: 64 readable, 64-byte aligned bytes; only called inside AVX-512F functions.
    unsafe { _mm512_loadu_si512(bytes.0.as_ptr() as *const __m512i) }
}

/// Windows of varints gathered into lanes, eight a step: compress the byte offsets of the
/// varint starts into a register and spread them to 8-byte lanes; gather each varint's first
/// 8 bytes into its lane with one byte permute, clear the bytes after each lane's first
/// terminator, and pack the 7-bit groups with two multiply-adds and a shift. Varints over 8
/// bytes: where they are common (see [`LongDensity`]), a second permute in each step gathers
/// every lane's bytes 8 and 9, kept only in lanes whose varint has them, and adds their bits at
/// 56..64, eight values a step however many are long; where they are rare, the few are redone
/// one by one after the window.
pub(crate) struct Vbmi2;

/// Packs the 7-bit groups of each 8-byte lane (bytes past the varint already zero, top bits
/// included) into a 56-bit value.
///
/// # Safety
/// AVX-512BW.
#[inline(always)]
unsafe fn pack_lanes(groups7: __m512i) -> __m512i {
    // SAFETY: AVX-512F/BW, guaranteed by the caller.
    unsafe {
        let groups14 = _mm512_maddubs_epi16(image(&PAIR_BYTES), groups7);
        let groups28 = _mm512_madd_epi16(groups14, _mm512_set1_epi64(0x4000_0001_4000_0001));
        // Bits 0..28 from the low dword, 28..56 from the high dword shifted down by 4.
        _mm512_ternarylogic_epi64::<0xca>(
            _mm512_set1_epi64(0x0fff_ffff),
            groups28,
            _mm512_srli_epi64::<4>(groups28),
        )
    }
}

/// Byte `8k + 6` is 8 and byte `8k + 7` is 9: added to a lane's start offset, the offsets of
/// its varint's 9th and 10th bytes, placed in the lane's top two bytes.
static HIGH_BYTES_IN_LANE: Bytes64 = Bytes64(high_bytes_in_lane());

const fn high_bytes_in_lane() -> [u8; 64] {
    let mut a = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        a[i] = match i % 8 {
            6 => 8,
            7 => 9,
            _ => 0,
        };
        i += 1;
    }
    a
}

impl Vbmi2 {
    /// The window loop, compiled twice: `LONG` when some varint is over 8 bytes. With `LONG`, or
    /// for a 4-byte output (see [`generic::keeps_low_32`]), it also says whether a varint
    /// overflows; else the caller's redo does.
    ///
    /// # Safety
    /// As for [`generic::WindowDecoder::decode`].
    #[inline(always)]
    unsafe fn decode_lanes<T: Copy, const LONG: bool>(
        base: *const u8,
        stops: u64,
        long_ends: u64,
        dst: *mut T,
        convert: impl Fn(u64) -> T,
    ) -> (usize, usize, bool) {
        let count = stops.count_ones() as usize;
        let last = 63 - stops.leading_zeros();
        // Starts: offset 0 and every byte after a terminator, up to the window's last terminator.
        let starts_mask = (stops << 1 | 1) & (u64::MAX >> (63 - last));
        let mut overflow = false;
        // SAFETY: the caller guarantees 64 + 16 readable bytes at `base`, room for 64 values at
        // `dst`, and AVX-512 F/BW/VBMI/VBMI2.
        unsafe {
            let data = _mm512_loadu_si512(base as *const __m512i);
            if LONG || generic::keeps_low_32::<T>() {
                overflow = generic::long_varint_overflows(
                    stops,
                    long_ends,
                    _mm512_cmpgt_epu8_mask(data, _mm512_set1_epi8(1)),
                );
            }
            let starts = _mm512_maskz_compress_epi8(starts_mask, image(&IOTA));
            let payload_bits = _mm512_set1_epi8(0x7f);
            let mut lanes = [0u64; 8];
            let mut group = 0;
            while group < count {
                let lane_starts = _mm512_permutexvar_epi8(
                    _mm512_add_epi8(image(&LANE_OF_BYTE), _mm512_set1_epi8(group as i8)),
                    starts,
                );
                // Offsets past the window wrap (the permute uses six bits); those bytes follow
                // the lane's terminator, which lies in the window, and are cleared.
                let gathered =
                    _mm512_permutexvar_epi8(_mm512_add_epi8(lane_starts, image(&BYTE_IN_LANE)), data);
                // Each lane's bytes up to its first terminator, in the vector lanes: the
                // terminator top bits minus one set every bit below the first, all 64 for a lane
                // without one (`0 - 1`). The top bits of later terminators stay set, but those
                // are clear in `gathered` and outside `payload_bits`, so no `xor` with `t` is
                // needed to clear them. (Through mask registers and general-register arithmetic
                // before 8413645: realistic data 7-12% slower.)
                let t = _mm512_andnot_si512(gathered, _mm512_set1_epi8(-128));
                let below = _mm512_sub_epi64(t, _mm512_set1_epi64(1));
                let mut values = pack_lanes(_mm512_ternarylogic_epi64::<0x80>(below, gathered, payload_bits));
                if LONG {
                    // Lanes without a terminator in their 8 bytes: their varint goes on, so its
                    // 9th byte counts, and its 10th if the 9th goes on.
                    let long = _mm512_testn_epi64_mask(t, t);
                    let high = _mm512_permutexvar_epi8(
                        _mm512_add_epi8(lane_starts, image(&HIGH_BYTES_IN_LANE)),
                        data,
                    );
                    // The 9th byte's continuation bit (bit 55) spread over the lane, to keep the
                    // 10th byte's payload bits (56..62); the 9th's (48..54) always. No round trip
                    // through mask registers (u64-mixed 16% faster than with one).
                    let ninth_goes_on = _mm512_srai_epi64::<63>(_mm512_slli_epi64::<8>(high));
                    let keep = _mm512_ternarylogic_epi64::<0xf8>(
                        _mm512_set1_epi64(0x007f_0000_0000_0000),
                        ninth_goes_on,
                        _mm512_set1_epi64(0x7f00_0000_0000_0000),
                    );
                    // Bytes 6 and 7 of the lane, paired as `b8 + 128 * b9` in its top 16 bits,
                    // shifted to bit 56: seven bits of the 9th byte, the 10th's lowest at bit 63.
                    let pair =
                        _mm512_maddubs_epi16(image(&PAIR_BYTES), _mm512_maskz_and_epi64(long, high, keep));
                    values = _mm512_or_si512(values, _mm512_slli_epi64::<8>(pair));
                }
                _mm512_storeu_si512(lanes.as_mut_ptr() as *mut __m512i, values);
                // `group < count <= 64` and a multiple of 8: the 8 slots are among the 64.
                generic::store_group(&lanes, dst.add(group), &convert);
                group += 8;
            }
        }
        (count, last as usize + 1, overflow)
    }
}

/// How many varints over 8 bytes a call's windows with any have had: per window, in 1/32nds,
/// averaged with weights falling by a sixteenth a window. Windows without one leave it alone, so
/// data without long varints pays nothing for it (updating it in every window cost `u32-mixed`
/// data 5%).
#[derive(Clone, Copy, Default)]
pub(crate) struct LongDensity(u32);

impl LongDensity {
    #[inline(always)]
    fn update(&mut self, long_ends: u64) {
        self.0 = self.0 - (self.0 >> 4) + (long_ends.count_ones() << 1);
    }
}

/// About 1.9 long varints a window (of those with any): above it a window's long varints go
/// by the second permute, below it one by one. The benchmarks' mixes sit on either side with a
/// margin (`realistic` data about 1.4, `u64-mixed` about 2.5), so the branch on it is
/// predictable where one on each window's own count was not (`u64-mixed`, 1M values: 1.45
/// against 1.22 ns a value).
const DENSE: u32 = 62;

impl generic::WindowDecoder for Vbmi2 {
    type Mix = LongDensity;
    type Dense = Self;
    type Sparse = Self;

    #[inline(always)]
    unsafe fn decode<V: generic::Vector, X: Compress, T: Copy>(
        base: *const u8,
        stops: u64,
        long_ends: u64,
        mix: &mut LongDensity,
        dst: *mut T,
        convert: impl Fn(u64) -> T,
    ) -> (usize, usize, bool) {
        // SAFETY: forwarded from the caller.
        unsafe {
            if generic::keeps_low_32::<T>() {
                // Every lane is right in its low 32 bits, long varint or not; `decode_lanes`
                // checks for an overflowing one, with no branch on whether there is one (on
                // `realistic` data that branch mispredicted in about half of the windows).
                return Self::decode_lanes::<T, false>(base, stops, long_ends, dst, convert);
            }
            if mix.0 > DENSE && long_ends != 0 {
                mix.update(long_ends);
                Self::decode_lanes::<T, true>(base, stops, long_ends, dst, convert)
            } else {
                // As if no varint were long, then the long ones (if any: a branch after the
                // loop, which a misprediction does not undo) one by one.
                let (count, consumed, _) =
                    Self::decode_lanes::<T, false>(base, stops, long_ends, dst, &convert);
                let overflow = long_ends != 0 && {
                    mix.update(long_ends);
                    generic::redo_long_varints::<X, T>(base, stops, long_ends, dst, &convert)
                };
                (count, consumed, overflow)
            }
        }
    }
}

/// The AVX2 backend's UTF-8 check (simdutf8 has no AVX-512 validator).
const VALIDATE_UTF8: unsafe fn(&[u8]) -> bool = super::avx2::VALIDATE_UTF8;

/// Short packed payloads with a varint over one byte from 4 bytes on: the kernel's fixed cost
/// (the padded copy of the window, the spill) is about 10 ns, which the reference's loop
/// exceeds on fresh data from 4-6 bytes (see `packed::SMALL_PAYLOAD`).
const SHORT_MIXED: usize = 4;

/// The field-length table scan.
const SCAN_FIELDS: Option<crate::arch::ScanFields> = Some(super::avx512_fields::scan_fields);

generic::kernel_fns!(
    "avx512f,avx512bw,avx512vl,avx512cd,avx512vbmi,avx512vbmi2,avx512bitalg,avx2,bmi1,bmi2,lzcnt,popcnt",
    Avx512,
    super::avx2::Pext,
    Vbmi2,
    super::avx512_encode
);
