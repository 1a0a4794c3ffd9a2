-- agentd.build: builds agentd and agentd-hook from the agentd checkout this plugin is a
-- folder of (lazy.nvim's `build` step, README "lazy.nvim"), and finds what it built.
-- The programs go to <checkout>/bin, where `cmd`'s default looks first.
local M = {}

local windows = vim.fn.has("win32") == 1
local exe = windows and ".exe" or ""

--- The checkout: the folder above nvim/ (this file is nvim/lua/agentd/build.lua).
function M.root()
  local file = debug.getinfo(1, "S").source:gsub("^@", "")
  return vim.fn.fnamemodify(file, ":p:h:h:h:h")
end

--- The path of the built program name ("agentd" or "agentd-hook").
function M.path(name)
  return M.root() .. "/bin/" .. name .. exe
end

--- The built agentd when it is there and executable, else nil.
function M.built()
  local p = M.path("agentd")
  if vim.fn.executable(p) == 1 then
    return p
  end
  return nil
end

--- Builds both programs with Go (static, as the release does); raises an error that
--- says what failed, for lazy.nvim to show.
function M.run()
  if vim.fn.executable("go") ~= 1 then
    error("agentd: building agentd needs Go on PATH (https://go.dev/dl), or install a release archive (README, Install)", 0)
  end
  for _, name in ipairs({ "agentd", "agentd-hook" }) do
    local res = vim.system({ "go", "build", "-o", M.path(name), "./cmd/" .. name },
      { cwd = M.root(), env = { CGO_ENABLED = "0" }, text = true }):wait()
    if res.code ~= 0 then
      error(string.format("agentd: go build ./cmd/%s failed: %s", name, vim.trim(res.stderr or "")), 0)
    end
  end
end

--- The command that starts the server when cmd is not set: the built agentd, else
--- agentd on PATH; with the shared daemon (--remote=auto), on every system
--- (docs/platforms.md).
function M.default_cmd()
  return { M.built() or "agentd", "--remote=auto" }
end

return M
