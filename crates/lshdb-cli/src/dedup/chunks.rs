//! Reading `dedup`'s inputs chunk by chunk: every input in turn, checked to
//! share one layout (CSV header, Parquet schema), stopping on Ctrl-C.

use crate::interrupt::Interrupt;
use crate::records::{Chunk, Fields, Format, Layout, Source};
use crate::{fail, CliError};

/// The chunks of every input in turn.
pub(super) struct Chunks<'a> {
    inputs: &'a [String],
    format: Format,
    fields: &'a Fields,
    /// The run's Ctrl-C state.
    interrupt: &'a Interrupt,
    /// The input being read, and its index.
    source: Option<(usize, Source)>,
    /// The next input to open.
    next_input: usize,
    /// The first input's layout, which the output is written with.
    layout: Option<Layout>,
}

impl<'a> Chunks<'a> {
    pub fn new(
        inputs: &'a [String],
        format: Format,
        fields: &'a Fields,
        interrupt: &'a Interrupt,
    ) -> Self {
        Self {
            inputs,
            format,
            fields,
            interrupt,
            source: None,
            next_input: 0,
            layout: None,
        }
    }

    /// The next chunk and the index of its input; `None` after the last
    /// input. Ctrl-C is an error.
    pub fn next_chunk(&mut self) -> Result<Option<(usize, Chunk)>, CliError> {
        loop {
            if self.interrupt.interrupted() {
                return fail("interrupted");
            }
            let Some((i, source)) = &mut self.source else {
                if self.next_input == self.inputs.len() {
                    return Ok(None);
                }
                self.open(self.next_input)?;
                self.next_input += 1;
                continue;
            };
            let path = &self.inputs[*i];
            let chunk = source.next_chunk().map_err(|e| match e {
                CliError::Message(m)
                    if !["reading", "cannot", "none of the first"]
                        .iter()
                        .any(|p| m.starts_with(p)) =>
                {
                    CliError::Message(format!("reading input {path} failed: {m}"))
                }
                other => other,
            })?;
            match chunk {
                Some(chunk) => return Ok(Some((*i, chunk))),
                None => self.source = None,
            }
        }
    }

    /// Opens input `i`, refusing another layout than the first input's.
    fn open(&mut self, i: usize) -> Result<(), CliError> {
        let path = &self.inputs[i];
        let source = Source::open(path, self.format, self.fields, self.interrupt)?;
        let layout = source.layout();
        match &self.layout {
            Some(first) if !first.same_shape(&layout) => {
                return fail(format!(
                "{path} has another {} than {}: the kept records of both cannot go into one output",
                if self.format == Format::Csv {
                    "header"
                } else {
                    "schema"
                },
                self.inputs[0]
            ))
            }
            Some(_) => {}
            None => self.layout = Some(layout),
        }
        self.source = Some((i, source));
        Ok(())
    }

    /// The first input's layout, once it is open.
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }
}

/// What the reader thread has for `body`.
pub(super) enum Ahead<T> {
    /// A chunk, or the error that ends the input.
    Read(Result<T, CliError>),
    /// Nothing is ready yet (the input waits for its writer): `body` can
    /// finish what it holds before it waits. Comes at most once between
    /// two chunks.
    Idle,
}

/// Runs `body` with the chunks of every input, read and parsed on a thread
/// of their own, up to two chunks ahead of `body`, and passed on that
/// thread through `map` (with the index of their input and the layout the
/// output is written with, the first input's); [`Ahead::Idle`] says when
/// the next chunk is not ready. Returns what `body` returns and that
/// layout (`None` when no input was opened).
pub(super) fn read_ahead<T: Send, R>(
    inputs: &[String],
    format: Format,
    fields: &Fields,
    interrupt: &Interrupt,
    mut map: impl FnMut(usize, Layout, Chunk) -> Result<T, CliError> + Send,
    body: impl FnOnce(&mut dyn Iterator<Item = Ahead<T>>) -> R,
) -> Result<(R, Option<Layout>), CliError> {
    let mut chunks = Chunks::new(inputs, format, fields, interrupt);
    std::thread::scope(|scope| {
        let (send, receive) = std::sync::mpsc::sync_channel(2);
        let reader = scope.spawn(move || {
            loop {
                let next = chunks.next_chunk().and_then(|next| match next {
                    Some((i, chunk)) => {
                        let layout = chunks
                            .layout()
                            .cloned()
                            .ok_or_else(|| CliError::Message("internal error: no layout".into()))?;
                        map(i, layout, chunk).map(Some)
                    }
                    None => Ok(None),
                });
                let end = !matches!(next, Ok(Some(_)));
                // A closed channel: `body` has stopped reading.
                if send.send(next.transpose()).is_err() || end {
                    break;
                }
            }
            chunks.layout
        });
        // No idle mark before the first chunk, nor twice in a row.
        let mut idle = true;
        let mut ahead = std::iter::from_fn(|| {
            use std::sync::mpsc::TryRecvError;
            let read = match receive.try_recv() {
                Ok(read) => read,
                Err(TryRecvError::Empty) if !idle => {
                    idle = true;
                    return Some(Ahead::Idle);
                }
                Err(TryRecvError::Empty) => receive.recv().ok()?,
                Err(TryRecvError::Disconnected) => return None,
            };
            idle = false;
            read.map(Ahead::Read)
        });
        let result = body(&mut ahead);
        drop(receive);
        let layout = reader
            .join()
            .map_err(|_| CliError::Message("internal error: the reader panicked".into()))?;
        Ok((result, layout))
    })
}

/// Calls `each` with every chunk of every input (with its input's index
/// and the layout the output is written with) of the run; returns that
/// layout.
pub(super) fn for_each_chunk(
    run: &super::Run<'_>,
    mut each: impl FnMut(usize, &Layout, Chunk) -> Result<(), CliError>,
) -> Result<Option<Layout>, CliError> {
    let read = |i, layout, chunk| Ok((i, layout, chunk));
    let inputs = &run.args.inputs;
    let (done, layout) = read_ahead(
        inputs,
        run.format,
        run.fields,
        run.interrupt,
        read,
        |chunks| {
            for ahead in chunks {
                let Ahead::Read(read) = ahead else {
                    continue;
                };
                let (i, layout, chunk) = read?;
                each(i, &layout, chunk)?;
            }
            Ok(())
        },
    )?;
    done.map(|()| layout)
}

/// Loads into the run's database, on a thread of its own, the documents
/// `each` gives for every chunk it reads on this one, two chunks queued at
/// most (the chunks are bounded in bytes, so memory is too). Returns what
/// the load refused; an error when the load, the reading or Ctrl-C ended
/// it.
pub(super) fn read_and_load<T: lshdb::AsDocument + Send>(
    run: &super::Run<'_>,
    options: &lshdb::BulkOptions,
    mut each: impl FnMut(usize, Chunk, &mut Vec<(String, T)>) -> Result<(), CliError>,
) -> Result<Vec<(String, lshdb::Error)>, CliError> {
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Vec<(String, T)>>(2);
    let report = std::thread::scope(|scope| {
        let loader = scope.spawn(|| {
            let docs = receiver.into_iter().flatten();
            run.db
                .insert_bulk(docs, options, |_| !run.interrupt.interrupted())
        });
        let read = for_each_chunk(run, |input, _, chunk| {
            let mut docs = Vec::new();
            each(input, chunk, &mut docs)?;
            // A closed channel: the loader stopped, and its error is reported.
            let _ = sender.send(docs);
            Ok(())
        });
        drop(sender);
        let loaded = loader
            .join()
            .map_err(|_| CliError::Message("internal error: the loader panicked".into()))?;
        let report = loaded?;
        read?;
        Ok::<_, CliError>(report)
    })?;
    if run.interrupt.interrupted() {
        return fail("interrupted");
    }
    Ok(report.rejected)
}
