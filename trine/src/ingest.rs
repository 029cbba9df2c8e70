//! `trine ingest FILE.jsonl`: one memory a line, batched; the next batch is
//! embedded while this one is stored — into the store, or with `--endpoint`
//! through a running gateway's `Memory.Upsert` (a deployed mesh). Progress
//! (read, embedded, stored, rate, ETA, then the index build) as bars on a
//! terminal, as a line every ten seconds elsewhere. Bad lines — not JSON, not a memory, not UTF-8, longer
//! than [`MAX_LINE_BYTES`] — are reported by number and skipped.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use trine_core::model::{Memory, MemoryInput, Point};
use trine_gateway::Writer;
use trine_store::Store;

use crate::progress::{self, Progress};
use crate::{CmdResult, Config, EXIT_PARTIAL, load_embedder, open_store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSON-lines file of memories, or `-` for standard input
    pub file: PathBuf,
    /// Memories embedded and written per batch (MiniLM sorts a batch by
    /// length, so larger batches waste less of its work on padding)
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub batch: u16,
    /// Skip building indexes after the ingest (do it later with another ingest)
    #[arg(long)]
    pub no_optimize: bool,
    /// Ingest through a running gateway (`Memory.Upsert`; it embeds and
    /// stores) instead of into the store directly, e.g. http://gateway:50051
    #[arg(long)]
    pub endpoint: Option<String>,
}

/// Where the batches go: the store through a writer (embedded here), or a
/// gateway (which embeds and stores).
#[derive(Clone)]
enum Sink {
    Store(Writer),
    Gateway(trine_mesh::GatewayClient),
}

/// A batch ready for its sink.
enum Prepared {
    Points(Vec<Point>),
    Records(Vec<trine_api::v1::Record>),
}

impl Prepared {
    fn len(&self) -> usize {
        match self {
            Prepared::Points(p) => p.len(),
            Prepared::Records(r) => r.len(),
        }
    }
}

impl Sink {
    /// Embeds a batch for the store, or puts it on the wire for a gateway.
    async fn prepare(&self, memories: Vec<Memory>) -> Result<Prepared, String> {
        match self {
            Sink::Store(writer) => writer
                .points(memories)
                .await
                .map(Prepared::Points)
                .map_err(|e| e.to_string()),
            Sink::Gateway(_) => Ok(Prepared::Records(
                memories.iter().map(trine_api::memory_to_wire).collect(),
            )),
        }
    }

    /// Stores a prepared batch: the positions refused, and why.
    async fn store(&mut self, batch: Prepared) -> Result<Vec<(usize, String)>, String> {
        match (self, batch) {
            (Sink::Store(writer), Prepared::Points(points)) => Ok(writer
                .upsert(points)
                .await
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|r| (r.index, r.reason))
                .collect()),
            (Sink::Gateway(client), Prepared::Records(records)) => Ok(client
                .upsert(trine_api::v1::UpsertRequest { records })
                .await
                .map_err(|s| {
                    format!(
                        "the gateway refused the batch ({:?}): {}",
                        s.code(),
                        s.message()
                    )
                })?
                .into_inner()
                .failed
                .into_iter()
                .map(|e| (e.index as usize, e.message))
                .collect()),
            _ => Err("a batch prepared for another sink".to_string()),
        }
    }
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let (total, reader) = open_input(&args.file).await?;
    let (sink, store) = open_sink(config, &args).await?;

    let progress = Arc::new(Progress::new(total));
    let started = Instant::now();
    // Embedding the next batch overlaps storing this one: one batch waits.
    let (tx, rx) = mpsc::channel::<Batch>(1);
    let storing = tokio::spawn(store_batches(sink.clone(), rx, progress.clone()));
    let read = read_batches(reader, &sink, usize::from(args.batch), &progress, tx).await?;
    let stored = storing
        .await
        .map_err(|e| format!("the storing task failed: {e}"))?;
    let stored = match (read.embedded, stored) {
        (Ok(()), Ok(stored)) => stored,
        (Err(why), Ok(stored)) | (Ok(()), Err((why, stored))) | (Err(_), Err((why, stored))) => {
            progress.finish();
            return Err(format!(
                "{why}; the {} memories through line {} were stored, re-run to resume (ids make it idempotent)",
                stored.memories, stored.through
            )
            .into());
        }
    };
    progress.finish();
    let failed = read.failed + stored.refused;
    finish(store.as_deref(), &args, stored.memories, failed, started).await
}

/// The input's line count (none for standard input) and its reader.
async fn open_input(
    file: &PathBuf,
) -> Result<(Option<u64>, Box<dyn AsyncBufRead + Unpin + Send>), String> {
    let stdin = file.as_os_str() == "-";
    let total = if stdin {
        None
    } else {
        Some(count_lines(file).await?)
    };
    let reader: Box<dyn AsyncBufRead + Unpin + Send> = if stdin {
        Box::new(BufReader::new(tokio::io::stdin()))
    } else {
        let opened = tokio::fs::File::open(file)
            .await
            .map_err(|e| format!("cannot open {}: {e}", file.display()))?;
        Box::new(BufReader::new(opened))
    };
    Ok((total, reader))
}

/// The sink of `--endpoint`'s gateway, or a writer on the configured store
/// (returned too, for the index build).
async fn open_sink(
    config: &Config,
    args: &Args,
) -> Result<(Sink, Option<Arc<dyn Store>>), Box<dyn std::error::Error + Send + Sync>> {
    Ok(match &args.endpoint {
        Some(endpoint) => {
            let channel = trine_mesh::channel_tls(endpoint, config.tls.client()?)?;
            let client = trine_mesh::gateway_client(channel, config.api_key.as_deref())?;
            (Sink::Gateway(client), None)
        }
        None => {
            let embedder = load_embedder(config).await?;
            let store = open_store(config).await?;
            let writer = Writer::new(store.clone(), embedder)
                .with_stemmer(config.lexical.stemmer)
                .with_common_words(config.token_language());
            writer.prepare().await?;
            (Sink::Store(writer), Some(store))
        }
    })
}

/// What reading the input did: the lines that failed, and whether every
/// batch was prepared (else why not).
struct Read {
    failed: usize,
    embedded: Result<(), String>,
}

/// Reads the input line by line, prepares each full batch (and the last)
/// for the sink and sends it to the storing task; stops at the end, at a
/// batch that cannot be prepared, or when storing has failed.
async fn read_batches(
    reader: Box<dyn AsyncBufRead + Unpin + Send>,
    sink: &Sink,
    size: usize,
    progress: &Progress,
    tx: mpsc::Sender<Batch>,
) -> Result<Read, String> {
    let mut lines = Lines::new(reader);
    let mut line_no = 0usize;
    let mut batch: Vec<Memory> = Vec::with_capacity(size);
    let mut batch_lines: Vec<usize> = Vec::with_capacity(size);
    let mut failed = 0usize;
    let mut embedded = Ok(());
    loop {
        let line = lines
            .next()
            .await
            .map_err(|e| format!("cannot read line {}: {e}", line_no + 1))?;
        let end = line.is_none();
        if let Some(line) = line {
            line_no += 1;
            if !line.as_ref().is_ok_and(|l| l.trim().is_empty()) {
                match line.and_then(|l| MemoryInput::from_line(&l)) {
                    Ok(memory) => {
                        batch.push(memory);
                        batch_lines.push(line_no);
                    }
                    Err(why) => {
                        failed += 1;
                        progress.fail(&format!("line {line_no}: {why}"));
                    }
                }
            }
        }
        if batch.len() >= size || (end && !batch.is_empty()) {
            match sink.prepare(std::mem::take(&mut batch)).await {
                Ok(points) => {
                    progress.embedded_through(line_no);
                    let lines = std::mem::take(&mut batch_lines);
                    if tx
                        .send(Batch {
                            points,
                            lines,
                            through: line_no,
                        })
                        .await
                        .is_err()
                    {
                        break; // storing failed: its error is reported below
                    }
                }
                Err(e) => {
                    embedded = Err(format!("{e} (the batch ending at line {line_no})"));
                    break;
                }
            }
        }
        if end {
            break;
        }
    }
    Ok(Read { failed, embedded })
}

/// After the writes: builds the store's indexes (unless `--no-optimize`),
/// prints what was stored and says how the run ended.
async fn finish(
    store: Option<&dyn Store>,
    args: &Args,
    stored: usize,
    failed: usize,
    started: Instant,
) -> CmdResult {
    let wrote = started.elapsed().as_secs_f64();
    eprintln!(
        "wrote {stored} memories in {wrote:.1} s ({:.0}/s)",
        stored as f64 / wrote.max(1e-9)
    );
    let secs = |started: Instant| started.elapsed().as_secs_f64();
    match (store, &args.endpoint) {
        (Some(store), _) => {
            if !args.no_optimize && stored > 0 {
                let building = Instant::now();
                let spinner = progress::spinner("building indexes");
                store.optimize().await?;
                drop(spinner);
                eprintln!("built indexes in {:.1} s", secs(building));
            }
            println!(
                "stored {stored} memories in `{}` ({}) in {:.1} s; {failed} line(s) failed",
                store.collection(),
                store.backend(),
                secs(started),
            );
        }
        (None, endpoint) => println!(
            "stored {stored} memories through the gateway at {} in {:.1} s; {failed} line(s) failed",
            endpoint.as_deref().unwrap_or_default(),
            secs(started),
        ),
    }
    Ok(if failed > 0 {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

/// How far the input is stored: memories, and the last line of the last
/// stored batch.
#[derive(Debug, Clone, Copy, Default)]
struct Stored {
    memories: usize,
    /// Memories the writer refused (reported by line).
    refused: usize,
    through: usize,
}

/// A prepared batch on its way to the sink, with each memory's input line
/// and the batch's last line.
struct Batch {
    points: Prepared,
    lines: Vec<usize>,
    through: usize,
}

/// Stores the embedded batches in order, reporting by line each memory the
/// writer refused (an id another tenant holds); on the first failure, stops
/// and says why and how far it got.
async fn store_batches(
    mut sink: Sink,
    mut batches: mpsc::Receiver<Batch>,
    progress: Arc<Progress>,
) -> Result<Stored, (String, Stored)> {
    let mut stored = Stored::default();
    while let Some(Batch {
        points,
        lines,
        through,
    }) = batches.recv().await
    {
        let size = points.len();
        let refused = match sink.store(points).await {
            Ok(refused) => refused,
            Err(e) => return Err((format!("{e} (the batch ending at line {through})"), stored)),
        };
        for (index, reason) in &refused {
            let line = lines.get(*index).copied().unwrap_or(through);
            progress.fail(&format!("line {line}: {reason}"));
        }
        stored = Stored {
            memories: stored.memories + size - refused.len(),
            refused: stored.refused + refused.len(),
            through,
        };
        progress.stored_through(through);
    }
    Ok(stored)
}

/// Longest input line, in bytes: a memory at its largest text
/// (`MAX_TEXT_BYTES`, 1 MiB) and metadata, with room for JSON's escapes.
pub const MAX_LINE_BYTES: usize = 8 << 20;

/// The input's lines as bytes, each one either its text or why it cannot be
/// read: not UTF-8, or longer than [`MAX_LINE_BYTES`] (the rest of it is
/// skipped without being held). Never holds more than one line's bytes.
struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    fn new(reader: R) -> Self {
        Self {
            reader,
            buf: Vec::new(),
        }
    }

    /// The next line (without its `\n` or `\r\n`), `None` at the end.
    async fn next(&mut self) -> std::io::Result<Option<Result<String, String>>> {
        self.buf.clear();
        let mut long = 0usize; // bytes of an over-long line, once it is one
        let mut any = false;
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            if long == 0 && self.buf.len() + take <= MAX_LINE_BYTES {
                self.buf.extend_from_slice(&chunk[..take]);
            } else {
                long = long.max(self.buf.len()) + take;
                self.buf.clear();
            }
            self.reader.consume(take + usize::from(done));
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if long > 0 {
            return Ok(Some(Err(format!(
                "the line is {long} bytes, more than the {MAX_LINE_BYTES} allowed"
            ))));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(match std::str::from_utf8(&self.buf) {
            Ok(text) => Ok(text.to_owned()),
            Err(e) => Err(format!(
                "not UTF-8: invalid bytes at byte {} of the line",
                e.valid_up_to()
            )),
        }))
    }
}

/// The number of lines in a file, counted as bytes (any encoding).
async fn count_lines(path: &PathBuf) -> Result<u64, String> {
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    count_newlines(BufReader::new(file))
        .await
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

async fn count_newlines(mut reader: impl AsyncBufRead + Unpin) -> std::io::Result<u64> {
    let (mut n, mut last) = (0u64, b'\n');
    loop {
        let chunk = reader.fill_buf().await?;
        let Some(&end) = chunk.last() else { break };
        n += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        last = end;
        let len = chunk.len();
        reader.consume(len);
    }
    Ok(n + u64::from(last != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], capacity: usize) -> Vec<Result<String, String>> {
        let mut lines = Lines::new(BufReader::with_capacity(capacity, input));
        let mut out = Vec::new();
        while let Some(line) = lines.next().await.expect("read from memory") {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn lines_are_read_as_bytes_and_bad_ones_reported() {
        let long = vec![b'x'; MAX_LINE_BYTES + 1];
        let exact = vec![b'y'; MAX_LINE_BYTES];
        let mut input = b"one\r\n\xff\xfe bad\n\nthree".to_vec();
        input.push(b'\n');
        input.extend_from_slice(&long);
        input.push(b'\n');
        input.extend_from_slice(&exact);
        input.extend_from_slice(b"\nlast");
        for capacity in [3, 8192] {
            let lines = read_all(&input, capacity).await;
            assert_eq!(lines.len(), 7, "capacity {capacity}");
            assert_eq!(lines[0], Ok("one".to_string()));
            assert_eq!(
                lines[1],
                Err("not UTF-8: invalid bytes at byte 0 of the line".to_string())
            );
            assert_eq!(lines[2], Ok(String::new()));
            assert_eq!(lines[3], Ok("three".to_string()));
            assert_eq!(
                lines[4],
                Err(format!(
                    "the line is {} bytes, more than the {MAX_LINE_BYTES} allowed",
                    MAX_LINE_BYTES + 1
                ))
            );
            assert_eq!(lines[5].as_ref().map(String::len), Ok(MAX_LINE_BYTES));
            assert_eq!(lines[6], Ok("last".to_string()));
        }
        assert!(read_all(b"", 8).await.is_empty());
    }

    #[tokio::test]
    async fn newlines_are_counted_whatever_the_bytes() {
        for (input, lines) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"a\n", 1),
            (b"a\n\xffb", 2),
            (b"\n\n", 2),
        ] {
            assert_eq!(
                count_newlines(BufReader::with_capacity(1, input))
                    .await
                    .unwrap(),
                lines,
                "{input:?}"
            );
        }
    }
}
