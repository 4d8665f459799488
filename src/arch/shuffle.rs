//! The lookup-table window decoder (the Masked VByte idea, generalised to 10-byte varints): a
//! step looks at the terminator bits of the next 12 bytes, and one table entry gives a byte
//! shuffle that places the first four varints ending there in four 64-bit lanes, how many
//! varints that is and how many bytes they take. The lanes are then packed in vector registers
//! ([`Shuffle4`], one implementation per instruction set). Nothing branches on a varint's
//! length, and the only chain from step to step is one table load.
//!
//! A varint of 9 or 10 bytes gets its first 8 bytes in its lane and is redone afterwards, with
//! the overflow check, by [`generic::redo_long_varints`]; one of 13 or more has no terminator in
//! its step's 12 bytes, which ends the window as an overflow (the driver hands it to the
//! reference).

use crate::arch::generic::{self, Compress, WindowDecoder};

/// Terminator bits a step looks at.
const STEP_BITS: usize = 12;
/// Table entries: one per pattern of `STEP_BITS` terminator bits.
const PATTERNS: usize = 1 << STEP_BITS;
/// Varints a step decodes at most: 64-bit lanes in 32 bytes.
const LANES: usize = 4;
/// Bytes of a shuffle row: eight source indices per lane.
const ROW_BYTES: usize = 8 * LANES;

/// Decodes up to four varints of at most 8 bytes each, placed in 64-bit lanes by a shuffle row.
pub(crate) trait Shuffle4 {
    /// Shuffles the 16 bytes at `p` by the 32-byte `row` (lane `j` takes bytes `row[8j..8j+8]`
    /// of them; an index with its top bit set gives zero) and packs each lane's seven-bit
    /// groups into its value.
    ///
    /// # Safety
    /// `p` must be valid for reads of 16 bytes and `row` of 32; the CPU must support the
    /// implementation's instruction set.
    unsafe fn decode4(p: *const u8, row: *const u8) -> [u64; LANES];

    /// Writes the first `k` (1..=3) of `values` at `dst`, and nothing after them.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `k` values; the CPU must support the implementation's
    /// instruction set.
    #[inline(always)]
    unsafe fn store_first<T: Copy>(values: [T; LANES], k: usize, dst: *mut T) {
        for (i, &value) in values.iter().enumerate().take(k) {
            // SAFETY: `i < k`, for which the caller guarantees room.
            unsafe { dst.add(i).write(value) };
        }
    }
}

/// The terminator bits of the first (up to) four varints that end in `pattern`.
const fn first_varints(pattern: usize) -> usize {
    let (mut rest, mut taken, mut lanes) = (pattern, 0, 0);
    while lanes < LANES && rest != 0 {
        taken |= rest & rest.wrapping_neg();
        rest &= rest - 1;
        lanes += 1;
    }
    taken
}

/// For each set of first varints (their terminator bits), its row number, in the order the
/// patterns first use them (`u16::MAX`: not a set any pattern uses); and how many rows.
const fn row_numbers() -> ([u16; PATTERNS], usize) {
    let (mut numbers, mut rows, mut pattern) = ([u16::MAX; PATTERNS], 0, 0);
    while pattern < PATTERNS {
        let taken = first_varints(pattern);
        if numbers[taken] == u16::MAX {
            numbers[taken] = rows as u16;
            rows += 1;
        }
        pattern += 1;
    }
    (numbers, rows)
}

const ROW_NUMBERS: ([u16; PATTERNS], usize) = row_numbers();
/// 794: every set of at most four terminators among 12 bits.
const ROWS: usize = ROW_NUMBERS.1;

/// The shuffle rows, cache-line aligned so that no row straddles two lines.
#[repr(C, align(64))]
struct Rows([[u8; ROW_BYTES]; ROWS]);

static SHUFFLES: Rows = Rows(shuffles());

const fn shuffles() -> [[u8; ROW_BYTES]; ROWS] {
    let mut rows = [[0x80u8; ROW_BYTES]; ROWS];
    let mut taken = 0;
    while taken < PATTERNS {
        let number = ROW_NUMBERS.0[taken];
        if number != u16::MAX {
            let row = &mut rows[number as usize];
            let (mut rest, mut start, mut lane) = (taken, 0, 0);
            while rest != 0 {
                let end = rest.trailing_zeros() as usize;
                // A lane holds 8 bytes; a longer varint is redone from its bytes.
                let len = if end + 1 - start > 8 { 8 } else { end + 1 - start };
                let mut i = 0;
                while i < len {
                    row[lane * 8 + i] = (start + i) as u8;
                    i += 1;
                }
                start = end + 1;
                rest &= rest - 1;
                lane += 1;
            }
        }
        taken += 1;
    }
    rows
}

/// The bytes a step consumes, by pattern: through the last of its varints' terminators. A
/// pattern without a terminator (the varint in progress is 13 bytes or more) consumes 64,
/// which ends the window's steps. A table of its own (4 KiB, stays in L1) because it is the
/// chain from one step to the next: the other tables' loads are off it.
static CONSUMED: [u8; PATTERNS] = consumed();

const fn consumed() -> [u8; PATTERNS] {
    let mut consumed = [0u8; PATTERNS];
    let mut pattern = 0;
    while pattern < PATTERNS {
        let taken = first_varints(pattern);
        consumed[pattern] = if taken == 0 { 64 } else { (usize::BITS - taken.leading_zeros()) as u8 };
        pattern += 1;
    }
    consumed
}

/// The rest of what a step does, by pattern: the byte offset of its shuffle row (a multiple
/// of 32) plus the number of varints it decodes (0..=4, in the offset's low bits).
static STEPS: [u16; PATTERNS] = steps();

const fn steps() -> [u16; PATTERNS] {
    let mut steps = [0u16; PATTERNS];
    let mut pattern = 0;
    while pattern < PATTERNS {
        let taken = first_varints(pattern);
        let offset = ROW_NUMBERS.0[taken] as usize * ROW_BYTES;
        steps[pattern] = (offset | taken.count_ones() as usize) as u16;
        pattern += 1;
    }
    steps
}

/// Where a step's varint count sits in its `STEPS` entry.
const COUNT_MASK: u16 = ROW_BYTES as u16 - 1;

// Row offsets must fit the entry's 16 bits, and leave the count its low bits.
const _: () = assert!(ROWS * ROW_BYTES <= 1 << 16 && LANES as u16 <= COUNT_MASK);

/// Up to four varints a step, by table (see the module docs).
pub(crate) struct InShuffles<S>(core::marker::PhantomData<S>);

impl<S: Shuffle4> WindowDecoder for InShuffles<S> {
    #[inline(always)]
    unsafe fn decode<X: Compress, T: Copy>(
        base: *const u8,
        stops: u64,
        long_ends: u64,
        dst: *mut T,
        convert: impl Fn(u64) -> T,
    ) -> (usize, usize, bool) {
        let count = stops.count_ones() as usize;
        let consumed = 64 - stops.leading_zeros() as usize;
        let rows = SHUFFLES.0.as_ptr() as *const u8;
        let (mut start, mut n) = (0usize, 0usize);
        // Each step stores four values; the ones past the varints it decoded are overwritten
        // by the next step, so only the last steps, with fewer than four values left in the
        // window, store fewer.
        while start < consumed {
            let pattern = (stops >> start) as usize & (PATTERNS - 1);
            let step = STEPS[pattern];
            // SAFETY: `start < 64`, and 64 + 16 bytes are readable at `base`; the row offset is
            // inside `SHUFFLES` (checked when the table is built); the caller guarantees the
            // instruction set.
            let values =
                unsafe { S::decode4(base.add(start), rows.add((step & !COUNT_MASK) as usize)) }.map(&convert);
            if n + LANES <= count {
                for (i, value) in values.into_iter().enumerate() {
                    // SAFETY: `n + i < count <= 64`, and `dst` has room for 64 values.
                    unsafe { dst.add(n + i).write(value) };
                }
            } else if n < count {
                // SAFETY: as above, for the `count - n` (1..=3) values left.
                unsafe { S::store_first(values, count - n, dst.add(n)) };
            }
            n += (step & COUNT_MASK) as usize;
            start += CONSUMED[pattern] as usize;
        }
        // Fewer values than terminators: a varint of 13 bytes or more stopped the steps.
        let overflow = n != count
            // SAFETY: forwarded from the caller.
            || long_ends != 0 && unsafe { generic::redo_long_varints::<X, T>(base, stops, long_ends, dst, &convert) };
        (count, consumed, overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_cover_every_set_of_four_terminators() {
        // Sets of at most four of 12 bits: 1 + 12 + 66 + 220 + 495.
        assert_eq!(ROWS, 794);
        // The pattern of four one-byte varints then anything: bytes 0, 1, 2, 3 in lanes 0..4.
        let pattern = 0b1111_1111_1111;
        assert_eq!((STEPS[pattern] & COUNT_MASK, CONSUMED[pattern]), (4, 4));
        let row = &SHUFFLES.0[(STEPS[pattern] & !COUNT_MASK) as usize / ROW_BYTES];
        for lane in 0..4 {
            assert_eq!(row[lane * 8], lane as u8);
            assert!(row[lane * 8 + 1..lane * 8 + 8].iter().all(|&b| b == 0x80));
        }
        // A 3-byte varint, then a 9-byte one (its first 8 bytes in the lane).
        let pattern = 1 << 2 | 1 << 11;
        assert_eq!((STEPS[pattern] & COUNT_MASK, CONSUMED[pattern]), (2, 12));
        let row = &SHUFFLES.0[(STEPS[pattern] & !COUNT_MASK) as usize / ROW_BYTES];
        assert_eq!(row[..8], [0, 1, 2, 0x80, 0x80, 0x80, 0x80, 0x80]);
        assert_eq!(row[8..16], [3, 4, 5, 6, 7, 8, 9, 10]);
        assert!(row[16..].iter().all(|&b| b == 0x80));
        // No terminator: the window's steps end.
        assert_eq!((STEPS[0] & COUNT_MASK, CONSUMED[0]), (0, 64));
    }
}
