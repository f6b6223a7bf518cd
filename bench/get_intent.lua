-- wrk script: GET one payment intent (auth + one indexed read + timeline).
-- Env: PAYORCH_BENCH_KEY, PAYORCH_BENCH_INTENT.
local key = os.getenv("PAYORCH_BENCH_KEY")
local intent = os.getenv("PAYORCH_BENCH_INTENT")

function request()
  return wrk.format("GET", "/v1/payment-intents/" .. intent, {["Authorization"] = "Bearer " .. key})
end

function done(summary, latency, requests)
  io.write(string.format(
    "RESULT requests=%d duration_s=%.2f rps=%.1f p50_ms=%.2f p99_ms=%.2f socket_errors=%d non_2xx=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
