-- wrk script: POST /v1/payment-intents with a fresh Idempotency-Key per request.
-- Env: PAYORCH_BENCH_KEY (API key), PAYORCH_BENCH_MERCHANT (merchant id).
local key = os.getenv("PAYORCH_BENCH_KEY")
local merchant = os.getenv("PAYORCH_BENCH_MERCHANT")
local body = '{"merchant_account_id":"' .. merchant .. '","external_reference":"bench","amount":1500,' ..
             '"currency":"CLP","return_url":"https://shop.example/return","metadata":{"k":"v"}}'
local counter = 0
local prefix = ""
local non_201 = 0
local next_thread = 0

-- Each wrk thread gets its own key prefix (math.random is seeded alike in every thread).
function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_number", next_thread)
end

function init(args)
  prefix = tostring(thread_number) .. "-" .. tostring(os.time())
end

function request()
  counter = counter + 1
  local headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. key,
    ["Idempotency-Key"] = prefix .. "-" .. counter,
  }
  return wrk.format("POST", "/v1/payment-intents", headers, body)
end

function response(status, headers, body)
  if status ~= 201 then non_201 = non_201 + 1 end
end

function done(summary, latency, requests)
  io.write(string.format(
    "RESULT requests=%d duration_s=%.2f rps=%.1f p50_ms=%.2f p99_ms=%.2f socket_errors=%d non_2xx=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
