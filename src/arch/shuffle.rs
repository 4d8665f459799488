//! The lookup-table window decoder (the Masked VByte idea, generalised to 10-byte varints): a
//! step looks at the terminator bits of the next 12 bytes, and one table entry gives a byte
//! shuffle that places the first four varints ending there in four 64-bit lanes, how many
//! varints that is and how many bytes they take. The lanes are then packed in vector registers
//! ([`Shuffle4`], one implementation per instruction set). Nothing branches on a varint's
//! length, and the only chain from step to step is one table load; a window runs two chains
//! side by side (its first 40%, and the rest after the four varints that follow it).
//!
//! A varint of 9 bytes or more gets its first 8 bytes in its lane and is redone afterwards, with
//! the overflow check, by [`generic::redo_long_varints`] (one of 13 or more has no terminator in
//! its step's 12 bytes: the steps after it decode garbage, and the redo flags the overflow).

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

/// The three tables in one static, so that a step addresses all of them from one register;
/// cache-line aligned so that no shuffle row straddles two lines.
#[repr(C, align(64))]
struct Tables {
    consumed: [u8; PATTERNS],
    steps: [u16; PATTERNS],
    shuffles: [[u8; ROW_BYTES]; ROWS],
}

static TABLES: Tables = Tables { consumed: STEP_TABLES.0, steps: STEP_TABLES.1, shuffles: shuffles() };

const _: () = assert!(core::mem::offset_of!(Tables, shuffles) % 64 == 0);

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

/// What a step does, by pattern: the bytes it consumes, through the last of its varints'
/// terminators (all 12 for a pattern without one: the varint in progress is 13 bytes or more,
/// or the chain is exhausted); and the byte offset of its shuffle row (a multiple of 32) plus
/// the number of varints it decodes (0..=4, in the offset's low bits). Two tables, because the
/// first (4 KiB, so it stays in L1) is the chain from one step to the next and the second is off
/// it.
const fn step_tables() -> ([u8; PATTERNS], [u16; PATTERNS]) {
    let (mut consumed, mut steps) = ([0u8; PATTERNS], [0u16; PATTERNS]);
    let mut pattern = 0;
    while pattern < PATTERNS {
        let taken = first_varints(pattern);
        consumed[pattern] =
            if taken == 0 { STEP_BITS as u8 } else { (usize::BITS - taken.leading_zeros()) as u8 };
        let offset = ROW_NUMBERS.0[taken] as usize * ROW_BYTES;
        steps[pattern] = (offset | taken.count_ones() as usize) as u16;
        pattern += 1;
    }
    (consumed, steps)
}

const STEP_TABLES: ([u8; PATTERNS], [u16; PATTERNS]) = step_tables();

/// Where a step's varint count sits in its `steps` entry.
const COUNT_MASK: u16 = ROW_BYTES as u16 - 1;

// Row offsets must fit the entry's 16 bits, and leave the count its low bits.
const _: () = assert!(ROWS * ROW_BYTES <= 1 << 16 && LANES as u16 <= COUNT_MASK);

/// A chain of steps through a window: the terminator bits it has yet to step over, where it is
/// in the window, and where its next value goes.
struct Chain {
    rest: u64,
    start: usize,
    n: usize,
}

impl Chain {
    /// Decodes the up to four varints ending in the next 12 bytes, and moves on past them.
    /// An exhausted chain (`rest == 0`) decodes nothing and moves 12 bytes on; the caller may
    /// keep stepping it.
    ///
    /// # Safety
    /// `base` must be valid for reads of 64 + 16 bytes; the CPU must support `S`'s instruction
    /// set.
    #[inline(always)]
    unsafe fn step<S: Shuffle4, T>(&mut self, base: *const u8, convert: &impl Fn(u64) -> T) -> [T; LANES] {
        let pattern = self.rest as usize & (PATTERNS - 1);
        let tables = &TABLES;
        let step = tables.steps[pattern];
        let rows = tables.shuffles.as_ptr() as *const u8;
        // A chain that has a terminator left is inside the window; an exhausted one (`start`
        // past it) has the all-zero row and reads nothing, but its address must stay in bounds.
        let at = self.start & 63;
        // SAFETY: `at < 64`, and 64 + 16 bytes are readable at `base`; the row offset is inside
        // the shuffle rows (checked when the table is built); the caller guarantees the instruction
        // set.
        let values = unsafe { S::decode4(base.add(at), rows.add((step & !COUNT_MASK) as usize)) };
        let consumed = tables.consumed[pattern] as u32;
        self.n += (step & COUNT_MASK) as usize;
        self.rest >>= consumed;
        self.start += consumed as usize;
        values.map(convert)
    }
}

/// Stores the four `values` at `dst`.
///
/// # Safety
/// `dst` must be valid for writes of four values.
#[inline(always)]
unsafe fn store4<T>(dst: *mut T, values: [T; LANES]) {
    // SAFETY: forwarded from the caller.
    unsafe { (dst as *mut [T; LANES]).write_unaligned(values) };
}

/// Windows with at most this many varints and some longer than 8 bytes (mean length over 2.5
/// bytes, like mixed 64-bit data) decode their seam in four steps always.
const SPARSE: usize = 24;

/// The first four varints of the seam chain `seam` (slots past the seam's varints are slack):
/// two steps always, as a branch on one or two would be unpredictable; then, with `FOUR`, two
/// more (with long varints a step may hold a single varint, and a loop on how many steps would
/// be unpredictable; an exhausted chain decodes nothing), else more only while fewer than four.
///
/// # Safety
/// `base` must be valid for reads of 64 + 16 bytes; the CPU must support `S`'s instruction set.
#[inline(always)]
unsafe fn seam_values<S: Shuffle4, T: Copy, const FOUR: bool, const SLOTS: usize>(
    mut seam: Chain,
    base: *const u8,
    convert: &impl Fn(u64) -> T,
) -> [T; LANES] {
    // Each store of four is at `seam.n`: with `FOUR`, four steps of at most four varints put
    // the last at 12 or less (sixteen slots); without, at `< LANES` (eight slots).
    const { assert!(SLOTS >= if FOUR { 4 * LANES } else { 2 * LANES }) };
    let mut buffer = [convert(0); SLOTS];
    // SAFETY: `base` as the caller guarantees; every store fits `buffer` (above).
    unsafe {
        for _ in 0..if FOUR { 4 } else { 2 } {
            let at = seam.n;
            store4(buffer.as_mut_ptr().add(at), seam.step::<S, T>(base, convert));
        }
        while !FOUR && seam.n < LANES && seam.rest != 0 {
            let at = seam.n;
            store4(buffer.as_mut_ptr().add(at), seam.step::<S, T>(base, convert));
        }
    }
    [buffer[0], buffer[1], buffer[2], buffer[3]]
}

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
        // Two independent chains, so that the CPU overlaps their table loads: `a` decodes the
        // varints that end in the first 40% of the window, `b` those after the next four (the
        // seam, decoded last). Both store four values a step, unchecked: `a`'s last steps spill
        // into the seam's slots, `b`'s into the `OUT_SLACK` after the window. The seam takes
        // about four average varints off `b`, so `a` gets 40% of the window, not half, to even
        // the chains out.
        let split = consumed * 13 / 32;
        let first = stops & ((1u64 << split) - 1);
        let middle = 64 - first.leading_zeros() as usize;
        let first_count = first.count_ones() as usize;
        let upper = stops >> middle;
        // The terminator bits after `middle` from the fourth on (none if there are fewer).
        let mut from_fourth = upper & upper.wrapping_sub(1);
        from_fourth &= from_fourth.wrapping_sub(1);
        from_fourth &= from_fourth.wrapping_sub(1);
        let fourth = (from_fourth.trailing_zeros() & 63) as usize;
        let mut a = Chain { rest: first, start: 0, n: 0 };
        let mut b =
            Chain { rest: from_fourth >> fourth >> 1, start: middle + fourth + 1, n: first_count + LANES };
        while a.rest | b.rest != 0 {
            let (at_a, at_b) = (a.n, b.n);
            // SAFETY: `base` as the caller guarantees. `at_a <= first_count <= 26` and
            // `at_b <= count.max(first_count + 4) <= 64`: four values fit at either in the
            // 64 + `OUT_SLACK` slots at `dst`.
            unsafe {
                let values = a.step::<S, T>(base, &convert);
                store4(dst.add(at_a), values);
                let values = b.step::<S, T>(base, &convert);
                store4(dst.add(at_b), values);
            }
        }
        // The seam, over whatever `a` spilled into it: decoded into a buffer ([`seam_values`];
        // four steps always in sparse windows with long varints), then stored whole. Slots past
        // `count` are slack.
        let seam = Chain { rest: upper, start: middle, n: 0 };
        // SAFETY: `base` as above.
        let values = unsafe {
            if long_ends != 0 && count <= SPARSE {
                seam_values::<S, T, true, { 4 * LANES }>(seam, base, &convert)
            } else {
                seam_values::<S, T, false, { 2 * LANES }>(seam, base, &convert)
            }
        };
        // SAFETY: `first_count <= 26`: four of the 64 + `OUT_SLACK` slots at `dst`.
        unsafe { store4(dst.add(first_count), values) };
        // A varint of 13 bytes or more has no terminator in its step, which consumes 12 bytes and
        // leaves its tail to the next as if it were a varint. Being longer than 8 bytes, it is
        // redone here from its true start, which flags it.
        // In sparse windows (mixed 64-bit data, one to three long varints as often as not) the
        // first two are redone without a branch on how many there are.
        // SAFETY: forwarded from the caller.
        let overflow = long_ends != 0
            && unsafe {
                if count <= SPARSE {
                    generic::redo_long_varints::<X, T, 2>(base, stops, long_ends, dst, &convert)
                } else {
                    generic::redo_long_varints::<X, T, 0>(base, stops, long_ends, dst, &convert)
                }
            };
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
        assert_eq!((TABLES.steps[pattern] & COUNT_MASK, TABLES.consumed[pattern]), (4, 4));
        let row = &TABLES.shuffles[(TABLES.steps[pattern] & !COUNT_MASK) as usize / ROW_BYTES];
        for lane in 0..4 {
            assert_eq!(row[lane * 8], lane as u8);
            assert!(row[lane * 8 + 1..lane * 8 + 8].iter().all(|&b| b == 0x80));
        }
        // A 3-byte varint, then a 9-byte one (its first 8 bytes in the lane).
        let pattern = 1 << 2 | 1 << 11;
        assert_eq!((TABLES.steps[pattern] & COUNT_MASK, TABLES.consumed[pattern]), (2, 12));
        let row = &TABLES.shuffles[(TABLES.steps[pattern] & !COUNT_MASK) as usize / ROW_BYTES];
        assert_eq!(row[..8], [0, 1, 2, 0x80, 0x80, 0x80, 0x80, 0x80]);
        assert_eq!(row[8..16], [3, 4, 5, 6, 7, 8, 9, 10]);
        assert!(row[16..].iter().all(|&b| b == 0x80));
        // No terminator: the window's steps end.
        assert_eq!((TABLES.steps[0] & COUNT_MASK, TABLES.consumed[0]), (0, 12));
    }
}
