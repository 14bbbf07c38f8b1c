-- Shared by gateway.lua and kannel.lua (wrk load of `npm run bench:peer`):
-- distinct receivers (Brazilian mobile numbers) per wrk thread, and one JSON
-- line of results at the end.
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

per_request = tonumber(os.getenv("PEER_PER_REQUEST")) or 1
local next_receiver = 0
local first_receiver = 0

function init(args)
  -- 4,000,000 numbers a thread: 5511910000000 .. 5511917999999 for two threads.
  first_receiver = 5511910000000 + (tid or 0) * 4000000
end

function receivers()
  local list = {}
  for i = 1, per_request do
    list[i] = string.format("%d", first_receiver + next_receiver)
    next_receiver = (next_receiver + 1) % 4000000
  end
  return list
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"wrk":true,"duration_us":%d,"requests":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
