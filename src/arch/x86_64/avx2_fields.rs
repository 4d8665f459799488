//! The AVX2 field-length table for [`crate::arch::field_table`]: 32 positions a block, each
//! byte lane working out the field that would start at its byte, with no branch. The same
//! entries as AVX-512's table; without its bit-permuting ops, a varint's length comes from
//! unaligned loads at each of the ten offsets it can end at.

use crate::arch::field_table::{self, FieldLengths};
use core::arch::x86_64::{
    __m256i, _mm256_add_epi8, _mm256_and_si256, _mm256_andnot_si256, _mm256_blendv_epi8, _mm256_cmpeq_epi8,
    _mm256_cmpgt_epi8, _mm256_loadu_si256, _mm256_or_si256, _mm256_set1_epi8, _mm256_setr_epi8,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_storeu_si256, _mm256_sub_epi8,
};

/// The table builder (AVX2).
pub(crate) struct Avx2Lengths;

impl FieldLengths for Avx2Lengths {
    const BLOCK: usize = 32;
    // Bytes 11 .. 43: the tenth byte of a varint after a 2-byte tag at the block's
    // last position.
    const READS: usize = 43;
    // An average field of 20 bytes or more: on Emerald Rapids the mixed message's chunks (about
    // 70 fields) took 4.7 ns a field, mostly the build, about as long as the scalar path's 50.
    const MIN_FIELDS: usize = 50;

    #[inline(always)]
    unsafe fn lengths(block: *const u8, below: usize, out: *mut u8) {
        // SAFETY: the caller guarantees `READS` readable bytes at `block` (the furthest load
        // ends at `block + 11 + 32`), 32 writable at `out`, and AVX2.
        unsafe { lengths(block, below, out) }
    }
}

/// `at + i` is lane `i`; `below` is how many positions of the block are below the limit.
///
/// # Safety
/// AVX2; 43 bytes readable at `p`, 32 writable at `out`.
#[inline(always)]
unsafe fn lengths(p: *const u8, below: usize, out: *mut u8) {
    // SAFETY: the caller guarantees AVX2, 43 readable bytes at `p` and 32 writable at `out`;
    // the loads (offsets 0 to 11) and the store below stay within them.
    unsafe {
        let load = |offset: usize| -> __m256i { _mm256_loadu_si256(p.add(offset) as *const __m256i) };
        let splat = |b: u8| _mm256_set1_epi8(b as i8);
        let zero = _mm256_setzero_si256();
        // Byte lanes of 0 or -1 (all ones): the sign bit set, a continuation byte.
        let continues = |x: __m256i| _mm256_cmpgt_epi8(zero, x);
        let (x0, x1) = (load(0), load(1));
        let (long, cont1) = (continues(x0), continues(x1));
        // 1 where the tag takes two bytes.
        let long_bytes = _mm256_and_si256(long, splat(1));

        // The tag: two bytes where byte 0 has its continuation bit (`long`); three or more, or
        // field number 0 (the number's bits in byte 0 zero, and byte 1 zero too when it is
        // part of the tag), are not table fields.
        let low_number_zero = _mm256_cmpeq_epi8(_mm256_and_si256(x0, splat(0x78)), zero);
        let high_number_nonzero = _mm256_andnot_si256(_mm256_cmpeq_epi8(x1, zero), long);
        let number_zero = _mm256_andnot_si256(high_number_nonzero, low_number_zero);
        let bad_tag = _mm256_or_si256(_mm256_and_si256(long, cont1), number_zero);
        let wire_type = _mm256_and_si256(x0, splat(7));

        // Varints: `run` counts the continuation bytes from byte `i + 2` on, up to 10 (the
        // sign bits of the running `and` of the bytes, each true one subtracting -1), so
        // `run + 1` is the length of a varint starting at `i + 2`; one starting at `i + 1` is
        // one byte longer where byte `i + 1` goes on, else one byte.
        let mut all = load(2);
        let mut run2 = _mm256_sub_epi8(zero, continues(all));
        for offset in 3..12 {
            all = _mm256_and_si256(all, load(offset));
            run2 = _mm256_sub_epi8(run2, continues(all));
        }
        let run1 = _mm256_and_si256(cont1, _mm256_add_epi8(run2, splat(1)));
        // From the value's start, `i + 1 + long`.
        let run = _mm256_blendv_epi8(run1, run2, x0);
        // Ten bytes at most (a run of 9), and then a tenth byte of 0 or 1 (it ends the run, so
        // it is below 0x80 and compares as a positive byte).
        let tenth = _mm256_blendv_epi8(load(10), load(11), x0);
        let nine = splat(9);
        let good_varint = _mm256_or_si256(
            _mm256_cmpgt_epi8(nine, run),
            _mm256_andnot_si256(_mm256_cmpgt_epi8(tenth, splat(1)), _mm256_cmpeq_epi8(run, nine)),
        );

        // A length prefix of one byte: tag, prefix, payload.
        let prefix = _mm256_blendv_epi8(x1, load(2), x0);
        let short_prefix = _mm256_cmpgt_epi8(prefix, splat(0xff));

        // By wire type: the bytes of the field besides the tag's second byte and the run or
        // prefix (varint: the tag and the terminator; i64 and i32: the tag and the value; len:
        // the tag and the prefix), and whether a fixed-size type is a table field whatever the
        // bytes. `vpshufb` looks both up by the type (0 to 7) in each 128-bit half.
        let by_type = |t: [i8; 8]| {
            _mm256_setr_epi8(
                t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], 0, 0, 0, 0, 0, 0, 0, 0, t[0], t[1], t[2],
                t[3], t[4], t[5], t[6], t[7], 0, 0, 0, 0, 0, 0, 0, 0,
            )
        };
        let fixed_len = _mm256_shuffle_epi8(by_type([2, 9, 2, 0, 0, 5, 0, 0]), wire_type);
        let fixed_ok = _mm256_shuffle_epi8(by_type([0, -1, 0, 0, 0, -1, 0, 0]), wire_type);
        let is_varint = _mm256_cmpeq_epi8(wire_type, zero);
        let is_len = _mm256_cmpeq_epi8(wire_type, splat(2));
        let variable = _mm256_or_si256(_mm256_and_si256(is_varint, run), _mm256_and_si256(is_len, prefix));
        let field_len = _mm256_add_epi8(_mm256_add_epi8(fixed_len, long_bytes), variable);

        let good = _mm256_or_si256(
            fixed_ok,
            _mm256_or_si256(_mm256_and_si256(is_varint, good_varint), _mm256_and_si256(is_len, short_prefix)),
        );
        let mut table_field = _mm256_andnot_si256(bad_tag, good);
        if below < 32 {
            // Lanes at or past the limit are 0: only in a chunk's last blocks, so a branch
            // that predicts, not six more ops in every block.
            let iota = _mm256_setr_epi8(
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                26, 27, 28, 29, 30, 31,
            );
            table_field =
                _mm256_and_si256(table_field, _mm256_cmpgt_epi8(_mm256_set1_epi8(below as i8), iota));
        }
        _mm256_storeu_si256(out as *mut __m256i, _mm256_and_si256(table_field, field_len));
    }
}

/// [`field_table::scan`] with this table.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn scan_fields(message: &[u8], start: usize, depth_limit: u8) -> usize {
    // SAFETY: forwarded.
    unsafe { field_table::scan::<Avx2Lengths>(message, start, depth_limit) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;

    #[test]
    fn every_lane_equals_the_model() {
        if Backend::Avx2.is_available() {
            // SAFETY: AVX2 checked above.
            unsafe { field_table::tests::every_lane_equals_the_model::<Avx2Lengths>() };
        }
    }

    #[test]
    fn the_scan_takes_valid_fields_and_stops_at_errors() {
        if Backend::Avx2.is_available() {
            // SAFETY: AVX2 checked above.
            unsafe {
                field_table::tests::the_scan_takes_valid_fields_and_stops_at_errors::<Avx2Lengths>(
                    scan_fields,
                )
            };
        }
    }
}
