//! Checking a message's fields through a table of field lengths: a SIMD backend writes, for
//! every byte of a block, the length of the field that would start there if it is one of the
//! common kinds it checks completely (0 otherwise), and the scan then chases
//! `position += table[position]`: one load and one add a field, where the scalar fast path's
//! chain from one field to the next (tag, varint length, wire type select) takes about 14
//! cycles.
//!
//! The table is built one chunk ahead of the chase, and the chase takes a fixed number of steps
//! for every block built, in the same loop: the core overlaps the build's throughput with the
//! chase's latency. (A chase loop of its own would end in a mispredicted exit at every chunk,
//! whose flush discards the overlap.)

use crate::wire;

/// The longest field a table entry holds: a 2-byte tag, a 1-byte length prefix and 127 bytes.
pub(crate) const MAX_FIELD: usize = 130;

/// Positions a table covers; the chase takes its steps in one table while the next is built.
const CHUNK: usize = 1024;

/// Zero entries after a table's chunk: where the chase waits once a field ends past the chunk
/// (`MAX_FIELD` at most past it).
const PAD: usize = 256;

/// A backend's table builder.
pub(crate) trait FieldLengths {
    /// Positions a call covers; a divisor of [`CHUNK`].
    const BLOCK: usize;
    /// Bytes the call reads from the block's start.
    const READS: usize;
    /// Chase steps taken for each block built: about the fields a block holds.
    const STEPS: usize;

    /// Writes `out[i]` for `i < BLOCK`: the length of the field starting at `at + i` if
    /// `at + i < limit` and the field is a table field, else 0. A table field has a tag of 1 or
    /// 2 bytes with a non-zero field number and wire type 0 (a valid varint), 1, 5 or 2 (a
    /// 1-byte length prefix), so that it is a complete, valid field of at most [`MAX_FIELD`]
    /// bytes whatever follows it.
    ///
    /// # Safety
    /// `message` must be valid for reads of `at + READS` bytes, `out` for writes of `BLOCK`,
    /// and the CPU must support the implementation's instruction set.
    unsafe fn lengths(message: *const u8, at: usize, limit: usize, out: *mut u8);
}

/// A table: a chunk's entries, then the zero padding.
type Table = [u8; CHUNK + PAD];

/// How far from `start` (a field's start) the fields of `message` are all valid: the start of
/// the first field that neither the table nor the scalar fast path takes (a group, an error,
/// a 3-byte tag...), or a field start in the last `READS.max(MAX_FIELD)` bytes. Every field
/// before the returned offset is well-formed, so a validator continues from there.
///
/// # Safety
/// The CPU must support `L`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn scan<L: FieldLengths>(message: &[u8], start: usize) -> usize {
    let limit = message.len().saturating_sub(L::READS.max(MAX_FIELD));
    let mut tables: [Table; 2] = [[0; CHUNK + PAD]; 2];
    // `base` is the offset of `tables[cur][0]`, `rel` the chase's position in that table.
    let mut base = start;
    loop {
        if base >= limit {
            return base;
        }
        // SAFETY: forwarded.
        unsafe { build::<L>(message, base, limit, &mut tables[0], 0..CHUNK / L::BLOCK) };
        let (mut cur, mut rel) = (0, 0);
        loop {
            let next = base + CHUNK;
            let [first, second] = &mut tables;
            let (table, upcoming) = if cur == 0 { (&*first, second) } else { (&*second, first) };
            for block in 0..CHUNK / L::BLOCK {
                // SAFETY: forwarded.
                unsafe { build::<L>(message, next, limit, upcoming, block..block + 1) };
                for _ in 0..L::STEPS {
                    // `rel < CHUNK + MAX_FIELD` here: it starts below `CHUNK`, grows by at
                    // most `MAX_FIELD` from below `CHUNK`, and from `CHUNK` on reads padding
                    // (0) and stays.
                    rel += table[rel] as usize;
                }
            }
            // The chase's remaining steps in this chunk, and the fields the table left out.
            while rel < CHUNK {
                let step = table[rel] as usize;
                if step != 0 {
                    rel += step;
                    continue;
                }
                let at = base + rel;
                if at >= limit {
                    return at;
                }
                match wire::window(message, at).and_then(|w| wire::fast_field(w, message.len() - at)) {
                    Some(f) => rel += f.end,
                    None => return at,
                }
            }
            rel -= CHUNK;
            base = next;
            cur ^= 1;
            if base + rel >= limit {
                return base + rel;
            }
            if rel >= CHUNK {
                // A long field jumped past the next table: start over where it ends.
                base += rel;
                break;
            }
        }
    }
}

/// Fills `table`'s `blocks` for the chunk at `base`; blocks starting at or past `limit` are 0.
///
/// # Safety
/// The CPU must support `L`'s instruction set.
#[inline(always)]
unsafe fn build<L: FieldLengths>(
    message: &[u8],
    base: usize,
    limit: usize,
    table: &mut Table,
    blocks: core::ops::Range<usize>,
) {
    for block in blocks {
        let at = base + block * L::BLOCK;
        let out = &mut table[block * L::BLOCK..][..L::BLOCK];
        if at < limit {
            // SAFETY: `at < limit <= message.len() - READS`, so `READS` bytes are readable from
            // `at`; `out` is `BLOCK` bytes; the caller guarantees the instruction set.
            unsafe { L::lengths(message.as_ptr(), at, limit, out.as_mut_ptr()) };
        } else {
            out.fill(0);
        }
    }
}

/// The scan of a backend without a table builder: nothing taken, the validator does it all.
///
/// # Safety
/// None; `unsafe` only to fit [`super::KernelFns::scan_fields`].
pub(crate) unsafe fn scan_none(_message: &[u8], start: usize) -> usize {
    start
}
