-- gcra.lua: the Lua twin of algorithms.GCRA.Step (the shared tat.step),
-- run atomically inside Redis on one key (so it works on Redis Cluster).
--
--   KEYS[1]  the key: a HASH with t = TAT (µs), n = remainder (1/N µs)
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   ARGV[3]  rate N   ARGV[4]  per in µs   ARGV[5]  burst
--
-- Returns {allowed (1/0), remaining, retry_after_us (-1 = never),
-- reset_after_us, delay_us}, all integers. leaky-bucket.lua is this script
-- plus the delay.
--
-- Every value here is an integer below 2^53, so doubles hold it exactly; the
-- algorithms package keeps all state and intermediates below 2^50. The one
-- exception is ahead * n for a TAT far in the past, which may be inexact but
-- keeps its (negative) sign, which is all max(·, 0) looks at.

-- floor(a / b) and ceil(a / b) for integers a and b > 0 below 2^53 in
-- magnitude, as Go's floorDiv and ceilDiv. Exact: a / b in doubles is the
-- true quotient x correctly rounded, off by at most |x| * 2^-53 < 1 / b;
-- a true quotient that is not an integer is at least 1 / b away from every
-- integer, so rounding never carries it onto or past one and floor / ceil
-- see the side of the true quotient. Rounding is symmetric about 0, so the
-- same holds for a negative a.
local function floordiv(a, b) return math.floor(a / b) end
local function ceildiv(a, b) return math.ceil(a / b) end
-- Go's a / b, which truncates toward zero.
local function quo(a, b)
  if a >= 0 then return math.floor(a / b) end
  return math.ceil(a / b)
end
-- Go's micros() on a decision duration: never negative.
local function micros(us)
  if us <= 0 then return 0 end
  return us
end
-- An integer as a decimal string for redis.call (never an exponent form).
local function int(x) return string.format('%d', x) end
local function num(v)
  if v then return tonumber(v) end
  return 0
end

local key = KEYS[1]
local now
if ARGV[1] == '' then
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
else
  now = tonumber(ARGV[1])
end
local cost = math.max(tonumber(ARGV[2]), 0)
local n, per, burst = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local capacity = burst * per

local stored = redis.call('HMGET', key, 't', 'n')
local tat0, rem0 = num(stored[1]), num(stored[2])
local tat, rem = tat0, rem0

local allowed, remaining, retry, reset = 0, 0, 0, 0
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
    local q = floordiv(after, n) -- after >= 0: Go's / and % are floor here
    tat, rem = now + q, after - q * n
  end
end

if tat == 0 and rem == 0 then
  -- The zero State: a key never seen.
  redis.call('DEL', key)
else
  if tat ~= tat0 or rem ~= rem0 then
    redis.call('HSET', key, 't', int(tat), 'n', int(rem))
  end
  redis.call('PEXPIRE', key, int(ceildiv(reset, 1000) + 1000))
end
return {allowed, remaining, retry, reset, 0}
