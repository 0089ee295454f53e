-- wrk script for `npm run bench` (bench/wrk.ts sets the environment):
--   VOUCH_BENCH_MODE  score | hit | dispute | batch | events | fixed
--   VOUCH_BENCH_IDS   file of entity ids, one a line (the loaded store's)
--   VOUCH_BENCH_AUTH  header line "name: value" sent with every request
--   VOUCH_BENCH_BODY  the body for mode "fixed" (with VOUCH_BENCH_PATH, VOUCH_BENCH_METHOD)
-- Prints one JSON line at the end with the request count, latency percentiles and errors.
local mode = os.getenv("VOUCH_BENCH_MODE") or "fixed"
local ids = {}
local headers = { ["content-type"] = "application/json" }
local counter = 0
local tag = tostring(os.time()) .. "-" .. tostring(math.random(1, 1e9))

function init(args)
  local file = os.getenv("VOUCH_BENCH_IDS")
  if file then for line in io.lines(file) do ids[#ids + 1] = line end end
  local auth = os.getenv("VOUCH_BENCH_AUTH")
  if auth then
    local name, value = auth:match("^([^:]+):%s*(.*)$")
    headers[name] = value
  end
  math.randomseed(tonumber(os.getenv("VOUCH_BENCH_SEED") or "1"))
end

local function id() return ids[math.random(1, #ids)] end

local function score_body()
  return string.format('{"entity_id":"%s","amount":%d,"currency":"USD","context":{"counterparty_id":"%s","payment_method":"bank_transfer","side":"sell"}}',
    id(), math.random(50, 550), id())
end

function request()
  if mode == "score" then
    return wrk.format("POST", "/api/v1/trust/score", headers, score_body())
  elseif mode == "hit" then
    return wrk.format("POST", "/api/v1/trust/score", headers, string.format('{"entity_id":"%s","amount":100,"currency":"USD","context":{"payment_method":"bank_transfer"}}', ids[8]))
  elseif mode == "dispute" then
    local b = math.random(1, #ids - 1)
    local body = string.format('{"dispute_id":"d-%d","trade":{"trade_id":"t-%d","amount":150,"currency":"USD","payment_method":"bank_transfer"},"buyer_id":"%s","seller_id":"%s","opened_by":"buyer","reason":"asset_not_released","evidence":{"payment_proof_submitted":true,"bank_reference_matches":%s,"payer_name_matches":%s}}',
      b, b, ids[b], ids[b + 1], tostring(math.random() < 0.8), tostring(math.random() < 0.9))
    return wrk.format("POST", "/api/v1/dispute/analyze", headers, body)
  elseif mode == "batch" then
    local items = {}
    for i = 1, 100 do items[i] = score_body() end
    return wrk.format("POST", "/api/v1/trust/score/batch", headers, '{"requests":[' .. table.concat(items, ",") .. ']}')
  elseif mode == "events" then
    local events = {}
    local now = os.date("!%Y-%m-%dT%H:%M:%SZ")
    for i = 1, 100 do
      counter = counter + 1
      events[i] = string.format('{"event_id":"wrk-%s-%d","type":"trade.completed","entity_id":"%s","occurred_at":"%s","amount":100,"currency":"USD"}',
        tag, counter, ids[(counter % #ids) + 1], now)
    end
    return wrk.format("POST", "/api/v1/trust/events", headers, '{"events":[' .. table.concat(events, ",") .. ']}')
  end
  return wrk.format(os.getenv("VOUCH_BENCH_METHOD") or "GET", os.getenv("VOUCH_BENCH_PATH") or "/", headers, os.getenv("VOUCH_BENCH_BODY"))
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"non2xx":%d,"errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
