-- prelude.lua: what every Lua script of the store begins with. The store
-- prepends it to each script when it loads it (Redis runs one
-- self-contained script per EVAL: there is no require), so the helpers
-- live in one place.
--
-- Each algorithm's twin (token-bucket.lua, ...) is one function,
--
--   local function token_bucket(key, now, cost, a1, a2, a3)
--     ...
--     return {allowed, remaining, retry_after_us, reset_after_us, delay_us}, commit
--   end
--
-- that reads the key and decides without writing: commit() performs the
-- writes. A single-algorithm script is that function and lib/single.lua's
-- three-line driver, which commits at once; multi.lua steps every limit
-- of a key first and then commits only what the rule of algorithms.Multi
-- says, so a function must never write before commit().

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
-- The start, on the script's clock, of the window of w µs holding now when
-- windows are aligned to multiples of w on the wall clock, origin + now
-- (origin: the Unix µs that now = 0 stands for), as Go's windowStart.
-- Both are below 2^53 in magnitude (Unix µs are about 2^51), so exact.
local function window_start(origin, now, w) return floordiv(origin + now, w) * w - origin end
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

-- script_now reads ARGV[1]: now in integer µs, or '' for the store's
-- clock (redis TIME). script_cost reads ARGV[2]: the cost, negative
-- counting as 0.
local function script_now(arg)
  if arg == '' then
    local clock = redis.call('TIME')
    return tonumber(clock[1]) * 1000000 + tonumber(clock[2])
  end
  return tonumber(arg)
end
local function script_cost(arg) return math.max(tonumber(arg), 0) end

-- The counter algorithms keep their state in one string value, "T N P"
-- (three integers: algorithms.State's fields), read with GET and written
-- with SET ... PX: two calls per decision, the fewest a read-modify-write
-- can make, and one key per limit, so it works on a cluster. A missing key
-- is the zero State, which is also what an expired key comes back as.
local function load_state(key)
  local v = redis.call('GET', key)
  if not v then return 0, 0, 0 end
  local t, n, p = string.match(v, '^(%-?%d+) (%-?%d+) (%-?%d+)$')
  return tonumber(t), tonumber(n), tonumber(p)
end

-- save_state writes the state with a TTL of the reset plus a second (so
-- that wall-clock expiry never forgets a key a moment too early), or
-- deletes the key for the zero State.
local function save_state(key, t, n, p, reset_us)
  if t == 0 and n == 0 and p == 0 then
    redis.call('DEL', key)
    return
  end
  redis.call('SET', key, int(t) .. ' ' .. int(n) .. ' ' .. int(p), 'PX', int(ceildiv(reset_us, 1000) + 1000))
end

-- state_commit returns the commit of a counter algorithm's decision:
-- save_state of the new state, when it is called.
local function state_commit(key, t, n, p, reset_us)
  return function() save_state(key, t, n, p, reset_us) end
end
