#!/usr/bin/env bash
# Measures firn serve as its own process, as a user would run it (a token
# checked on every request, metrics and JSON logs on), against the bars of
# docs/performance.md:
#   1. single ID over HTTP/1.1 keep-alive from every route that serves from
#      memory (firn's /v1 snowflake and segment routes, Leaf's two, Tinyid's
#      nextId and nextIdSimple; a token checked, and Leaf's snowflake route
#      once more without credentials, on an anonymous grant): wrk, ROUNDS
#      rounds (default 5) of DURATION (default 5s) alternating with what a
#      user would write instead (bench/trivial: a counter behind
#      http.ServeMux on the same pattern, reading its path value) sent the
#      same path and headers; per route the median of the rounds' ratios
#      of requests per second, and of requests served per second of the
#      server's own CPU time (/proc/PID/stat), which other loads of a
#      shared machine disturb far less;
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
secret=bench-secret-0123456789
cat >"$work/firn.yaml" <<YAML
http: {listen: 127.0.0.1:18080}
grpc: {listen: 127.0.0.1:19090}
auth:
  tokens:
    - {name: bench, secret: $secret, scopes: [snowflake, "tag:*", admin]}
  anonymous: [snowflake]
  anonymous_rate: 1000000000   # wrk is one client: measure the check, not the limit
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
trivial_pid=$!
rounds=${ROUNDS:-5} duration=${DURATION:-5s}
# cputicks PID: the CPU time the process has used, user and system, in
# clock ticks.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# load BASE PATH AUTH PID: one wrk run; prints its requests per second and
# the requests the server (PID) served per second of its own CPU time, a
# figure the other loads of a shared machine disturb far less. A run with
# any failed answer stops the script.
load() {
  local hdr=() out c0 c1
  [ "$3" = token ] && hdr=(-H "Authorization: Bearer $secret")
  c0=$(cputicks "$4")
  out=$(wrk -t1 -c32 -d"$duration" "${hdr[@]}" "$1$2")
  c1=$(cputicks "$4")
  if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then echo "wrk $1$2: failed requests" >&2; echo "$out" >&2; exit 1; fi
  awk -v c=$((c1 - c0)) -v hz="$hz" '/requests in/ {n = $1} /Requests\/sec/ {r = int($2)} END {printf "%d %d\n", r, c ? n * hz / c : 0}' <<<"$out"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
t=0
for route in "firn snowflake|/v1/snowflake/next|token" "firn segment|/v1/segments/order/next|token" \
  "Leaf snowflake|/api/snowflake/get/order|token" "Leaf segment|/api/segment/get/order|token" \
  "Tinyid nextId|/tinyid/id/nextId?bizType=order|token" "Tinyid nextIdSimple|/tinyid/id/nextIdSimple?bizType=order|token" \
  "Leaf snowflake, anonymous|/api/snowflake/get/order|none"; do
  IFS='|' read -r name path auth <<<"$route"
  firn=(); trivial=(); ratios=(); cpu=()
  for _ in $(seq "$rounds"); do
    out=$(load http://127.0.0.1:18080 "$path" "$auth" "$firn_pid"); read -r f fc <<<"$out"
    out=$(load http://127.0.0.1:18081 "$path" "$auth" "$trivial_pid"); read -r tr tc <<<"$out"
    firn+=("$f"); trivial+=("$tr"); ratios+=("$(ratio "$f" "$tr")"); cpu+=("$(ratio "$fc" "$tc")")
  done
  tm=$(printf '%s\n' "${trivial[@]}" | median)
  [ "$path" = /v1/snowflake/next ] && t=${tm%.*}
  echo "HTTP single ID, $name ($path): firn ${firn[*]} req/s, trivial ${trivial[*]} req/s;" \
    "ratios ${ratios[*]}, median $(printf '%s\n' "${ratios[@]}" | median);" \
    "per CPU second ${cpu[*]}, median $(printf '%s\n' "${cpu[@]}" | median)"
done
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
