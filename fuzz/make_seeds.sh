#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with the seeds of every fuzz target:
#  - the small hand-made seeds committed under fuzz/seeds/<target>/;
#  - for open_image, real database images (about 60 KB each, too big to
#    commit), written here by the lshdb CLI.
# Run from anywhere; safe to re-run (existing corpus files are kept).
set -euo pipefail

fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$fuzz_dir")"
corpus="$fuzz_dir/corpus"

for target in decode_records shingle_text jsonl_line open_image; do
    mkdir -p "$corpus/$target"
    if [ -d "$fuzz_dir/seeds/$target" ]; then
        cp "$fuzz_dir/seeds/$target"/* "$corpus/$target/"
    fi
done

cargo build --quiet --manifest-path "$root/Cargo.toml" --bin lshdb
lshdb="$root/target/debug/lshdb"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

docs() {
    cat <<'EOF'
{"id":"a","text":"The quick brown fox jumps over the lazy dog"}
{"id":"b","text":"The quick brown fox jumped over the lazy dog!"}
{"id":"c","text":"Lorem ipsum dolor sit amet, consectetur adipiscing elit"}
{"id":"d","text":"Ünïcödé ΣΑΣ İstanbul 日本語のテキスト"}
{"id":"e","shingles":[1,2,3,4294967295]}
EOF
}

# name, then `lshdb create` options.
image() {
    local name="$1"
    shift
    "$lshdb" create "$work/$name.lshdb" "$@" >/dev/null
    docs | "$lshdb" add "$work/$name.lshdb" --jsonl - >/dev/null
}

image text_simhash --store-text --simhash --num-perm 16 --threshold 0.5
image words --shingle word:2 --num-perm 32 --bands 8 --rows 4
image stopwords --shingle stopword:2 --num-perm 8 --threshold 0.3
"$lshdb" remove "$work/stopwords.lshdb" c >/dev/null
"$lshdb" create "$work/empty.lshdb" --num-perm 4 --threshold 0.5 >/dev/null

for db in "$work"/*.lshdb; do
    "$lshdb" compact "$db" >/dev/null
    cp "$db" "$corpus/open_image/$(basename "$db" .lshdb).img"
done

for target in decode_records shingle_text jsonl_line open_image; do
    echo "$target: $(ls "$corpus/$target" | wc -l) file(s) in $corpus/$target"
done
