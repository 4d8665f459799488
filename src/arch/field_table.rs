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
//! whose flush discards the overlap.) The number of steps follows the fields the last chunk
//! held, and a chunk of few fields (long payloads) ends the scan: building a table costs about
//! the same for every byte, and the scalar path is the cheaper one when fields are long.

use crate::wire;

/// The longest field a table entry holds: a 2-byte tag, a 1-byte length prefix and 127 bytes.
const MAX_FIELD: usize = 130;

/// Positions a table covers; the chase takes its steps in one table while the next is built.
pub(crate) const CHUNK: usize = 1024;

/// The most chase steps taken for one block built.
const MAX_STEPS: usize = 8;

/// Zero entries after a table's chunk: where the chase waits once a field ends past the chunk
/// (`MAX_FIELD` at most past it).
const PAD: usize = 256;

/// A backend's table builder.
pub(crate) trait FieldLengths {
    /// Positions a call covers; a divisor of [`CHUNK`].
    const BLOCK: usize;
    /// Bytes the call reads from the block's start.
    const READS: usize;
    /// Fewer fields than this in a chunk end the scan: about as many as the scalar path takes
    /// in the time the builder takes for a chunk's table.
    const MIN_FIELDS: usize;

    /// Writes `out[i]` for `i < BLOCK`: the length of the field starting at `block + i` if
    /// `i < below` and the field is a table field, else 0. A table field has a tag of 1 or
    /// 2 bytes with a non-zero field number and wire type 0 (a valid varint), 1, 5 or 2 (a
    /// 1-byte length prefix), so that it is a complete, valid field of at most [`MAX_FIELD`]
    /// bytes whatever follows it.
    ///
    /// # Safety
    /// `block` must be valid for reads of `READS` bytes, `out` for writes of `BLOCK`, and the
    /// CPU must support the implementation's instruction set.
    unsafe fn lengths(block: *const u8, below: usize, out: *mut u8);
}

/// A table: a chunk's entries, then the zero padding.
type Table = [u8; CHUNK + PAD];

/// How far from `start` (a field's start) the fields of `message` are all valid, groups nesting
/// at most `depth_limit` deep: the start of the first field with an error, a field start in
/// the last `READS.max(MAX_FIELD)` bytes, or the first field start after a chunk of few fields.
/// Every field before the returned offset is well-formed, so a validator continues from there.
///
/// # Safety
/// The CPU must support `L`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn scan<L: FieldLengths>(message: &[u8], start: usize, depth_limit: u8) -> usize {
    let blocks = CHUNK / L::BLOCK;
    let limit = message.len().saturating_sub(L::READS.max(MAX_FIELD));
    let mut tables: [Table; 2] = [[0; CHUNK + PAD]; 2];
    // Steps a block: about a field for every 16 bytes to begin with.
    let mut steps = L::BLOCK / 16;
    // `base` is the offset of `tables[cur][0]`, `rel` the chase's position in that table.
    let mut base = start;
    loop {
        if base >= limit {
            return base;
        }
        // SAFETY: forwarded.
        unsafe { build::<L>(message, base, limit, &mut tables[0], 0..blocks) };
        let (mut cur, mut rel) = (0, 0);
        loop {
            let next = base + CHUNK;
            let [first, second] = &mut tables;
            let (table, upcoming) = if cur == 0 { (&*first, second) } else { (&*second, first) };
            // Blocks after which the chase was still in the chunk, and how far past the
            // chunk's end a field the table left out took it (the chase then waits at the end).
            // One loop for each number of steps, chosen once a chunk.
            let chunk = Chunk { message, base, limit, depth_limit, table };
            // SAFETY: forwarded.
            let overlapped = unsafe {
                match steps {
                    1 => chunk.overlapped::<L, 1>(upcoming, rel),
                    2 => chunk.overlapped::<L, 2>(upcoming, rel),
                    3 => chunk.overlapped::<L, 3>(upcoming, rel),
                    4 => chunk.overlapped::<L, 4>(upcoming, rel),
                    5 => chunk.overlapped::<L, 5>(upcoming, rel),
                    6 => chunk.overlapped::<L, 6>(upcoming, rel),
                    7 => chunk.overlapped::<L, 7>(upcoming, rel),
                    _ => chunk.overlapped::<L, MAX_STEPS>(upcoming, rel),
                }
            };
            let (chasing, past);
            (rel, chasing, past) = match overlapped {
                Ok(state) => state,
                Err(at) => return at,
            };
            rel += past;
            // The chase's remaining steps in this chunk.
            let mut more = 0;
            while rel < CHUNK {
                more += 1;
                rel += match table[rel] {
                    0 => match field_len(message, base + rel, limit, depth_limit) {
                        Some(n) => n,
                        None => return base + rel,
                    },
                    step => step as usize,
                };
            }
            rel -= CHUNK;
            base = next;
            cur ^= 1;
            if base + rel >= limit {
                return base + rel;
            }
            // The chunk's fields: all the steps and more, or about the steps up to the middle
            // of the block in which the chase left the chunk. The next chunk gets a quarter
            // more (the fields a chunk holds vary).
            let fields = if more > 0 { steps * blocks + more } else { steps * chasing + steps / 2 };
            if fields < L::MIN_FIELDS {
                return base + rel;
            }
            steps = (fields + fields / 4).div_ceil(blocks).clamp(1, MAX_STEPS);
            if rel >= CHUNK {
                // A long field jumped past the next table: start over where it ends.
                base += rel;
                break;
            }
        }
    }
}

/// The length of the valid field at `at` that the table left out (a longer payload, a 3-byte
/// tag, a group...), or `None` for an error or a field in the last bytes (for the validator).
#[inline(never)]
fn field_len(message: &[u8], at: usize, limit: usize, depth_limit: u8) -> Option<usize> {
    if at >= limit {
        return None;
    }
    let (tag, n) = wire::decode_tag(&message[at..]).ok()?;
    Some(n + wire::skip_field_with_depth_limit(tag, &message[at + n..], depth_limit).ok()?)
}

/// The chunk being chased.
struct Chunk<'a> {
    message: &'a [u8],
    /// Where the chunk starts in `message`.
    base: usize,
    limit: usize,
    depth_limit: u8,
    table: &'a Table,
}

impl Chunk<'_> {
    /// Builds the next chunk's table into `upcoming` while taking `S` steps of the chase for
    /// each block, from `rel`; a field the table leaves out is taken between blocks. Returns
    /// where the chase is, after how many blocks it was still in the chunk, and how far past
    /// its end a field the table left out took it (`rel` then waits at the end); or the
    /// offset of a field with an error.
    ///
    /// # Safety
    /// The CPU must support `L`'s instruction set.
    #[inline(always)]
    unsafe fn overlapped<L: FieldLengths, const S: usize>(
        &self,
        upcoming: &mut Table,
        mut rel: usize,
    ) -> Result<(usize, usize, usize), usize> {
        let (mut chasing, mut past) = (0, 0);
        for block in 0..CHUNK / L::BLOCK {
            // SAFETY: forwarded.
            unsafe { build::<L>(self.message, self.base + CHUNK, self.limit, upcoming, block..block + 1) };
            rel = chase::<S>(self.table, rel);
            chasing += (rel < CHUNK) as usize;
            if rel < CHUNK && self.table[rel] == 0 {
                // A field the table leaves out (rare in a chunk worth a table).
                let at = self.base + rel;
                match field_len(self.message, at, self.limit, self.depth_limit) {
                    Some(n) if rel + n < CHUNK => rel += n,
                    Some(n) => (rel, past) = (CHUNK, rel + n - CHUNK),
                    None => return Err(at),
                }
            }
        }
        Ok((rel, chasing, past))
    }
}

/// `N` steps of the chase from `rel`.
#[inline(always)]
fn chase<const N: usize>(table: &Table, mut rel: usize) -> usize {
    for _ in 0..N {
        // `rel < CHUNK + MAX_FIELD` here: it starts below `CHUNK`, grows by at most
        // `MAX_FIELD` from below `CHUNK`, and from `CHUNK` on reads padding (0) and stays.
        rel += table[rel] as usize;
    }
    rel
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
            unsafe { L::lengths(message.as_ptr().add(at), limit - at, out.as_mut_ptr()) };
        } else {
            out.fill(0);
        }
    }
}

/// Checks of a table builder against a model of its entries, which each backend's tests run
/// with its own builder.
#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The entry the table must hold for the field at `p`, from the scalar reference functions.
    fn model(m: &[u8], p: usize, limit: usize) -> u8 {
        if p >= limit {
            return 0;
        }
        let (raw, tag_len) = match (m[p], m[p + 1]) {
            (b0, _) if b0 < 0x80 => (b0 as u32, 1),
            (_, b1) if b1 >= 0x80 => return 0,
            (b0, b1) => ((b0 & 0x7f) as u32 | (b1 as u32) << 7, 2),
        };
        let value = &m[p + tag_len..];
        let len = match raw & 7 {
            _ if raw >> 3 == 0 => return 0,
            0 => match crate::varint::decode_u64(value) {
                Ok((_, n)) => n,
                Err(_) => return 0,
            },
            1 => 8,
            5 => 4,
            2 if value[0] < 0x80 => 1 + value[0] as usize,
            _ => return 0,
        };
        (tag_len + len) as u8
    }

    /// Every lane of blocks of random bytes (half of them with the continuation bit, many
    /// zeros and ones, so that tags, varints of every length and tenth bytes all occur), at
    /// every limit around the block, against the model.
    ///
    /// # Safety
    /// The CPU must support `L`'s instruction set.
    pub(crate) unsafe fn every_lane_equals_the_model<L: FieldLengths>() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // Under Miri (which interprets every instruction) one round in 97.
        for round in (0..4000).step_by(if cfg!(miri) { 97 } else { 1 }) {
            let mut m = std::vec![0u8; L::BLOCK + L::READS];
            for b in m.iter_mut() {
                let r = random();
                *b = match r % 8 {
                    0 => 0,
                    1 => 1,
                    2 | 3 => 0x80 | (r >> 8) as u8,
                    4 => (r >> 8) as u8 & 0x7f,
                    5 => 0x80 | (round % 8) as u8,
                    _ => (r >> 8) as u8,
                };
            }
            // Runs of 7 to 11 continuation bytes ending in 0..=3: varints around ten bytes.
            for _ in 0..4 {
                let r = random();
                let (at, run) = ((r % L::BLOCK as u64) as usize, 7 + (r >> 8) as usize % 5);
                m[at..at + run].fill(0x80 | (r >> 16) as u8);
                m[at + run] = (r >> 24) as u8 % 4;
            }
            for limit in [0, 1, 31, 63, 64, 200] {
                let mut out = std::vec![0xaau8; L::BLOCK];
                // SAFETY: the caller guarantees the instruction set; `m` holds `READS` bytes
                // from 0, `out` `BLOCK`.
                unsafe { L::lengths(m.as_ptr(), limit, out.as_mut_ptr()) };
                for (i, &got) in out.iter().enumerate() {
                    assert_eq!(
                        got,
                        model(&m, i, limit),
                        "lane {i}, limit {limit}, bytes {:02x?}",
                        &m[i..i + 12]
                    );
                }
            }
        }
    }

    /// The scan takes a long message of table fields and fields it leaves to the scalar paths
    /// (a longer payload, a group, a 3-byte tag) up to its last `READS` bytes at most, stopping
    /// at a field's start; it stops at an error, and soon in a message of long fields.
    ///
    /// # Safety
    /// The CPU must support `L`'s instruction set, which `scan_fields` runs.
    pub(crate) unsafe fn the_scan_takes_valid_fields_and_stops_at_errors<L: FieldLengths>(
        scan_fields: crate::arch::ScanFields,
    ) {
        let mut m = std::vec::Vec::new();
        let mut starts = std::vec::Vec::new();
        for i in 0..4000u32 {
            starts.push(m.len());
            match i % 25 {
                6 => m.extend_from_slice(&[0x80, 0x80, 0x01, 0x00]),
                12 => m.extend_from_slice(&[0x0b, 0x08, 0x01, 0x0c]),
                24 => {
                    m.extend_from_slice(&[0x22, 0xc8, 0x01]);
                    m.extend(core::iter::repeat_n(0x80, 200));
                }
                k if k % 4 == 0 => m.extend_from_slice(&[0x08, 0x96, 0x01]),
                k if k % 4 == 1 => m.extend_from_slice(&[0x91, 0x02, 1, 2, 3, 4, 5, 6, 7, 8]),
                k if k % 4 == 2 => m.extend_from_slice(&[0x15, 1, 2, 3, 4]),
                _ => m.extend_from_slice(&[0x1a, 3, b'a', b'b', b'c']),
            }
        }
        // SAFETY: the caller guarantees the instruction set.
        let end = unsafe { scan_fields(&m, 0, 100) };
        let at_a_start = starts.contains(&end) || end == m.len();
        assert!(at_a_start && end + L::READS >= m.len(), "{end} of {}", m.len());
        // SAFETY: as above.
        assert_eq!(unsafe { scan_fields(&m, starts[7], 100) }, end);
        // A group is an error with a depth limit of 0.
        // SAFETY: as above.
        assert_eq!(unsafe { scan_fields(&m, 0, 0) }, starts[12]);
        // Field number 0 at field 1000 stops it there.
        let at = starts[1000];
        m[at] = 0;
        // SAFETY: as above.
        assert_eq!(unsafe { scan_fields(&m, 0, 100) }, at);
        // SAFETY: as above.
        assert_eq!(unsafe { scan_fields(&m, starts[1001], 100) }, end);

        // 100-byte payloads: the scan gives up after the first two chunks.
        let long: std::vec::Vec<u8> =
            (0..1000).flat_map(|_| [0x0a, 98].into_iter().chain([b'a'; 98])).collect();
        // SAFETY: as above.
        let gave_up = unsafe { scan_fields(&long, 0, 100) };
        assert!(gave_up % 100 == 0 && gave_up <= 2 * CHUNK + 100, "{gave_up}");
    }
}
