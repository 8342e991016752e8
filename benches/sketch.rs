//! Micro-benchmarks of the similarity core: normalisation + shingling,
//! each MinHash variant, band hashing and SimHash, on a short (one-line
//! package description) and a long (paragraph) text; and exact
//! verification of one candidate.
//!
//! Run: `cargo bench --bench sketch`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::sketch::bottomk::BottomK;
use lshdb::sketch::lsh::Banding;
use lshdb::sketch::measures;
use lshdb::sketch::minhash::{MinHashConfig, MinHasher, Scheme};
use lshdb::sketch::simhash;
use std::hint::black_box;

const SHORT: &str = "GNU C preprocessor (cpp) for the Rust toolchain";
const LONG: &str = "The GNU Compiler Collection is a compiler system produced by the GNU \
Project supporting various programming languages. GCC is a key component of the GNU \
toolchain and the standard compiler for most projects related to GNU and Linux, \
including the Linux kernel. This package contains the C preprocessor, which is used \
automatically by the C compiler to transform your program before actual compilation. \
It is called a macro processor because it allows you to define macros, which are \
brief abbreviations for longer constructs.";

fn texts() -> [(&'static str, &'static str); 2] {
    [("short", SHORT), ("long", LONG)]
}

fn shingling(c: &mut Criterion) {
    let shingler = Shingler::new(ShingleConfig::default()).expect("default config");
    let mut group = c.benchmark_group("shingle");
    for (name, text) in texts() {
        group.throughput(Throughput::Elements(1));
        group.bench_function(name, |b| b.iter(|| shingler.set(black_box(text))));
    }
    group.finish();
}

fn minhash(c: &mut Criterion) {
    let shingler = Shingler::new(ShingleConfig::default()).expect("default config");
    let mut group = c.benchmark_group("minhash128");
    for (name, text) in texts() {
        let set = shingler.set(text);
        group.throughput(Throughput::Elements(1));
        for scheme in [Scheme::Permutations, Scheme::OnePermutation] {
            let hasher = MinHasher::new(MinHashConfig {
                scheme,
                ..Default::default()
            })
            .expect("valid config");
            let mut out = Vec::new();
            group.bench_function(format!("{scheme:?}/{name}"), |b| {
                b.iter(|| hasher.signature_into(black_box(set.as_slice()), &mut out))
            });
            group.bench_function(format!("{scheme:?}/text-to-signature/{name}"), |b| {
                b.iter(|| {
                    let set = shingler.set(black_box(text));
                    hasher.signature_into(set.as_slice(), &mut out)
                })
            });
        }
        let bottom_k = BottomK::new(128, 1);
        group.bench_function(format!("BottomK/{name}"), |b| {
            b.iter(|| bottom_k.sketch(black_box(set.as_slice())))
        });
    }
    group.finish();
}

fn banding_and_simhash(c: &mut Criterion) {
    let shingler = Shingler::new(ShingleConfig::default()).expect("default config");
    let hasher = MinHasher::new(MinHashConfig::default()).expect("valid config");
    let signature = hasher.signature(shingler.set(LONG).as_slice());
    let banding = Banding::new(16, 8, 128).expect("valid banding");
    let mut keys = Vec::new();
    c.bench_function("band_keys/16x8", |b| {
        b.iter(|| banding.band_keys(black_box(&signature), &mut keys))
    });
    let bag = shingler.bag(LONG);
    c.bench_function("simhash/long", |b| {
        b.iter(|| simhash::from_bag(black_box(bag.as_slice()), simhash::Weighting::TermFrequency))
    });
}

/// Exact verification of one candidate: the plain merge against the
/// early-exit, two-lane `jaccard_at_least`, on 300-value sets of uniform
/// hashes that reach t = 0.5 (J ≈ 0.6) and that miss it (J ≈ 0.33).
fn verification(c: &mut Criterion) {
    let mut rng = lshdb::hash::SplitMix64::new(11);
    let mut set = |shared: &[u32], own: usize| -> Vec<u32> {
        let mut v: Vec<u32> = shared.to_vec();
        v.extend((0..own).map(|_| rng.next_u64() as u32));
        v.sort_unstable();
        v.dedup();
        v
    };
    let shared = set(&[], 225);
    let (query, hit) = (set(&shared, 75), set(&shared, 75));
    let shared_less = &shared[..150];
    let (query2, miss) = (set(shared_less, 150), set(shared_less, 150));
    let mut group = c.benchmark_group("verify300");
    for (name, a, b) in [("hit", &query, &hit), ("miss", &query2, &miss)] {
        group.bench_function(format!("jaccard/{name}"), |bench| {
            bench.iter(|| measures::jaccard(black_box(a), black_box(b)))
        });
        group.bench_function(format!("jaccard_at_least/{name}"), |bench| {
            bench.iter(|| measures::jaccard_at_least(black_box(a), black_box(b), 0.5))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    shingling,
    minhash,
    banding_and_simhash,
    verification
);
criterion_main!(benches);
