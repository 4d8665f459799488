//! Writes a generated message of about N MB (default 100) to standard output, for measuring
//! `pbwire inspect` against `protoc --decode_raw`:
//!
//! `cargo run --release -p pbwire-cli --example gen_message -- 100 > /tmp/big.pb`

use std::io::Write;

fn main() {
    let mb: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let message = pbwire_cli::gen::large_message(mb * 1_000_000, 42);
    std::io::stdout().lock().write_all(&message).expect("write to standard output");
}
