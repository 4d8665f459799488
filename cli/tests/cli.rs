//! The `pbwire` binary end to end: output formats, files and standard input, exit codes and
//! error messages.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const SAMPLE: [u8; 16] = pbwire_cli::SAMPLE;

fn pbwire(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pbwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pbwire-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

const SAMPLE_TEXT: &str = "1: 150\n2 {\n  1: 7\n  2: \"a\"\n}\n3: \"\\005\\006\"\n4: 1\n";

#[test]
fn inspect_stdin_and_file_agree() {
    let o = pbwire(&["inspect"], &SAMPLE);
    assert_eq!((o.status.code(), stdout(&o).as_str(), stderr(&o).as_str()), (Some(0), SAMPLE_TEXT, ""));
    let o = pbwire(&["inspect", "-"], &SAMPLE);
    assert_eq!(stdout(&o), SAMPLE_TEXT);
    // A regular file is memory-mapped; an empty one is read.
    let path = temp_file("sample.pb", &SAMPLE);
    let o = pbwire(&["inspect", path.to_str().unwrap()], b"");
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), SAMPLE_TEXT));
    let empty = temp_file("empty.pb", b"");
    let o = pbwire(&["inspect", empty.to_str().unwrap()], b"");
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), ""));
}

#[test]
fn offsets_comment_every_field() {
    let o = pbwire(&["inspect", "--offsets"], &SAMPLE);
    assert_eq!(
        stdout(&o),
        "1: 150  # @0 len 3\n2 {  # @3 len 7\n  1: 7  # @5 len 2\n  2: \"a\"  # @7 len 3\n}\n\
         3: \"\\005\\006\"  # @10 len 4\n4: 1  # @14 len 2\n"
    );
}

#[test]
fn hex_dumps_strings_only() {
    let o = pbwire(&["inspect", "--hex"], &SAMPLE);
    let s = stdout(&o);
    assert_eq!(s.lines().filter(|l| l.trim_start().starts_with("# ")).count(), 2, "{s}");
    assert!(s.contains("  # 0000000c  05 06 "), "{s}");
}

#[test]
fn json_tree() {
    let o = pbwire(&["inspect", "--json"], &SAMPLE);
    assert_eq!(o.status.code(), Some(0));
    let s = stdout(&o);
    assert!(s.starts_with(r#"{"offset":0,"length":16,"fields":[{"number":1,"wire_type":"varint","offset":0,"length":3,"value":150},"#));
    assert!(s.contains(r#""number":2,"wire_type":"len","offset":3,"length":7,"payload_offset":5,"payload_length":5,"fields":[{"number":1,"#));
    assert!(s.contains(r#""hex":"0506","string":"\u0005\u0006"}"#));
    assert!(s.ends_with("}]}\n"));
    // Brackets and braces balance (no string in this output contains them).
    assert_eq!(s.matches('{').count(), s.matches('}').count());
    assert_eq!(s.matches('[').count(), s.matches(']').count());
}

#[test]
fn delimited_stream_with_headers() {
    let mut stream = vec![16];
    stream.extend_from_slice(&SAMPLE);
    stream.extend_from_slice(&[0, 2, 0x08, 0x2a]);
    let o = pbwire(&["inspect", "--delimited"], &stream);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        format!("# message 0 @1 len 16\n{SAMPLE_TEXT}# message 1 @18 len 0\n# message 2 @19 len 2\n1: 42\n")
    );
    let o = pbwire(&["inspect", "--delimited", "--json"], &stream);
    let s = stdout(&o);
    assert!(
        s.starts_with(r#"{"messages":[{"index":0,"prefix_offset":0,"offset":1,"length":16,"fields":[{"#),
        "{s}"
    );
    assert!(s.ends_with(
        r#"{"index":1,"prefix_offset":17,"offset":18,"length":0,"fields":[]},{"index":2,"prefix_offset":18,"offset":19,"length":2,"fields":[{"number":1,"wire_type":"varint","offset":19,"length":2,"value":42}]}]}
"#
    ));
}

#[test]
fn malformed_input_exit_1_with_offset_after_partial_output() {
    let o = pbwire(&["inspect"], &SAMPLE[..13]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "1: 150\n2 {\n  1: 7\n  2: \"a\"\n}\n");
    assert_eq!(stderr(&o), "pbwire: malformed input: input ends inside a value at byte 11\n");
    // Invalid wire type, reported at its tag.
    let o = pbwire(&["inspect"], &[0x08, 0x01, 0x0f]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(1), "1: 1\n"));
    assert_eq!(stderr(&o), "pbwire: malformed input: invalid wire type (6 or 7) at byte 2\n");
    // JSON output stays valid and carries the error.
    let o = pbwire(&["inspect", "--json"], &[0x08, 0x01, 0x0c]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).ends_with(
        r#"],"error":{"kind":"GroupMismatch","offset":2,"message":"end-group tag does not match an open group at byte 2"}}
"#
    ));
    // A broken length prefix in a stream.
    let o = pbwire(&["inspect", "--delimited"], &[2, 0x08, 0x01, 0x05, 0x08]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "pbwire: malformed input: input ends inside a value at byte 3\n");
}

#[test]
fn strict_rejects_what_protoc_tolerates() {
    // A 5-byte tag whose value does not fit 32 bits: protoc keeps the low 32 bits.
    let input = [0xf8, 0xff, 0xff, 0xff, 0x1f, 0x01];
    let o = pbwire(&["inspect"], &input);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), "536870911: 1\n"));
    let o = pbwire(&["inspect", "--strict"], &input);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "pbwire: malformed input: field number outside 1..=536870911 at byte 0\n");
}

#[test]
fn max_depth_limits_guessing() {
    let o = pbwire(&["inspect", "--max-depth", "0"], &SAMPLE);
    assert_eq!(stdout(&o).lines().nth(1), Some(r#"2: "\010\007\022\001a""#));
    let o = pbwire(&["inspect", "--max-depth=1"], &[0x0a, 0x04, 0x0a, 0x02, 0x08, 0x01]);
    assert_eq!(stdout(&o), "1 {\n  1: \"\\010\\001\"\n}\n");
}

#[test]
fn usage_and_io_errors_exit_2() {
    for args in [
        &["inspect", "--nope"][..],
        &["frobnicate"],
        &["inspect", "--max-depth", "x"],
        &["inspect", "a", "b"],
    ] {
        let o = pbwire(args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("usage: pbwire"), "{args:?}");
    }
    let o = pbwire(&["inspect", "/nonexistent/x.pb"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("pbwire: cannot read /nonexistent/x.pb: "), "{}", stderr(&o));
    let o = pbwire(&["help"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("--delimited"));
}

#[test]
fn cpu_reports_backends() {
    let o = pbwire(&["cpu"], b"");
    assert_eq!(o.status.code(), Some(0));
    let s = stdout(&o);
    assert!(s.contains("backends available: scalar") && s.contains("count_varints"), "{s}");
    let detected = pbwire::backend::detected().name();
    assert!(s.contains(&format!("backend detected:   {detected}")), "{s}");
    let slow_pext = pbwire::backend::Kernel::detected().avoids_slow_pext();
    assert_eq!(s.contains("without PEXT"), slow_pext, "{s}");
    #[cfg(target_arch = "x86_64")]
    assert!(s.contains("sse2         yes") && s.contains("avx512vbmi2"), "{s}");
}

#[test]
fn bench_table_and_progress() {
    let o = pbwire(&["bench", "--time-ms", "1", "--values", "1000"], b"");
    assert_eq!(o.status.code(), Some(0));
    let s = stdout(&o);
    assert!(s.starts_with("kernel "), "{s}");
    // 4 packed kernels and `validate` per backend and `fields` once, on 4 distributions; header
    // and note.
    let backends = pbwire::backend::available().count();
    let rows = 4 * (5 * backends + 1);
    assert_eq!(s.lines().count(), rows + 2, "{s}");
    for b in pbwire::backend::available() {
        assert!(s.contains(&format!("decode_sint64  realistic  {:<8}", b.name())), "{s}");
    }
    for b in pbwire::backend::available() {
        assert!(s.contains(&format!("validate       u64-mixed  {:<8}", b.name())), "{s}");
    }
    assert!(s.contains("fields         u64-mixed  scalar"), "{s}");
    assert!(stderr(&o).contains(&format!("bench {rows:>3}/{rows}")), "{}", stderr(&o));
}

#[test]
fn tour_without_arguments() {
    let o = pbwire(&[], b"");
    assert_eq!(o.status.code(), Some(0));
    let s = stdout(&o);
    assert!(s.contains("08 96 01 12 05 08 07 12 01 61 1a 02 05 06 20 01"), "{s}");
    assert!(s.contains(SAMPLE_TEXT), "{s}");
    assert!(s.contains("1: 150  # @0 len 3"), "{s}");
    assert!(s.contains("count_varints  realistic"), "{s}");
}
