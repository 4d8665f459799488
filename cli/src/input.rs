//! The input bytes: a file memory-mapped (so a 1 GiB message costs no copy and no read time up
//! front), or standard input (memory-mapped too when it is a regular file, else read once).

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;

use memmap2::Mmap;

/// Bytes to inspect, however they were obtained.
pub enum Input {
    /// A memory-mapped regular file.
    Mapped(Mmap),
    /// Bytes read from a pipe or terminal (or an empty file).
    Owned(Vec<u8>),
}

impl Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Owned(v) => v,
        }
    }
}

/// Opens `path`, or standard input for `None` or `-`.
pub fn open(path: Option<&Path>) -> io::Result<Input> {
    match path {
        Some(p) if p.as_os_str() != "-" => from_file(File::open(p)?),
        _ => stdin(),
    }
}

fn from_file(file: File) -> io::Result<Input> {
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > 0 {
        // SAFETY: the map is read-only and private to this process; another process truncating
        // or rewriting the file while we read it is outside what this tool can guard against
        // (the same holds for every mmap-based reader).
        let map = unsafe { Mmap::map(&file)? };
        // Read front to back: let the kernel read ahead (a hint; failure changes nothing).
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        return Ok(Input::Mapped(map));
    }
    let mut v = Vec::new();
    (&file).read_to_end(&mut v)?;
    Ok(Input::Owned(v))
}

#[cfg(unix)]
fn stdin() -> io::Result<Input> {
    use std::os::fd::AsFd;
    let fd = io::stdin().as_fd().try_clone_to_owned()?;
    from_file(File::from(fd))
}

#[cfg(not(unix))]
fn stdin() -> io::Result<Input> {
    let mut v = Vec::new();
    io::stdin().lock().read_to_end(&mut v)?;
    Ok(Input::Owned(v))
}
