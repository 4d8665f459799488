//! The benchmark messages as each contender decodes them: pbwire zero-copy decoders written on
//! `pbwire::fields`, prost derive structs (owned), and quick-protobuf `MessageRead` impls
//! (borrowed), all hand-written (no build script, no protoc).

use core::str;

use pbwire::fields::{fields, Value};
use pbwire::reader::Reader;
use quick_protobuf::{BytesReader, MessageRead};

/// A decode error of the pbwire decoders: the wire's or a string's.
#[derive(Debug)]
pub enum DecodeError {
    /// Malformed wire data.
    Wire(pbwire::Error),
    /// A string field that is not UTF-8.
    Utf8(str::Utf8Error),
}

impl From<pbwire::Error> for DecodeError {
    fn from(e: pbwire::Error) -> Self {
        DecodeError::Wire(e)
    }
}

impl From<str::Utf8Error> for DecodeError {
    fn from(e: str::Utf8Error) -> Self {
        DecodeError::Utf8(e)
    }
}

// ---------------------------------------------------------------------------------------------
// Records message: { repeated Record records = 1 }, Record { string a, b, c = 1..3; int32 x, y }

/// A record borrowed from the input (pbwire and quick-protobuf).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Field 1.
    pub a: &'a str,
    /// Field 2.
    pub b: &'a str,
    /// Field 3.
    pub c: &'a str,
    /// Field 4.
    pub x: i32,
    /// Field 5.
    pub y: i32,
}

/// One record, zero-copy, with pbwire's field iterator (last value wins, unknown fields skipped);
/// strings checked with `pbwire::utf8::from_utf8`.
#[inline]
pub fn pbwire_record(buf: &[u8]) -> Result<RecordRef<'_>, DecodeError> {
    let mut r = RecordRef::default();
    for field in fields(buf) {
        let field = field?;
        match (field.number, field.value) {
            (1, Value::Len(s)) => r.a = pbwire::utf8::from_utf8(s)?,
            (2, Value::Len(s)) => r.b = pbwire::utf8::from_utf8(s)?,
            (3, Value::Len(s)) => r.c = pbwire::utf8::from_utf8(s)?,
            (4, Value::Varint(v)) => r.x = v as i32,
            (5, Value::Varint(v)) => r.y = v as i32,
            _ => {}
        }
    }
    Ok(r)
}

/// The records message, zero-copy with pbwire's field iterator, appended to `out` (cleared
/// first).
pub fn pbwire_records<'a>(buf: &'a [u8], out: &mut Vec<RecordRef<'a>>) -> Result<(), DecodeError> {
    out.clear();
    for field in fields(buf) {
        let field = field?;
        if let (1, Value::Len(rec)) = (field.number, field.value) {
            out.push(pbwire_record(rec)?);
        }
    }
    Ok(())
}

/// One record the way generated code reads it (the shape of `examples/codec.rs`), from the
/// reader its parent's [`Reader::read_message`] gives: a loop over tags, one typed read per
/// known field, `skip` for the rest. Strings are checked with `pbwire::utf8::from_utf8`
/// (through `read_str`).
#[inline]
pub fn reader_record(mut r: Reader<'_>) -> Result<RecordRef<'_>, pbwire::Error> {
    let mut m = RecordRef::default();
    record_fields(&mut r, &mut m)?;
    Ok(m)
}

/// [`reader_record`]'s loop over tags, from wherever `r` stands.
#[inline(always)]
fn record_fields<'a>(r: &mut Reader<'a>, m: &mut RecordRef<'a>) -> Result<(), pbwire::Error> {
    while !r.is_empty() {
        match r.read_raw_tag()? {
            0x0a => m.a = r.read_str()?,
            0x12 => m.b = r.read_str()?,
            0x1a => m.c = r.read_str()?,
            0x20 => m.x = r.read_i32()?,
            0x28 => m.y = r.read_i32()?,
            raw => r.skip_raw(raw)?,
        }
    }
    Ok(())
}

/// [`reader_record`] with the fields expected in declaration order, as Google's C++ parsers
/// did: each field's tag tested with [`Reader::read_tag_if`] (a comparison) before the loop
/// over tags, which then reads what is left (nothing, for a message written in order).
#[inline]
pub fn reader_record_in_order(mut r: Reader<'_>) -> Result<RecordRef<'_>, pbwire::Error> {
    let mut m = RecordRef::default();
    if r.read_tag_if(0x0a) {
        m.a = r.read_str()?;
    }
    if r.read_tag_if(0x12) {
        m.b = r.read_str()?;
    }
    if r.read_tag_if(0x1a) {
        m.c = r.read_str()?;
    }
    if r.read_tag_if(0x20) {
        m.x = r.read_i32()?;
    }
    if r.read_tag_if(0x28) {
        m.y = r.read_i32()?;
    }
    record_fields(&mut r, &mut m)?;
    Ok(m)
}

/// [`reader_record`] with `core::str::from_utf8` for the strings instead of pbwire's.
#[inline]
pub fn reader_record_core_utf8(mut r: Reader<'_>) -> Result<RecordRef<'_>, DecodeError> {
    let mut m = RecordRef::default();
    while !r.is_empty() {
        match r.read_raw_tag()? {
            0x0a => m.a = str::from_utf8(r.read_bytes()?)?,
            0x12 => m.b = str::from_utf8(r.read_bytes()?)?,
            0x1a => m.c = str::from_utf8(r.read_bytes()?)?,
            0x20 => m.x = r.read_i32()?,
            0x28 => m.y = r.read_i32()?,
            raw => r.skip_raw(raw)?,
        }
    }
    Ok(m)
}

/// The records message with [`Reader`] (generated-code shape), appended to `out` (cleared
/// first); `record` decodes one record from its nested reader ([`Reader::read_message`]).
#[inline]
pub fn reader_records<'a, E>(
    buf: &'a [u8],
    out: &mut Vec<RecordRef<'a>>,
    record: impl Fn(Reader<'a>) -> Result<RecordRef<'a>, E>,
) -> Result<(), E>
where
    E: From<pbwire::Error>,
{
    out.clear();
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        match r.read_raw_tag()? {
            0x0a => out.push(record(r.read_message()?)?),
            raw => r.skip_raw(raw)?,
        }
    }
    Ok(())
}

/// prost's owned record.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProstRecord {
    /// Field 1.
    #[prost(string, tag = "1")]
    pub a: String,
    /// Field 2.
    #[prost(string, tag = "2")]
    pub b: String,
    /// Field 3.
    #[prost(string, tag = "3")]
    pub c: String,
    /// Field 4.
    #[prost(int32, tag = "4")]
    pub x: i32,
    /// Field 5.
    #[prost(int32, tag = "5")]
    pub y: i32,
}

/// prost's owned records message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProstRecords {
    /// Field 1.
    #[prost(message, repeated, tag = "1")]
    pub records: Vec<ProstRecord>,
}

/// quick-protobuf's borrowed record (its generated code borrows `&str` through `Cow`; plain
/// `&str` here).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuickRecord<'a>(pub RecordRef<'a>);

impl<'a> MessageRead<'a> for QuickRecord<'a> {
    fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> quick_protobuf::Result<Self> {
        let mut m = RecordRef::default();
        while !r.is_eof() {
            match r.next_tag(bytes) {
                Ok(10) => m.a = r.read_string(bytes)?,
                Ok(18) => m.b = r.read_string(bytes)?,
                Ok(26) => m.c = r.read_string(bytes)?,
                Ok(32) => m.x = r.read_int32(bytes)?,
                Ok(40) => m.y = r.read_int32(bytes)?,
                Ok(t) => r.read_unknown(bytes, t)?,
                Err(e) => return Err(e),
            }
        }
        Ok(QuickRecord(m))
    }
}

/// quick-protobuf's borrowed records message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuickRecords<'a> {
    /// Field 1.
    pub records: Vec<QuickRecord<'a>>,
}

impl<'a> MessageRead<'a> for QuickRecords<'a> {
    fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> quick_protobuf::Result<Self> {
        let mut m = QuickRecords::default();
        while !r.is_eof() {
            match r.next_tag(bytes) {
                Ok(10) => m.records.push(r.read_message::<QuickRecord>(bytes)?),
                Ok(t) => r.read_unknown(bytes, t)?,
                Err(e) => return Err(e),
            }
        }
        Ok(m)
    }
}

// ---------------------------------------------------------------------------------------------
// TradeOrder { int32 order_id = 1; Buyer buyer = 2; repeated uint32 sku_ids = 3; bool paid = 4 }
// Buyer { int32 user_id = 1; string user_name = 2 }

/// The most `sku_ids` the fixed-capacity pbwire decoder keeps.
pub const MAX_SKUS: usize = 8;

/// A TradeOrder borrowed from the input, with its packed ids in a fixed array (no allocation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TradeOrderRef<'a> {
    /// Field 1.
    pub order_id: i32,
    /// Field 2.1.
    pub user_id: i32,
    /// Field 2.2.
    pub user_name: &'a str,
    /// Field 3, first `sku_count` entries.
    pub sku_ids: [u32; MAX_SKUS],
    /// How many of `sku_ids` are set.
    pub sku_count: usize,
    /// Field 4.
    pub paid: bool,
}

impl TradeOrderRef<'_> {
    /// The checksum every TradeOrder decoder returns.
    pub fn checksum(order_id: i32, user_id: i32, user_name: &str, skus: &[u32], paid: bool) -> u64 {
        crate::data::hash_values(
            [order_id as u32 as u64, user_id as u32 as u64, user_name.len() as u64, paid as u64]
                .into_iter()
                .chain(skus.iter().map(|&s| s as u64)),
        )
    }
}

/// One TradeOrder with pbwire (zero-copy strings, packed ids decoded in bulk).
#[inline]
pub fn pbwire_trade_order(buf: &[u8]) -> Result<TradeOrderRef<'_>, DecodeError> {
    let mut m = TradeOrderRef::default();
    for field in fields(buf) {
        let field = field?;
        match (field.number, field.value) {
            (1, Value::Varint(v)) => m.order_id = v as i32,
            (2, Value::Len(buyer)) => {
                for f in fields(buyer) {
                    let f = f?;
                    match (f.number, f.value) {
                        (1, Value::Varint(v)) => m.user_id = v as i32,
                        (2, Value::Len(s)) => m.user_name = pbwire::utf8::from_utf8(s)?,
                        _ => {}
                    }
                }
            }
            (3, Value::Len(p)) => {
                let n = pbwire::packed::decode_u32(p, &mut m.sku_ids[m.sku_count..])?;
                m.sku_count += n;
            }
            (3, Value::Varint(v)) if m.sku_count < MAX_SKUS => {
                m.sku_ids[m.sku_count] = v as u32;
                m.sku_count += 1;
            }
            (4, Value::Varint(v)) => m.paid = v != 0,
            _ => {}
        }
    }
    Ok(m)
}

/// One TradeOrder the way generated code reads it, with [`Reader`]: a nested reader for the
/// buyer, the packed ids decoded in bulk with `packed::decode_u32` through `read_packed` (a
/// short payload such as this one's goes to the scalar reference, inlined), an unpacked id
/// appended.
#[inline]
pub fn reader_trade_order(buf: &[u8]) -> Result<TradeOrderRef<'_>, pbwire::Error> {
    let mut m = TradeOrderRef::default();
    trade_order_fields(&mut Reader::new(buf), &mut m)?;
    Ok(m)
}

/// [`reader_trade_order`]'s loop over tags, from wherever `r` stands.
#[inline(always)]
fn trade_order_fields<'a>(r: &mut Reader<'a>, m: &mut TradeOrderRef<'a>) -> Result<(), pbwire::Error> {
    while !r.is_empty() {
        match r.read_raw_tag()? {
            0x08 => m.order_id = r.read_i32()?,
            0x12 => buyer_fields(&mut r.read_message()?, m)?,
            0x1a => {
                m.sku_count +=
                    r.read_packed(|p| pbwire::packed::decode_u32(p, &mut m.sku_ids[m.sku_count..]))?
            }
            0x18 if m.sku_count < MAX_SKUS => {
                m.sku_ids[m.sku_count] = r.read_u32()?;
                m.sku_count += 1;
            }
            0x20 => m.paid = r.read_bool()?,
            raw => r.skip_raw(raw)?,
        }
    }
    Ok(())
}

/// The buyer's loop over tags (into the order's flattened fields).
#[inline(always)]
fn buyer_fields<'a>(b: &mut Reader<'a>, m: &mut TradeOrderRef<'a>) -> Result<(), pbwire::Error> {
    while !b.is_empty() {
        match b.read_raw_tag()? {
            0x08 => m.user_id = b.read_i32()?,
            0x12 => m.user_name = b.read_str()?,
            raw => b.skip_raw(raw)?,
        }
    }
    Ok(())
}

/// [`reader_trade_order`] with the fields expected in declaration order
/// ([`reader_record_in_order`]), in the order and in the buyer.
#[inline]
pub fn reader_trade_order_in_order(buf: &[u8]) -> Result<TradeOrderRef<'_>, pbwire::Error> {
    let mut m = TradeOrderRef::default();
    reader_trade_order_merge(buf, &mut m)?;
    Ok(m)
}

/// [`reader_trade_order_in_order`] into a message the caller holds, as prost's `merge` and
/// C++'s `ParseFromArray` take one (scalars overwritten, ids appended): nothing returned by
/// value. A `Result<TradeOrderRef>` is moved out through memory in pieces that the caller's
/// reads then wait on (about 10 ns a call in a probe).
#[inline(always)]
pub fn reader_trade_order_merge<'a>(buf: &'a [u8], m: &mut TradeOrderRef<'a>) -> Result<(), pbwire::Error> {
    let mut r = Reader::new(buf);
    if r.read_tag_if(0x08) {
        m.order_id = r.read_i32()?;
    }
    if r.read_tag_if(0x12) {
        let mut b = r.read_message()?;
        if b.read_tag_if(0x08) {
            m.user_id = b.read_i32()?;
        }
        if b.read_tag_if(0x12) {
            m.user_name = b.read_str()?;
        }
        buyer_fields(&mut b, m)?;
    }
    if r.read_tag_if(0x1a) {
        m.sku_count += r.read_packed(|p| pbwire::packed::decode_u32(p, &mut m.sku_ids[m.sku_count..]))?;
    }
    if r.read_tag_if(0x20) {
        m.paid = r.read_bool()?;
    }
    trade_order_fields(&mut r, m)
}

/// prost's owned Buyer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProstBuyer {
    /// Field 1.
    #[prost(int32, tag = "1")]
    pub user_id: i32,
    /// Field 2.
    #[prost(string, tag = "2")]
    pub user_name: String,
}

/// prost's owned TradeOrder.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProstTradeOrder {
    /// Field 1.
    #[prost(int32, tag = "1")]
    pub order_id: i32,
    /// Field 2.
    #[prost(message, optional, tag = "2")]
    pub buyer: Option<ProstBuyer>,
    /// Field 3.
    #[prost(uint32, repeated, tag = "3")]
    pub sku_ids: Vec<u32>,
    /// Field 4.
    #[prost(bool, tag = "4")]
    pub paid: bool,
}

/// quick-protobuf's borrowed Buyer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuickBuyer<'a> {
    /// Field 1.
    pub user_id: i32,
    /// Field 2.
    pub user_name: &'a str,
}

impl<'a> MessageRead<'a> for QuickBuyer<'a> {
    fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> quick_protobuf::Result<Self> {
        let mut m = QuickBuyer::default();
        while !r.is_eof() {
            match r.next_tag(bytes) {
                Ok(8) => m.user_id = r.read_int32(bytes)?,
                Ok(18) => m.user_name = r.read_string(bytes)?,
                Ok(t) => r.read_unknown(bytes, t)?,
                Err(e) => return Err(e),
            }
        }
        Ok(m)
    }
}

/// quick-protobuf's TradeOrder (borrowed strings; its packed reader allocates the ids).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuickTradeOrder<'a> {
    /// Field 1.
    pub order_id: i32,
    /// Field 2.
    pub buyer: Option<QuickBuyer<'a>>,
    /// Field 3.
    pub sku_ids: Vec<u32>,
    /// Field 4.
    pub paid: bool,
}

impl<'a> MessageRead<'a> for QuickTradeOrder<'a> {
    fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> quick_protobuf::Result<Self> {
        let mut m = QuickTradeOrder::default();
        while !r.is_eof() {
            match r.next_tag(bytes) {
                Ok(8) => m.order_id = r.read_int32(bytes)?,
                Ok(18) => m.buyer = Some(r.read_message::<QuickBuyer>(bytes)?),
                Ok(26) => m.sku_ids = r.read_packed(bytes, |r, b| r.read_uint32(b))?,
                Ok(24) => m.sku_ids.push(r.read_uint32(bytes)?),
                Ok(32) => m.paid = r.read_bool(bytes)?,
                Ok(t) => r.read_unknown(bytes, t)?,
                Err(e) => return Err(e),
            }
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{self, Rng};

    /// The fields of a record or an order, shuffled, some repeated or dropped, unknown fields
    /// and overlong tags among them; then, for every such message, each byte damaged in turn.
    fn variants(fields: &[&[u8]], seed: u64) -> Vec<Vec<u8>> {
        let mut rng = Rng::new(seed);
        let mut out = Vec::new();
        for round in 0..200 {
            let mut msg = Vec::new();
            for _ in 0..rng.range(0, 8) {
                match rng.range(0, 9) {
                    // An unknown varint field 9, and field 1's tag in two bytes.
                    0 => msg.extend_from_slice(&[0x48, 0x01]),
                    1 if round % 2 == 0 => {
                        msg.extend_from_slice(&[fields[0][0] | 0x80, 0x00]);
                        msg.extend_from_slice(&fields[0][1..]);
                    }
                    _ => msg.extend_from_slice(fields[rng.range(0, fields.len() as u64 - 1) as usize]),
                }
            }
            if round % 3 == 0 {
                msg = fields.concat();
            }
            let at = rng.range(0, msg.len() as u64) as usize;
            let mut damaged = msg.clone();
            if at < damaged.len() {
                damaged[at] = rng.next_u64() as u8;
            }
            out.extend([msg.clone(), damaged, msg[..at.min(msg.len())].to_vec()]);
        }
        out
    }

    #[test]
    fn in_order_decoders_equal_the_loops() {
        let record: [&[u8]; 5] = [b"\x0a\x03abc", b"\x12\x01d", b"\x1a\x00", b"\x20\x96\x01", b"\x28\x7f"];
        let mut hits = 0;
        for msg in variants(&record, 1) {
            let (in_order, looped) =
                (reader_record_in_order(Reader::new(&msg)), reader_record(Reader::new(&msg)));
            assert_eq!(in_order, looped, "{msg:02x?}");
            hits += looped.is_ok() as usize;
        }
        let order: [&[u8]; 4] =
            [b"\x08\x96\x01", b"\x12\x05\x08\x07\x12\x01a", b"\x1a\x02\x05\x06", b"\x20\x01"];
        for msg in variants(&order, 2) {
            assert_eq!(reader_trade_order_in_order(&msg), reader_trade_order(&msg), "{msg:02x?}");
            hits += reader_trade_order(&msg).is_ok() as usize;
        }
        // Both decoders accept most variants and refuse some (the damaged and cut ones).
        assert!(hits > 600 && hits < 1200, "{hits}");
        assert_eq!(reader_trade_order_in_order(&data::TRADE_ORDER), reader_trade_order(&data::TRADE_ORDER));
        // Merging a second copy appends its ids and overwrites the rest.
        let mut twice = TradeOrderRef::default();
        reader_trade_order_merge(&data::TRADE_ORDER, &mut twice).unwrap();
        reader_trade_order_merge(&data::TRADE_ORDER, &mut twice).unwrap();
        let once = reader_trade_order(&data::TRADE_ORDER).unwrap();
        assert_eq!((twice.sku_count, &twice.sku_ids[..4]), (4, &[5, 6, 5, 6][..]));
        assert_eq!(TradeOrderRef { sku_ids: once.sku_ids, sku_count: 2, ..twice }, once);
    }
}
