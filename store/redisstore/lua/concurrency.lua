-- concurrency.lua: the Lua twin of algorithms.Concurrency, Step and
-- Release, run atomically inside Redis on one key (so it works on Redis
-- Cluster).
--
--   KEYS[1]  the key: a LIST of the expiry instants (µs) of the leases
--            held, soonest first, one element per unit of cost, duplicates
--            kept (two requests at one instant hold two leases of one
--            name); no key holds no lease. The sliding log's layout, so
--            Load and Save read and write it alike.
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   ARGV[3]  lease TTL in µs   ARGV[4]  most requests in flight
--   ARGV[5]  the longest Retry-After in µs (algorithms.MaxConcurrencyRetry:
--            a slot frees when a request completes, which no one can
--            foresee, so a refusal says to try again soon)
--
-- Returns {allowed (1/0), remaining, retry_after_us (-1 = never),
-- reset_after_us, delay_us (always 0), lease}: the twins' five values and
-- the lease an admission took (its expiry, now + TTL; 0 when it took none),
-- which the request gives back with concurrency_release (lib/release.lua's
-- script) when it completes.
--
-- Every value here is an integer below 2^53, so doubles hold it exactly.

-- concurrency_live reads the leases at key and says how many of the first
-- are expired at now (<= now: Go's sort.Search); the rest are live.
local function concurrency_live(key, now)
  local log = redis.call('LRANGE', key, 0, -1)
  local expired = 0
  while expired < #log and tonumber(log[expired + 1]) <= now do
    expired = expired + 1
  end
  return log, expired
end

-- concurrency_push appends the instants in list to the list at key, a
-- thousand to an RPUSH (unpack's stack has room for a few thousand).
local function concurrency_push(key, list)
  for first = 1, #list, 1000 do
    local chunk = {}
    for i = first, math.min(first + 999, #list) do chunk[#chunk + 1] = int(list[i]) end
    redis.call('RPUSH', key, unpack(chunk))
  end
end

-- concurrency_expire expires key a second after its last lease, last, as
-- the other twins keep a key a second past its reset.
local function concurrency_expire(key, now, last)
  redis.call('PEXPIRE', key, int(ceildiv(micros(last - now), 1000) + 1000))
end

local function concurrency(key, now, cost, ttl, limit, max_retry)
  local log, expired = concurrency_live(key, now)
  local size = #log
  local held = size - expired
  -- The i-th live lease, 1-based (Go's live[i-1]).
  local function entry(i) return tonumber(log[expired + i]) end

  local allowed, retry, lease, taken = 0, 0, 0, 0
  local at = held -- the new leases go after the first `at` live ones
  if cost > limit then
    retry = -1
  elseif held + cost > limit then
    -- The (held + cost - limit)-th soonest lease must expire first.
    retry = math.min(micros(entry(held + cost - limit) - now), max_retry)
  else
    allowed = 1
    if cost > 0 then
      lease, taken = now + ttl, cost
      -- A clock that went backwards names a lease before some held ones:
      -- it goes after every lease <= it, where Go's sort.Search puts it.
      while at > 0 and entry(at) > lease do at = at - 1 end
    end
  end
  local remaining = limit - (held + taken)
  local last = nil
  if held > 0 then last = entry(held) end
  if taken > 0 and (not last or lease > last) then last = lease end
  local reset = 0
  if last then reset = micros(last - now) end

  -- Forget the expired leases, put the new ones in their place, and
  -- expire the key a second after the last lease. Appending after every
  -- live lease is an RPUSH after the trim; only a lease inside the list
  -- (a clock gone backwards) rewrites it.
  local function commit()
    local inside = taken > 0 and at < held
    if held == 0 or inside then
      if size > 0 then redis.call('DEL', key) end
    elseif expired > 0 then
      redis.call('LTRIM', key, expired, -1)
    end
    local push = {}
    if inside then
      for i = 1, at do push[#push + 1] = entry(i) end
    end
    for _ = 1, taken do push[#push + 1] = lease end
    if inside then
      for i = at + 1, held do push[#push + 1] = entry(i) end
    end
    concurrency_push(key, push)
    if last then concurrency_expire(key, now, last) end
  end

  return {allowed, remaining, retry, reset, 0, lease}, commit
end

-- concurrency_release is algorithms.Concurrency.Release on key: it gives
-- back up to cost leases named lease (equal to it: a lease expired at now
-- is no longer there to give back) and forgets the expired ones, writing
-- only if that changes anything; it returns how many it gave back. Not a
-- step: lib/release.lua's script calls it, on every concurrency limit of
-- the key.
local function concurrency_release(key, now, lease, cost)
  local log, expired = concurrency_live(key, now)
  local size = #log
  local first, n = 0, 0 -- the leases given back: log[first .. first + n - 1]
  if lease > now then
    for i = expired + 1, size do
      if n == cost then break end
      local v = tonumber(log[i])
      if v > lease then break end
      if v == lease then
        if n == 0 then first = i end
        n = n + 1
      end
    end
  end
  if n == 0 and expired == 0 then return 0 end
  if size - expired - n == 0 then
    redis.call('DEL', key)
    return n
  end
  if expired > 0 then redis.call('LTRIM', key, expired, -1) end
  -- The leases named lease are contiguous and live: LREM from the head
  -- removes the first n of them, the ones counted.
  if n > 0 then redis.call('LREM', key, n, int(lease)) end
  local last = tonumber(log[size])
  if n > 0 and first + n - 1 == size then last = tonumber(log[first - 1]) end
  concurrency_expire(key, now, last)
  return n
end
