#!/usr/bin/env bash
# Measures firn serve as its own process, as a user would run it (a token
# checked on every request, metrics and JSON logs on), against the bars of
# docs/performance.md:
#   1. single ID over HTTP/1.1 keep-alive: wrk, three rounds alternating with
#      a trivial net/http handler (bench/trivial) sent the same path and
#      headers; the ratio of medians;
#   2. p99 at half the trivial handler's rate, open loop (firn bench), with the
#      trivial handler's own p99 at that rate as the machine's floor;
#   3. gRPC streaming of segment batches of 1,000 (firn bench --protocol
#      stream), IDs counted after unmarshalling, and firn's resident memory.
# Needs wrk (Debian's package).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/firn" ./cmd/firn
go build -o "$work/trivial" ./bench/trivial
secret=bench-secret
cat >"$work/firn.yaml" <<YAML
http: {listen: 127.0.0.1:18080}
grpc: {listen: 127.0.0.1:19090}
auth:
  tokens:
    - {name: bench, secret: $secret, scopes: [snowflake, "tag:*", admin]}
YAML
# start_firn starts a fresh firn serve (each load measured on its own).
start_firn() {
  [ -n "${firn_pid:-}" ] && kill "$firn_pid" && wait "$firn_pid" 2>/dev/null || true
  XDG_STATE_HOME="$work/state" "$work/firn" serve --config "$work/firn.yaml" 2>>"$work/firn.log" &
  firn_pid=$!
  for _ in $(seq 50); do curl -sf http://127.0.0.1:18080/readyz >/dev/null && break; sleep 0.1; done
  curl -s -H "Authorization: Bearer $secret" -X POST http://127.0.0.1:18080/v1/segments \
    -d '{"tag":"order","step":1000000}' >/dev/null
}
start_firn
"$work/trivial" -addr 127.0.0.1:18081 &
path=/v1/snowflake/next
rps() { wrk -t1 -c32 -d5s -H "Authorization: Bearer $secret" "$1$path" | awk '/Requests\/sec/ {print int($2)}'; }
median() { sort -n | sed -n 3p; }
firn=(); trivial=()
for _ in 1 2 3 4 5; do
  firn+=("$(rps http://127.0.0.1:18080)")
  trivial+=("$(rps http://127.0.0.1:18081)")
done
f=$(printf '%s\n' "${firn[@]}" | median); t=$(printf '%s\n' "${trivial[@]}" | median)
echo "HTTP single ID: firn ${firn[*]} req/s, trivial ${trivial[*]} req/s; medians $f / $t = $(( 100 * f / t )) %"
half=$(( t / 2 ))
# Open loop at half the trivial rate: firn bench (raw keep-alive connections,
# a per-worker schedule; vegeta, a net/http client, cannot hold this rate
# beside the server on 2 cores), against firn and, as the machine's floor,
# against the trivial handler.
for target in "http http://127.0.0.1:18080" "leaf http://127.0.0.1:18081"; do
  set -- $target
  echo "open loop at $half req/s, $2: $("$work/firn" bench --protocol "$1" --target "$2" --token "$secret" \
    --rate "$half" --duration 10s --no-check | awk '/latency/ {$1=""; print}')"
done
start_firn
"$work/firn" bench --protocol stream --target 127.0.0.1:19090 --token "$secret" --mode segment --tag order \
  --batch 1000 --workers 2 --duration 10s --no-check &
bench_pid=$!
sleep 8
echo "firn resident memory under the stream load: $(awk '/VmRSS/ {print $2, $3}' /proc/$firn_pid/status)"
wait $bench_pid
echo "firn peak resident memory: $(awk '/VmHWM/ {print $2, $3}' /proc/$firn_pid/status)"
