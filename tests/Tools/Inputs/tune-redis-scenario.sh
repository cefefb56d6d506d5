#!/bin/sh
# tune-redis-scenario.sh LAC KERNELS TMPDIR, under with-redis.sh: the tuning database and the kernel cache
# shared through one Redis server ($LA_TEST_REDIS), as several machines of a cluster would share them.
# Prints what tests/Tools/lac-tune-redis.test checks.
set -u
lac=$1 kernels=$2 tmp=$3
port=${LA_TEST_REDIS##*:}
pins="--group-sweeps=false --sweep-tile=64 --vector-tile=64 --max-rows=8 --reduction-panel=64 --prefetch-tile-bytes=65536"
tune() { "$lac" tune "$kernels/linear_attention.mlir" --threads 1 --measure-ms 5 --strategy exhaustive $pins "$@"; }
run() { "$lac" run "$kernels/linear_attention.mlir" --threads 1 --json "$@"; }

echo "== two tuners of different keys at once, one server; both records serve later runs"
tune --entry linear_attention_causal --random 1,2,32,16 --db "$LA_TEST_REDIS" --cache-dir "$tmp/a" --json > "$tmp/causal.json" 2> "$tmp/causal.err" &
tune --entry linear_attention --random 1,2,32,16 --db "$LA_TEST_REDIS" --cache-dir "$tmp/b" --json > "$tmp/full.json" 2> "$tmp/full.err" &
wait
cat "$tmp/causal.json" "$tmp/full.json"
run --entry linear_attention_causal --random 1,2,32,16 --tuning-db "$LA_TEST_REDIS" --cache-dir "$tmp/c"
run --entry linear_attention --random 1,2,32,16 --tuning-db "$LA_TEST_REDIS" --cache-dir "$tmp/c"

echo "== a second tuner of the same key waits for the first's lease and takes its record"
tune --entry linear_attention_causal --random 1,2,48,16 --bucket exact --measure-ms 300 --db "$LA_TEST_REDIS" --cache-dir "$tmp/a" --json > "$tmp/first.json" 2> "$tmp/first.err" &
for _ in $(seq 400); do
  [ -n "$(redis-cli -p "$port" --scan --pattern 'la:tuning:lease:*')" ] && break
  sleep 0.05
done
tune --entry linear_attention_causal --random 1,2,48,16 --bucket exact --db "$LA_TEST_REDIS" --cache-dir "$tmp/a" --json > "$tmp/second.json" 2> "$tmp/second.err"
wait
cat "$tmp/second.err"
echo "leases left: $(redis-cli -p "$port" --scan --pattern 'la:tuning:lease:*' | wc -l)"
cat "$tmp/second.json"

echo "== export to a file, import into another, use it"
"$lac" tune-db export --db "$LA_TEST_REDIS" "$tmp/export.jsonl"
"$lac" tune-db import --db "$tmp/imported.jsonl" "$tmp/export.jsonl"
run --entry linear_attention_causal --random 1,2,48,16 --tuning-db "$tmp/imported.jsonl" --cache-dir "$tmp/c"

echo "== the kernel cache through the server: compiled once, then fetched by a machine with an empty disk cache"
run --entry linear_attention_causal --random 1,2,24,8 --remote-cache "$LA_TEST_REDIS" --cache-dir "$tmp/d"
run --entry linear_attention_causal --random 1,2,24,8 --remote-cache "$LA_TEST_REDIS" --cache-dir "$tmp/e"
run --entry linear_attention_causal --random 1,2,24,8 --remote-cache "$LA_TEST_REDIS" --cache-dir "$tmp/e"
echo "== a damaged remote entry fails its checksum: compiled again, and replaced"
for name in $(redis-cli -p "$port" --scan --pattern 'la:kernel:*'); do
  redis-cli -p "$port" SETRANGE "$name" 200 "garbage" > /dev/null
done
run --entry linear_attention_causal --random 1,2,24,8 --remote-cache "$LA_TEST_REDIS" --cache-dir "$tmp/f"
run --entry linear_attention_causal --random 1,2,24,8 --remote-cache "$LA_TEST_REDIS" --cache-dir "$tmp/g"

echo "== a server that is down: a warning, and the local database and cache serve"
run --entry linear_attention_causal --random 1,2,32,16 --tuning-db redis://127.0.0.1:1 --remote-cache redis://127.0.0.1:1 --cache-dir "$tmp/c"
