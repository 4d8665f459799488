//! Prints the fields of a protobuf message without its schema, nesting into length-delimited
//! payloads that parse as messages (the way `protoc --decode_raw` guesses).
//!
//! `cargo run --example decode_raw [FILE]`: with no file, decodes the encoding guide's sample
//! message `{order_id: 150, buyer: {user_id: 7, user_name: "a"}, sku_ids: [5, 6], paid: true}`.

use pbwire::fields::{fields, validate, Value};

const SAMPLE: [u8; 16] =
    [0x08, 0x96, 0x01, 0x12, 0x05, 0x08, 0x07, 0x12, 0x01, 0x61, 0x1a, 0x02, 0x05, 0x06, 0x20, 0x01];

fn print(message: &[u8], base: usize, depth: usize) -> Result<(), pbwire::Error> {
    let pad = "  ".repeat(depth);
    for field in fields(message) {
        let field = field.map_err(|e| e.shifted(base))?;
        let at = base + field.offset;
        match field.value {
            Value::Varint(v) => println!("{pad}{}: {v}    # varint @{at}", field.number),
            Value::I64(v) => println!("{pad}{}: 0x{v:016x}    # fixed64 @{at}", field.number),
            Value::I32(v) => println!("{pad}{}: 0x{v:08x}    # fixed32 @{at}", field.number),
            Value::Len(payload) if !payload.is_empty() && validate(payload).is_ok() => {
                println!("{pad}{} {{    # {} bytes @{at}", field.number, payload.len());
                print(payload, base + field.value_offset, depth + 1)?;
                println!("{pad}}}");
            }
            Value::Len(payload) => {
                println!("{pad}{}: {:?}    # bytes @{at}", field.number, payload.escape_ascii().to_string())
            }
            Value::Group(content) => {
                println!("{pad}{} {{    # group @{at}", field.number);
                print(content, base + field.value_offset, depth + 1)?;
                println!("{pad}}}");
            }
        }
    }
    Ok(())
}

fn main() {
    let bytes = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|e| {
            eprintln!("cannot read {}: {e}", path.to_string_lossy());
            std::process::exit(2)
        }),
        None => SAMPLE.to_vec(),
    };
    if let Err(e) = print(&bytes, 0, 0) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
