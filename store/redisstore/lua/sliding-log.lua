-- sliding-log.lua: the Lua twin of algorithms.SlidingLog.Step, run
-- atomically inside Redis on one key (so it works on Redis Cluster).
--
--   KEYS[1]  the key: a LIST of admitted instants (µs), oldest first, one
--            element per unit of cost; no key is an empty log
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   ARGV[3]  window in µs   ARGV[4]  limit per window
--
-- Returns {allowed (1/0), remaining, retry_after_us (-1 = never),
-- reset_after_us, delay_us (always 0)}, all integers.
--
-- Every value here is an integer below 2^53, so doubles hold it exactly.

-- floordiv, ceildiv, quo, micros, int and num come from lib/prelude.lua,
-- which the store prepends when it loads the script, appending
-- lib/single.lua's driver after the function (multi.lua calls the
-- function itself).
local function sliding_log(key, now, cost, w, limit)
  local log = redis.call('LRANGE', key, 0, -1)
  local size = #log
  -- Entries at or before cutoff have left the window. The log is sorted, so
  -- they are its first `expired` entries (Go's sort.Search).
  local cutoff = now - w
  local expired = 0
  while expired < size and tonumber(log[expired + 1]) <= cutoff do
    expired = expired + 1
  end
  local live = size - expired
  -- The i-th live entry, 1-based (Go's live[i-1]).
  local function entry(i) return tonumber(log[expired + i]) end

  local allowed, remaining, retry, reset = 0, 0, 0, 0
  local add, at = 0, 0 -- what commit logs: `add` copies of `at`
  if live + cost > limit then
    remaining = limit - live
    retry = -1
    if cost <= limit then
      -- The request fits once enough of the oldest entries leave.
      local leave = live + cost - limit
      retry = micros(entry(leave) + w - now)
    end
    if live > 0 then
      reset = micros(entry(live) + w - now)
    end
  elseif cost == 0 and live == 0 then
    allowed, remaining = 1, limit
  else
    -- A clock that goes backwards logs at the newest instant already logged.
    at = now
    if live > 0 then at = math.max(at, entry(live)) end
    add = cost
    allowed = 1
    remaining = limit - (live + cost)
    local newest = at
    if cost == 0 then newest = entry(live) end
    reset = micros(newest + w - now)
  end

  -- Forget the expired entries, log `add` copies of `at`, and expire the
  -- key with the reset plus a second.
  local function commit()
    if live == 0 then
      if size > 0 then redis.call('DEL', key) end
    elseif expired > 0 then
      redis.call('LTRIM', key, expired, -1)
    end
    local s = int(at)
    local left = add
    while left > 0 do
      local chunk = {}
      for i = 1, math.min(left, 1000) do chunk[i] = s end
      redis.call('RPUSH', key, unpack(chunk))
      left = left - #chunk
    end
    if live + add > 0 then
      redis.call('PEXPIRE', key, int(ceildiv(reset, 1000) + 1000))
    end
  end

  return {allowed, remaining, retry, reset, 0}, commit
end
