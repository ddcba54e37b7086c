-- single.lua: the driver of a single-algorithm script, appended after the
-- algorithm's function (the store writes the function's name over the
-- placeholder in capitals below). It keeps the twins' ARGV contract:
-- KEYS[1] the key, ARGV[1] now ('' = the store's clock), ARGV[2] the cost,
-- ARGV[3..5] the parameters (a missing one is 0).
local reply, commit = STEP(KEYS[1], script_now(ARGV[1]), script_cost(ARGV[2]), num(ARGV[3]), num(ARGV[4]), num(ARGV[5]))
commit()
return reply
