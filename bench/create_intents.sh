#!/usr/bin/env bash
# Load benchmark of POST /v1/payment-intents (and a GET) against `payorch serve --workers 2
# --no-worker` on PostgreSQL, driven by wrk with 64 connections. Prints RESULT lines.
# Usage: bench/create_intents.sh [duration_seconds]   (needs: wrk, PostgreSQL on 127.0.0.1)
#        CONNECTIONS=8 bench/create_intents.sh 20     (fewer connections: latency below saturation)
# Profile: run one API process instead (uvicorn --factory payorch.app:create_app) under the same
# wrk load and `py-spy record -p <pid> -d 10 -f raw -o prof.raw --nonblocking`
# (pip install py-spy). Figures: docs/performance-decisions.md, "Create and read intents under load".
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-20}
CONNECTIONS=${CONNECTIONS:-64}
PG_ADMIN=${PG_ADMIN:-postgresql://postgres@127.0.0.1:5432/test}
DB=payorch_bench_$$
PORT=${PORT:-8765}
BIN=.venv/bin
psql "$PG_ADMIN" -qc "CREATE DATABASE $DB" >/dev/null
export PAYORCH_DATABASE_URL="${PG_ADMIN%/*}/$DB"
export PAYORCH_SECRET_KEY=bench-secret-key-0123456789abcdef0123456789
export PAYORCH_RATE_LIMIT=${PAYORCH_RATE_LIMIT:-1000000/second}
export PAYORCH_PUBLIC_URL=http://127.0.0.1:$PORT
cleanup() {
  [ -n "${SERVER:-}" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  psql "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null
}
trap cleanup EXIT
$BIN/payorch migrate 2>/dev/null
APP=$($BIN/payorch applications create --name bench --environment SANDBOX --json)
export PAYORCH_BENCH_KEY=$(echo "$APP" | $BIN/python -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')
export PAYORCH_BENCH_MERCHANT=$(echo "$APP" | $BIN/python -c 'import json,sys; print(json.load(sys.stdin)["merchant_account_id"])')
$BIN/payorch serve --port "$PORT" --workers 2 --no-worker >/tmp/payorch-bench-server.log 2>&1 &
SERVER=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/v1/payment-intents/x" && break; sleep 0.2; done
# Warm up the processes' pools and caches.
wrk -t2 -c64 -d3s -s bench/create_intents.lua "http://127.0.0.1:$PORT" >/dev/null
echo "== POST /v1/payment-intents (fresh Idempotency-Key each), $CONNECTIONS connections, ${DURATION}s"
wrk -t2 -c$CONNECTIONS -d"${DURATION}s" --latency -s bench/create_intents.lua "http://127.0.0.1:$PORT" | tee /tmp/payorch-bench-create.txt | grep -E "RESULT|Latency|Req/Sec"
export PAYORCH_BENCH_INTENT=$(curl -s "http://127.0.0.1:$PORT/v1/payment-intents" -H "Authorization: Bearer $PAYORCH_BENCH_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"merchant_account_id\":\"$PAYORCH_BENCH_MERCHANT\",\"external_reference\":\"g\",\"amount\":1,\"currency\":\"CLP\",\"return_url\":\"https://s.example/r\"}" \
  | $BIN/python -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "== GET /v1/payment-intents/{id}, $CONNECTIONS connections, ${DURATION}s"
wrk -t2 -c$CONNECTIONS -d"${DURATION}s" --latency -s bench/get_intent.lua "http://127.0.0.1:$PORT" | grep -E "RESULT|Latency|Req/Sec"
