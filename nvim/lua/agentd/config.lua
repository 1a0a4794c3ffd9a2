-- agentd.config: the plugin's options, their defaults and validation.
-- Owns no state beyond the merged option table; never talks to the server.
local M = {}

---@class agentd.Config
M.defaults = {
  -- Command that starts the language server. "--remote=auto" shares one daemon per
  -- user between editors; plain {"agentd"} runs a private server over stdio. The
  -- default is the agentd that lazy.nvim's build step built in the checkout, else agentd
  -- on PATH, with --remote=auto (agentd.build.default_cmd).
  cmd = require("agentd.build").default_cmd(),
  -- Session whose todo list and goal are shown and edited (nil: the server's "default").
  session = nil,
  -- Agent id sent with commands (the server's default is "main").
  agent = nil,
  -- Sent as initializationOptions.settings (todoReminderSteps, todoReminderInterval, stallTurns).
  settings = nil,
  -- Workspace root: a path, a function(bufnr) -> path, or nil to search upwards from
  -- the current buffer for root_markers, falling back to the current directory.
  root_dir = nil,
  root_markers = { ".git", ".hg", ".jj", ".agentd" },
  -- Start the client for the current workspace as soon as setup() runs.
  autostart = true,
  -- Start the client again (and re-read the state) when the server process exits.
  auto_restart = true,
  max_restarts = 5,
  -- After this many ms without an answer to a command, say so (once) and keep waiting;
  -- 0: never. :AgentdCheck is not timed (a check runs as long as agentd lets it).
  timeout_ms = 5000,
  sidebar = {
    width = 44,
    position = "right", -- "right" or "left"
    -- Buffer-local keys; false disables one.
    keys = {
      cycle = "x",
      activate = "<CR>",
      add = "a",
      rename = "r",
      delete = "dd",
      move_down = "J",
      move_up = "K",
      open_task_file = "gf",
      run_check = "C",
      queue_add = "A",
      auto_advance = "T",
      refresh = "R",
      undo = "u",
      close = "q",
      help = "g?",
    },
    show_help_line = true,
  },
}

local options = vim.deepcopy(M.defaults)

local function expect(name, value, types, optional)
  if value == nil and optional then
    return
  end
  for _, t in ipairs(types) do
    if type(value) == t then
      return
    end
  end
  error(string.format("agentd: %s must be %s, got %s", name, table.concat(types, " or "), type(value)), 0)
end

local function check(opts)
  expect("cmd", opts.cmd, { "table", "function" })
  expect("session", opts.session, { "string" }, true)
  expect("agent", opts.agent, { "string" }, true)
  expect("settings", opts.settings, { "table" }, true)
  expect("root_dir", opts.root_dir, { "string", "function" }, true)
  expect("root_markers", opts.root_markers, { "table" })
  expect("autostart", opts.autostart, { "boolean" })
  expect("auto_restart", opts.auto_restart, { "boolean" })
  expect("max_restarts", opts.max_restarts, { "number" })
  expect("timeout_ms", opts.timeout_ms, { "number" })
  expect("sidebar", opts.sidebar, { "table" })
  expect("sidebar.width", opts.sidebar.width, { "number" })
  if type(opts.cmd) == "table" and (#opts.cmd == 0 or type(opts.cmd[1]) ~= "string") then
    error("agentd: cmd must be a non-empty list of strings", 0)
  end
  if opts.session == "" then
    error("agentd: session must not be empty", 0)
  end
  if opts.sidebar.position ~= "left" and opts.sidebar.position ~= "right" then
    error("agentd: sidebar.position must be 'left' or 'right'", 0)
  end
end

--- Merges user options over the defaults (deeply) and validates them.
---@param user table|nil
---@return agentd.Config
function M.set(user)
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user or {})
  -- Lists replace, never merge element-wise.
  if user and user.cmd then merged.cmd = user.cmd end
  if user and user.root_markers then merged.root_markers = user.root_markers end
  check(merged)
  options = merged
  return options
end

---@return agentd.Config
function M.get()
  return options
end

--- The session name as the server will see it.
function M.session()
  return options.session or "default"
end

return M
