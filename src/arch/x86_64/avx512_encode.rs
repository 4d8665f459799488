//! AVX-512 packed varint encoders (F, BW, VL, CD, VBMI, VBMI2). A step takes sixteen values in
//! 32-bit lanes when they are below 2^28 (at most 4 bytes each; also a run of at least eight
//! such values before a longer one), else eight widened to 64-bit lanes. Per step: the 7-bit
//! groups spread into the lane's bytes with one `vpmultishiftqb`, the lane's bytes (up to its
//! top non-zero group, at least one) from the groups' leading zeros (`vplzcnt`), continuation
//! bits on all of them but the last, and the bytes of all the values compacted with one
//! `vpcompressb` and stored unaligned. An eight-value step with a value of 9 or 10 bytes works
//! in 16-byte lanes, four values at a time, with lengths from `vplzcntq`.
//!
//! The total length is computed first (`vplzcnt`, sixteen a step for 32-bit types), so nothing
//! is written when it does not fit, unless the output has room for the worst case, when that
//! pass is left out. While [`MARGIN`] bytes of output remain (with room: until 64 values are
//! left), steps store whole registers; after that, and for the last values, they load with lane
//! masks (never reading past the values) and store with byte masks (never writing past the
//! payload), so that a short array costs a few steps and no call into another encoder. The
//! portable encoder is the reference these must reproduce byte for byte.

use crate::error::{Error, ErrorKind, Result};
use core::arch::x86_64::{
    __m512i, _bzhi_u64, _mm256_maskz_loadu_epi32, _mm256_slli_epi32, _mm256_srai_epi32, _mm256_xor_si256,
    _mm512_add_epi64, _mm512_and_si512, _mm512_cmpgt_epu8_mask, _mm512_cvtepi32_epi64, _mm512_cvtepu32_epi64,
    _mm512_loadu_si512, _mm512_lzcnt_epi64, _mm512_mask_add_epi8, _mm512_mask_storeu_epi8,
    _mm512_maskz_compress_epi8, _mm512_maskz_loadu_epi32, _mm512_maskz_loadu_epi64, _mm512_maskz_mov_epi32,
    _mm512_maskz_mov_epi64, _mm512_movepi8_mask, _mm512_multishift_epi64_epi8, _mm512_or_si512,
    _mm512_permutex2var_epi32, _mm512_permutexvar_epi64, _mm512_reduce_add_epi64, _mm512_set1_epi64,
    _mm512_set1_epi8, _mm512_setzero_si512, _mm512_shuffle_epi8, _mm512_slli_epi64, _mm512_srai_epi64,
    _mm512_srli_epi64, _mm512_srlv_epi64, _mm512_storeu_si512, _mm512_ternarylogic_epi64,
    _mm512_test_epi64_mask, _mm512_xor_si512,
};
use core::arch::x86_64::{
    _mm512_add_epi32, _mm512_lzcnt_epi32, _mm512_maskz_permutexvar_epi8, _mm512_reduce_add_epi32,
    _mm512_set1_epi32, _mm512_slli_epi32, _mm512_srai_epi32, _mm512_srli_epi32,
};
use core::arch::x86_64::{_mm512_srlv_epi32, _mm512_ternarylogic_epi32, _mm512_test_epi32_mask};

/// Bytes that must remain in the output before a step: its stores write 64 bytes at the current
/// position, and a wide step stores twice, the second up to 40 bytes further on.
const MARGIN: usize = 40 + 64;

/// The same for a step with one long value among sixteen: its last part is stored up to 70
/// bytes further on.
const SPLIT_MARGIN: usize = 70 + 64;

/// 64 bytes as a constant register image.
#[repr(align(64))]
struct Bytes64([u8; 64]);

/// Builds a register image from the byte pattern of one 16-byte lane.
const fn lanes16(lane: [u8; 16]) -> Bytes64 {
    let mut a = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        a[i] = lane[i % 16];
        i += 1;
    }
    Bytes64(a)
}

/// `vpmultishiftqb` offsets: byte `j` of a lane takes bits `7j..7j+8` of the value.
static SHIFTS8: Bytes64 = lanes16([0, 7, 14, 21, 28, 35, 42, 49, 0, 7, 14, 21, 28, 35, 42, 49]);
/// In 16-byte lanes (the value in both qwords): bytes 0..8 as above, byte 8 bits 56..63, byte 9
/// bit 63 (the rest of its eight bits wrap around and are masked off).
static SHIFTS16: Bytes64 = lanes16([0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 0, 0, 0, 0, 0, 0]);
/// The payload bits of each byte in 16-byte lanes.
static PAYLOAD16: Bytes64 =
    lanes16([0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0, 0, 0, 0, 0, 0]);
/// Byte `i` of a 16-byte lane is `i`.
static BYTE_IN_LANE16: Bytes64 = lanes16([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
/// Byte `i` of a 16-byte lane is `i + 1`.
static BYTE_IN_LANE16_PLUS1: Bytes64 = lanes16([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);

/// `vpermt2d` indices of the low dword of each of sixteen qwords in two registers.
static LOW_DWORDS: Bytes64 = {
    let mut a = [0u8; 64];
    let mut i = 0;
    while i < 16 {
        a[4 * i] = (2 * i) as u8;
        i += 1;
    }
    Bytes64(a)
};

/// Qword indices `[4h, 4h, 4h+1, 4h+1, ..]`: half `h` of eight values, each value twice.
static DOUBLE_HALF: [[u64; 8]; 2] = [[0, 0, 1, 1, 2, 2, 3, 3], [4, 4, 5, 5, 6, 6, 7, 7]];

/// Loads one of the constant images.
#[inline(always)]
fn image(bytes: &Bytes64) -> __m512i {
    // SAFETY: 64 readable bytes; only called inside AVX-512F functions.
    unsafe { _mm512_loadu_si512(bytes.0.as_ptr() as *const __m512i) }
}

/// How an element type becomes wire values. Loads take a lane mask: unselected elements are
/// not read (so a step may cover the end of the array) and come back as zero.
trait Wire {
    type Elem: Copy;
    /// The longest encoding of one element, in bytes.
    const MAX_LEN: usize;
    /// One element's wire value.
    fn wire(e: Self::Elem) -> u64;
    /// The elements at `p` selected by `lanes` (bit `i`: element `i` of eight) as wire values,
    /// one per 64-bit lane.
    ///
    /// # Safety
    /// The selected elements must be readable; AVX-512F/VL and AVX2.
    unsafe fn load8(p: *const Self::Elem, lanes: u8) -> __m512i;
    /// The elements at `p` selected by `lanes` (of sixteen) as the low 32 bits of their wire
    /// values, one per 32-bit lane, and the lanes whose wire value is 2^28 or more (does not fit
    /// four bytes; the lane's 32 bits are then not the whole value).
    ///
    /// # Safety
    /// The selected elements must be readable; AVX-512F/VL and AVX2.
    #[inline(always)]
    unsafe fn load16(p: *const Self::Elem, lanes: u16) -> (__m512i, u16) {
        // SAFETY: forwarded from the caller (each half selects only selected elements).
        unsafe {
            let (lo, hi) = (Self::load8(p, lanes as u8), Self::load8(p.wrapping_add(8), (lanes >> 8) as u8));
            let high_bits = _mm512_set1_epi64(!0x0fff_ffff);
            let long = _mm512_test_epi64_mask(lo, high_bits) as u16
                | (_mm512_test_epi64_mask(hi, high_bits) as u16) << 8;
            // The low dword of every qword, `lo`'s then `hi`'s: one two-source permute.
            let x = _mm512_permutex2var_epi32(lo, image(&LOW_DWORDS), hi);
            (x, long)
        }
    }
    /// The total varint length of `values`.
    ///
    /// # Safety
    /// AVX-512F/VL/CD and AVX2.
    #[inline(always)]
    unsafe fn total_len(values: &[Self::Elem]) -> usize {
        let chunks = values.chunks_exact(8);
        let rest = chunks.remainder();
        // SAFETY: each load selects readable elements only; the caller guarantees the
        // instruction set.
        unsafe {
            let mut sum = _mm512_setzero_si512();
            for chunk in chunks {
                sum = _mm512_add_epi64(sum, lengths(Self::load8(chunk.as_ptr(), 0xff)));
            }
            let lanes = low_lanes(rest.len()) as u8;
            let last = _mm512_maskz_mov_epi64(lanes, lengths(Self::load8(rest.as_ptr(), lanes)));
            _mm512_reduce_add_epi64(_mm512_add_epi64(sum, last)) as usize
        }
    }
}

/// The mask of the lowest `n` lanes (`n` at most 32).
#[inline(always)]
fn low_lanes(n: usize) -> u32 {
    ((1u64 << n) - 1) as u32
}

/// How [`total_len_32`] reads 32-bit elements.
const PLAIN: u8 = 0;
/// `int32`: a negative value is sign-extended, 10 bytes.
const INT32: u8 = 1;
/// `sint32`: zigzag first.
const ZIGZAG: u8 = 2;

/// The total varint length of 32-bit elements, sixteen a step in 32-bit lanes, each lane summing
/// at most 2^20 steps; the last (fewer than sixteen) by the portable length.
///
/// # Safety
/// AVX-512F/CD.
#[inline(always)]
unsafe fn total_len_32<const KIND: u8>(values: &[u32], portable_len: impl Fn(&[u32]) -> usize) -> usize {
    let mut total = 0usize;
    for run in values.chunks(16 << 20) {
        let blocks = run.chunks_exact(16);
        let rest = blocks.remainder();
        // SAFETY: each block has sixteen readable elements; the caller guarantees the
        // instruction set.
        unsafe {
            let mut sum = _mm512_setzero_si512();
            for block in blocks {
                let x = _mm512_loadu_si512(block.as_ptr() as *const __m512i);
                let w = if KIND == ZIGZAG {
                    _mm512_xor_si512(_mm512_slli_epi32::<1>(x), _mm512_srai_epi32::<31>(x))
                } else {
                    x
                };
                // The length by leading zeros, as `lengths` (for `int32` the table gives a
                // negative value ten bytes).
                let table = if KIND == INT32 { &LEN_BY_LZ32_INT32 } else { &LEN_BY_LZ32 };
                let lz = _mm512_lzcnt_epi32(_mm512_or_si512(w, _mm512_set1_epi32(1)));
                let len = _mm512_maskz_permutexvar_epi8(0x1111_1111_1111_1111, lz, image(table));
                sum = _mm512_add_epi32(sum, len);
            }
            total += _mm512_reduce_add_epi32(sum) as u32 as usize;
        }
        total += portable_len(rest);
    }
    total
}

struct Uint64;
struct Uint32;
struct Int32;
struct Sint64;
struct Sint32;

impl Wire for Uint64 {
    type Elem = u64;
    const MAX_LEN: usize = crate::varint::MAX_LEN;
    #[inline(always)]
    fn wire(e: u64) -> u64 {
        e
    }
    #[inline(always)]
    unsafe fn load8(p: *const u64, lanes: u8) -> __m512i {
        // SAFETY: forwarded from the caller.
        unsafe { _mm512_maskz_loadu_epi64(lanes, p as *const i64) }
    }
}

/// The sixteen 32-bit values at `p` selected by `lanes`, and the lanes of 2^28 or more (a
/// negative `int32` has its top bits set, so it is one of them).
///
/// # Safety
/// The selected values must be readable; AVX-512F.
#[inline(always)]
unsafe fn load16_32(p: *const u32, lanes: u16) -> (__m512i, u16) {
    // SAFETY: forwarded from the caller.
    unsafe {
        let x = _mm512_maskz_loadu_epi32(lanes, p as *const i32);
        (x, _mm512_test_epi32_mask(x, _mm512_set1_epi32(!0x0fff_ffff)))
    }
}

impl Wire for Uint32 {
    type Elem = u32;
    const MAX_LEN: usize = crate::varint::MAX_LEN_32;
    #[inline(always)]
    fn wire(e: u32) -> u64 {
        e as u64
    }
    #[inline(always)]
    unsafe fn load8(p: *const u32, lanes: u8) -> __m512i {
        // SAFETY: forwarded from the caller.
        unsafe { _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(lanes, p as *const i32)) }
    }
    #[inline(always)]
    unsafe fn load16(p: *const u32, lanes: u16) -> (__m512i, u16) {
        // SAFETY: forwarded from the caller.
        unsafe { load16_32(p, lanes) }
    }
    #[inline(always)]
    unsafe fn total_len(values: &[u32]) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe { total_len_32::<PLAIN>(values, crate::packed::encoded_len_u32) }
    }
}

impl Wire for Int32 {
    type Elem = i32;
    const MAX_LEN: usize = crate::varint::MAX_LEN;
    #[inline(always)]
    fn wire(e: i32) -> u64 {
        e as i64 as u64
    }
    #[inline(always)]
    unsafe fn load8(p: *const i32, lanes: u8) -> __m512i {
        // Sign-extended, as protobuf encodes a negative `int32` (ten bytes).
        // SAFETY: forwarded from the caller.
        unsafe { _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(lanes, p)) }
    }
    #[inline(always)]
    unsafe fn load16(p: *const i32, lanes: u16) -> (__m512i, u16) {
        // SAFETY: forwarded from the caller.
        unsafe { load16_32(p as *const u32, lanes) }
    }
    #[inline(always)]
    unsafe fn total_len(values: &[i32]) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe {
            total_len_32::<INT32>(bytemuck::cast_slice(values), |v| {
                crate::packed::encoded_len_i32(bytemuck::cast_slice(v))
            })
        }
    }
}

impl Wire for Sint64 {
    type Elem = i64;
    const MAX_LEN: usize = crate::varint::MAX_LEN;
    #[inline(always)]
    fn wire(e: i64) -> u64 {
        crate::varint::zigzag_encode_64(e)
    }
    #[inline(always)]
    unsafe fn load8(p: *const i64, lanes: u8) -> __m512i {
        // SAFETY: forwarded from the caller.
        unsafe {
            let x = _mm512_maskz_loadu_epi64(lanes, p);
            _mm512_xor_si512(_mm512_slli_epi64::<1>(x), _mm512_srai_epi64::<63>(x))
        }
    }
}

impl Wire for Sint32 {
    type Elem = i32;
    const MAX_LEN: usize = crate::varint::MAX_LEN_32;
    #[inline(always)]
    fn wire(e: i32) -> u64 {
        crate::varint::zigzag_encode_32(e) as u64
    }
    #[inline(always)]
    unsafe fn load8(p: *const i32, lanes: u8) -> __m512i {
        // Zigzag in 32 bits, then zero-extended.
        // SAFETY: forwarded from the caller.
        unsafe {
            let x = _mm256_maskz_loadu_epi32(lanes, p);
            _mm512_cvtepu32_epi64(_mm256_xor_si256(_mm256_slli_epi32::<1>(x), _mm256_srai_epi32::<31>(x)))
        }
    }
    #[inline(always)]
    unsafe fn load16(p: *const i32, lanes: u16) -> (__m512i, u16) {
        // SAFETY: forwarded from the caller.
        unsafe {
            let x = _mm512_maskz_loadu_epi32(lanes, p);
            let x = _mm512_xor_si512(_mm512_slli_epi32::<1>(x), _mm512_srai_epi32::<31>(x));
            (x, _mm512_test_epi32_mask(x, _mm512_set1_epi32(!0x0fff_ffff)))
        }
    }
    #[inline(always)]
    unsafe fn total_len(values: &[i32]) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe {
            total_len_32::<ZIGZAG>(bytemuck::cast_slice(values), |v| {
                crate::packed::encoded_len_sint32(bytemuck::cast_slice(v))
            })
        }
    }
}

/// Varint lengths by leading-zero count (of a value with at least one bit set): entry `lz` is
/// the length of a `BITS`-bit value with `lz` leading zeros, except that for `int32` (`BITS`
/// 32 with `NEGATIVE` 10) a value with none is negative and sign-extended to ten bytes.
const fn lengths_by_lz<const BITS: usize>(negative: u8) -> Bytes64 {
    let mut a = [0u8; 64];
    let mut lz = 0;
    while lz < BITS {
        a[lz] = (BITS - lz).div_ceil(7) as u8;
        lz += 1;
    }
    if negative != 0 {
        a[0] = negative;
    }
    Bytes64(a)
}

static LEN_BY_LZ64: Bytes64 = lengths_by_lz::<64>(0);
static LEN_BY_LZ32: Bytes64 = lengths_by_lz::<32>(0);
static LEN_BY_LZ32_INT32: Bytes64 = lengths_by_lz::<32>(10);

/// The varint length (1..=10) of each 64-bit lane: a byte table lookup (`vpermb`) by the
/// lane's leading-zero count, keeping only each lane's low byte.
///
/// # Safety
/// AVX-512F/BW/CD/VBMI.
#[inline(always)]
unsafe fn lengths(v: __m512i) -> __m512i {
    // SAFETY: the caller guarantees the instruction set.
    unsafe {
        let lz = _mm512_lzcnt_epi64(_mm512_or_si512(v, _mm512_set1_epi64(1)));
        _mm512_maskz_permutexvar_epi8(0x0101_0101_0101_0101, lz, image(&LEN_BY_LZ64))
    }
}

/// Stores the first `n` bytes of `bytes` at `dst`: for `EXACT`, just those (a byte-masked
/// store); otherwise the whole register.
///
/// # Safety
/// `dst` must be valid for writes of `n` bytes (`EXACT`) or 64 bytes; AVX-512BW and BMI2.
#[inline(always)]
unsafe fn store<const EXACT: bool>(dst: *mut u8, bytes: __m512i, n: usize) {
    // SAFETY: the caller guarantees the writable bytes (a masked store writes only the bytes
    // its mask selects) and the instruction set.
    unsafe {
        if EXACT {
            _mm512_mask_storeu_epi8(dst as *mut i8, _bzhi_u64(u64::MAX, n as u32), bytes);
        } else {
            _mm512_storeu_si512(dst as *mut __m512i, bytes);
        }
    }
}

/// Encodes the values whose groups and lengths are in `groups` (7-bit groups in bytes, upper
/// bytes zero) and `len_bytes` (each byte: its value's length, 0 for a lane to leave out),
/// lanes of which bytes `index` (`index_plus1`) count from 0 (1): sets the continuation bits,
/// compacts the bytes of every value and stores them at `dst` ([`store`]). Returns the bytes
/// of the values.
///
/// # Safety
/// As [`store`] for the values' bytes; AVX-512F/BW/VBMI2 and BMI2.
#[inline(always)]
unsafe fn store_compacted<const EXACT: bool>(
    groups: __m512i,
    len_bytes: __m512i,
    index: &Bytes64,
    index_plus1: &Bytes64,
    dst: *mut u8,
) -> usize {
    // SAFETY: the caller guarantees the instruction set and the writable bytes.
    unsafe {
        let keep = _mm512_cmpgt_epu8_mask(len_bytes, image(index));
        let carry_on = _mm512_cmpgt_epu8_mask(len_bytes, image(index_plus1));
        let bytes = _mm512_mask_add_epi8(groups, carry_on, groups, _mm512_set1_epi8(-128));
        let n = keep.count_ones() as usize;
        store::<EXACT>(dst, _mm512_maskz_compress_epi8(keep, bytes), n);
        n
    }
}

/// `vpmultishiftqb` offsets for two 32-bit values per qword: bytes 0..4 take bits `7j..7j+8`
/// of the low dword, bytes 4..8 of the high one.
static SHIFTS4: Bytes64 = lanes16([0, 7, 14, 21, 32, 39, 46, 53, 0, 7, 14, 21, 32, 39, 46, 53]);

/// Sixteen 32-bit wire values below 2^28 made into varint bytes in their lanes: `bytes` with
/// continuation bits, `keep` all ones on the bytes each value takes.
struct Short16 {
    bytes: __m512i,
    keep: __m512i,
}

/// [`Short16`] of the values in the lanes of `x`.
///
/// # Safety
/// AVX-512F/BW/CD/VBMI.
#[inline(always)]
unsafe fn short16(x: __m512i) -> Short16 {
    // SAFETY: the caller guarantees the instruction set.
    unsafe {
        let groups =
            _mm512_and_si512(_mm512_multishift_epi64_epi8(image(&SHIFTS4), x), _mm512_set1_epi8(0x7f));
        let lz = _mm512_lzcnt_epi32(_mm512_or_si512(groups, _mm512_set1_epi32(1)));
        let keep = _mm512_srlv_epi32(_mm512_set1_epi32(-1), _mm512_and_si512(lz, _mm512_set1_epi32(0x18)));
        let bytes =
            _mm512_ternarylogic_epi32::<0xf8>(groups, _mm512_srli_epi32::<8>(keep), _mm512_set1_epi8(-128));
        Short16 { bytes, keep }
    }
}

impl Short16 {
    /// Stores the bytes of the values in the lanes `lanes` selects at `dst`, compacted
    /// ([`store`]); returns how many.
    ///
    /// # Safety
    /// As [`store`] for those bytes; AVX-512F/BW/VBMI2 and BMI2.
    #[inline(always)]
    unsafe fn emit<const EXACT: bool>(&self, lanes: u16, dst: *mut u8) -> usize {
        // SAFETY: the caller guarantees the instruction set and the writable bytes.
        unsafe {
            let keep = _mm512_movepi8_mask(_mm512_maskz_mov_epi32(lanes, self.keep));
            let n = keep.count_ones() as usize;
            store::<EXACT>(dst, _mm512_maskz_compress_epi8(keep, self.bytes), n);
            n
        }
    }
}

/// Encodes the 32-bit wire values below 2^28 in the lanes of `x` that `lanes` selects (at
/// most 64 bytes) at `dst`, as [`encode8`] does in 64-bit lanes; returns the bytes written.
///
/// # Safety
/// As [`store`] for the values' bytes; AVX-512F/BW/VL/CD/VBMI/VBMI2 and BMI2.
#[inline(always)]
unsafe fn encode16<const EXACT: bool>(x: __m512i, lanes: u16, dst: *mut u8) -> usize {
    // SAFETY: forwarded from the caller.
    unsafe { short16(x).emit::<EXACT>(lanes, dst) }
}

/// Encodes the wire values in the lanes of `v` that `lanes` selects at `dst`; returns the
/// bytes written.
///
/// # Safety
/// `dst` must be valid for writes of the values' bytes (`EXACT`) or [`MARGIN`] bytes;
/// AVX-512F/BW/VL/CD/VBMI/VBMI2 and BMI2.
#[inline(always)]
unsafe fn encode8<const EXACT: bool>(v: __m512i, lanes: u8, dst: *mut u8) -> usize {
    // SAFETY: the caller guarantees the instruction set and the writable bytes.
    unsafe {
        if _mm512_test_epi64_mask(v, _mm512_set1_epi64(-1 << 56)) == 0 {
            // At most 8 bytes each. The groups' own leading zeros give each lane's bytes: all
            // ones shifted right by whole bytes past the top non-zero group (a zero value keeps
            // one byte), and that mask shifted down one byte gives the continuation bits.
            let groups =
                _mm512_and_si512(_mm512_multishift_epi64_epi8(image(&SHIFTS8), v), _mm512_set1_epi8(0x7f));
            let lz = _mm512_lzcnt_epi64(_mm512_or_si512(groups, _mm512_set1_epi64(1)));
            let keep =
                _mm512_srlv_epi64(_mm512_set1_epi64(-1), _mm512_and_si512(lz, _mm512_set1_epi64(0x38)));
            let keep = _mm512_maskz_mov_epi64(lanes, keep);
            // groups | (keep >> 8 & 0x80..)
            let bytes = _mm512_ternarylogic_epi64::<0xf8>(
                groups,
                _mm512_srli_epi64::<8>(keep),
                _mm512_set1_epi8(-128),
            );
            let keep = _mm512_movepi8_mask(keep);
            let n = keep.count_ones() as usize;
            store::<EXACT>(dst, _mm512_maskz_compress_epi8(keep, bytes), n);
            return n;
        }
        // A lane left out has length 0, so no bytes.
        let lens = _mm512_maskz_mov_epi64(lanes, lengths(v));
        // A value over 8 bytes: four at a time, each in a 16-byte lane (at most 40 bytes).
        let mut written = 0;
        for half in &DOUBLE_HALF {
            let select = _mm512_loadu_si512(half.as_ptr() as *const __m512i);
            let doubled = _mm512_permutexvar_epi64(select, v);
            let groups = _mm512_multishift_epi64_epi8(image(&SHIFTS16), doubled);
            let groups = _mm512_and_si512(groups, image(&PAYLOAD16));
            // Byte 0 of each 16-byte lane holds its value's length.
            let len_bytes =
                _mm512_shuffle_epi8(_mm512_permutexvar_epi64(select, lens), _mm512_setzero_si512());
            written += store_compacted::<EXACT>(
                groups,
                len_bytes,
                &BYTE_IN_LANE16,
                &BYTE_IN_LANE16_PLUS1,
                dst.add(written),
            );
        }
        written
    }
}

/// Packed varint encoding of `values` (see the module documentation).
///
/// # Safety
/// AVX-512F/BW/VL/CD/VBMI/VBMI2, AVX2 and BMI2.
#[inline(always)]
unsafe fn encode<W: Wire>(values: &[W::Elem], out: &mut [u8]) -> Result<usize> {
    // With room for the worst case the output cannot be too small: no length pass, and the
    // whole-register steps stop 64 values or more before the end, so that the bytes after
    // them cover the spill of their stores (the rest has exact stores). Otherwise the length
    // first, and the steps run while a whole register fits.
    let roomy = out.len() >= values.len().saturating_mul(W::MAX_LEN);
    let (total, in_steps) = if roomy {
        (out.len(), values.len().saturating_sub(64))
    } else {
        // SAFETY: the caller guarantees the instruction set.
        (unsafe { W::total_len(values) }, values.len())
    };
    let Some(out) = out.get_mut(..total) else {
        return Err(Error::new(ErrorKind::OutputTooSmall, 0));
    };
    if !roomy && total == values.len() {
        // Every value takes one byte (enums, flags, small ids; the length pass has just said
        // so, for nothing more than a compare): each value's byte, by a loop the compiler
        // vectorizes, in place of the encoding steps (wall A/B, ns a value: fresh arrays of 8
        // 1.56 -> 1.05, of 32 0.67 -> 0.37, of 10,000 0.48 -> 0.36; 100 values 0.43 -> 0.24).
        // A look at short arrays with room for the worst case as well (no length pass there)
        // cost mixed arrays of eight 1.6-2.3 ns a call, and is not taken.
        for (o, &v) in out.iter_mut().zip(values) {
            *o = W::wire(v) as u8;
        }
        return Ok(total);
    }
    let dst = out.as_mut_ptr();
    let (mut pos, mut done) = (0usize, 0usize);
    // Whole-register stores: sixteen values a step in 32-bit lanes while they are short (or
    // the run of at least eight short ones before a long one), else eight in 64-bit lanes.
    while in_steps.saturating_sub(done) >= 16 && total - pos >= MARGIN {
        // SAFETY: `done + 16 <= values.len()`; `pos + MARGIN <= total = out.len()` (and
        // `SPLIT_MARGIN` for a split step); the caller guarantees the instruction set.
        unsafe {
            let p = values.as_ptr().add(done);
            let (x, long) = W::load16(p, 0xffff);
            // The common step first, with a constant advance: `done` would otherwise depend on
            // the loaded values, a chain through the load and the compare into the next load.
            if long == 0 {
                pos += encode16::<false>(x, 0xffff, dst.add(pos));
                done += 16;
                continue;
            }
            if long & (long - 1) == 0 && total - pos >= SPLIT_MARGIN {
                // One long value (a negative `int32`, say) among short ones: those before it,
                // it (ten-byte stores), those after; still sixteen values.
                let at = long.trailing_zeros() as usize;
                let parts = short16(x);
                pos += parts.emit::<false>(long - 1, dst.add(pos));
                let (low, high, len) = crate::varint::encode_words(W::wire(*p.add(at)));
                crate::packed::store_varint_words(dst.add(pos), low, high);
                pos += len;
                pos += parts.emit::<false>(!(long | (long - 1)), dst.add(pos));
                done += 16;
                continue;
            }
            let run = long.trailing_zeros() as usize;
            if run >= 8 {
                pos += encode16::<false>(x, low_lanes(run) as u16, dst.add(pos));
                done += run;
                continue;
            }
            pos += encode8::<false>(W::load8(p, 0xff), 0xff, dst.add(pos));
        }
        done += 8;
    }
    // The rest with lane-masked loads and byte-masked stores, the same steps.
    while done < values.len() {
        let left = values.len() - done;
        // SAFETY: the masks select elements `done..done + left.min(16)`, all readable, and the
        // stores write exactly the bytes of those encoded, within `pos..total`; the caller
        // guarantees the instruction set.
        unsafe {
            let p = values.as_ptr().add(done);
            let lanes = low_lanes(left.min(16)) as u16;
            let (x, long) = W::load16(p, lanes);
            if long == 0 {
                // As in the loop above: an advance that does not depend on the values.
                pos += encode16::<true>(x, lanes, dst.add(pos));
                done += left.min(16);
                continue;
            }
            let run = (long.trailing_zeros() as usize).min(left);
            if run > 0 {
                pos += encode16::<true>(x, low_lanes(run) as u16, dst.add(pos));
                done += run;
                continue;
            }
            let lanes = low_lanes(left.min(8)) as u8;
            pos += encode8::<true>(W::load8(p, lanes), lanes, dst.add(pos));
        }
        done += left.min(8);
    }
    debug_assert!(roomy || pos == total);
    Ok(pos)
}

/// Instantiates [`encode`] for one element type inside an AVX-512 function.
macro_rules! encoder {
    ($name:ident, $wire:ty, $elem:ty) => {
        #[target_feature(
            enable = "avx512f,avx512bw,avx512vl,avx512cd,avx512vbmi,avx512vbmi2,avx512bitalg,avx2,bmi1,bmi2,lzcnt,popcnt"
        )]
        pub(crate) unsafe fn $name(values: &[$elem], out: &mut [u8]) -> Result<usize> {
            // SAFETY: only reachable through the AVX-512 table, handed out once the CPU has
            // these features.
            unsafe { encode::<$wire>(values, out) }
        }
    };
}

encoder!(encode_u64, Uint64, u64);
encoder!(encode_u32, Uint32, u32);
encoder!(encode_i32, Int32, i32);
encoder!(encode_sint64, Sint64, i64);
encoder!(encode_sint32, Sint32, i32);

/// Instantiates a packed length for one 64-bit wire type inside an AVX-512 function: the
/// encoders' own length pass ([`Wire::total_len`]), eight values a step by `VPLZCNTQ`, with no
/// branch on the values. (Until 2026-12-07 these took the portable blocks, which choose a
/// length method per 32-value block: on `realistic` data, whose negative `int32`s fall in about
/// half of the blocks, that branch mispredicted on fresh arrays while the values were still on
/// their way from memory.)
macro_rules! length {
    ($name:ident, $wire:ty, $elem:ty) => {
        /// # Safety
        /// The CPU must support the AVX-512 backend's features.
        #[target_feature(
            enable = "avx512f,avx512bw,avx512vl,avx512cd,avx512vbmi,avx512vbmi2,avx512bitalg,avx2,bmi1,bmi2,lzcnt,popcnt"
        )]
        pub(crate) unsafe fn $name(values: &[$elem]) -> usize {
            // SAFETY: only reachable through the AVX-512 table, handed out once the CPU has
            // these features.
            unsafe { <$wire as Wire>::total_len(values) }
        }
    };
}

length!(encoded_len_u64, Uint64, u64);
length!(encoded_len_sint64, Sint64, i64);

/// Booleans are one byte each whatever the backend: the portable encoder.
pub(crate) fn encode_bool(values: &[bool], out: &mut [u8]) -> Result<usize> {
    crate::packed::portable::encode_bool(values, out)
}
