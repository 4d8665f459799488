//! SSSE3: the SSE2 blocks and lanes, the lanes joined with multiply-adds (`PMADDUBSW`); a
//! `PSHUFB` block encoder for 32-bit values.

use crate::arch::generic;
use crate::arch::x86_64::sse2::{self, Sse2};
use crate::packed::BLOCK;
use core::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_and_si128, _mm_cmpeq_epi32, _mm_cmpgt_epi32, _mm_cvtsi128_si32,
    _mm_loadu_si128, _mm_maddubs_epi16, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi16, _mm_set1_epi32,
    _mm_set1_epi8, _mm_setzero_si128, _mm_shuffle_epi8, _mm_slli_epi32, _mm_srli_epi32, _mm_storeu_si128,
    _mm_sub_epi32,
};

/// SSSE3's join of a lane's varint bytes: unsigned bytes (1, 128) times the 7-bit groups,
/// `g0 + 128 g1` in 16 bits with one `PMADDUBSW` (SSE2 needs two shifts and masks for this),
/// then as in SSE2.
pub(crate) struct MaddJoin;

impl sse2::JoinLanes for MaddJoin {
    #[inline(always)]
    unsafe fn join(bytes: __m128i) -> __m128i {
        // SAFETY: the caller guarantees SSSE3.
        unsafe {
            let groups7 = _mm_and_si128(bytes, _mm_set1_epi8(0x7f));
            let groups14 = _mm_maddubs_epi16(_mm_set1_epi16(0x8001u16 as i16), groups7);
            sse2::join_groups14(groups14)
        }
    }
}

/// The packed encoder's blocks of 32-bit wire values, four values a step: each value's 7-bit
/// groups and continuation bits in its 32-bit lane, then one `PSHUFB` by a table row (indexed by
/// the four lengths) packs their bytes together for one 16-byte store. A step whose values are
/// not all below 2^28 (five bytes, or ten for a negative `int32`) goes value by value; a block
/// of one-byte values, or of unsigned values with one of five bytes, goes to the portable block
/// encoder. The AVX2 backend runs it too, compiled for AVX2, with a step of its own: eight values
/// in a 256-bit register (`avx2::Pack8`).
pub(crate) struct ShuffleBlock32;

/// `PSHUFB` rows by length index (`len0 - 1 | (len1 - 1) << 2 | ..`): the bytes of each value,
/// in order, from its lane.
pub(crate) static PACK: [[u8; 16]; 256] = pack_rows();
/// The bytes of the four values, by length index.
pub(crate) static PACKED_LEN: [u8; 256] = packed_lens();

const fn pack_rows() -> [[u8; 16]; 256] {
    let mut rows = [[0x80u8; 16]; 256];
    let mut index = 0;
    while index < 256 {
        let (mut lane, mut at) = (0, 0);
        while lane < 4 {
            let len = (index >> (2 * lane) & 3) + 1;
            let mut i = 0;
            while i < len {
                rows[index][at] = (4 * lane + i) as u8;
                at += 1;
                i += 1;
            }
            lane += 1;
        }
        index += 1;
    }
    rows
}

const fn packed_lens() -> [u8; 256] {
    let mut lens = [0u8; 256];
    let mut index = 0;
    while index < 256 {
        lens[index] = ((index & 3) + (index >> 2 & 3) + (index >> 4 & 3) + (index >> 6 & 3) + 4) as u8;
        index += 1;
    }
    lens
}

/// The length index of four values from their lengths less one, one per byte of `lens`: the
/// multiply moves byte `i`'s two bits to bits `24 + 2i` (the other products stay below bit 24).
#[inline(always)]
pub(crate) fn length_index(lens: u32) -> usize {
    (lens.wrapping_mul(0x0104_1040) >> 24) as usize
}

/// Byte `4i` of each 32-bit lane (`i` = 0..4) into bytes 0..4, the rest zero: a `PSHUFB` row.
pub(crate) const LOW_BYTES: [i8; 16] = [0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1];

impl crate::packed::Block32 for ShuffleBlock32 {
    #[inline(always)]
    fn encode<const SIGNED: bool>(v: &[u32; BLOCK], dst: &mut [u8]) -> Option<usize> {
        let or = v.iter().fold(0, |acc, &x| acc | x);
        ShuffleBlock32::encode_with::<SIGNED, Pack4>(v, or, dst, crate::varint::encode_words)
    }
}

/// A step of the block encoder: `VALUES` values (a multiple of four) below 2^28 packed by
/// `PSHUFB` rows.
pub(crate) trait PackStep {
    const VALUES: usize;

    /// Encodes the `VALUES` values at `src` at `dst` and returns the bytes they take, or
    /// `None`, having written nothing, if one of them is 2^28 or more.
    ///
    /// # Safety
    /// `src` must be valid for reads of `VALUES` values and `dst` for writes of `4 * VALUES`
    /// bytes; the CPU must support the step's instructions.
    unsafe fn pack(src: *const u32, dst: *mut u8) -> Option<usize>;
}

/// Four values in one 128-bit register ([`pack4`]).
pub(crate) struct Pack4;

impl PackStep for Pack4 {
    const VALUES: usize = 4;

    #[inline(always)]
    unsafe fn pack(src: *const u32, dst: *mut u8) -> Option<usize> {
        // SAFETY: forwarded from the caller (16 bytes of `dst`).
        unsafe { pack4(src, dst) }
    }
}

impl ShuffleBlock32 {
    /// [`crate::packed::Block32::encode`] given `or`, the bitwise or of the values, in steps of
    /// `S`; a step with a value of 2^28 or more by `words` (as [`crate::varint::encode_words`]),
    /// value by value.
    #[inline(always)]
    pub(crate) fn encode_with<const SIGNED: bool, S: PackStep>(
        v: &[u32; BLOCK],
        or: u32,
        dst: &mut [u8],
        words: impl Fn(u64) -> (u64, u64, usize),
    ) -> Option<usize> {
        if or < 0x80 {
            return crate::packed::encode_block_one_byte(v, dst);
        }
        // Room for ten bytes a value and the reach of the last 16-byte store; closer to the
        // end of the output the portable encoder takes the block.
        if dst.len() < BLOCK * 10 + 16 || (!SIGNED && or >> 28 != 0) {
            return crate::packed::encode_block_32_wide::<SIGNED>(v, dst);
        }
        let p = dst.as_mut_ptr();
        let mut at = 0usize;
        for group in v.chunks_exact(S::VALUES) {
            // SAFETY: only instantiated inside functions compiled with SSSE3 enabled (and the
            // step's own instruction set); `group` holds `S::VALUES` values. Before a step `at`
            // is at most `BLOCK - S::VALUES` values of ten bytes; a step writes at most `4 *
            // S::VALUES` bytes (16 for each group of four, the reach of a 16-byte store), the
            // words ten bytes a value: every store stays within `at + 10 * S::VALUES <= BLOCK *
            // 10`, within the `BLOCK * 10 + 16` bytes of `dst`.
            unsafe {
                if let Some(n) = S::pack(group.as_ptr(), p.add(at)) {
                    at += n;
                    continue;
                }
                for &x in group {
                    let wire = if SIGNED { x as i32 as i64 as u64 } else { x as u64 };
                    let (low, high, len) = words(wire);
                    crate::packed::store_varint_words(p.add(at), low, high);
                    at += len;
                }
            }
        }
        Some(at)
    }
}

/// The varint bytes of values below 2^28, each in its 32-bit lane (7-bit groups and
/// continuation bits), and each value's length less one in its lane, written once for the
/// intrinsics of one register width: [`pack4`]'s (SSSE3) and `avx2::Pack8`'s.
macro_rules! lane_bytes_and_lengths {
    ($x:expr, $and:ident, $or:ident, $slli:ident, $cmpgt:ident, $set1:ident, $add:ident, $sub:ident, $zero:expr) => {{
        let x = $x;
        // Groups 7 bits apart in the lane's bytes.
        let mut groups = $and(x, $set1(0x7f));
        groups = $or(groups, $and($slli::<1>(x), $set1(0x7f00)));
        groups = $or(groups, $and($slli::<2>(x), $set1(0x7f_0000)));
        groups = $or(groups, $and($slli::<3>(x), $set1(0x7f00_0000)));
        // A byte carries on when the value needs the next one.
        let c1 = $cmpgt(x, $set1(0x7f));
        let c2 = $cmpgt(x, $set1(0x3fff));
        let c3 = $cmpgt(x, $set1(0x1f_ffff));
        let carry = $or($and(c1, $set1(0x80)), $or($and(c2, $set1(0x8000)), $and(c3, $set1(0x80_0000))));
        // The compares are -1 when true.
        ($or(groups, carry), $sub($zero, $add(c1, $add(c2, c3))))
    }};
}
pub(crate) use lane_bytes_and_lengths;

/// Encodes the four values at `src` at `dst` and returns the bytes they take, or `None`, having
/// written nothing, if one of them is 2^28 or more.
///
/// # Safety
/// `src` must be valid for reads of four values and `dst` for writes of 16 bytes; the CPU must
/// support SSSE3.
#[inline(always)]
pub(crate) unsafe fn pack4(src: *const u32, dst: *mut u8) -> Option<usize> {
    // SAFETY: the caller guarantees the reads, the writes and SSSE3.
    unsafe {
        let x = _mm_loadu_si128(src as *const __m128i);
        let zero = _mm_setzero_si128();
        if _mm_movemask_epi8(_mm_cmpeq_epi32(_mm_srli_epi32::<28>(x), zero)) != 0xffff {
            return None;
        }
        let (bytes, len1) = lane_bytes_and_lengths!(
            x,
            _mm_and_si128,
            _mm_or_si128,
            _mm_slli_epi32,
            _mm_cmpgt_epi32,
            _mm_set1_epi32,
            _mm_add_epi32,
            _mm_sub_epi32,
            zero
        );
        // Each length less one, its low byte gathered into the low four bytes.
        let low_bytes = _mm_loadu_si128(LOW_BYTES.as_ptr() as *const __m128i);
        let index = length_index(_mm_cvtsi128_si32(_mm_shuffle_epi8(len1, low_bytes)) as u32);
        let row = _mm_loadu_si128(PACK[index].as_ptr() as *const __m128i);
        _mm_storeu_si128(dst as *mut __m128i, _mm_shuffle_epi8(bytes, row));
        Some(PACKED_LEN[index] as usize)
    }
}

/// core's UTF-8 check (SSSE3 does not imply the SSE4.2 simdutf8's SSE validator needs).
const VALIDATE_UTF8: unsafe fn(&[u8]) -> bool = crate::arch::utf8_core;

crate::packed::encoders_with!("sse2,ssse3", crate::arch::x86_64::ssse3::ShuffleBlock32);

/// No field-length table yet: `fields::validate` runs the scalar fast path.
const SCAN_FIELDS: Option<crate::arch::ScanFields> = None;

/// Short packed payloads with a varint over one byte from 8 bytes on, as AVX2 (a fixed cost of
/// 20-22 ns on Sapphire Rapids for a payload of one window; see `packed::SMALL_PAYLOAD`).
const SHORT_MIXED: usize = 8;

generic::kernel_fns!(
    "sse2,ssse3",
    Sse2,
    generic::Swar,
    generic::InLanes<sse2::Sse2Lanes<MaddJoin>>,
    encoders
);
