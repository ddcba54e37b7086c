-- token-bucket.lua: the Lua twin of algorithms.TokenBucket.Step, run
-- atomically inside Redis on one key (so it works on Redis Cluster).
--
--   KEYS[1]  the key: the string "t n p" (see lib/prelude.lua) with t = last refill (µs), n = deficit (units)
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   ARGV[3]  rate N   ARGV[4]  per in µs   ARGV[5]  burst
--
-- Returns {allowed (1/0), remaining, retry_after_us (-1 = never),
-- reset_after_us, delay_us}, all integers.
--
-- Every value here is an integer below 2^53, so doubles hold it exactly; the
-- algorithms package keeps all state and intermediates below 2^50.

-- floordiv, ceildiv, quo, micros, int, num, load_state and state_commit
-- come from lib/prelude.lua, which the store prepends when it loads the
-- script, appending lib/single.lua's driver after the function (multi.lua
-- calls the function itself).
local function token_bucket(key, now, cost, n, per, burst)
  local capacity = burst * per

  local last, deficit = load_state(key)

  local elapsed = now - last
  if elapsed > 0 then
    -- A clock that went backwards (elapsed < 0) earns nothing and leaves
    -- last where it was. refill(): never computes elapsed * n when it would
    -- be large.
    if elapsed >= ceildiv(deficit, n) then
      deficit = 0
    else
      deficit = deficit - elapsed * n
    end
    last = now
  end
  -- How far now trails last when the clock went backwards.
  local behind = last - now

  local allowed, retry = 0, 0
  if cost > burst then
    retry = -1
  else
    local need = cost * per
    if deficit + need > capacity then
      retry = micros(behind + ceildiv(deficit + need - capacity, n))
    else
      deficit = deficit + need
      allowed = 1
    end
  end
  local remaining = quo(capacity - deficit, per)
  local reset = micros(behind + ceildiv(deficit, n))

  return {allowed, remaining, retry, reset, 0}, state_commit(key, last, deficit, 0, reset)
end
