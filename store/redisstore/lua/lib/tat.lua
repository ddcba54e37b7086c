-- tat.lua: the step GCRA and the leaky bucket share (algorithms' tat.step),
-- prepended after prelude.lua to gcra.lua and leaky-bucket.lua.
--
--   key    the string "t n p" (see lib/prelude.lua) with t = TAT (µs), n = remainder (1/N µs)
--   n, per, burst   rate N, per in µs, burst (ARGV[3], ARGV[4], ARGV[5])
--
-- Every value here is an integer below 2^53, so doubles hold it exactly; the
-- algorithms package keeps all state and intermediates below 2^50. The one
-- exception is ahead * n for a TAT far in the past, which may be inexact but
-- keeps its (negative) sign, which is all max(·, 0) looks at.
--
-- tat_step returns {allowed, remaining, retry, reset, delay} (delay: the
-- queueing delay of an admitted request, which the leaky bucket reports
-- and GCRA zeroes) and the commit that saves the new TAT. It was top-level
-- code before the twins became functions, to save the 0.8 µs a call a
-- function cost (INFO commandstats); a function is what lets multi.lua
-- decide several limits before writing any. Measured again when the twins
-- became functions (redis-server 7.0, pipelined EVALSHA, old and new
-- interleaved): about 1 µs more per call on the 6–11 µs a twin takes.
local function tat_step(key, now, cost, n, per, burst)
  local capacity = burst * per

  local tat0, rem0 = load_state(key)
  local tat, rem = tat0, rem0

  local allowed, remaining, retry, reset, delay = 0, 0, 0, 0, 0
  local ahead = tat0 - now
  if ahead > floordiv(capacity, n) + 1 then
    -- Only a clock that went far backwards gets here; no request can pass.
    remaining = 0
    retry = -1
    if cost <= burst then
      retry = micros(ahead + ceildiv(rem0 + cost * per - capacity, n))
    end
    reset = micros(ahead + ceildiv(rem0, n))
  else
    local backlog = math.max(ahead * n + rem0, 0)
    if cost > burst or backlog + cost * per > capacity then
      remaining = math.max(quo(capacity - backlog, per), 0)
      retry = -1
      if cost <= burst then
        retry = micros(ceildiv(backlog + cost * per - capacity, n))
      end
      reset = micros(ceildiv(backlog, n))
    else
      local after = backlog + cost * per
      allowed = 1
      remaining = quo(capacity - after, per)
      reset = micros(ceildiv(after, n))
      -- An admitted request waits behind the backlog already queued.
      delay = micros(ceildiv(backlog, n))
      local q = floordiv(after, n) -- after >= 0: Go's / and % are floor here
      tat, rem = now + q, after - q * n
    end
  end

  return {allowed, remaining, retry, reset, delay}, state_commit(key, tat, rem, 0, reset)
end
