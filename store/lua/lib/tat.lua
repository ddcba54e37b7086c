-- tat.lua: the step GCRA and the leaky bucket share (algorithms' tat.step),
-- prepended after prelude.lua to gcra.lua and leaky-bucket.lua.
--
--   KEYS[1]  the string "t n p" (see lib/prelude.lua) with t = TAT (µs), n = remainder (1/N µs)
--   ARGV[3]  rate N   ARGV[4]  per in µs   ARGV[5]  burst
--
-- Every value here is an integer below 2^53, so doubles hold it exactly; the
-- algorithms package keeps all state and intermediates below 2^50. The one
-- exception is ahead * n for a TAT far in the past, which may be inexact but
-- keeps its (negative) sign, which is all max(·, 0) looks at.

-- This part runs as top-level code, not as a function, and leaves
-- allowed, remaining, retry, reset and delay (the queueing delay of an
-- admitted request, which the leaky bucket reports) as locals for the
-- script after it: a function here cost 0.8 µs more per call, measured
-- with INFO commandstats.
local n, per, burst = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local capacity = burst * per

local tat0, rem0 = load_state()
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

save_state(tat, rem, 0, reset)
