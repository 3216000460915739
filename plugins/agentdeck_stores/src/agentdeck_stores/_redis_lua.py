"""The Lua scripts behind the Redis backend: every conditional write is one of these.

Redis runs a script atomically, so each decision that must have one winner across processes
(claiming a session and a key, appending at an expected ``last_seq``, taking a control request,
acquiring a lease) is made inside one script call, never as a read followed by a write from
Python. Scripts are sent once per connection lifetime by hash (``EVALSHA``; redis-py reloads a
script the server has forgotten).

The key layout they share (``P`` is the store's prefix; ``<ns>`` a namespace token, see
:func:`agentdeck_stores._redis_keys.token`)::

    P schema                    string  layout version
    P ord                       string  counter: the open order of runs (exact cursors)
    P run:<id>                  hash    the run record (folded status, identity, index keys)
    P log:<id>                  stream  the events; entry id "<seq>-1", field e = event JSON
    P state:<id>                hash    engine-state blobs by name
    P ses:<ns>:<session>        string  the run that last claimed the session
    P key:<ns>:<key>            string  the run that claimed the key, for good
    P ix:all | ix:ns:<ns> | ix:name:<ns>:<name> | ix:parent:<id> | ix:ses:<ns>:<session> |
      ix:key:<key> | ix:st:<ns>:<status>
                                zset    run ids scored by open order; <ns> "*" = every namespace
    P ix:wake:<ns>              zset    paused runs with a wake time, scored by it (µs)
    P ctl:<id>                  hash    pending control requests by verb, the last taken ones
    P lease:<id>                hash    owner and expiry (µs) of a run's lease
    P leases                    zset    leased run ids scored by expiry (µs)

Times are integer microseconds since the epoch, always taken from the clock the store was built
with (never the server's ``TIME``), carried as strings so Lua never rounds them.
"""

from __future__ import annotations

__all__ = [
    "APPEND",
    "APPEND_MANY",
    "CONTROL_REQUEST",
    "CONTROL_TAKE",
    "FIND_KEY",
    "LEASE_ACQUIRE",
    "LEASE_RELEASE",
    "LEASE_RENEW",
    "LIST_RUNS",
    "OPEN_RUN",
    "PRUNE",
    "RECORD_FIELDS",
]

RECORD_FIELDS: tuple[str, ...] = (
    "name",
    "kind",
    "ns",
    "sid",
    "key",
    "parent",
    "created",
    "updated",
    "last_seq",
    "status",
    "wake",
    "ord",
)
"""The run-record fields every script returns, in this order, after the run id."""

_FIELD_LIST = ", ".join(f"'{name}'" for name in RECORD_FIELDS)

_RECORD = (
    "local RECORD_FIELDS = {"
    + _FIELD_LIST
    + "}"
    + """
local function record(prefix, run_id)
  local fields = redis.call('HMGET', prefix .. 'run:' .. run_id, unpack(RECORD_FIELDS))
  if not fields[9] then return nil end
  local out = {run_id}
  for i = 1, #RECORD_FIELDS do out[i + 1] = fields[i] end
  return out
end
local function push_record(out, rec)
  for i = 1, #rec do out[#out + 1] = rec[i] end
end
"""
)

_TERMINAL = """
local TERMINAL = {completed = true, failed = true, cancelled = true}
"""

# ----------------------------------------------------------------------------------- open_run

OPEN_RUN = (
    _RECORD
    + _TERMINAL
    + """
-- KEYS: run, log, ord, session claim, key claim, then every index the run joins (scored by ord)
-- ARGV: prefix, run id, event JSON, token, has session, has key, stale-before µs or '',
--       number of dead run ids, the dead ids..., then the record's field/value pairs
local prefix, run_id, event, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local has_session, has_key, stale_before = ARGV[5] == '1', ARGV[6] == '1', ARGV[7]
local ndead = tonumber(ARGV[8])
local dead = {}
for i = 9, 8 + ndead do dead[ARGV[i]] = true end

if redis.call('EXISTS', KEYS[1]) == 1 then
  -- Our own open, replayed after its reply was lost on a dropped connection?
  local mine = redis.call('HMGET', KEYS[1], 'tok', 'so')
  if mine[1] == token then
    local out = {'again'}
    if mine[2] then
      local rec = record(prefix, mine[2])
      if rec then push_record(out, rec) end
    end
    return out
  end
  return {'taken'}
end

local stepped = nil
if has_session then
  local holder = redis.call('GET', KEYS[4])
  if holder then
    local rec = record(prefix, holder)
    if rec and not TERMINAL[rec[11]] then
      local movable = rec[11] == 'running' and (
        dead[holder] or (stale_before ~= '' and tonumber(rec[9]) < tonumber(stale_before)))
      if not movable then
        local out = {'busy'}
        push_record(out, rec)
        return out
      end
      stepped = rec
    end
  end
end
if has_key then
  local holder = redis.call('GET', KEYS[5])
  if holder then
    local rec = record(prefix, holder)
    if rec then
      local out = {'key'}
      push_record(out, rec)
      return out
    end
  end
end

local ord = redis.call('INCR', KEYS[3])
local fields = {}
for i = 9 + ndead, #ARGV do fields[#fields + 1] = ARGV[i] end
fields[#fields + 1] = 'ord'
fields[#fields + 1] = ord
fields[#fields + 1] = 'tok'
fields[#fields + 1] = token
if stepped then
  fields[#fields + 1] = 'so'
  fields[#fields + 1] = stepped[1]
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('XADD', KEYS[2], '0-1', 'e', event)
if has_session then redis.call('SET', KEYS[4], run_id) end
if has_key then redis.call('SET', KEYS[5], run_id) end
for i = 6, #KEYS do redis.call('ZADD', KEYS[i], ord, run_id) end
local out = {'ok'}
if stepped then push_record(out, stepped) end
return out
"""
)

# ----------------------------------------------------------------------------------- append

_APPEND_BODY = """
-- KEYS: run, log
-- ARGV: run id, '<expected last seq> <token> <status after> <updated µs> <wake µs or -> <wake
--       changed 1/0>', then the events' JSON. (The few scalars travel as one argument: on the
--       hot path every argument costs the client encoding work.)
local run_id = ARGV[1]
local prefix = string.sub(KEYS[1], 1, #KEYS[1] - #run_id - 4)
local expected, token, status, updated, wake, wake_changed =
  string.match(ARGV[2], '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$')
local current = redis.call('HMGET', KEYS[1], 'last_seq', 'ord', 'status', 'nst')
if not current[1] then return {'missing'} end
if current[1] ~= expected then
  -- Our own batch, replayed after its reply was lost on a dropped connection?
  local first = (tonumber(expected) + 1) .. '-1'
  local entry = redis.call('XRANGE', KEYS[2], first, first)
  if entry[1] then
    local values = entry[1][2]
    for i = 1, #values, 2 do
      if values[i] == 't' and values[i + 1] == token then return {'again'} end
    end
  end
  local out = {'moved'}
  push_record(out, record(prefix, run_id))
  return out
end

local seq = tonumber(expected)
for i = 3, #ARGV do
  seq = seq + 1
  if i == 3 then
    redis.call('XADD', KEYS[2], seq .. '-1', 'e', ARGV[i], 't', token)
  else
    redis.call('XADD', KEYS[2], seq .. '-1', 'e', ARGV[i])
  end
end
redis.call('HSET', KEYS[1], 'last_seq', seq, 'updated', updated, 'status', status)
local ord, before, ns = current[2], current[3], current[4]
if before ~= status then
  local by_status = prefix .. 'ix:st:'
  redis.call('ZREM', by_status .. ns .. ':' .. before, run_id)
  redis.call('ZADD', by_status .. ns .. ':' .. status, ord, run_id)
  redis.call('ZREM', by_status .. '*:' .. before, run_id)
  redis.call('ZADD', by_status .. '*:' .. status, ord, run_id)
end
if wake_changed == '1' then
  local here, everywhere = prefix .. 'ix:wake:' .. ns, prefix .. 'ix:wake:*'
  if wake == '-' then
    redis.call('HDEL', KEYS[1], 'wake')
    redis.call('ZREM', here, run_id)
    redis.call('ZREM', everywhere, run_id)
  else
    redis.call('HSET', KEYS[1], 'wake', wake)
    redis.call('ZADD', here, wake, run_id)
    redis.call('ZADD', everywhere, wake, run_id)
  end
end
return {'ok'}
"""

APPEND = _RECORD + _APPEND_BODY

APPEND_MANY = (
    _RECORD
    + "local function append(KEYS, ARGV)\n"
    + _APPEND_BODY
    + """end

-- Many appends (to different runs) in one call: what a batch of concurrent appends sends, so
-- the server runs one script instead of one per append and the client encodes and parses one
-- command. Each append is judged on its own, exactly as APPEND would; one that fails is
-- reported in its place and the others go on.
-- KEYS: each append's keys, append after append
-- ARGV: per append, its number of keys and of arguments, then its arguments
local out, k, a = {}, 1, 1
while a <= #ARGV do
  local nkeys, nargs = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local keys, args = {}, {}
  for i = 1, nkeys do keys[i] = KEYS[k + i - 1] end
  for i = 1, nargs do args[i] = ARGV[a + 1 + i] end
  k, a = k + nkeys, a + 2 + nargs
  local ok, reply = pcall(append, keys, args)
  if ok then
    out[#out + 1] = reply
  else
    out[#out + 1] = {'error', type(reply) == 'table' and reply.err or tostring(reply)}
  end
end
return out
"""
)

# ----------------------------------------------------------------------------------- lookups

FIND_KEY = (
    _RECORD
    + """
-- KEYS: key claim. ARGV: prefix
local holder = redis.call('GET', KEYS[1])
if not holder then return {} end
return record(ARGV[1], holder) or {}
"""
)

# Walks one group of zsets scored by open order, merged, in chunks: `visit` is called with each
# run id in order after `after`; it returns true to stop. Used by listing and pruning.
_WALK = """
local function walk(keys, after, chunk, visit, descending)
  -- Members of the sorted sets ``keys`` beyond score ``after``, merged in score order
  -- (highest first when ``descending``; ``after`` is then '+inf' for the first page).
  local cursor = after
  while true do
    local batch = {}
    local bound = nil
    for _, key in ipairs(keys) do
      local got
      if descending then
        got = redis.call('ZREVRANGEBYSCORE', key, '(' .. cursor, '-inf', 'WITHSCORES',
          'LIMIT', 0, chunk)
      else
        got = redis.call('ZRANGEBYSCORE', key, '(' .. cursor, '+inf', 'WITHSCORES',
          'LIMIT', 0, chunk)
      end
      for i = 1, #got, 2 do batch[#batch + 1] = {tonumber(got[i + 1]), got[i]} end
      if #got == 2 * chunk then
        local last = tonumber(got[#got])
        if bound == nil or (descending and last > bound) or (not descending and last < bound)
        then
          bound = last
        end
      end
    end
    if #batch == 0 then return end
    if descending then
      table.sort(batch, function(a, b) return a[1] > b[1] end)
    else
      table.sort(batch, function(a, b) return a[1] < b[1] end)
    end
    for _, item in ipairs(batch) do
      if bound ~= nil and ((descending and item[1] < bound) or
          (not descending and item[1] > bound)) then
        break
      end
      cursor = item[1]
      if visit(item[2], item[1]) then return end
    end
    if bound == nil then return end
  end
end
"""

LIST_RUNS = (
    _RECORD
    + _WALK
    + """
-- KEYS: the index keys of every candidate source, group after group
-- ARGV: prefix, after ord ('+inf' for a first newest-first page), wanted (limit + 1), budget
--       (runs examined), order ('asc' | 'desc'), number of filter pairs, the filter pairs...,
--       then per source group: kind ('o' open order | 'w' wake time), number of its keys
local prefix, after, wanted, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4])
local descending = ARGV[5] == 'desc'
local nfilters = tonumber(ARGV[6])
local f = {}
for i = 7, 6 + 2 * nfilters, 2 do f[ARGV[i]] = ARGV[i + 1] end
local statuses = nil
if f.st then
  statuses = {}
  for status in string.gmatch(f.st, '[^,]+') do statuses[status] = true end
end

local groups = {}
local position, k = 7 + 2 * nfilters, 1
while position <= #ARGV do
  local group = {kind = ARGV[position], keys = {}}
  for i = 1, tonumber(ARGV[position + 1]) do group.keys[i] = KEYS[k]; k = k + 1 end
  groups[#groups + 1] = group
  position = position + 2
end

-- The smallest source answers the query; the filters check the rest on the record.
local best, best_size = nil, nil
for _, group in ipairs(groups) do
  local size = 0
  for _, key in ipairs(group.keys) do
    if group.kind == 'w' then
      size = size + redis.call('ZCOUNT', key, '-inf', '(' .. f.wb)
    else
      size = size + redis.call('ZCARD', key)
    end
  end
  if best_size == nil or size < best_size then best, best_size = group, size end
end

local function matches(rec)
  if f.nst and rec.nst ~= f.nst then return false end
  if statuses and not statuses[rec.status] then return false end
  if f.sid and rec.sid ~= f.sid then return false end
  if f.key and rec.key ~= f.key then return false end
  if f.name and rec.name ~= f.name then return false end
  if f.parent and rec.parent ~= f.parent then return false end
  if f.ca and not (tonumber(rec.created) > tonumber(f.ca)) then return false end
  if f.cb and not (tonumber(rec.created) < tonumber(f.cb)) then return false end
  if f.ub and not (tonumber(rec.updated) < tonumber(f.ub)) then return false end
  if f.wb and not (rec.wake and tonumber(rec.wake) < tonumber(f.wb)) then return false end
  return true
end

local out = {'done', ''}
local found, examined = 0, 0
local function visit(run_id, ord)
  if examined >= budget then
    out[1], out[2] = 'budget', tostring(descending and ord + 1 or ord - 1)
    return true
  end
  examined = examined + 1
  local fields = redis.call('HMGET', prefix .. 'run:' .. run_id, 'nst', 'status', 'sid', 'key',
    'name', 'parent', 'created', 'updated', 'wake')
  if not fields[2] then return false end
  local rec = {nst = fields[1], status = fields[2], sid = fields[3], key = fields[4],
    name = fields[5], parent = fields[6], created = fields[7], updated = fields[8],
    wake = fields[9]}
  if matches(rec) then
    push_record(out, record(prefix, run_id))
    found = found + 1
    if found >= wanted then return true end
  end
  return false
end

if best == nil then return out end
if best.kind == 'o' then
  walk(best.keys, after, 200, visit, descending)
else
  local due = {}
  for _, key in ipairs(best.keys) do
    for _, run_id in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', '(' .. f.wb)) do
      local ord = tonumber(redis.call('HGET', prefix .. 'run:' .. run_id, 'ord'))
      if ord and ((descending and ord < after) or (not descending and ord > after)) then
        due[#due + 1] = {ord, run_id}
      end
    end
  end
  if descending then
    table.sort(due, function(a, b) return a[1] > b[1] end)
  else
    table.sort(due, function(a, b) return a[1] < b[1] end)
  end
  for _, item in ipairs(due) do
    if visit(item[2], item[1]) then break end
  end
end
return out
"""
)

# ----------------------------------------------------------------------------------- prune

PRUNE = (
    _RECORD
    + _WALK
    + """
-- KEYS: the terminal status indexes to prune from
-- ARGV: prefix, after ord, finished-before µs or '', most to delete, budget (runs examined)
local prefix, after, before = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local most, budget = tonumber(ARGV[4]), tonumber(ARGV[5])
local deleted, examined, resume = 0, 0, ''

local function forget(run_id)
  local rk = prefix .. 'run:' .. run_id
  local f = redis.call('HMGET', rk, 'nst', 'status', 'ixs', 'sesk', 'keyk')
  for index in string.gmatch(f[3] or '', '[^\\n]+') do redis.call('ZREM', index, run_id) end
  redis.call('ZREM', prefix .. 'ix:st:' .. f[1] .. ':' .. f[2], run_id)
  redis.call('ZREM', prefix .. 'ix:st:*:' .. f[2], run_id)
  redis.call('ZREM', prefix .. 'ix:wake:' .. f[1], run_id)
  redis.call('ZREM', prefix .. 'ix:wake:*', run_id)
  if f[4] and redis.call('GET', f[4]) == run_id then redis.call('DEL', f[4]) end
  if f[5] and redis.call('GET', f[5]) == run_id then redis.call('DEL', f[5]) end
  redis.call('DEL', rk, prefix .. 'log:' .. run_id, prefix .. 'state:' .. run_id)
end

walk(KEYS, after, 200, function(run_id, ord)
  if deleted >= most then return true end
  if examined >= budget then
    resume = tostring(ord - 1)
    return true
  end
  examined = examined + 1
  if before ~= '' then
    local updated = redis.call('HGET', prefix .. 'run:' .. run_id, 'updated')
    if not (updated and tonumber(updated) < tonumber(before)) then return false end
  end
  forget(run_id)
  deleted = deleted + 1
  return false
end)
return {deleted, resume}
"""
)

# ----------------------------------------------------------------------------------- control

CONTROL_REQUEST = """
-- KEYS: the run's control hash. ARGV: verb, call token, '<requested µs> <reason>'
-- At most one request per verb is pending; the first one's reason stands. A call replayed after
-- its reply was lost finds its own token and answers as it first did.
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then
  local _, _, token = string.find(held, '^%d+ (%S+) ')
  if token == ARGV[2] then return 1 end
  return 0
end
local order = redis.call('HINCRBY', KEYS[1], '#', 1)
redis.call('HSET', KEYS[1], ARGV[1], order .. ' ' .. ARGV[2] .. ' ' .. ARGV[3])
return 1
"""

CONTROL_TAKE = """
-- KEYS: the run's control hash. ARGV: verb, call token.
-- Removes and returns the request (one taker wins). The taken request is kept under
-- 'taken:<verb>' with the taker's token, so a call replayed after its reply was lost still gets
-- what it took instead of nothing.
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then
  local taken = redis.call('HGET', KEYS[1], 'taken:' .. ARGV[1])
  if taken and string.sub(taken, 1, #ARGV[2] + 1) == ARGV[2] .. ' ' then
    return string.sub(taken, #ARGV[2] + 2)
  end
  return false
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], 'taken:' .. ARGV[1], ARGV[2] .. ' ' .. value)
return value
"""

# ----------------------------------------------------------------------------------- leases

LEASE_ACQUIRE = """
-- KEYS: the run's lease hash, the expiry index. ARGV: run id, owner, now µs, expiry µs
local held = redis.call('HMGET', KEYS[1], 'owner', 'exp')
if held[1] and held[1] ~= ARGV[2] and tonumber(ARGV[3]) < tonumber(held[2]) then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'exp', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return 1
"""

LEASE_RENEW = """
-- KEYS: the run's lease hash, the expiry index. ARGV: run id, owner, now µs, expiry µs
local held = redis.call('HMGET', KEYS[1], 'owner', 'exp')
if held[1] ~= ARGV[2] or not (tonumber(ARGV[3]) < tonumber(held[2])) then return 0 end
redis.call('HSET', KEYS[1], 'exp', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return 1
"""

LEASE_RELEASE = """
-- KEYS: the run's lease hash, the expiry index. ARGV: run id, owner
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""
