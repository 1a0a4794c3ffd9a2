-- The vectors the Go server, the VS Code extension and this plugin share: formatting
-- (goal/testdata/format.json; Go is the reference) and how the store takes states and
-- notifications (commands/testdata/reconcile.json).
local render = require("agentd.render")
local store = require("agentd.store")

local root = assert(os.getenv("AGENTD_PLUGIN_DIR"), "AGENTD_PLUGIN_DIR not set") .. "/.."

local function vectors(path)
  local lines = assert(vim.fn.readfile(root .. "/" .. path), path)
  return vim.json.decode(table.concat(lines, "\n"))
end

local format = vectors("goal/testdata/format.json")
local reconcile = vectors("commands/testdata/reconcile.json")

test("format vectors: tokens", function()
  assert(#format.tokens > 0, "no token vectors")
  for _, c in ipairs(format.tokens) do
    H.eq(c.want, render.tokens(c.n), "tokens(" .. c.n .. ")")
  end
end)

test("format vectors: elapsed", function()
  assert(#format.elapsed > 0, "no elapsed vectors")
  for _, c in ipairs(format.elapsed) do
    H.eq(c.want, render.duration(c.ms), "duration(" .. c.ms .. ")")
  end
end)

--- A store of `session` holding a state at `revision` (vim.NIL: nothing read yet).
local function shown(revision, session)
  local s = store.new(session)
  if revision ~= vim.NIL then
    store.set_state(s, { workspace = "file:///w", session = session, revision = revision, todos = { items = {}, revision = revision } })
  end
  return s
end

test("reconcile vectors: notifications", function()
  assert(#reconcile.notifications > 0, "no notification vectors")
  for _, c in ipairs(reconcile.notifications) do
    H.eq(c.want, store.classify(shown(c.shown, c.session), c.params), c.name)
  end
end)

test("reconcile vectors: states", function()
  assert(#reconcile.states > 0, "no state vectors")
  for _, c in ipairs(reconcile.states) do
    local s = shown(c.shown, "default")
    local incoming = { workspace = "file:///w", session = "default", revision = c.incoming, todos = { items = {}, revision = c.incoming } }
    H.eq(c.want, store.set_state(s, incoming), c.name)
  end
end)
