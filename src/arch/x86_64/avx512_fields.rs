//! The AVX-512 field-length table for [`crate::arch::field_table`]: 64 positions a block, each
//! lane working out the field that would start at its byte, with no branch.

use super::avx512::{image, IOTA};
use crate::arch::field_table::{self, FieldLengths};
use core::arch::x86_64::{
    __m512i, _mm512_add_epi8, _mm512_and_si512, _mm512_cmpeq_epi8_mask, _mm512_cmpgt_epu8_mask,
    _mm512_loadu_si512, _mm512_mask_add_epi8, _mm512_mask_blend_epi8, _mm512_mask_mov_epi8,
    _mm512_maskz_mov_epi8, _mm512_movepi8_mask, _mm512_multishift_epi64_epi8, _mm512_popcnt_epi8,
    _mm512_set1_epi64, _mm512_set1_epi8, _mm512_set_epi64, _mm512_setzero_si512, _mm512_shrdv_epi64,
    _mm512_storeu_si512, _mm512_sub_epi8, _mm512_test_epi8_mask, _mm512_testn_epi8_mask,
};

/// The table builder (AVX-512 F/BW, VBMI's `vpmultishiftqb`, VBMI2's `vpshrdvq`, BITALG's `vpopcntb`).
pub(crate) struct Avx512Lengths;

impl FieldLengths for Avx512Lengths {
    const BLOCK: usize = 64;
    // Bytes 65 .. 129 for the varint ends of the block's last values.
    const READS: usize = 129;
    // An average field of 26 bytes or more: the build of a chunk took about as long as the
    // scalar path's 35 fields on Zen 4 (37 cycles a block).
    const MIN_FIELDS: usize = 40;

    #[inline(always)]
    unsafe fn lengths(block: *const u8, below: usize, out: *mut u8) {
        // SAFETY: the caller guarantees `READS` readable bytes at `block` (the furthest load
        // ends at `block + 65 + 64`), 64 writable at `out`, and AVX-512 F/BW/VBMI/VBMI2/BITALG.
        unsafe { lengths(block, below, out) }
    }
}

/// `at + i` is lane `i`; `below` is how many positions of the block are below the limit.
///
/// # Safety
/// AVX-512 F/BW/VBMI/VBMI2/BITALG; 129 bytes readable at `p`, 64 writable at `out`.
#[inline(always)]
unsafe fn lengths(p: *const u8, below: usize, out: *mut u8) {
    // SAFETY: the caller guarantees AVX-512 F/BW/VBMI/VBMI2/BITALG, 129 readable bytes at `p` and 64
    // writable at `out`; the loads and the store below stay within them.
    unsafe {
        // Loads end at most `65 + 64 = 129` bytes from `p`, readable per the caller.
        let load = |offset: usize| -> __m512i { _mm512_loadu_si512(p.add(offset) as *const __m512i) };
        let splat = |b: u8| _mm512_set1_epi8(b as i8);
        let iota = image(&IOTA);
        let one = splat(1);
        let (x0, x1, x2) = (load(0), load(1), load(2));

        // The tag: two bytes where byte 0 has its continuation bit (`long`); three or more, or field
        // number 0 (`raw < 8`, also written in two bytes), are not table fields.
        let long = _mm512_movepi8_mask(x0);
        let cont1 = _mm512_movepi8_mask(x1);
        let number_zero =
            _mm512_testn_epi8_mask(x0, splat(0x78)) & (!long | _mm512_testn_epi8_mask(x1, splat(0xff)));
        let bad_tag = (long & cont1) | number_zero;
        let wire_type = _mm512_and_si512(x0, splat(7));
        let long_bytes = _mm512_maskz_mov_epi8(long, one);

        // Varints: the stop bits (no continuation bit) of the 128 bytes from `at + 1` as one
        // number, qword `g` of `stops` holding its bits `8g .. 8g + 64`; `vpmultishiftqb` then
        // gives each lane the 8 stop bits from its value's start (`i + long`), and the stop
        // index (the varint's length - 1) is the trailing zeros, `popcnt((x & -x) - 1)`: 8
        // when none, then bits 8 and 9 say 9 or 10 bytes. (Cheaper than a running minimum of
        // the next stop over doubling steps of byte permutes: 37 against 41 cycles a block.)
        let stops_lo = !cont1;
        let stops_hi = !_mm512_movepi8_mask(load(65));
        let stops = _mm512_shrdv_epi64(
            _mm512_set1_epi64(stops_lo as i64),
            _mm512_set1_epi64(stops_hi as i64),
            _mm512_set_epi64(56, 48, 40, 32, 24, 16, 8, 0),
        );
        let from_value = _mm512_add_epi8(_mm512_and_si512(iota, splat(7)), long_bytes);
        let first8 = _mm512_multishift_epi64_epi8(from_value, stops);
        let lowest = _mm512_and_si512(first8, _mm512_sub_epi8(_mm512_setzero_si512(), first8));
        let below8 = _mm512_popcnt_epi8(_mm512_sub_epi8(lowest, one));
        let next8 = _mm512_multishift_epi64_epi8(_mm512_add_epi8(from_value, splat(8)), stops);
        let none8 = _mm512_cmpeq_epi8_mask(below8, splat(8));
        let (stop8, stop9) = (_mm512_test_epi8_mask(next8, one), _mm512_test_epi8_mask(next8, splat(2)));
        let stop_index = _mm512_mask_add_epi8(below8, none8 & !stop8, below8, one);
        // Ten bytes at most, and a tenth byte of 0 or 1.
        let tenth = _mm512_mask_blend_epi8(long, load(10), load(11));
        let ten_bytes = none8 & !stop8 & stop9;
        let bad_varint = (none8 & !stop8 & !stop9) | (ten_bytes & _mm512_cmpgt_epu8_mask(tenth, one));
        let varint_len = _mm512_add_epi8(_mm512_add_epi8(stop_index, long_bytes), splat(2));

        // A length prefix of one byte: tag, prefix, payload.
        let prefix = _mm512_mask_blend_epi8(long, x1, x2);
        let short_prefix = !_mm512_movepi8_mask(prefix);
        let len_len = _mm512_add_epi8(_mm512_add_epi8(prefix, long_bytes), splat(2));

        let is = |t: u8| _mm512_cmpeq_epi8_mask(wire_type, splat(t));
        let (varint, i64, len, i32) = (is(0), is(1), is(2), is(5));
        let mut field_len = _mm512_maskz_mov_epi8(varint, varint_len);
        field_len = _mm512_mask_mov_epi8(field_len, i64, _mm512_add_epi8(long_bytes, splat(9)));
        field_len = _mm512_mask_mov_epi8(field_len, len, len_len);
        field_len = _mm512_mask_mov_epi8(field_len, i32, _mm512_add_epi8(long_bytes, splat(5)));
        let below_limit = if below >= 64 { u64::MAX } else { (1u64 << below) - 1 };
        let table_field =
            ((varint & !bad_varint) | i64 | (len & short_prefix) | i32) & !bad_tag & below_limit;
        // 64 writable bytes at `out`, per the caller.
        _mm512_storeu_si512(out as *mut __m512i, _mm512_maskz_mov_epi8(table_field, field_len));
    }
}

/// [`field_table::scan`] with this table.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VBMI, VBMI2 and BITALG (the AVX-512 backend's check).
#[target_feature(
    enable = "avx512f,avx512bw,avx512vl,avx512cd,avx512vbmi,avx512vbmi2,avx512bitalg,avx2,bmi1,bmi2,lzcnt,popcnt"
)]
pub(crate) unsafe fn scan_fields(message: &[u8], start: usize, depth_limit: u8) -> usize {
    // SAFETY: forwarded.
    unsafe { field_table::scan::<Avx512Lengths>(message, start, depth_limit) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;

    #[test]
    fn every_lane_equals_the_model() {
        if Backend::Avx512.is_available() {
            // SAFETY: AVX-512 checked above (the backend's check includes VBMI, VBMI2, BITALG).
            unsafe { field_table::tests::every_lane_equals_the_model::<Avx512Lengths>() };
        }
    }

    #[test]
    fn the_scan_takes_valid_fields_and_stops_at_errors() {
        if Backend::Avx512.is_available() {
            // SAFETY: as above.
            unsafe {
                field_table::tests::the_scan_takes_valid_fields_and_stops_at_errors::<Avx512Lengths>(
                    scan_fields,
                )
            };
        }
    }
}
