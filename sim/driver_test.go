package sim

// The tests run scenarios on miniredis and, with REDIS_URL, on a real
// Redis: they link the Redis driver, which package sim itself does not
// (a program that only reads a Result must not link the Redis client).
import _ "github.com/ratelim/ratelim/store/redisstore"
