-- fixed-window.lua: the Lua twin of algorithms.FixedWindow.Step, run
-- atomically inside Redis on one key (so it works on Redis Cluster).
--
--   KEYS[1]  the key: the string "t n p" (see lib/prelude.lua) with t = start of the counted window (µs),
--            n = its count
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   ARGV[3]  window in µs   ARGV[4]  limit per window
--   ARGV[5]  origin: the wall-clock instant (Unix µs) that now = 0 stands
--            for, algorithms.Params.Origin; windows are aligned to
--            multiples of the window at origin + now. 0 when now is Unix
--            µs already (a live server, or the store's clock).
--
-- Returns {allowed (1/0), remaining, retry_after_us (-1 = never),
-- reset_after_us, delay_us (always 0)}, all integers.
--
-- Every value here is an integer below 2^53, so doubles hold it exactly; the
-- algorithms package keeps all state and intermediates below 2^50.

-- floordiv, ceildiv, quo, window_start, micros, int, num, load_state and
-- state_commit come from lib/prelude.lua, which the store prepends when it
-- loads the script, appending lib/single.lua's driver after the function
-- (multi.lua calls the function itself).
local function fixed_window(key, now, cost, w, limit, origin)
  local start0, count0 = load_state(key)
  local start, count = start0, count0

  -- A clock that goes backwards keeps counting in the recorded window; a
  -- state off the windows (a key never seen, origin off a boundary) holds
  -- none (algorithms.onWindow).
  local current = window_start(origin, now, w)
  if current > start or window_start(origin, start, w) ~= start then
    start, count = current, 0
  end
  local finish = start + w

  local allowed, remaining, retry = 0, 0, 0
  local reset = micros(finish - now)
  if count + cost > limit then
    remaining = limit - count
    retry = micros(finish - now)
    if cost > limit then retry = -1 end
  else
    count = count + cost
    allowed = 1
    remaining = limit - count
  end
  if count == 0 then reset = 0 end

  return {allowed, remaining, retry, reset, 0}, state_commit(key, start, count, 0, reset)
end
