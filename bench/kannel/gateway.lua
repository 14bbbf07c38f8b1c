-- wrk script of `npm run bench:peer` for the gateway: POST /messages/sms/send,
-- PEER_PER_REQUEST receivers a request, API key PEER_KEY, route PEER_ROUTE.
package.path = os.getenv("PEER_LUA_DIR") .. "/?.lua;" .. package.path
require("common")

local key = os.getenv("PEER_KEY")
local route = os.getenv("PEER_ROUTE")
local headers = { ["content-type"] = "application/json", ["x-api-key"] = key }

function request()
  local body = '{"receivers":[' .. table.concat(receivers(), ",") .. '],"message":"Benchmark message","route":' .. route .. '}'
  return wrk.format("POST", "/messages/sms/send", headers, body)
end
