-- wrk script: whole sandbox payments, the six client requests of bench/sandbox_payment.py
-- (create, checkout, the simulator page, approve, the return, read: must be AUTHORIZED), or on
-- the bare app six creates in a row (PAYORCH_BENCH_MODE=bare). The payment client of
-- bench/compare.py: Python's httpx held the bare app near 125 payments/s on two cores, wrk does
-- not (docs/performance.md, "payorch against the bare stack").
--
-- Run with as many threads as connections (wrk -t16 -c16): one connection per thread, so a
-- thread is one buyer and its payment's state is the thread's.
-- Env: PAYORCH_BENCH_KEY, PAYORCH_BENCH_MERCHANT, PAYORCH_BENCH_PROVIDER (a provider name or
-- auto), PAYORCH_BENCH_MODE (payorch or bare).
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } payment_flow_timespec;
int clock_gettime(int clock, payment_flow_timespec *tp);
]]
local clock = ffi.new("payment_flow_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, clock) -- CLOCK_MONOTONIC
  return tonumber(clock.tv_sec) * 1000 + tonumber(clock.tv_nsec) / 1e6
end

local key = os.getenv("PAYORCH_BENCH_KEY")
local merchant = os.getenv("PAYORCH_BENCH_MERCHANT")
local provider = os.getenv("PAYORCH_BENCH_PROVIDER") or "auto"
local bare = os.getenv("PAYORCH_BENCH_MODE") == "bare"
local api = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key }
local form = { ["Content-Type"] = "application/x-www-form-urlencoded" }

local threads = {}
local next_thread = 0
function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_number", next_thread)
  table.insert(threads, thread)
end

-- Per thread (one buyer): where its payment is, and what it has done.
local step, intent, page, page_method, page_body, next_path = 1, nil, nil, nil, nil, nil
local started, counter = 0, 0
completed, errors, first_ms, last_ms, latencies, failures = 0, 0, nil, nil, {}, {}

local function path_of(url)
  return (url:gsub("^https?://[^/]+", ""))
end

local function urlencode(text)
  return (text:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

local function encoded(fields)
  local parts = {}
  for name, value in pairs(fields) do parts[#parts + 1] = urlencode(name) .. "=" .. urlencode(value) end
  table.sort(parts)
  return table.concat(parts, "&")
end

local function create()
  counter = counter + 1
  local body = '{"merchant_account_id":"' .. merchant .. '","external_reference":"bench-' .. counter ..
      '","amount":1990,"currency":"CLP","return_url":"https://shop.example/return"}'
  local headers = { ["Idempotency-Key"] = "pf-" .. thread_number .. "-" .. started .. "-" .. counter }
  for name, value in pairs(api) do headers[name] = value end
  return wrk.format("POST", "/v1/payment-intents", headers, body)
end

function init(args)
  started = math.floor(now_ms())
end

function request()
  if step == 1 then
    if first_ms == nil then first_ms = now_ms() end
    if bare or intent == nil then started_ms = now_ms() end
    return create()
  elseif bare then
    return create()
  elseif step == 2 then
    local headers = { ["Idempotency-Key"] = "pf-checkout-" .. intent }
    for name, value in pairs(api) do headers[name] = value end
    return wrk.format("POST", "/v1/payment-intents/" .. intent .. "/checkout", headers,
      '{"provider":"' .. provider .. '"}')
  elseif step == 3 then
    return wrk.format(page_method, page, page_method == "POST" and form or {}, page_body)
  elseif step == 4 then
    return wrk.format("POST", next_path, form, page_body)
  elseif step == 5 then
    return wrk.format("GET", next_path, {})
  else
    return wrk.format("GET", "/v1/payment-intents/" .. intent, api)
  end
end

local function failed(status)
  errors = errors + 1
  local where = "step" .. step .. ":" .. tostring(status) -- what went wrong, for the RESULT line
  failures[where] = (failures[where] or 0) + 1
  step, intent = 1, nil
end

local function paid()
  local at = now_ms()
  completed = completed + 1
  latencies[#latencies + 1] = at - started_ms
  last_ms = at
  step, intent = 1, nil
end

local function location(headers)
  return headers["location"] or headers["Location"]
end

function response(status, headers, body)
  if bare then -- a "payment" is six creates in a row
    if status ~= 201 then return failed(status) end
    if step == 6 then return paid() end
    step = step + 1
  elseif step == 1 then
    if status ~= 201 then return failed(status) end
    intent = body:match('"id":"([^"]+)"')
    step = 2
  elseif step == 2 then
    if status ~= 200 then return failed(status) end
    local checkout = body:match('"checkout":(%b{})')
    page = path_of(checkout:match('"url":"([^"]+)"'))
    page_method = checkout:match('"method":"([A-Z]+)"')
    local fields = {}
    for name, value in (checkout:match('"fields":(%b{})') or ""):gmatch('"([^"]+)":"([^"]*)"') do
      fields[name] = value
    end
    page_body = page_method == "POST" and encoded(fields) or nil
    step = 3
  elseif step == 3 then
    if status ~= 200 or not body:find('name="outcome"', 1, true) then return failed(status) end
    -- A form without an action posts back to the page's own address (provider C's).
    local action = body:match('<form[^>]*method="post"[^>]*action="([^"]*)"')
    local fields = { outcome = "approve" }
    for name, value in body:gmatch('<input type="hidden" name="([^"]+)" value="([^"]*)"') do
      fields[name] = value
    end
    if action == nil or action == "" then
      next_path = page:gsub("%?.*$", "")
    elseif action:sub(1, 1) == "/" or action:match("^https?://") then
      next_path = path_of(action)
    else
      next_path = page:gsub("[^/]*$", "") .. action
    end
    page_body = encoded(fields)
    step = 4
  elseif step == 4 or step == 5 then
    if status ~= 303 then return failed(status) end
    next_path = path_of(location(headers))
    step = step + 1
  elseif status == 200 and body:find('"status":"AUTHORIZED"', 1, true) then
    paid()
  else -- the intent read after the return: say which status it had
    failed(status .. ":" .. (body:match('"status":"([A-Z_]+)"') or "?"))
  end
end

local function percentile(sorted, p)
  if #sorted == 0 then return 0 end
  return sorted[math.max(1, math.ceil(p / 100 * #sorted))]
end

-- Not a figure: where the failed payments stopped (step:status), on the RESULT line for a look.
function failed_at(why)
  local parts = {}
  for where, count in pairs(why) do parts[#parts + 1] = where .. "x" .. count end
  table.sort(parts)
  return #parts > 0 and ("\nFAILED " .. table.concat(parts, " ")) or ""
end

function done(summary, latency, requests)
  local all, total, failures, first, last, why = {}, 0, 0, nil, nil, {}
  for _, thread in ipairs(threads) do
    total = total + thread:get("completed")
    failures = failures + thread:get("errors")
    local a, b = thread:get("first_ms"), thread:get("last_ms")
    if a and (first == nil or a < first) then first = a end
    if b and (last == nil or b > last) then last = b end
    for _, value in ipairs(thread:get("latencies")) do all[#all + 1] = value end
    for where, count in pairs(thread:get("failures")) do why[where] = (why[where] or 0) + count end
  end
  table.sort(all)
  -- From the first request sent to the last payment done: a payment cut by the end is not one.
  local seconds = (first and last) and (last - first) / 1000 or 0
  io.write(string.format(
    "RESULT payments=%d seconds=%.2f payments_per_second=%.1f p50_ms=%.1f p95_ms=%.1f p99_ms=%.1f " ..
    "errors=%d requests=%d socket_errors=%d%s\n",
    total, seconds, seconds > 0 and total / seconds or 0, percentile(all, 50), percentile(all, 95),
    percentile(all, 99), failures, summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    failed_at(why)))
end
