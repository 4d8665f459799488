//! `pbwire inspect`: a message (or a stream of them) printed without its schema.
//!
//! The text output is what `protoc --decode_raw` (3.21) prints for the same bytes:
//!
//! - varints in unsigned decimal, fixed32 as `0x%08x`, fixed64 as `0x%016x`;
//! - a non-empty length-delimited payload that parses completely as a message is printed as a
//!   nested block, anything else as a string escaped like protobuf's `CEscape` (octal for every
//!   byte outside printable ASCII, UTF-8 included);
//! - groups as blocks;
//! - protoc's guessing budget: 10 levels, each nested block (message or group) using one; a
//!   payload is tried as a message only while the budget is positive, and groups inside the
//!   payload may nest only as deep as the budget left. `--max-depth N` sets the budget.
//!
//! Malformed input: protoc prints only "Failed to parse input."; we print the fields decoded
//! before the bad one, then report the error with its byte offset (see [`Malformed`]).

use std::io::{self, Write};

use pbwire::fields::{validate_with_depth_limit, Field, Fields, Value};
use pbwire::stream::delimited;
use pbwire::Error;

use crate::out::Out;
use crate::protoc::{self, Rules, TOP_GROUP_DEPTH};

/// protoc's budget for guessing nested messages (`kUnknownFieldRecursionLimit`).
pub const DEFAULT_MAX_DEPTH: u32 = 10;
/// The largest `--max-depth` accepted (group depth limits are a `u8` in pbwire).
pub const MAX_MAX_DEPTH: u32 = 255;

/// What to print and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Machine-readable JSON instead of protoc's text.
    pub json: bool,
    /// A trailing `# @OFFSET len LENGTH` comment on every field (text output).
    pub offsets: bool,
    /// Hex dumps of the length-delimited payloads printed as strings (text output).
    pub hex: bool,
    /// The input is a stream of varint-length-prefixed messages.
    pub delimited: bool,
    /// The budget for guessing nested messages.
    pub max_depth: u32,
    /// pbwire's own semantics instead of protoc's leniencies (see [`crate::protoc`]): tags
    /// must fit 32 bits, a varint's 10th byte must be 0 or 1, length prefixes may take 10 bytes.
    pub strict: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            json: false,
            offsets: false,
            hex: false,
            delimited: false,
            max_depth: DEFAULT_MAX_DEPTH,
            strict: false,
        }
    }
}

/// Why an inspection did not complete.
#[derive(Debug)]
pub enum Failure {
    /// Writing the output failed.
    Io(io::Error),
    /// The input is malformed; everything decoded before the error has been printed.
    Malformed(Malformed),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

impl From<Malformed> for Failure {
    fn from(m: Malformed) -> Self {
        Failure::Malformed(m)
    }
}

/// A malformation, with its offset in the whole input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// The library's error, its offset relative to the start of the input.
    pub error: Error,
    /// For `--delimited`: the index of the message it is in (`None`: in the framing itself, or
    /// not a stream).
    pub message: Option<usize>,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed input: {}", self.error)?;
        if let Some(i) = self.message {
            write!(f, " (in message {i})")?;
        }
        Ok(())
    }
}

/// Prints `input` to `w` as `opts` say. With `--delimited`, a malformed message is reported and
/// the next ones are still printed (their framing is intact); the first malformation is
/// returned. A malformed length prefix ends the stream.
///
/// ```
/// use pbwire_cli::inspect::{inspect, Failure, Options};
/// let text = inspect(&pbwire_cli::SAMPLE, &Options::default(), Vec::new()).unwrap();
/// // What `protoc --decode_raw` prints for the same bytes.
/// assert_eq!(
///     String::from_utf8(text).unwrap(),
///     "1: 150\n2 {\n  1: 7\n  2: \"a\"\n}\n3: \"\\005\\006\"\n4: 1\n"
/// );
/// let Err(Failure::Malformed(m)) = inspect(&pbwire_cli::SAMPLE[..13], &Options::default(), Vec::new())
/// else { panic!("a truncated message is malformed") };
/// assert_eq!(m.to_string(), "malformed input: input ends inside a value at byte 11");
/// ```
pub fn inspect<W: Write>(input: &[u8], opts: &Options, w: W) -> Result<W, Failure> {
    let mut p = Printer { out: Out::new(w), opts: *opts };
    let result = if opts.delimited { p.stream(input) } else { p.single(input) };
    p.out.flush()?;
    result.map(|()| p.out.into_inner())
}

struct Printer<W: Write> {
    out: Out<W>,
    opts: Options,
}

/// Where a message sits: its offset in the input, how it is read, and whether it is the top
/// level (whose groups have not been checked yet).
#[derive(Clone, Copy)]
struct At {
    base: usize,
    reader: Reader,
    top: bool,
}

impl At {
    fn fields(self, message: &[u8]) -> Iter<'_> {
        let depth = match (self.top, self.reader) {
            (false, _) => None,
            (true, Reader::Strict) => Some(i64::from(pbwire::wire::DEFAULT_DEPTH_LIMIT)),
            (true, Reader::Protoc(_)) => Some(TOP_GROUP_DEPTH),
        };
        self.reader.fields(message, depth)
    }

    /// A nested payload at `offset` (a message guessed, or a group's content).
    fn inner(self, offset: usize, reader: Reader) -> At {
        At { base: self.base + offset, reader, top: false }
    }
}

fn wire_type_name(v: &Value<'_>) -> &'static str {
    match v {
        Value::Varint(_) => "varint",
        Value::I64(_) => "i64",
        Value::Len(_) => "len",
        Value::Group(_) => "group",
        Value::I32(_) => "i32",
    }
}

/// How a message's fields are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reader {
    /// pbwire's field iterator.
    Strict,
    /// protoc's reading, top level or guessing.
    Protoc(Rules),
}

/// The fields, read one way or the other.
enum Iter<'a> {
    Strict(Fields<'a>),
    Protoc(protoc::Fields<'a>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = pbwire::Result<Field<'a>>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Strict(it) => it.next(),
            Iter::Protoc(it) => it.next(),
        }
    }
}

impl Reader {
    /// The fields of a message at the top level or nested (`group_depth`: how deep groups may
    /// nest; group contents have been checked already, so they are read with no limit).
    fn fields(self, message: &[u8], group_depth: Option<i64>) -> Iter<'_> {
        match self {
            Reader::Strict => {
                let d =
                    group_depth.map_or(MAX_MAX_DEPTH as u8, |d| d.clamp(0, i64::from(MAX_MAX_DEPTH)) as u8);
                Iter::Strict(Fields::with_depth_limit(message, d))
            }
            Reader::Protoc(rules) => {
                Iter::Protoc(protoc::fields(message, rules, group_depth.unwrap_or(i64::MAX)))
            }
        }
    }

    /// How a length-delimited payload is read if it is taken for a message.
    fn nested(self) -> Reader {
        match self {
            Reader::Strict => Reader::Strict,
            Reader::Protoc(_) => Reader::Protoc(Rules::Nested),
        }
    }

    /// Whether a length-delimited payload is printed as a message, with `budget` left: protoc
    /// tries it when the budget is positive, with groups allowed as deep as the budget.
    fn guess_message(self, payload: &[u8], budget: i64) -> bool {
        match self {
            Reader::Strict => {
                !payload.is_empty()
                    && budget > 0
                    && validate_with_depth_limit(payload, budget.min(i64::from(MAX_MAX_DEPTH)) as u8).is_ok()
            }
            Reader::Protoc(_) => protoc::parses_as_message(payload, budget),
        }
    }
}

impl<W: Write> Printer<W> {
    fn top(&self, base: usize) -> At {
        let reader = if self.opts.strict { Reader::Strict } else { Reader::Protoc(Rules::Top) };
        At { base, reader, top: true }
    }

    fn single(&mut self, input: &[u8]) -> Result<(), Failure> {
        let budget = i64::from(self.opts.max_depth);
        let at = self.top(0);
        if self.opts.json {
            self.out.str("{\"offset\":0,\"length\":");
            self.out.dec(input.len() as u64);
            self.out.str(",\"fields\":[");
            let r = self.json_fields(input, at, budget);
            self.out.byte(b']');
            if let Err(Failure::Malformed(m)) = &r {
                self.json_error(m);
            }
            self.out.str("}\n");
            r
        } else {
            self.text_fields(input, at, 0, budget)
        }
    }

    fn stream(&mut self, input: &[u8]) -> Result<(), Failure> {
        let budget = i64::from(self.opts.max_depth);
        let json = self.opts.json;
        let mut first_error: Option<Malformed> = None;
        if json {
            self.out.str("{\"messages\":[");
        }
        let mut frames = delimited(input);
        let mut index = 0;
        loop {
            let start = frames.position();
            let Some(frame) = frames.next() else { break };
            let message = match frame {
                Ok(message) => message,
                Err(error) => {
                    first_error.get_or_insert(Malformed { error, message: None });
                    break;
                }
            };
            let base = frames.position() - message.len();
            let r = if json {
                if index > 0 {
                    self.out.byte(b',');
                }
                self.out.str("{\"index\":");
                self.out.dec(index as u64);
                self.out.str(",\"prefix_offset\":");
                self.out.dec(start as u64);
                self.out.str(",\"offset\":");
                self.out.dec(base as u64);
                self.out.str(",\"length\":");
                self.out.dec(message.len() as u64);
                self.out.str(",\"fields\":[");
                let r = self.json_fields(message, self.top(base), budget);
                self.out.byte(b']');
                if let Err(Failure::Malformed(m)) = &r {
                    self.json_error(m);
                }
                self.out.byte(b'}');
                r
            } else {
                self.out.str("# message ");
                self.out.dec(index as u64);
                self.out.str(" @");
                self.out.dec(base as u64);
                self.out.str(" len ");
                self.out.dec(message.len() as u64);
                self.out.byte(b'\n');
                self.text_fields(message, self.top(base), 0, budget)
            };
            match r {
                Ok(()) => {}
                Err(Failure::Malformed(m)) => {
                    let m = Malformed { message: Some(index), ..m };
                    if !json {
                        self.out.str("# error: ");
                        self.out.str(&m.to_string());
                        self.out.byte(b'\n');
                    }
                    first_error.get_or_insert(m);
                }
                Err(e) => return Err(e),
            }
            index += 1;
        }
        if json {
            self.out.byte(b']');
            if let Some(m) = first_error.filter(|m| m.message.is_none()) {
                self.json_error(&m);
            }
            self.out.str("}\n");
        }
        match first_error {
            Some(m) => Err(Failure::Malformed(m)),
            None => Ok(()),
        }
    }

    fn offsets_comment(&mut self, f: &Field<'_>, base: usize) {
        if self.opts.offsets {
            self.out.str("  # @");
            self.out.dec((base + f.offset) as u64);
            self.out.str(" len ");
            self.out.dec((f.end - f.offset) as u64);
        }
    }

    /// The fields of `message` (at `base` in the input) in protoc's text format.
    fn text_fields(&mut self, message: &[u8], at: At, level: usize, budget: i64) -> Result<(), Failure> {
        let base = at.base;
        for field in at.fields(message) {
            let f = field.map_err(|error| Malformed { error: error.shifted(base), message: None })?;
            self.out.indent(level);
            self.out.dec(u64::from(f.number));
            match f.value {
                Value::Varint(v) => {
                    self.out.str(": ");
                    self.out.dec(v);
                }
                Value::I32(v) => {
                    self.out.str(": 0x");
                    self.out.hex(u64::from(v), 8);
                }
                Value::I64(v) => {
                    self.out.str(": 0x");
                    self.out.hex(v, 16);
                }
                Value::Len(p) if at.reader.guess_message(p, budget) => {
                    self.block(&f, p, at.inner(f.value_offset, at.reader.nested()), base, level, budget)?;
                    continue;
                }
                Value::Len(p) => {
                    self.out.str(": \"");
                    self.out.c_escaped(p);
                    self.out.byte(b'"');
                    self.offsets_comment(&f, base);
                    self.out.byte(b'\n');
                    if self.opts.hex {
                        self.hex_dump(p, base + f.value_offset, level + 1);
                    }
                    self.out.maybe_flush()?;
                    continue;
                }
                Value::Group(g) => {
                    // protoc spends budget on groups too, without checking it: the parse has
                    // already limited their depth.
                    self.block(&f, g, at.inner(f.value_offset, at.reader), base, level, budget)?;
                    continue;
                }
            }
            self.offsets_comment(&f, base);
            self.out.byte(b'\n');
            self.out.maybe_flush()?;
        }
        Ok(())
    }

    fn block(
        &mut self,
        f: &Field<'_>,
        content: &[u8],
        inner: At,
        base: usize,
        level: usize,
        budget: i64,
    ) -> Result<(), Failure> {
        self.out.str(" {");
        self.offsets_comment(f, base);
        self.out.byte(b'\n');
        self.text_fields(content, inner, level + 1, budget - 1)?;
        self.out.indent(level);
        self.out.str("}\n");
        self.out.maybe_flush()?;
        Ok(())
    }

    /// `hexdump -C`-style lines, as comments indented under the field.
    fn hex_dump(&mut self, p: &[u8], at: usize, level: usize) {
        for (i, chunk) in p.chunks(16).enumerate() {
            self.out.indent(level);
            self.out.str("# ");
            self.out.hex((at + 16 * i) as u64, 8);
            self.out.str(" ");
            for j in 0..16 {
                match chunk.get(j) {
                    Some(&b) => {
                        self.out.byte(b' ');
                        self.out.hex(u64::from(b), 2);
                    }
                    None => self.out.str("   "),
                }
                if j == 7 {
                    self.out.byte(b' ');
                }
            }
            self.out.str("  |");
            for &b in chunk {
                self.out.byte(if (0x20..0x7f).contains(&b) { b } else { b'.' });
            }
            self.out.str("|\n");
        }
    }

    fn json_error(&mut self, m: &Malformed) {
        self.out.str(",\"error\":{\"kind\":\"");
        self.out.str(&format!("{:?}", m.error.kind()));
        self.out.str("\",\"offset\":");
        self.out.dec(m.error.offset() as u64);
        self.out.str(",\"message\":\"");
        self.out.json_escaped(&m.error.to_string());
        self.out.str("\"}");
    }

    /// The fields of `message` as JSON objects, comma-separated.
    fn json_fields(&mut self, message: &[u8], at: At, budget: i64) -> Result<(), Failure> {
        let base = at.base;
        for (i, field) in at.fields(message).enumerate() {
            let f = field.map_err(|error| Malformed { error: error.shifted(base), message: None })?;
            if i > 0 {
                self.out.byte(b',');
            }
            self.out.str("{\"number\":");
            self.out.dec(u64::from(f.number));
            self.out.str(",\"wire_type\":\"");
            self.out.str(wire_type_name(&f.value));
            self.out.str("\",\"offset\":");
            self.out.dec((base + f.offset) as u64);
            self.out.str(",\"length\":");
            self.out.dec((f.end - f.offset) as u64);
            match f.value {
                Value::Varint(v) | Value::I64(v) => {
                    self.out.str(",\"value\":");
                    self.out.dec(v);
                }
                Value::I32(v) => {
                    self.out.str(",\"value\":");
                    self.out.dec(u64::from(v));
                }
                Value::Len(p) => {
                    self.out.str(",\"payload_offset\":");
                    self.out.dec((base + f.value_offset) as u64);
                    self.out.str(",\"payload_length\":");
                    self.out.dec(p.len() as u64);
                    if at.reader.guess_message(p, budget) {
                        self.out.str(",\"fields\":[");
                        self.json_fields(p, at.inner(f.value_offset, at.reader.nested()), budget - 1)?;
                        self.out.byte(b']');
                    } else {
                        self.out.str(",\"hex\":\"");
                        self.out.hex_bytes(p);
                        self.out.byte(b'"');
                        if let Ok(s) = std::str::from_utf8(p) {
                            self.out.str(",\"string\":\"");
                            self.out.json_escaped(s);
                            self.out.byte(b'"');
                        }
                    }
                }
                Value::Group(g) => {
                    self.out.str(",\"payload_offset\":");
                    self.out.dec((base + f.value_offset) as u64);
                    self.out.str(",\"payload_length\":");
                    self.out.dec(g.len() as u64);
                    self.out.str(",\"fields\":[");
                    self.json_fields(g, at.inner(f.value_offset, at.reader), budget - 1)?;
                    self.out.byte(b']');
                }
            }
            self.out.byte(b'}');
            self.out.maybe_flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SAMPLE;

    fn text(input: &[u8], opts: Options) -> (String, Option<Malformed>) {
        let mut buf = Vec::new();
        let err = match inspect(input, &opts, &mut buf) {
            Ok(_) => None,
            Err(Failure::Malformed(m)) => Some(m),
            Err(Failure::Io(e)) => panic!("{e}"),
        };
        (String::from_utf8(buf).unwrap(), err)
    }

    #[test]
    fn sample_as_protoc_prints_it() {
        let (s, err) = text(&SAMPLE, Options::default());
        assert_eq!(err, None);
        assert_eq!(s, "1: 150\n2 {\n  1: 7\n  2: \"a\"\n}\n3: \"\\005\\006\"\n4: 1\n");
    }

    #[test]
    fn offsets_and_hex() {
        let opts = Options { offsets: true, hex: true, ..Options::default() };
        let (s, _) = text(&SAMPLE, opts);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "1: 150  # @0 len 3");
        assert_eq!(lines[1], "2 {  # @3 len 7");
        assert_eq!(lines[3], "  2: \"a\"  # @7 len 3");
        assert_eq!(lines[4], "    # 00000009  61                                                |a|");
        assert_eq!(lines[6], "3: \"\\005\\006\"  # @10 len 4");
        assert_eq!(lines[7], "  # 0000000c  05 06                                             |..|");
        assert_eq!(lines[8], "4: 1  # @14 len 2");
    }

    #[test]
    fn max_depth_zero_prints_payloads_as_strings() {
        let (s, _) = text(&SAMPLE, Options { max_depth: 0, ..Options::default() });
        assert_eq!(s.lines().nth(1), Some("2: \"\\010\\007\\022\\001a\""));
    }

    #[test]
    fn malformed_input_keeps_what_was_decoded() {
        let (s, err) = text(&SAMPLE[..13], Options::default());
        assert_eq!(s, "1: 150\n2 {\n  1: 7\n  2: \"a\"\n}\n");
        let err = err.unwrap();
        assert_eq!(
            (err.error.kind(), err.error.offset(), err.message),
            (pbwire::ErrorKind::Truncated, 11, None)
        );
        assert_eq!(err.to_string(), "malformed input: input ends inside a value at byte 11");
    }

    #[test]
    fn delimited_stream_continues_past_a_bad_message() {
        // [sample] [08 (a tag, its varint missing)] [08 01]
        let mut input = vec![16];
        input.extend_from_slice(&SAMPLE);
        input.extend_from_slice(&[1, 0x08, 2, 0x08, 0x01]);
        let (s, err) = text(&input, Options { delimited: true, ..Options::default() });
        assert!(s.starts_with("# message 0 @1 len 16\n1: 150\n"), "{s}");
        assert!(s.ends_with(
            "# message 1 @18 len 1\n# error: malformed input: input ends inside a value at byte 19 (in message 1)\n\
             # message 2 @20 len 2\n1: 1\n"
        ));
        assert_eq!(err.unwrap().message, Some(1));
        // A broken length prefix ends the stream, reported with its offset.
        let (_, err) = text(&[2, 0x08, 0x01, 5, 0], Options { delimited: true, ..Options::default() });
        assert_eq!(
            err.unwrap(),
            Malformed { error: Error::new(pbwire::ErrorKind::Truncated, 3), message: None }
        );
    }

    #[test]
    fn json_shape() {
        let (s, _) = text(&SAMPLE, Options { json: true, ..Options::default() });
        assert_eq!(
            s,
            concat!(
                r#"{"offset":0,"length":16,"fields":["#,
                r#"{"number":1,"wire_type":"varint","offset":0,"length":3,"value":150},"#,
                r#"{"number":2,"wire_type":"len","offset":3,"length":7,"payload_offset":5,"payload_length":5,"fields":["#,
                r#"{"number":1,"wire_type":"varint","offset":5,"length":2,"value":7},"#,
                r#"{"number":2,"wire_type":"len","offset":7,"length":3,"payload_offset":9,"payload_length":1,"hex":"61","string":"a"}]},"#,
                r#"{"number":3,"wire_type":"len","offset":10,"length":4,"payload_offset":12,"payload_length":2,"hex":"0506","string":"\u0005\u0006"},"#,
                r#"{"number":4,"wire_type":"varint","offset":14,"length":2,"value":1}]}"#,
                "\n"
            )
        );
        let (s, _) = text(&[0x0b, 0x0c, 0x08], Options { json: true, ..Options::default() });
        assert_eq!(
            s,
            concat!(
                r#"{"offset":0,"length":3,"fields":[{"number":1,"wire_type":"group","offset":0,"length":2,"#,
                r#""payload_offset":1,"payload_length":0,"fields":[]}],"error":{"kind":"Truncated","offset":3,"#,
                r#""message":"input ends inside a value at byte 3"}}"#,
                "\n"
            )
        );
    }

    #[test]
    fn groups_and_fixed() {
        let (s, _) = text(
            &[0x0b, 0x10, 0x01, 0x0c, 0x15, 1, 2, 3, 4, 0x19, 1, 2, 3, 4, 5, 6, 7, 8],
            Options::default(),
        );
        assert_eq!(s, "1 {\n  2: 1\n}\n2: 0x04030201\n3: 0x0807060504030201\n");
    }
}
