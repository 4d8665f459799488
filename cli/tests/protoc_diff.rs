//! Differential test: `pbwire inspect` against `protoc --decode_raw`, byte for byte, on
//! generated messages (nested messages, strings of every byte value, groups, packed-looking
//! payloads, empty payloads, edge and padded varints, 1..5-byte tags, nesting past protoc's
//! guessing budget), and on their truncations (both must fail, or both print the same).
//!
//! Skipped, with a message, when `protoc` is not installed (CI installs it).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use pbwire::wire::WireType;
use pbwire_cli::gen::{push_len, push_tag, push_varint, Distribution, Rng};
use pbwire_cli::inspect::{inspect, Failure, Options};

fn protoc_available() -> bool {
    match Command::new("protoc").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            eprintln!(
                "SKIPPED: protoc not found on PATH; install protobuf-compiler to run the differential test"
            );
            false
        }
    }
}

fn run(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn protoc(input: &[u8]) -> Output {
    run(Command::new("protoc").arg("--decode_raw"), input)
}

/// What `pbwire inspect` prints (through the library, as the binary does) and whether it
/// found the input malformed.
fn ours(input: &[u8]) -> (Vec<u8>, bool) {
    match inspect(input, &Options::default(), Vec::new()) {
        Ok(out) => (out, true),
        Err(Failure::Malformed(_)) => (Vec::new(), false),
        Err(Failure::Io(e)) => panic!("{e}"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}: protoc {x:?}, pbwire {y:?}", i + 1);
        }
    }
    format!("line counts differ: protoc {}, pbwire {}", a.lines().count(), b.lines().count())
}

/// Compares one input; returns whether protoc parsed it.
fn check(input: &[u8]) -> bool {
    let p = protoc(input);
    let (o, ok) = ours(input);
    if p.status.success() {
        assert!(ok, "protoc parsed it but pbwire did not; input: {}", hex(input));
        assert!(p.stdout == o, "output differs ({}); input: {}", first_difference(&p.stdout, &o), hex(input));
    } else {
        assert_eq!(String::from_utf8_lossy(&p.stderr).trim(), "Failed to parse input.");
        assert!(
            !ok,
            "protoc failed but pbwire printed:\n{}\ninput: {}",
            String::from_utf8_lossy(&o),
            hex(input)
        );
    }
    p.status.success()
}

struct Gen {
    rng: Rng,
}

const EDGE_VARINTS: [u64; 14] = [
    0,
    1,
    127,
    128,
    16_383,
    16_384,
    (1 << 21) - 1,
    1 << 28,
    u32::MAX as u64,
    1 << 32,
    i64::MAX as u64,
    1 << 63,
    u64::MAX,
    -1i64 as u64 - 1,
];
/// The largest field numbers with 1-, 2-, 3-, 4- and 5-byte tags, and the smallest with 2..5.
const EDGE_FIELDS: [u32; 9] = [15, 16, 2047, 2048, 262_143, 262_144, 33_554_431, 33_554_432, 536_870_911];

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    fn field_number(&mut self) -> u32 {
        match self.below(10) {
            0 => EDGE_FIELDS[self.below(EDGE_FIELDS.len() as u64) as usize],
            1 => 1 + self.below(536_870_911) as u32,
            _ => 1 + self.below(20) as u32,
        }
    }

    /// A varint, sometimes padded with redundant continuation bytes (within 10 bytes).
    fn varint(&mut self, out: &mut Vec<u8>, v: u64) {
        let start = out.len();
        push_varint(out, v);
        if self.below(16) == 0 {
            let room = 10 - (out.len() - start);
            for _ in 0..self.below(room as u64 + 1) {
                *out.last_mut().unwrap() |= 0x80;
                out.push(0);
            }
        }
    }

    fn tag(&mut self, out: &mut Vec<u8>, number: u32, wt: WireType) {
        push_tag(out, number, wt);
    }

    fn bytes(&mut self) -> Vec<u8> {
        let len = match self.below(8) {
            0 => 0,
            1 => 1,
            2 => 100 + self.below(300),
            _ => self.below(24),
        } as usize;
        match self.below(4) {
            // Every byte value.
            0 => (0..len).map(|_| self.rng.next_u64() as u8).collect(),
            // Text, with UTF-8 and the characters protoc escapes.
            1 => {
                const PIECES: [&str; 12] = ["a", "Z", " ", "\"", "'", "\\", "\n", "\t", "\r", "é", "€", "𝄞"];
                let mut s = String::new();
                while s.len() < len {
                    s.push_str(PIECES[self.below(12) as usize]);
                }
                s.into_bytes()
            }
            // Printable ASCII: often also a valid message ("a" = field 12 varint...).
            2 => (0..len).map(|_| 0x20 + self.below(95) as u8).collect(),
            // One of the 256 byte values alone, or a pair.
            _ => (0..1 + self.below(2)).map(|_| self.rng.next_u64() as u8).collect(),
        }
    }

    fn message(&mut self, depth: u32, fields: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..fields {
            self.field(depth, &mut out);
        }
        out
    }

    fn field(&mut self, depth: u32, out: &mut Vec<u8>) {
        let number = self.field_number();
        let deep_ok = depth < 14;
        match self.below(12) {
            0 | 1 => {
                self.tag(out, number, WireType::Varint);
                let v = if self.below(2) == 0 {
                    EDGE_VARINTS[self.below(EDGE_VARINTS.len() as u64) as usize]
                } else {
                    Distribution::ALL[self.below(4) as usize].sample(&mut self.rng)
                };
                self.varint(out, v);
            }
            2 => {
                self.tag(out, number, WireType::I32);
                out.extend_from_slice(&(self.rng.next_u64() as u32).to_le_bytes());
            }
            3 => {
                self.tag(out, number, WireType::I64);
                out.extend_from_slice(&self.rng.next_u64().to_le_bytes());
            }
            4..=6 if deep_ok => {
                // A chain of nested messages now and then, past protoc's budget of 10.
                let n = 1 + self.below(4);
                let inner = self.message(depth + 1, n);
                push_len(out, number, &inner);
            }
            7 | 8 => {
                let b = self.bytes();
                push_len(out, number, &b);
            }
            9 => {
                // A packed payload (often also parses as a message).
                let d = Distribution::ALL[self.below(4) as usize];
                let p = d.packed(self.below(8) as usize, self.rng.next_u64());
                push_len(out, number, &p);
            }
            10 if deep_ok => {
                self.tag(out, number, WireType::StartGroup);
                let n = self.below(4);
                let inner = self.message(depth + 1, n);
                out.extend_from_slice(&inner);
                self.tag(out, number, WireType::EndGroup);
            }
            _ => push_len(out, number, &[]),
        }
    }

    /// A chain of `depth` messages, or groups, or both, around a small core.
    fn chain(&mut self, depth: u32) -> Vec<u8> {
        let n = 1 + self.below(2);
        let mut m = self.message(20, n);
        for _ in 0..depth {
            let number = 1 + self.below(3) as u32;
            if self.below(3) == 0 {
                let mut g = Vec::new();
                push_tag(&mut g, number, WireType::StartGroup);
                g.extend_from_slice(&m);
                push_tag(&mut g, number, WireType::EndGroup);
                m = g;
            } else {
                let mut l = Vec::new();
                push_len(&mut l, number, &m);
                m = l;
            }
        }
        m
    }
}

#[test]
fn inspect_matches_protoc_decode_raw() {
    if !protoc_available() {
        return;
    }
    let mut g = Gen { rng: Rng::new(0x9b_1e) };
    let mut all = Vec::new();
    let mut parsed = 0;
    let cases = 1000;
    for i in 0..cases {
        let m = if i % 5 == 4 {
            let d = 8 + g.below(6) as u32;
            g.chain(d)
        } else {
            let n = 1 + g.below(8);
            g.message(0, n)
        };
        assert!(check(&m), "generated a malformed message: {}", hex(&m));
        parsed += 1;
        all.extend_from_slice(&m);
    }
    // The whole lot as one message, through the binary this time.
    let p = protoc(&all);
    let o = run(Command::new(env!("CARGO_BIN_EXE_pbwire")).arg("inspect"), &all);
    assert!(p.status.success() && o.status.success());
    assert!(p.stdout == o.stdout, "concatenation differs: {}", first_difference(&p.stdout, &o.stdout));
    eprintln!("{parsed} messages and their {}-byte concatenation: identical to protoc", all.len());
}

#[test]
fn every_byte_value_as_a_string() {
    if !protoc_available() {
        return;
    }
    let mut m = Vec::new();
    let all: Vec<u8> = (0..=255).collect();
    push_len(&mut m, 1, &all);
    for b in 0..=255u8 {
        push_len(&mut m, 2, &[b]);
        push_len(&mut m, 3, &[b, b]);
    }
    assert!(check(&m));
}

#[test]
fn truncations_fail_where_protoc_fails() {
    if !protoc_available() {
        return;
    }
    let mut g = Gen { rng: Rng::new(7) };
    let (mut failed, mut ok) = (0, 0);
    for _ in 0..80 {
        let n = 2 + g.below(5);
        let m = g.message(0, n);
        let cut = g.below(m.len() as u64) as usize;
        if check(&m[..cut]) {
            ok += 1;
        } else {
            failed += 1;
        }
    }
    // Both outcomes occurred, so both branches of `check` were compared.
    assert!(failed > 0 && ok > 0, "failed {failed}, ok {ok}");
}

#[test]
fn mutations_agree_with_protoc() {
    if !protoc_available() {
        return;
    }
    // Random byte changes: malformed tags, overlong varints and lengths, wrong group ends...
    // pbwire must fail exactly where protoc fails and print the same text where it does not.
    let mut g = Gen { rng: Rng::new(0xbad) };
    let (mut failed, mut ok) = (0, 0);
    for _ in 0..600 {
        let n = 1 + g.below(5);
        let mut m = g.message(0, n);
        for _ in 0..1 + g.below(3) {
            let i = g.below(m.len() as u64) as usize;
            m[i] = match g.below(4) {
                0 => m[i] ^ (1 << g.below(8)),
                1 => m[i] | 0x80,
                2 => 0xff,
                _ => g.rng.next_u64() as u8,
            };
        }
        if check(&m) {
            ok += 1;
        } else {
            failed += 1;
        }
    }
    assert!(failed > 0 && ok > 0, "failed {failed}, ok {ok}");
    eprintln!("600 mutated messages: {ok} parsed identically, {failed} rejected by both");
}

#[test]
fn malformed_inputs_protoc_rejects() {
    if !protoc_available() {
        return;
    }
    let cases: [&[u8]; 12] = [
        b"\x00",                                             // field number 0
        b"\x08\x01\x00",                                     // field number 0 after a field
        b"\x02\x00",                                         // field 0, length-delimited
        b"\x0e",                                             // wire type 6
        b"\x0f",                                             // wire type 7
        b"\x08",                                             // truncated varint
        b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", // 11-byte varint
        b"\x0a\x05ab",                                       // length past the end
        b"\x0b\x08\x01",                                     // unterminated group
        b"\x0c",                                             // end group at top level
        b"\x0b\x14",                                         // end group of another field
        b"\x15\x01\x02",                                     // truncated fixed32
    ];
    for c in cases {
        assert!(!check(c), "protoc accepted {}", hex(c));
    }
}
