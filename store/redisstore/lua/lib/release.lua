-- release.lua: the script that gives back a completed request's lease,
-- algorithms.Concurrency.Release (and algorithms.Multi.Release, which
-- gives it back on every concurrency limit of the key) in one atomic
-- round trip. The store prepends lib/prelude.lua and concurrency.lua.
--
--   KEYS     the key's concurrency limits' keys (one for a single limit;
--            for a key with several limits, those of its concurrency
--            limits, which share a hash tag, hence one cluster slot)
--   ARGV[1]  now in integer µs; '' means the store's clock (redis TIME)
--   ARGV[2]  the lease (Decision.Lease: its expiry in µs)
--   ARGV[3]  cost (integer; negative counts as 0)
--
-- Returns how many leases it gave back, over all the keys.
local now = script_now(ARGV[1])
local lease = tonumber(ARGV[2])
local cost = script_cost(ARGV[3])
local released = 0
for i = 1, #KEYS do
  released = released + concurrency_release(KEYS[i], now, lease, cost)
end
return released
