#!/usr/bin/env bash
# Loads a JSONL corpus into a new database, then the same corpus again with
# distinct keys, and prints for each load the wall time, the bytes written
# (GNU time's "File system outputs", 512-byte units), peak RSS and the file
# size: the measurement of issue 11 (cost per document against file size).
#
#   bash tools/bench/load_twice.sh target/release/lshdb /tmp/x.lshdb tools/data/pypi.jsonl
#
# The second copy is CORPUS with '#2' appended to every "id" (written next
# to CORPUS as *.again.jsonl).
set -euo pipefail
BIN=$1; DB=$2; CORPUS=$3
AGAIN=${CORPUS%.jsonl}.again.jsonl
sed 's/"id": "\([^"]*\)"/"id": "\1#2"/' "$CORPUS" > "$AGAIN"
rm -f "$DB"
"$BIN" create "$DB" --threshold 0.8 > /dev/null
for f in "$CORPUS" "$AGAIN"; do
  err=$(mktemp)
  /usr/bin/time -v "$BIN" add "$DB" --jsonl "$f" > /dev/null 2> "$err"
  wall=$(grep "Elapsed (wall" "$err" | awk '{print $NF}')
  outs=$(grep "File system outputs" "$err" | awk '{print $NF}')
  rss=$(grep "Maximum resident" "$err" | awk '{print $NF}')
  echo "$(basename "$f") wall=$wall written_bytes=$((outs * 512)) peak_rss_kB=$rss file_bytes=$(stat -c %s "$DB")"
  rm -f "$err"
done
