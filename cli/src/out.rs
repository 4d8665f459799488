//! A small output buffer with the formatting the printers need (decimal, hex, protoc's C
//! escaping, JSON escaping), written to the underlying writer in large blocks.

use std::io::{self, Write};

const FLUSH_AT: usize = 1 << 16;

/// Buffers output in a `Vec` and hands it to `W` in blocks of about 64 KiB.
pub struct Out<W: Write> {
    buf: Vec<u8>,
    w: W,
}

impl<W: Write> Out<W> {
    /// A buffer in front of `w`.
    pub fn new(w: W) -> Self {
        Out { buf: Vec::with_capacity(FLUSH_AT + 4096), w }
    }

    /// Writes out the buffered bytes if there are enough of them.
    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes out everything buffered and flushes the writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        self.w.flush()
    }

    /// The underlying writer (after [`Out::flush`]).
    pub fn into_inner(self) -> W {
        self.w
    }

    #[inline]
    pub fn str(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    #[inline]
    pub fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// Two spaces per level, as protoc indents.
    #[inline]
    pub fn indent(&mut self, level: usize) {
        self.buf.resize(self.buf.len() + 2 * level, b' ');
    }

    /// `v` in decimal.
    #[inline]
    pub fn dec(&mut self, mut v: u64) {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&tmp[i..]);
    }

    /// `v` as `digits` lower-case hex digits (zero-padded; more digits if `v` needs them).
    #[inline]
    pub fn hex(&mut self, v: u64, digits: usize) {
        let need = ((64 - v.leading_zeros() as usize).div_ceil(4)).max(digits).max(1);
        for i in (0..need).rev() {
            self.buf.push(HEX[((v >> (4 * i)) & 0xf) as usize]);
        }
    }

    /// `b` escaped the way protobuf's `CEscape` does it (what `protoc --decode_raw` prints for
    /// strings): `\n \r \t \" \' \\`, printable ASCII as is, every other byte as three-digit
    /// octal, UTF-8 included.
    #[inline]
    pub fn c_escaped(&mut self, b: &[u8]) {
        self.buf.reserve(b.len());
        let mut start = 0;
        for (i, &c) in b.iter().enumerate() {
            let e = C_ESCAPES[usize::from(c)];
            if e == 0 {
                continue;
            }
            self.buf.extend_from_slice(&b[start..i]);
            start = i + 1;
            if e == 1 {
                self.buf.extend_from_slice(&[b'\\', b'0' + (c >> 6), b'0' + ((c >> 3) & 7), b'0' + (c & 7)]);
            } else {
                self.buf.extend_from_slice(&[b'\\', e]);
            }
        }
        self.buf.extend_from_slice(&b[start..]);
    }

    /// `s` as the inside of a JSON string.
    pub fn json_escaped(&mut self, s: &str) {
        let b = s.as_bytes();
        let mut start = 0;
        for (i, &c) in b.iter().enumerate() {
            if c >= 0x20 && c != b'"' && c != b'\\' {
                continue;
            }
            self.buf.extend_from_slice(&b[start..i]);
            start = i + 1;
            match c {
                b'"' => self.str("\\\""),
                b'\\' => self.str("\\\\"),
                b'\n' => self.str("\\n"),
                b'\r' => self.str("\\r"),
                b'\t' => self.str("\\t"),
                _ => {
                    self.str("\\u00");
                    self.hex(u64::from(c), 2);
                }
            }
        }
        self.buf.extend_from_slice(&b[start..]);
    }

    /// `b` as contiguous lower-case hex.
    pub fn hex_bytes(&mut self, b: &[u8]) {
        self.buf.reserve(2 * b.len());
        for &c in b {
            self.buf.push(HEX[usize::from(c >> 4)]);
            self.buf.push(HEX[usize::from(c & 0xf)]);
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Per byte: 0 printed as is, 1 as octal, else the letter after a backslash.
const C_ESCAPES: [u8; 256] = {
    let mut t = [1u8; 256];
    let mut c = 0x20;
    while c < 0x7f {
        t[c] = 0;
        c += 1;
    }
    t[b'\n' as usize] = b'n';
    t[b'\r' as usize] = b'r';
    t[b'\t' as usize] = b't';
    t[b'"' as usize] = b'"';
    t[b'\'' as usize] = b'\'';
    t[b'\\' as usize] = b'\\';
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut Out<Vec<u8>>)) -> String {
        let mut out = Out::new(Vec::new());
        f(&mut out);
        out.flush().unwrap();
        String::from_utf8(out.into_inner()).unwrap()
    }

    #[test]
    fn numbers() {
        assert_eq!(with(|o| o.dec(0)), "0");
        assert_eq!(with(|o| o.dec(u64::MAX)), "18446744073709551615");
        assert_eq!(with(|o| o.hex(0x0403_0201, 8)), "04030201");
        assert_eq!(with(|o| o.hex(0, 16)), "0000000000000000");
        assert_eq!(with(|o| o.hex(0x1_0000_0000, 8)), "100000000");
    }

    #[test]
    fn c_escaping_matches_protoc() {
        // What protoc 3.21 --decode_raw printed for these bytes.
        assert_eq!(with(|o| o.c_escaped(b"\x00\x07\x08\t\n\x0b\r\x1f")), r"\000\007\010\t\n\013\r\037");
        assert_eq!(with(|o| o.c_escaped(b" a\"'\\~\x7f\xc3\xa9\xff")), r#" a\"\'\\~\177\303\251\377"#);
    }

    #[test]
    fn json_escaping() {
        assert_eq!(with(|o| o.json_escaped("a\"\\\n\u{1}é")), "a\\\"\\\\\\n\\u0001é");
    }
}
