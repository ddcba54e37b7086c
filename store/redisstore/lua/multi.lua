-- multi.lua: the Lua twin of algorithms.Multi.Step, every limit of one key
-- decided in one atomic script: one round trip however many limits. The
-- store prepends lib/prelude.lua, lib/tat.lua and every twin's functions
-- (token-bucket.lua, ..., concurrency.lua); it is not one of the twins,
-- and has no driver.
--
--   KEYS[i]  limit i's key, in that limit's twin's layout. The store names
--            them so that they share a hash tag, hence one cluster slot
--            (see the Redis type's doc).
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   then five per limit, limit i's at ARGV[3 + 5(i-1)] on:
--            the algorithm's name ('token-bucket', ...), its three
--            parameters as its twin takes them in ARGV[3..5] (padded with
--            0), and shadow_until: '' when the limit enforces, 0 when it
--            is in shadow mode for good, else the instant (µs, on the
--            script's clock) from which it enforces. '' rather than -1
--            marks enforcing because -1 is an instant too: a virtual clock
--            runs before its epoch.
--
-- Returns limit 1's {allowed, remaining, retry_after_us, reset_after_us,
-- delay_us, lease} (the lease the concurrency twin took; 0 for every
-- other limit, and for a peek), then limit 2's, ..., then the shadow mask
-- used (bit i-1 set when limit i was in shadow mode at now): the store's
-- Go side merges them with algorithms.Combine, the one rule for a key's
-- decision, and needs the mask because only the script knows now when it
-- reads the store's clock.
--
-- The rule (Multi.stepSubs): every limit steps on its own state at the same
-- now with the same cost. If every enforcing limit admitted, every limit
-- commits. Otherwise a limit that refused commits what its refusal left
-- (for the token bucket, its refill), and a limit that would have admitted
-- writes nothing and reports its peek (the same step at cost 0), admitted.

local steps = {
  ['token-bucket'] = token_bucket,
  ['gcra'] = gcra,
  ['leaky-bucket'] = leaky_bucket,
  ['fixed-window'] = fixed_window,
  ['sliding-log'] = sliding_log,
  ['sliding-window'] = sliding_window,
  ['concurrency'] = concurrency,
}

local now = script_now(ARGV[1])
local cost = script_cost(ARGV[2])
local limits = #KEYS

local step, a1, a2, a3 = {}, {}, {}, {}
local replies, commits = {}, {}
local shadow, enforced = 0, true
for i = 1, limits do
  local at = 3 + 5 * (i - 1)
  step[i] = steps[ARGV[at]]
  if not step[i] then
    return redis.error_reply('ratelim: limit ' .. i .. ' has no Lua twin: ' .. tostring(ARGV[at]))
  end
  a1[i], a2[i], a3[i] = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
  replies[i], commits[i] = step[i](KEYS[i], now, cost, a1[i], a2[i], a3[i])
  local until_ = ARGV[at + 4]
  if until_ ~= '' and (tonumber(until_) == 0 or now < tonumber(until_)) then
    shadow = shadow + 2 ^ (i - 1)
  elseif replies[i][1] == 0 then
    enforced = false
  end
end

local out = {}
for i = 1, limits do
  local reply = replies[i]
  if enforced or reply[1] == 0 then
    commits[i]()
  else
    -- Would have admitted, but another limit refused: keep the state as
    -- it is and say what is left without the request.
    reply = step[i](KEYS[i], now, 0, a1[i], a2[i], a3[i])
    reply[1] = 1
  end
  -- The lease is the concurrency twin's sixth value; 0 for the others.
  for j = 1, 6 do out[#out + 1] = reply[j] or 0 end
end
out[#out + 1] = shadow
return out
