-- Bisecting a miscompiled block: the default pipeline, with chosen passes
-- switched off for every region whose start lies in
-- [AARCHX_BISECT_LO, AARCHX_BISECT_HI) (hexadecimal or decimal).
--
--   AARCHX_BISECT_LO=0x401000 AARCHX_BISECT_HI=0x402000 \
--       aarchx --policy policies/bisect.lua ./prog args
--
-- Halve the range until the guest misbehaves only when one region is in
-- it; that region is the one a pass gets wrong. AARCHX_BISECT_PASSES names
-- the passes to switch off (comma-separated; default: every pass after
-- decode but memory-order). AARCHX_BISECT_VERIFY=1 turns verify mode on
-- (a mismatch exits with status 3): with the region verify mode names and
-- one pass at a time, the pass whose absence removes the mismatch is the
-- one at fault (docs/policies.md, "Finding the pass at fault").
-- AARCHX_BISECT_LOG=1 prints each region switched off on stderr.

local lo = tonumber(os.getenv("AARCHX_BISECT_LO") or "0")
local hi = tonumber(os.getenv("AARCHX_BISECT_HI") or "0")
local log = os.getenv("AARCHX_BISECT_LOG") == "1"

local passes = {
  { name = "decode" },
  { name = "state-forward" },
  { name = "store-forward" },
  { name = "const-fold" },
  { name = "cse" },
  { name = "cond-fusion" },
  { name = "dead-flags" },
  { name = "sink" },
  { name = "dce" },
  { name = "memory-order" },
}

local off = {}
local wanted = os.getenv("AARCHX_BISECT_PASSES")
if wanted then
  for name in wanted:gmatch("[^,]+") do
    off[#off + 1] = name
  end
else
  for i = 2, #passes - 1 do
    off[#off + 1] = passes[i].name
  end
end

function on_region(r)
  if r.start >= lo and r.start < hi then
    if log then
      print(string.format("bisect: %#x-%#x (%d insns) without %s", r.start, r.stop, r.insns, table.concat(off, ",")))
    end
    return off
  end
end

local policy = {
  backend = "Jit",
  memory_model = "Plain",
  cpu_level = "V1",
  passes = passes,
}
if os.getenv("AARCHX_BISECT_VERIFY") == "1" then
  policy.verify = { first = 4, every = 64, on_mismatch = "Exit" }
end
return policy
