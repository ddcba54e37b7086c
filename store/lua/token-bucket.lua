-- token-bucket.lua: the Lua twin of algorithms.TokenBucket.Step, run
-- atomically inside Redis on one key (so it works on Redis Cluster).
--
--   KEYS[1]  the key: a HASH with t = last refill (µs), n = deficit (units)
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   ARGV[3]  rate N   ARGV[4]  per in µs   ARGV[5]  burst
--
-- Returns {allowed (1/0), remaining, retry_after_us (-1 = never),
-- reset_after_us, delay_us}, all integers.
--
-- Every value here is an integer below 2^53, so doubles hold it exactly; the
-- algorithms package keeps all state and intermediates below 2^50.

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
local last0, deficit0 = num(stored[1]), num(stored[2])
local last, deficit = last0, deficit0

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

if last == 0 and deficit == 0 then
  -- The zero State: a key never seen.
  redis.call('DEL', key)
else
  if last ~= last0 or deficit ~= deficit0 then
    redis.call('HSET', key, 't', int(last), 'n', int(deficit))
  end
  redis.call('PEXPIRE', key, int(ceildiv(reset, 1000) + 1000))
end
return {allowed, remaining, retry, reset, 0}
