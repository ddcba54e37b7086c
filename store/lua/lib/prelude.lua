-- prelude.lua: what every Lua twin begins with. The store prepends it to
-- each script when it loads it (Redis runs one self-contained script per
-- EVAL: there is no require), so the helpers live in one place.
--
--   KEYS[1]  the key
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)

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

-- The counter algorithms keep their state in one string value, "T N P"
-- (three integers: algorithms.State's fields), read with GET and written
-- with SET ... PX: two calls per decision, the fewest a read-modify-write
-- can make, and one key, so it works on a cluster. A missing key is the
-- zero State, which is also what an expired key comes back as.
local function load_state()
  local v = redis.call('GET', key)
  if not v then return 0, 0, 0 end
  local t, n, p = string.match(v, '^(%-?%d+) (%-?%d+) (%-?%d+)$')
  return tonumber(t), tonumber(n), tonumber(p)
end

-- save_state writes the state with a TTL of the reset plus a second (so
-- that wall-clock expiry never forgets a key a moment too early), or
-- deletes the key for the zero State.
local function save_state(t, n, p, reset_us)
  if t == 0 and n == 0 and p == 0 then
    redis.call('DEL', key)
    return
  end
  redis.call('SET', key, int(t) .. ' ' .. int(n) .. ' ' .. int(p), 'PX', int(ceildiv(reset_us, 1000) + 1000))
end
