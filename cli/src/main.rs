//! `pbwire`: inspect protobuf messages without a schema, report CPU features, benchmark the
//! kernels. Run `pbwire help`.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use pbwire_cli::inspect::{self, Failure, Options, MAX_MAX_DEPTH};
use pbwire_cli::{bench, cpu, input, SAMPLE};

const USAGE: &str = "\
usage: pbwire                          a short tour: inspect a sample message, quick bench
       pbwire inspect [OPTIONS] [FILE|-]
       pbwire cpu                      CPU features and the backend of each kernel
       pbwire bench [--time-ms N] [--values N] [--payloads N]
       pbwire help

inspect decodes a message without its schema and prints what `protoc --decode_raw` prints
(standard input if FILE is - or absent). Options:
  --offsets      a `# @OFFSET len LENGTH` comment after every field (byte offsets in the input)
  --json         a JSON tree: number, wire_type, offset, length, value / hex / fields
  --delimited    the input is a stream of varint-length-prefixed messages
  --hex          hex dumps of the length-delimited payloads printed as strings
  --max-depth N  budget for guessing nested messages (default 10, as protoc; 0..=255)
  --strict       pbwire's own wire rules instead of protoc 3.21's leniencies (tags over 32
                 bits, 10th varint byte above 1 are errors; 10-byte length prefixes are fine)

exit status: 0 ok, 1 malformed input (the error and its byte offset on stderr, the fields
decoded before it on stdout), 2 usage or I/O error";

enum Cmd {
    Tour,
    Help,
    Inspect(Options, Option<PathBuf>),
    Cpu,
    Bench(bench::Config),
}

fn parse_num(flag: &str, v: Option<OsString>) -> Result<u64, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.to_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{flag}: not a number: {}", v.to_string_lossy()))
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cmd, String> {
    let mut args = args.into_iter();
    let Some(cmd) = args.next() else { return Ok(Cmd::Tour) };
    let mut args = args.flat_map(|a| {
        // `--flag=value` is `--flag value`.
        match a.to_str().and_then(|s| s.strip_prefix("--")).and_then(|s| s.split_once('=')) {
            Some((k, v)) => vec![OsString::from(format!("--{k}")), OsString::from(v)],
            None => vec![a],
        }
    });
    match cmd.to_str() {
        Some("help" | "--help" | "-h") => Ok(Cmd::Help),
        Some("cpu") => match args.next() {
            None => Ok(Cmd::Cpu),
            Some(a) => Err(format!("cpu: unexpected argument {}", a.to_string_lossy())),
        },
        Some("bench") => {
            let mut cfg = bench::Config::default();
            while let Some(a) = args.next() {
                match a.to_str() {
                    Some("--time-ms") => {
                        cfg.time = Duration::from_millis(parse_num("--time-ms", args.next())?)
                    }
                    Some("--values") => {
                        cfg.values = parse_num("--values", args.next())?.clamp(1, 1 << 28) as usize;
                    }
                    Some("--payloads") => {
                        cfg.payloads = Some(parse_num("--payloads", args.next())?.clamp(1, 1 << 20) as usize);
                    }
                    _ => return Err(format!("bench: unexpected argument {}", a.to_string_lossy())),
                }
            }
            Ok(Cmd::Bench(cfg))
        }
        Some("inspect") => {
            let mut opts = Options::default();
            let mut path = None;
            while let Some(a) = args.next() {
                match a.to_str() {
                    Some("--offsets") => opts.offsets = true,
                    Some("--json") => opts.json = true,
                    Some("--delimited") => opts.delimited = true,
                    Some("--hex") => opts.hex = true,
                    Some("--strict") => opts.strict = true,
                    Some("--max-depth") => {
                        let n = parse_num("--max-depth", args.next())?;
                        if n > u64::from(MAX_MAX_DEPTH) {
                            return Err(format!("--max-depth: at most {MAX_MAX_DEPTH}"));
                        }
                        opts.max_depth = n as u32;
                    }
                    Some("--") => {
                        path = args.next().map(PathBuf::from);
                        break;
                    }
                    Some(s) if s.starts_with("--") => return Err(format!("inspect: unknown option {s}")),
                    _ if path.is_none() => path = Some(PathBuf::from(a)),
                    _ => return Err(format!("inspect: unexpected argument {}", a.to_string_lossy())),
                }
            }
            if let Some(a) = args.next() {
                return Err(format!("inspect: unexpected argument {}", a.to_string_lossy()));
            }
            Ok(Cmd::Inspect(opts, path))
        }
        _ => Err(format!("unknown command {}", cmd.to_string_lossy())),
    }
}

/// Output errors: a closed pipe (`pbwire inspect big.pb | head`) ends quietly.
fn io_exit(e: &io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::SUCCESS;
    }
    eprintln!("pbwire: {e}");
    ExitCode::from(2)
}

fn run_inspect(opts: &Options, path: Option<PathBuf>) -> ExitCode {
    let data = match input::open(path.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            let name = path.as_ref().map_or("standard input".into(), |p| p.display().to_string());
            eprintln!("pbwire: cannot read {name}: {e}");
            return ExitCode::from(2);
        }
    };
    let stdout = io::stdout().lock();
    match inspect::inspect(&data, opts, stdout) {
        Ok(_) => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => io_exit(&e),
        Err(Failure::Malformed(m)) => {
            eprintln!("pbwire: {m}");
            ExitCode::from(1)
        }
    }
}

fn run_bench(cfg: &bench::Config) -> ExitCode {
    let rows = bench::run(cfg, io::stderr().lock());
    match bench::table(&rows, io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => io_exit(&e),
    }
}

fn tour() -> ExitCode {
    let hex: Vec<String> = SAMPLE.iter().map(|b| format!("{b:02x}")).collect();
    println!("pbwire tour. A TradeOrder {{ order_id: 150, buyer: {{ user_id: 7, user_name: \"a\" }},");
    println!("sku_ids: [5, 6], paid: true }}, 16 bytes on the wire:\n\n  {}\n", hex.join(" "));
    println!("$ pbwire inspect order.pb            # what protoc --decode_raw prints");
    let _ = io::stdout().flush();
    if let Err(Failure::Io(e)) = inspect::inspect(&SAMPLE, &Options::default(), io::stdout().lock()) {
        return io_exit(&e);
    }
    println!("\n$ pbwire inspect --offsets order.pb  # with byte offset and length of each field");
    let _ = io::stdout().flush();
    let opts = Options { offsets: true, ..Options::default() };
    if let Err(Failure::Io(e)) = inspect::inspect(&SAMPLE, &opts, io::stdout().lock()) {
        return io_exit(&e);
    }
    println!("\n$ pbwire cpu");
    if let Err(e) = cpu::report(io::stdout().lock()) {
        return io_exit(&e);
    }
    println!("\n$ pbwire bench --time-ms 12           # quick; `pbwire bench` measures longer");
    let _ = io::stdout().flush();
    let code = run_bench(&bench::Config { values: 20_000, time: Duration::from_millis(12), payloads: None });
    println!("\nMore: pbwire help");
    code
}

fn main() -> ExitCode {
    match parse(std::env::args_os().skip(1)) {
        Ok(Cmd::Tour) => tour(),
        Ok(Cmd::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Cmd::Cpu) => match cpu::report(io::stdout().lock()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => io_exit(&e),
        },
        Ok(Cmd::Bench(cfg)) => run_bench(&cfg),
        Ok(Cmd::Inspect(opts, path)) => run_inspect(&opts, path),
        Err(msg) => {
            eprintln!("pbwire: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Cmd, String> {
        parse(a.iter().map(OsString::from))
    }

    #[test]
    fn inspect_options() {
        let Ok(Cmd::Inspect(o, p)) = args(&["inspect", "--json", "--max-depth=3", "--offsets", "x.pb"])
        else {
            panic!("not an inspect command")
        };
        assert!(o.json && o.offsets && !o.hex && !o.delimited && !o.strict && o.max_depth == 3);
        assert_eq!(p, Some(PathBuf::from("x.pb")));
        let Ok(Cmd::Inspect(_, p)) = args(&["inspect", "--", "--odd-name"]) else { panic!() };
        assert_eq!(p, Some(PathBuf::from("--odd-name")));
        let Ok(Cmd::Inspect(o, None)) = args(&["inspect", "--hex", "--delimited", "--strict"]) else {
            panic!()
        };
        assert!(o.hex && o.delimited && o.strict && o.max_depth == inspect::DEFAULT_MAX_DEPTH);
    }

    #[test]
    fn errors() {
        assert_eq!(args(&["inspect", "--max-depth", "256"]).err().unwrap(), "--max-depth: at most 255");
        assert_eq!(args(&["inspect", "--max-depth"]).err().unwrap(), "--max-depth needs a value");
        assert_eq!(args(&["inspect", "--color"]).err().unwrap(), "inspect: unknown option --color");
        assert_eq!(args(&["cpu", "x"]).err().unwrap(), "cpu: unexpected argument x");
        assert_eq!(args(&["nope"]).err().unwrap(), "unknown command nope");
        assert!(matches!(args(&[]), Ok(Cmd::Tour)));
        let Ok(Cmd::Bench(c)) = args(&["bench", "--time-ms=5", "--values", "0"]) else { panic!() };
        assert_eq!((c.time, c.values, c.payloads), (Duration::from_millis(5), 1, None));
        let Ok(Cmd::Bench(c)) = args(&["bench", "--payloads", "0"]) else { panic!() };
        assert_eq!((c.payloads, c.payload_count()), (Some(1), 1));
        let Ok(Cmd::Bench(c)) = args(&["bench", "--values", "100000"]) else { panic!() };
        assert_eq!(c.payload_count(), 26);
        let Ok(Cmd::Bench(c)) = args(&["bench", "--values", "1"]) else { panic!() };
        assert_eq!(c.payload_count(), bench::MAX_AUTO_PAYLOADS);
    }
}
