//! Shared helpers for the end-to-end CLI tests (`tests/cli*.rs`): run the
//! real `lshdb` binary in a temporary folder, parse its JSON output, and a
//! small hand-made corpus of near-duplicate families whose expected pairs
//! and groups the tests check by brute force with the library.
#![allow(dead_code)]

pub mod process;
pub mod records;

use lshdb::shingle::Shingler;
use lshdb::sketch::measures::jaccard;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Assertions on one output stream of a [`Run`]: `name: stream.test`
/// becomes `fn name(&self, text)`, which asserts `self.stream.test(text)`
/// and shows the stream when it does not hold.
macro_rules! stream_checks {
    ($($name:ident: $stream:ident.$test:ident),* $(,)?) => {$(
        #[doc = concat!("Asserts `", stringify!($stream), ".", stringify!($test), "(text)`.")]
        pub fn $name(&self, text: &str) -> &Self {
            assert!(self.$stream.$test(text), "{}", self.$stream);
            self
        }
    )*};
}

/// A finished `lshdb` run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from_output(args: &[&str], out: Output) -> Self {
        let run = Self {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        };
        assert!(
            !run.stderr.contains("panicked"),
            "lshdb {args:?} panicked:\n{}",
            run.stderr
        );
        run
    }

    /// Asserts the exit code, showing the output when it differs.
    pub fn expect(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "unexpected exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts success.
    pub fn ok(self) -> Self {
        self.expect(0)
    }

    /// Asserts exit code 1 with exactly one line on stderr, starting with
    /// `lshdb: `; returns that line.
    pub fn error_line(self) -> String {
        let run = self.expect(1);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one error line expected: {:?}", run.stderr);
        assert!(lines[0].starts_with("lshdb: "), "{:?}", lines[0]);
        lines[0].to_owned()
    }

    stream_checks!(
        stdout_has: stdout.contains,
        stderr_has: stderr.contains,
        stdout_starts: stdout.starts_with,
        stderr_starts: stderr.starts_with,
        stdout_ends: stdout.ends_with,
        stderr_ends: stderr.ends_with,
    );

    /// Standard output as one JSON value.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not one JSON value ({e}): {:?}", self.stdout))
    }

    /// Standard output as JSON Lines.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
            .collect()
    }
}

/// A temporary working folder in which `lshdb` runs.
pub struct Cli {
    pub dir: tempfile::TempDir,
}

impl Cli {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temporary folder"),
        }
    }

    /// A path inside the working folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a file (creating its folders) inside the working folder.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folders");
        }
        std::fs::write(&path, contents).expect("write file");
        path
    }

    /// The contents of a file inside the working folder, as text.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).expect("read file")
    }

    /// A command for the real binary, run in the working folder.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lshdb"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `lshdb ARGS` to completion.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().expect("run lshdb");
        Run::from_output(args, out)
    }

    /// Runs `lshdb BASE… EXTRA…` (a command's common words, then this
    /// call's own).
    pub fn run_with(&self, base: &[&str], extra: &[&str]) -> Run {
        self.run(&[base, extra].concat())
    }

    /// Runs `lshdb ARGS` with `input` on standard input.
    pub fn run_stdin(&self, args: &[&str], input: &str) -> Run {
        let (child, stdin) = self.spawn_fed(args, input);
        drop(stdin);
        Run::from_output(args, child.wait_with_output().expect("wait"))
    }

    /// `lshdb create NAME --store-text` followed by `add --jsonl` of the
    /// corpus; returns the database name.
    pub fn corpus_db(&self, name: &str, extra_create: &[&str]) -> String {
        let mut create = vec!["create", name];
        create.extend_from_slice(extra_create);
        self.run(&create).ok();
        self.write("corpus.jsonl", jsonl(&corpus()));
        self.run(&["add", name, "--jsonl", "corpus.jsonl"]).ok();
        name.to_owned()
    }
}

/// Records as JSON Lines `{"id", "text"}`.
pub fn jsonl(records: &[(String, String)]) -> String {
    records
        .iter()
        .map(|(k, t)| format!("{}\n", serde_json::json!({"id": k, "text": t})))
        .collect()
}

/// Replaces the character at byte `at` (ASCII) with `with`.
fn change(text: &str, at: usize, with: char) -> String {
    let mut s = text.to_owned();
    s.replace_range(at..at + 1, &with.to_string());
    assert_ne!(s, text, "the change must change something");
    s
}

const FAMILY_1: &str = "The committee agreed that the new bridge across the northern river \
     would be built from reinforced concrete, finished before the winter floods, and paid for \
     by a regional tax levied on every heavy goods vehicle crossing the border.";
const FAMILY_2: &str = "Photosynthesis converts light energy into chemical energy: chlorophyll \
     absorbs red and blue wavelengths, water molecules are split to release oxygen, and carbon \
     dioxide is fixed into sugars during the Calvin cycle inside the chloroplast stroma.";
const FAMILY_3: &str = "Our quarterly newsletter reports record attendance at the summer jazz \
     festival, a successful fundraising auction for the children's library, and the long \
     awaited reopening of the swimming pool after its complete renovation.";
const SOLO: [&str; 3] = [
    "Grandmother's recipe for plum dumplings calls for floury potatoes, semolina, a pinch of \
     salt, ripe damson plums with a sugar cube in each, and breadcrumbs toasted in butter.",
    "The spacecraft entered a highly elliptical orbit around Jupiter, using the planet's \
     immense gravity to slingshot toward the icy moons in the outer reaches of the system.",
    "To reset the router, hold the recessed button on the back panel for ten seconds until \
     the status light blinks amber, then wait two minutes for the firmware to restart.",
];

/// The test corpus, in key order: three families of near-identical texts
/// (one character changed in a long sentence) and three singletons.
pub fn corpus() -> Vec<(String, String)> {
    let mut docs = vec![
        ("f1-a".to_owned(), FAMILY_1.to_owned()),
        ("f1-b".to_owned(), change(FAMILY_1, 40, 'x')),
        ("f1-c".to_owned(), change(FAMILY_1, 150, 'q')),
        ("f2-a".to_owned(), FAMILY_2.to_owned()),
        ("f2-b".to_owned(), change(FAMILY_2, 60, 'z')),
        ("f2-c".to_owned(), change(FAMILY_2, 180, 'k')),
        ("f3-a".to_owned(), FAMILY_3.to_owned()),
        ("f3-b".to_owned(), change(FAMILY_3, 100, 'w')),
    ];
    for (i, text) in SOLO.iter().enumerate() {
        docs.push((format!("solo-{}", i + 1), (*text).to_owned()));
    }
    docs
}

/// The text of a corpus key.
pub fn text_of(key: &str) -> String {
    corpus()
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, t)| t)
        .expect("a corpus key")
}

/// Exact Jaccard similarity of two texts with the default shingling
/// (character 5-shingles), computed with the library.
pub fn similarity(a: &str, b: &str) -> f64 {
    let shingler = Shingler::new(Default::default()).expect("default shingler");
    jaccard(shingler.set(a).as_slice(), shingler.set(b).as_slice())
}

/// Number of distinct default shingles of a text.
pub fn shingle_count(text: &str) -> usize {
    let shingler = Shingler::new(Default::default()).expect("default shingler");
    shingler.set(text).len()
}

/// Every pair of `docs` with similarity ≥ `threshold`, by brute force:
/// (earlier key, later key) → similarity.
pub fn brute_pairs(docs: &[(String, String)], threshold: f64) -> BTreeMap<(String, String), f64> {
    let mut pairs = BTreeMap::new();
    for (i, (ka, ta)) in docs.iter().enumerate() {
        for (kb, tb) in &docs[i + 1..] {
            let s = similarity(ta, tb);
            if s >= threshold {
                pairs.insert((ka.clone(), kb.clone()), s);
            }
        }
    }
    pairs
}

/// A set of keys.
pub fn keys(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The keys of a JSON `hits` or `members` array.
pub fn keys_of(items: &serde_json::Value) -> Vec<String> {
    items
        .as_array()
        .expect("an array")
        .iter()
        .map(|h| h["key"].as_str().expect("a string key").to_owned())
        .collect()
}

/// Every number that follows `"field":` in raw JSON text, parsed with
/// Rust's correctly rounded `str::parse` (serde_json's default float
/// parsing may be one unit in the last place off, and the tests compare
/// similarities exactly).
pub fn raw_numbers(json_text: &str, field: &str) -> Vec<f64> {
    let needle = format!("\"{field}\":");
    json_text
        .match_indices(&needle)
        .map(|(at, _)| {
            let rest = &json_text[at + needle.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
                .unwrap_or(rest.len());
            rest[..end]
                .parse()
                .unwrap_or_else(|e| panic!("not a number after {needle} ({e}): {rest:?}"))
        })
        .collect()
}

impl Cli {
    /// Runs `lshdb ARGS` like [`Cli::run`], but kills it and fails the test
    /// when it has not ended after `seconds` (a command that would read
    /// forever or wait on a FIFO). Its output must fit in the pipes.
    pub fn run_within(&self, seconds: u64, args: &[&str]) -> Run {
        let mut child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn lshdb");
        let start = std::time::Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if start.elapsed().as_secs() >= seconds {
                let _ = child.kill();
                let _ = child.wait();
                panic!("lshdb {args:?} did not end within {seconds} s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Run::from_output(args, child.wait_with_output().expect("wait"))
    }
}

/// The example of a documentation page's section: the section headed
/// `heading` (any level) of `docs/NAME` holds a line naming an input file
/// (`` `stories.jsonl`: ``) followed by a ```json block, its contents, and
/// a ```sh block of `lshdb` commands (words split on white space, `#`
/// starting a comment). Returns (file name, contents, commands).
pub fn doc_example(doc: &str, heading: &str) -> (String, String, Vec<Vec<String>>) {
    let path = format!("{}/../../docs/{doc}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the docs page");
    let start = text
        .lines()
        .position(|l| l.trim_start_matches('#').trim() == heading && l.starts_with('#'))
        .unwrap_or_else(|| panic!("docs/{doc} has no section `{heading}`"));
    let lines: Vec<&str> = text
        .lines()
        .skip(start + 1)
        .take_while(|l| !l.starts_with('#'))
        .collect();
    let block = |fence: &str| -> (usize, String) {
        let at = lines
            .iter()
            .position(|l| *l == fence)
            .unwrap_or_else(|| panic!("docs/{doc} `{heading}` has no {fence} block"));
        let body: Vec<&str> = lines[at + 1..]
            .iter()
            .take_while(|l| **l != "```")
            .copied()
            .collect();
        (at, body.join("\n") + "\n")
    };
    let (json_at, contents) = block("```json");
    let name = lines[..json_at]
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix('`')?.strip_suffix("`:"))
        .unwrap_or_else(|| panic!("docs/{doc} `{heading}` names no input file"))
        .to_owned();
    let (_, script) = block("```sh");
    let commands = script
        .lines()
        .map(|l| {
            let words = l.split_whitespace().take_while(|w| !w.starts_with('#'));
            words.map(str::to_owned).collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .inspect(|words| assert_eq!(words[0], "lshdb", "docs/{doc} `{heading}`: {words:?}"))
        .collect();
    (name, contents, commands)
}

impl Cli {
    /// Runs the example of [`doc_example`]: writes its input, runs each
    /// command (which must succeed).
    pub fn run_doc_example(&self, doc: &str, heading: &str) {
        let (name, contents, commands) = doc_example(doc, heading);
        self.write(&name, contents);
        for command in commands {
            let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
            self.run(&args).ok();
        }
    }
}
