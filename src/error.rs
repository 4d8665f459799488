//! The one error type: what went wrong and at which byte.

use core::fmt;

/// What kind of malformation (or missing space) stopped a decode or encode.
///
/// The kinds are split so that a streaming caller can tell "give me more bytes" from "this is
/// broken": only [`ErrorKind::Truncated`] can be cured by more input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input (or a packed payload) ends inside a value: a varint whose last byte still has
    /// its continuation bit, a fixed-width value with too few bytes, a length-delimited value
    /// whose length runs past the end, or a group with no end-group tag.
    Truncated,
    /// A varint longer than 10 bytes, or whose 10th byte is greater than 1 (it would not fit
    /// in 64 bits).
    VarintOverflow,
    /// A tag with wire type 6 or 7.
    InvalidWireType,
    /// A tag with field number 0 or above 2^29 - 1 (this includes tags that do not fit in 32
    /// bits).
    InvalidFieldNumber,
    /// A length prefix above `i32::MAX`, which protobuf forbids whatever the input size.
    LengthOutOfBounds,
    /// An end-group tag at the top level, or one whose field number is not that of the open
    /// group.
    GroupMismatch,
    /// Groups nested deeper than the depth limit.
    DepthLimit,
    /// The output buffer has no room for the next value.
    OutputTooSmall,
    /// A `string` field that is not UTF-8 ([`crate::reader::Reader::read_str`]).
    InvalidUtf8,
}

impl ErrorKind {
    /// A short, lower-case description of the kind.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "input ends inside a value",
            ErrorKind::VarintOverflow => "varint does not fit in 64 bits",
            ErrorKind::InvalidWireType => "invalid wire type (6 or 7)",
            ErrorKind::InvalidFieldNumber => "field number outside 1..=536870911",
            ErrorKind::LengthOutOfBounds => "length prefix above i32::MAX",
            ErrorKind::GroupMismatch => "end-group tag does not match an open group",
            ErrorKind::DepthLimit => "groups nested past the depth limit",
            ErrorKind::OutputTooSmall => "output buffer too small",
            ErrorKind::InvalidUtf8 => "string is not UTF-8",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with the byte offset at which it was found.
///
/// The offset is relative to the slice given to the function that failed, and points at the
/// first byte of the element that is bad: the varint, the fixed-width value, the length prefix
/// of a length-delimited value, the tag (for invalid tags, group errors and the depth limit), or,
/// for [`ErrorKind::OutputTooSmall`], the first input element that did not fit. It is always
/// `<=` the input length.
///
/// ```
/// use pbwire::{varint, ErrorKind};
/// let err = varint::decode_u64(&[0x96]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Truncated);
/// assert_eq!(err.offset(), 0);
/// assert_eq!(err.to_string(), "input ends inside a value at byte 0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    kind: ErrorKind,
    offset: usize,
}

impl Error {
    /// An error of `kind` at byte `offset`.
    #[inline]
    pub const fn new(kind: ErrorKind, offset: usize) -> Self {
        Error { kind, offset }
    }

    /// What went wrong.
    #[inline]
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The byte offset of the bad element, relative to the slice the failing call was given.
    #[inline]
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The same error with `base` added to its offset: for callers that decode a sub-slice and
    /// report positions in the enclosing buffer.
    #[inline]
    #[must_use]
    pub const fn shifted(self, base: usize) -> Self {
        Error { kind: self.kind, offset: self.offset + base }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// `Result` with pbwire's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
