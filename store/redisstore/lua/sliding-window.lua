-- sliding-window.lua: the Lua twin of algorithms.SlidingWindow.Step, run
-- atomically inside Redis on one key (so it works on Redis Cluster).
--
--   KEYS[1]  the key: the string "t n p" (see lib/prelude.lua) with t = start of the current window (µs),
--            n = its count, p = the previous window's count
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  cost (integer; negative counts as 0)
--   ARGV[3]  window in µs   ARGV[4]  limit per window
--   ARGV[5]  origin: the wall-clock instant (Unix µs) that now = 0 stands
--            for, as fixed-window.lua's
--
-- Returns {allowed (1/0), remaining, retry_after_us (-1 = never),
-- reset_after_us, delay_us (always 0)}, all integers.
--
-- Every value here is an integer below 2^53, so doubles hold it exactly; the
-- algorithms package keeps all state and intermediates below 2^50 (the
-- estimate is scaled by the window: limit × window ≤ 2^50).

-- floordiv, ceildiv, quo, window_start, micros, int, num, load_state and
-- state_commit come from lib/prelude.lua, which the store prepends when it
-- loads the script, appending lib/single.lua's driver after the function
-- (multi.lua calls the function itself).
local function sliding_window(key, now, cost, w, limit, origin)
  local start0, count0, prev0 = load_state(key)
  local start, count, prev = start0, count0, prev0

  -- A clock that goes backwards keeps counting in the recorded window; a
  -- state off the windows (a key never seen, origin off a boundary) holds
  -- none (algorithms.onWindow).
  local current = window_start(origin, now, w)
  if current > start or window_start(origin, start, w) ~= start then
    if current == start + w then prev = count else prev = 0 end
    start, count = current, 0
  end
  -- A clock behind the window's start counts the previous window in full.
  local elapsed = math.max(now - start, 0)
  local weighted = prev * (w - elapsed) -- the previous window's share, × w

  -- SlidingWindow.retryAfter: when a request of cost would fit.
  local function retry_after()
    if cost > limit then return -1 end
    -- The offset into a window at which p × (w − e) ≤ room × w. room × w is
    -- nonnegative here, so floordiv is Go's /.
    local function fit_at(p, room)
      if p == 0 then return 0 end
      return math.max(w - floordiv(room * w, p), 0)
    end
    local room = limit - count - cost
    if room >= 0 then
      return micros(start + fit_at(prev, room) - now)
    end
    return micros(start + w + fit_at(count, limit - cost) - now)
  end

  -- SlidingWindow.resetAfter: when both counted windows have passed.
  local function reset_after()
    if count > 0 then return micros(start + 2 * w - now) end
    if prev > 0 then return micros(start + w - now) end
    return 0
  end

  local allowed, retry = 0, 0
  if weighted + (count + cost) * w > limit * w then
    retry = retry_after()
  else
    count = count + cost
    allowed = 1
  end
  local remaining = math.max(limit - count - ceildiv(weighted, w), 0)
  local reset = reset_after()

  return {allowed, remaining, retry, reset, 0}, state_commit(key, start, count, prev, reset)
end
