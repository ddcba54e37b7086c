-- gcra.lua: the Lua twin of algorithms.GCRA.Step (the shared tat.step),
-- run atomically inside Redis on one key (so it works on Redis Cluster).
--
--   KEYS[1]  the key: the string "t n p" (see lib/prelude.lua) with t = TAT (µs), n = remainder (1/N µs)
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

-- floordiv, ceildiv, quo, micros, int, num, load_state and state_commit
-- come from lib/prelude.lua, and tat_step, which decides the request, from
-- lib/tat.lua: the store prepends both when it loads the script, and
-- appends lib/single.lua's driver (multi.lua calls gcra itself).
local function gcra(key, now, cost, n, per, burst)
  local reply, commit = tat_step(key, now, cost, n, per, burst)
  reply[5] = 0
  return reply, commit
end
