-- wrk script of `npm run bench:peer` for Kannel: GET /cgi-bin/sendsms,
-- PEER_PER_REQUEST receivers a request (space-separated `to`), receipts
-- asked for (dlr-mask 3: delivered or failed) like the gateway does.
package.path = os.getenv("PEER_LUA_DIR") .. "/?.lua;" .. package.path
require("common")

local prefix = "/cgi-bin/sendsms?username=bench&password=benchpw&from=ACME&text=Benchmark+message&dlr-mask=" .. (os.getenv("PEER_DLR_MASK") or "3") .. "&to="

function request()
  return wrk.format("GET", prefix .. table.concat(receivers(), "+"))
end
