//! How a protobuf codec embeds pbwire: the shape of generated code.
//!
//! For each message, generated code has a `decode` that loops over tags with a
//! [`pbwire::reader::Reader`], matches the raw tag (`field << 3 | wire type`, a constant per
//! known field), reads the field with the call of its kind, and skips everything else; and an
//! `encode` that writes tags, lengths and values with `pbwire::wire`, `pbwire::varint` and
//! `pbwire::packed`. Strings and nested messages borrow from the input; nothing allocates.
//!
//! ```text
//! message Buyer      { int32 user_id = 1; string user_name = 2; }
//! message TradeOrder { int32 order_id = 1; Buyer buyer = 2; repeated uint32 sku_ids = 3; bool paid = 4; }
//! ```
//!
//! `cargo run --example codec` decodes the README's 16-byte TradeOrder, re-encodes it and
//! checks the bytes are the same.

use pbwire::reader::Reader;
use pbwire::wire::{self, Tag, WireType};
use pbwire::{packed, varint, Error, ErrorKind, Result};

#[derive(Debug, Default, PartialEq)]
struct Buyer<'a> {
    user_id: i32,
    user_name: &'a str,
}

#[derive(Debug, Default, PartialEq)]
struct TradeOrder<'a> {
    order_id: i32,
    buyer: Option<Buyer<'a>>,
    /// Packed `repeated uint32`: a borrowed payload, decoded on demand (or into a Vec).
    sku_ids: Vec<u32>,
    paid: bool,
}

impl<'a> Buyer<'a> {
    /// From the reader of the nested message (`Reader::read_message`, or `Reader::new` over
    /// its bytes).
    fn decode(mut r: Reader<'a>) -> Result<Self> {
        let mut m = Buyer::default();
        // Encoders write fields in declaration order, so a generator may expect each tag in
        // turn (one comparison each; 8-9% faster on the 100,000-record message, see the
        // README), then let the loop read whatever else there is: fields out of order,
        // repeated or unknown.
        if r.read_tag_if(0x08) {
            m.user_id = r.read_i32()?;
        }
        if r.read_tag_if(0x12) {
            m.user_name = r.read_str()?;
        }
        while !r.is_empty() {
            match r.read_raw_tag()? {
                0x08 => m.user_id = r.read_i32()?,
                0x12 => m.user_name = r.read_str()?,
                raw => r.skip_raw(raw)?,
            }
        }
        Ok(m)
    }

    fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.user_id != 0 {
            n += 1 + varint::encoded_len(self.user_id as i64 as u64);
        }
        if !self.user_name.is_empty() {
            n += 1 + varint::encoded_len(self.user_name.len() as u64) + self.user_name.len();
        }
        n
    }

    fn encode(&self, out: &mut [u8]) -> Result<usize> {
        let mut w = Writer { out, pos: 0 };
        if self.user_id != 0 {
            w.tag(1, WireType::Varint)?;
            let n = varint::encode_i32(self.user_id, w.rest())?;
            w.advance(n);
        }
        if !self.user_name.is_empty() {
            w.tag(2, WireType::Len)?;
            w.bytes(self.user_name.as_bytes())?;
        }
        Ok(w.pos)
    }
}

impl<'a> TradeOrder<'a> {
    /// Returns the message by value, as prost's `decode` does. A generator may also offer a
    /// `merge(&mut self, buf)` that fills a message the caller holds (as prost's `merge` and
    /// C++'s `ParseFromArray`): a large struct returned in a `Result` is moved through memory
    /// on its way out, which on the benches' 16-byte TradeOrder cost about 8 of 35 ns a call
    /// (`benches/results/HISTORY.md`, "TradeOrder into the caller's message").
    fn decode(buf: &'a [u8]) -> Result<Self> {
        let mut m = TradeOrder::default();
        let mut r = Reader::new(buf);
        while !r.is_empty() {
            match r.read_raw_tag()? {
                0x08 => m.order_id = r.read_i32()?,
                // A nested message: its own reader (error offsets from its start), decoded by
                // its own loop (protobuf merges repeated occurrences; here the last one wins).
                // `read_message` lets that reader read a word past the message's end, so its
                // last fields' varints decode as fast as the rest.
                0x12 => m.buyer = Some(Buyer::decode(r.read_message()?)?),
                // Packed: size once, decode in bulk (`read_packed` moves the decoder's error
                // offsets to this reader's). Parsers must also accept the unpacked form.
                0x1a => {
                    r.read_packed(|p| packed::extend_u32(p, &mut m.sku_ids))?;
                }
                0x18 => m.sku_ids.push(r.read_u32()?),
                0x20 => m.paid = r.read_bool()?,
                raw => r.skip_raw(raw)?,
            }
        }
        Ok(m)
    }

    fn encode(&self, out: &mut [u8]) -> Result<usize> {
        let mut w = Writer { out, pos: 0 };
        if self.order_id != 0 {
            w.tag(1, WireType::Varint)?;
            let n = varint::encode_i32(self.order_id, w.rest())?;
            w.advance(n);
        }
        if let Some(b) = &self.buyer {
            w.tag(2, WireType::Len)?;
            let n = varint::encode_u64(b.encoded_len() as u64, w.rest())?;
            w.advance(n);
            let n = b.encode(w.rest())?;
            w.advance(n);
        }
        if !self.sku_ids.is_empty() {
            w.tag(3, WireType::Len)?;
            let n = varint::encode_u64(packed::encoded_len_u32(&self.sku_ids) as u64, w.rest())?;
            w.advance(n);
            let n = packed::encode_u32(&self.sku_ids, w.rest())?;
            w.advance(n);
        }
        if self.paid {
            w.tag(4, WireType::Varint)?;
            let n = varint::encode_bool(true, w.rest())?;
            w.advance(n);
        }
        Ok(w.pos)
    }
}

/// The few lines of output state generated encoders share.
struct Writer<'o> {
    out: &'o mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn rest(&mut self) -> &mut [u8] {
        &mut self.out[self.pos..]
    }
    fn advance(&mut self, n: usize) {
        self.pos += n;
    }
    fn tag(&mut self, field: u32, wire_type: WireType) -> Result<()> {
        let tag = Tag::new(field, wire_type).ok_or(Error::new(ErrorKind::InvalidFieldNumber, self.pos))?;
        let n = wire::encode_tag(tag, self.rest())?;
        self.advance(n);
        Ok(())
    }
    fn bytes(&mut self, b: &[u8]) -> Result<()> {
        let n = varint::encode_u64(b.len() as u64, self.rest())?;
        self.advance(n);
        let at = self.pos;
        let dst = self.rest().get_mut(..b.len()).ok_or(Error::new(ErrorKind::OutputTooSmall, at))?;
        dst.copy_from_slice(b);
        self.advance(b.len());
        Ok(())
    }
}

fn main() -> Result<()> {
    let msg =
        [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];
    let order = TradeOrder::decode(&msg)?;
    println!("{order:?}");
    assert_eq!(order.buyer, Some(Buyer { user_id: 7, user_name: "a" }));
    assert_eq!(order.sku_ids, [5, 6]);
    let mut out = [0u8; 32];
    let n = order.encode(&mut out)?;
    assert_eq!(&out[..n], &msg[..]);
    println!("re-encoded {n} bytes, identical");
    // Errors carry the offset of the bad byte in the message: here the packed ids' second
    // varint is cut off at byte 13 (the payload's byte 1); the buyer's name claims 5 bytes
    // where none remain (offsets inside a nested message count from its start: the length
    // prefix is its byte 3).
    let cut_ids = [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x86];
    let err = TradeOrder::decode(&cut_ids).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::Truncated, 13));
    let bad_name = [0x12, 0x04, 0x08, 0x07, 0x12, 0x05];
    let err = TradeOrder::decode(&bad_name).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::Truncated, 3));
    println!("truncated ids: error at offset 13; truncated name: offset 3 in the buyer");
    Ok(())
}
