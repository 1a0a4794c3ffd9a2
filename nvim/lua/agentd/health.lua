-- :checkhealth agentd — the Neovim version, the agentd binary (configured cmd and where
-- it is found on PATH), its `agentd version` output, the checkout's build and Go, each
-- connection's state, and a team file or a check waiting for this machine's person (:AgentdTeamAccept, :AgentdApproveCheck).
local render = require("agentd.render")
local M = {}

local function h()
  return vim.health
end

local function version_of(path)
  if not vim.system then
    return nil, "vim.system is missing"
  end
  local ok, proc = pcall(vim.system, { path, "version" }, { text = true })
  if not ok then
    return nil, tostring(proc)
  end
  local res = proc:wait(5000)
  local out = vim.trim((res.stdout or "") .. "")
  if res.code ~= 0 then
    return nil, string.format("exit %d: %s", res.code, vim.trim((res.stderr or "") .. out))
  end
  return out
end

function M.check()
  local health = h()
  health.start("agentd: Neovim")
  local v = vim.version()
  local vs = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. vs)
  else
    health.error("Neovim " .. vs .. ": 0.10 or newer is needed", { "Upgrade Neovim (vim.lsp.start with root_dir, vim.fs.root, vim.system)" })
    return
  end

  health.start("agentd: binary")
  local config = require("agentd.config").get()
  local cmd = config.cmd
  if type(cmd) ~= "table" then
    health.info("cmd is a function (a custom transport); binary not checked")
  else
    health.info("configured cmd: " .. table.concat(cmd, " "))
    local exe = cmd[1]
    local path = vim.fn.exepath(exe)
    if path == "" then
      health.error(string.format("`%s` not found (not on PATH and not an executable path)", exe), {
        "Build it: :Lazy build agentd.nvim, or go build -o bin/agentd ./cmd/agentd in the agentd checkout",
        "Or set cmd in require('agentd').setup({cmd = {'/path/to/agentd', '--remote=auto'}})",
      })
    else
      health.ok(string.format("found `%s`: %s", exe, path))
      local out, err = version_of(path)
      if out then
        health.ok("`agentd version`: " .. (out ~= "" and out or "(no output)"))
      else
        health.error("`agentd version` failed: " .. tostring(err))
      end
    end
  end

  health.start("agentd: the checkout's build (lazy.nvim's build step)")
  local build = require("agentd.build")
  for _, name in ipairs({ "agentd", "agentd-hook" }) do
    local p = build.path(name)
    if vim.fn.executable(p) == 1 then
      health.ok("built: " .. p)
    else
      health.info(string.format("%s is not built in %s/bin", name, build.root()), {
        "Run :Lazy build agentd.nvim, or in the checkout: go build -o bin/" .. name .. " ./cmd/" .. name,
      })
    end
  end
  if vim.fn.executable("go") ~= 1 then
    health.warn("Go is not on PATH: the build step cannot build agentd", {
      "Install Go (https://go.dev/dl), or a release archive of agentd (README, Install) and set cmd",
    })
  end

  health.start("agentd: connection")
  local client = require("agentd.client")
  local any = false
  for root, conn in pairs(client.conns) do
    any = true
    local c = conn.client_id and vim.lsp.get_client_by_id(conn.client_id)
    local session = require("agentd.config").session()
    if conn.status == "ready" and c then
      local si = conn.server_info or {}
      health.ok(string.format(
        "%s: connected (client %d, server %s %s, protocol %s, session %s, revision %s)",
        root, conn.client_id, si.name or "?", si.version or "?", tostring(conn.protocol_version or "?"),
        session, tostring(conn.store.revision)
      ))
      if conn.protocol_version and conn.protocol_version ~= 1 then
        health.warn("server speaks protocol " .. tostring(conn.protocol_version) .. "; this plugin knows 1")
      end
      local st = conn.store.state or {}
      if type(st.teamFile) == "table" and st.teamFile.status == "pending" then
        health.warn(root .. ": its team file is not accepted; agentd uses local state", { "Run :AgentdTeamAccept (it shows the etcd endpoints first)" })
      end
      if render.check_waits(st.goal and st.goal.check) then
        health.warn(root .. ": the goal's check waits for your approval", { "Run :AgentdApproveCheck (it shows the command first)" })
      end
    elseif conn.status == "starting" then
      health.info(root .. ": starting")
    else
      health.warn(root .. ": not connected" .. (conn.error and (": " .. conn.error) or ""), {
        "Run :AgentdRefresh or :AgentdToggle to start it again; see :LspLog",
      })
    end
  end
  if not any then
    health.info("no connection yet (call require('agentd').setup() or run :AgentdToggle)")
  end
end

return M
