//! Input: the keyed record the loading commands take (read by `records`),
//! opening and decompressing inputs, standard input that Ctrl-C can
//! interrupt, and files read as one document's text.

use crate::interrupt::Interrupt;
use lshdb::{DocumentBuf, MAX_DOCUMENT_BYTES};
use std::io::{BufRead, Read};
#[cfg(test)]
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One good input record.
pub struct Record {
    pub line: u64,
    pub key: String,
    pub doc: DocumentBuf,
    /// Its timestamp (`--time-field`), when read.
    pub at: Option<u64>,
    /// Its priority (`--priority-field`), when read.
    pub priority: Option<i64>,
}

/// Why a line was not a record.
pub enum InputError {
    /// A bad record: skipped (or, with --strict, fatal).
    Bad { line: u64, reason: String },
    /// Reading the input failed: always fatal.
    Io(std::io::Error),
}

/// Opens a path for reading, `-` meaning standard input; gzip and zstd
/// input (found by its magic bytes) is decompressed.
pub fn open_input(path: &str) -> std::io::Result<Box<dyn BufRead + Send>> {
    if path == "-" {
        decoded(std::io::BufReader::new(std::io::stdin()))
    } else {
        decoded(std::io::BufReader::new(std::fs::File::open(path)?))
    }
}

/// Whether `path` names something other than a regular file (a named
/// pipe, a device, a socket), whose reads may wait for a writer.
pub fn may_wait(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Standard input, or a named pipe or device, read on a thread of its own,
/// in blocks, so that the reader notices Ctrl-C also while no input comes
/// (a pipe nobody writes to, or whose writer stalls after some records):
/// reading then fails with "interrupted". The thread, blocked in `read`,
/// is left behind; the process ends without waiting for it.
pub struct InterruptibleInput {
    blocks: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    block: Vec<u8>,
    at: usize,
    ended: bool,
    /// The run's Ctrl-C state.
    interrupt: Interrupt,
    /// Bytes read from standard input and not yet consumed.
    unread: Arc<AtomicUsize>,
}

impl InterruptibleInput {
    /// Standard input.
    pub fn new(interrupt: Interrupt) -> Self {
        Self::reading(interrupt, || std::io::stdin().lock())
    }

    /// `file` (a named pipe or device: anything that may wait for a
    /// writer).
    pub fn file(file: std::fs::File, interrupt: Interrupt) -> Self {
        Self::reading(interrupt, move || file)
    }

    /// What `open` opens, read on a thread of its own.
    fn reading<R: Read>(interrupt: Interrupt, open: impl FnOnce() -> R + Send + 'static) -> Self {
        let (sender, blocks) = std::sync::mpsc::sync_channel(16);
        let unread = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&unread);
        std::thread::spawn(move || {
            let mut input = open();
            loop {
                let mut block = vec![0u8; 1 << 16];
                match input.read(&mut block) {
                    Ok(n) => {
                        block.truncate(n);
                        counted.fetch_add(n, Ordering::AcqRel);
                        if sender.send(Ok(block)).is_err() || n == 0 {
                            break;
                        }
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        let _ = sender.send(Err(err));
                        break;
                    }
                }
            }
        });
        Self {
            blocks,
            block: Vec::new(),
            at: 0,
            ended: false,
            interrupt,
            unread,
        }
    }

    /// What tells whether this input has bytes that reading would return
    /// without waiting.
    pub fn backlog(&self) -> Backlog {
        Backlog::counting(Arc::clone(&self.unread))
    }
}

impl BufRead for InterruptibleInput {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.block.len() {
            if self.ended {
                return Ok(&[]);
            }
            if self.interrupt.interrupted() {
                return Err(std::io::Error::other("interrupted"));
            }
            match self
                .blocks
                .recv_timeout(std::time::Duration::from_millis(50))
            {
                Ok(Ok(block)) => {
                    self.ended = block.is_empty();
                    self.block = block;
                    self.at = 0;
                }
                Ok(Err(err)) => return Err(err),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => self.ended = true,
            }
        }
        Ok(&self.block[self.at..])
    }

    fn consume(&mut self, amt: usize) {
        let amt = amt.min(self.block.len() - self.at);
        self.at += amt;
        self.unread.fetch_sub(amt, Ordering::AcqRel);
    }
}

impl Read for InterruptibleInput {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let block = self.fill_buf()?;
        let n = out.len().min(block.len());
        out[..n].copy_from_slice(&block[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// Whether an input has more bytes ready, so that a reader of records in
/// chunks ends a chunk of a pipe where reading would wait for its writer:
/// records are then handled as soon as they come, and a pipe that keeps up
/// still gives whole chunks. Always true for a file (the default).
#[derive(Clone, Debug, Default)]
pub struct Backlog(Option<Arc<AtomicUsize>>);

impl Backlog {
    /// Ready while `unread`, the bytes an input's reader has received and
    /// not yet handed out, is above zero.
    pub fn counting(unread: Arc<AtomicUsize>) -> Self {
        Backlog(Some(unread))
    }

    /// Never ready: chunks of one record, for a pipe read without
    /// [`InterruptibleInput`].
    pub fn one_at_a_time() -> Self {
        Backlog(Some(Arc::new(AtomicUsize::new(0))))
    }

    /// Whether more bytes are ready (for a compressed pipe: more
    /// compressed bytes; decompressed bytes still buffered are not seen,
    /// and end a chunk early).
    pub fn ready(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|unread| unread.load(Ordering::Acquire) > 0)
    }
}

/// A compression format, told by the first bytes of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// The compression of a stream starting with `head`.
pub fn compression_of(head: &[u8]) -> Compression {
    if head.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Compression::Zstd
    } else {
        Compression::None
    }
}

/// `input` decompressed when it starts with a gzip or zstd header (the
/// magic bytes decide, not a file name); otherwise as it is. Reading from
/// the result reads decompressed bytes, so a caller's bound (`take`) bounds
/// the decompressed size: a small bomb cannot grow memory past it.
pub fn decoded<R: BufRead + Send + 'static>(
    mut input: R,
) -> std::io::Result<Box<dyn BufRead + Send>> {
    let head = fill_at_least(&mut input, 4)?;
    Ok(match compression_of(&head) {
        Compression::None => Box::new(input),
        Compression::Gzip => Box::new(std::io::BufReader::new(
            flate2::bufread::MultiGzDecoder::new(input),
        )),
        Compression::Zstd => Box::new(std::io::BufReader::new(
            zstd::stream::read::Decoder::with_buffer(input)?,
        )),
    })
}

/// The first `n` bytes of `input` (fewer at its end), without consuming
/// them: a `BufReader` may return fewer bytes than it can hold, so short
/// reads are retried by growing a look-ahead buffer inside the reader.
fn fill_at_least<R: BufRead>(input: &mut R, n: usize) -> std::io::Result<Vec<u8>> {
    // A BufReader's first fill_buf on a file or pipe almost always gives
    // 4 bytes at once; a pipe that delivers fewer is decided on what came.
    let buf = loop {
        match input.fill_buf() {
            Ok(buf) => break buf,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    };
    Ok(buf[..buf.len().min(n)].to_vec())
}

/// What reading a file as a document gave.
pub enum FileText {
    /// Valid UTF-8 text.
    Text(String),
    /// A NUL byte or invalid UTF-8: not a text file.
    Binary,
    /// Larger than a document may be: its size, or (for a file whose size
    /// the file system does not tell) at least this many bytes.
    TooLarge,
}

/// Reads a file as text, telling binary and over-large files apart. Reads
/// at most one byte more than a document may hold, whatever size the file
/// system claims (`/proc` files claim 0, `/dev/zero` never ends).
pub fn read_text_file(path: &std::path::Path) -> std::io::Result<FileText> {
    read_text(std::fs::File::open(path)?)
}

/// Reads text from an open stream (standard input) as [`read_text_file`]
/// does: decompressed, bounded, binary told apart.
pub fn read_text_stream<R: Read + Send + 'static>(input: R) -> std::io::Result<FileText> {
    bounded_text(decoded(std::io::BufReader::new(input))?, None)
}

/// Reads a regular file as text, as [`read_text_file`] does, but without
/// following a symbolic link or waiting on a FIFO: `None` when `path` is
/// not (or no longer) a regular file. For `scan`, which walks a folder and
/// must read only the files it found there.
pub fn read_regular_file(path: &std::path::Path) -> std::io::Result<Option<FileText>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        // A symbolic link (O_NOFOLLOW), or a FIFO or device we may not open.
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(err) => return Err(err),
    };
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    read_text(file).map(Some)
}

fn read_text(file: std::fs::File) -> std::io::Result<FileText> {
    let max = MAX_DOCUMENT_BYTES as u64;
    let len = file.metadata()?.len();
    let mut input = std::io::BufReader::new(file);
    let head = fill_at_least(&mut input, 4)?;
    if compression_of(&head) == Compression::None {
        if len > max {
            return Ok(FileText::TooLarge);
        }
        return bounded_text(Box::new(input), Some(len));
    }
    // A compressed file's size says nothing about its text's: the bound
    // applies to the decompressed bytes.
    bounded_text(decoded(input)?, None)
}

/// Reads at most one byte past the document limit from `input` and tells
/// text, binary and over-large apart. `hint`: the expected size, to
/// allocate once.
fn bounded_text(input: Box<dyn BufRead + Send>, hint: Option<u64>) -> std::io::Result<FileText> {
    let max = MAX_DOCUMENT_BYTES as u64;
    let mut bytes = Vec::with_capacity(hint.unwrap_or(0).min(max) as usize);
    input.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        // More than the file system claimed: at least this many bytes.
        return Ok(FileText::TooLarge);
    }
    if bytes.contains(&0) {
        return Ok(FileText::Binary);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(FileText::Text(text)),
        Err(_) => Ok(FileText::Binary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read_regular_file` on a path the walk saw as a file but that is
    /// now something else: no wait on a FIFO, no following a link.
    #[test]
    fn read_regular_file_refuses_fifos_and_links_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(read_regular_file(&fifo).map(|r| r.is_none()));
        });
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("opening a FIFO must not wait for a writer");
        assert!(refused.unwrap(), "a FIFO is not a regular file");

        let file = dir.path().join("file.txt");
        std::fs::write(&file, "some text").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read_regular_file(&link).unwrap().is_none());
        assert!(matches!(
            read_regular_file(&file).unwrap(),
            Some(FileText::Text(t)) if t == "some text"
        ));
        assert!(read_regular_file(Path::new("/dev/null")).unwrap().is_none());
    }
}
