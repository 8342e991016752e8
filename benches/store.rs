//! Micro-benchmarks of the storage side: record encoding and decoding, a
//! durable single insert, a batched insert, and a verified query on a
//! database of 5,000 generated near-duplicate documents.
//!
//! Run: `cargo bench --bench store`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lshdb::hash::SplitMix64;
use lshdb::store::codec;
use lshdb::{Config, Database};
use std::hint::black_box;

/// A document of `words` pseudo-words from a small vocabulary; documents
/// with the same `family` share most of their words.
fn text(rng: &mut SplitMix64, family: u64, words: usize) -> String {
    let mut base = SplitMix64::new(family);
    (0..words)
        .map(|_| {
            let r = if rng.next_u64() % 10 == 0 {
                rng.next_u64()
            } else {
                base.next_u64()
            };
            format!("w{}", r % 5000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn codec_benches(c: &mut Criterion) {
    let mut rng = SplitMix64::new(1);
    let mut set: Vec<u32> = (0..400).map(|_| rng.next_u64() as u32).collect();
    set.sort_unstable();
    set.dedup();
    let signature: Vec<u32> = (0..128).map(|_| rng.next_u64() as u32).collect();
    let set_bytes = codec::encode_set(&set);
    let sig_bytes = codec::encode_signature(set.len() as u32, None, &signature);
    let mut group = c.benchmark_group("codec");
    group.throughput(Throughput::Elements(1));
    group.bench_function("encode_set/400", |b| {
        b.iter(|| codec::encode_set(black_box(&set)))
    });
    let mut out = Vec::new();
    group.bench_function("decode_set/400", |b| {
        b.iter(|| codec::decode_set_into(black_box(&set_bytes), &mut out))
    });
    group.bench_function("encode_signature/128", |b| {
        b.iter(|| codec::encode_signature(400, None, black_box(&signature)))
    });
    let mut record = codec::SignatureRecord::default();
    group.bench_function("decode_signature/128", |b| {
        b.iter(|| codec::decode_signature(black_box(&sig_bytes), &mut record))
    });
    group.finish();
}

fn database_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db =
        Database::create(dir.path().join("bench.lshdb"), Config::jaccard(0.8)).expect("create");
    let mut rng = SplitMix64::new(2);
    let docs: Vec<(String, String)> = (0..5000)
        .map(|i| (format!("doc-{i}"), text(&mut rng, i % 1000, 60)))
        .collect();
    db.insert_bulk(docs.clone(), &Default::default(), |_| true)
        .expect("load");
    let mut group = c.benchmark_group("database");
    group.sample_size(20);
    let mut next = 0u64;
    group.bench_function("insert/durable", |b| {
        b.iter(|| {
            next += 1;
            db.insert(
                &format!("new-{next}"),
                docs[(next % 5000) as usize].1.as_str(),
            )
            .expect("insert")
        })
    });
    group.throughput(Throughput::Elements(100));
    group.bench_function("insert/batch-of-100", |b| {
        b.iter_batched(
            || {
                next += 100;
                next
            },
            |start| {
                let mut batch = db.batch().expect("batch");
                for i in 0..100 {
                    let key = format!("batch-{}", start + i);
                    batch
                        .insert(&key, docs[((start + i) % 5000) as usize].1.as_str())
                        .expect("insert");
                }
                batch.commit().expect("commit");
            },
            BatchSize::PerIteration,
        )
    });
    group.throughput(Throughput::Elements(1));
    let mut q = 0usize;
    group.bench_function("query/verified", |b| {
        b.iter(|| {
            q = (q + 7) % docs.len();
            db.query(&docs[q].1).run().expect("query")
        })
    });
    group.finish();
}

criterion_group!(benches, codec_benches, database_benches);
criterion_main!(benches);
