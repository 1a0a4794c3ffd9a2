-- The plugin surface without a server: commands, completion, config validation,
-- statusline, sidebar rendering into a real buffer, help tags.
local agentd = require("agentd")
local config = require("agentd.config")
local client = require("agentd.client")

test("plugin/agentd.lua defines the commands", function()
  local cmds = vim.api.nvim_get_commands({})
  for _, name in ipairs({ "AgentdToggle", "AgentdGoal", "AgentdGoalPause", "AgentdGoalResume", "AgentdGoalCancel", "AgentdGoalWait",
    "AgentdBudget", "AgentdTodoAdd", "AgentdRefresh", "AgentdTaskFile", "AgentdUndo", "AgentdHistory" }) do
    H.ok(cmds[name], name .. " is defined")
  end
end)

test(":AgentdBudget completes units for the second argument", function()
  H.eq({ "turns", "tokens", "seconds", "minutes", "hours" }, vim.fn.getcompletion("AgentdBudget 20 ", "cmdline"))
  H.eq({ "minutes" }, vim.fn.getcompletion("AgentdBudget 20 mi", "cmdline"))
  H.eq({ "none" }, vim.fn.getcompletion("AgentdBudget n", "cmdline"))
end)

test("build: the checkout, its bin/, and the default cmd that prefers what it built", function()
  local build = require("agentd.build")
  H.eq(1, vim.fn.isdirectory(build.root() .. "/cmd/agentd"))
  H.eq(build.root() .. "/bin/agentd", build.path("agentd"))
  local cmd = build.default_cmd()
  H.eq(build.built() or "agentd", cmd[1])
  H.eq("--remote=auto", cmd[2])
end)

test("config: defaults, deep merge, validation", function()
  local c = config.set({ session = "s1", sidebar = { width = 30, keys = { delete = "D" } } })
  H.eq(require("agentd.build").default_cmd(), c.cmd)
  H.eq("s1", config.session())
  H.eq(30, c.sidebar.width)
  H.eq("D", c.sidebar.keys.delete)
  H.eq("x", c.sidebar.keys.cycle)
  H.raises(function()
    config.set({ cmd = {} })
  end, "cmd")
  H.raises(function()
    config.set({ sidebar = { position = "top" } })
  end, "position")
  H.raises(function()
    config.set({ session = 3 })
  end, "session must be string")
  H.raises(function()
    config.set({ autostart = "yes" })
  end, "autostart must be boolean")
  config.set({})
  H.eq(nil, config.get().session)
  H.eq("default", config.session())
end)

test("statusline is empty without a connection or goal", function()
  H.eq("", agentd.statusline())
end)

test("root_for: markers, cwd fallback, pinned root", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/proj/.git", "p")
  vim.fn.mkdir(dir .. "/proj/sub", "p")
  local f = dir .. "/proj/sub/a.txt"
  vim.fn.writefile({ "x" }, f)
  vim.cmd.edit(f)
  H.eq(vim.fs.normalize(dir .. "/proj"), client.root_for(0))
  vim.b.agentd_root = "/pinned"
  H.eq("/pinned", client.root_for(0))
  vim.b.agentd_root = nil
  config.set({ root_dir = dir })
  H.eq(vim.fs.normalize(dir), client.root_for(0))
  config.set({})
  vim.cmd("bwipe!")
end)

test("sidebar renders a connection's state into a scratch buffer", function()
  -- A connection record with a state, as the client keeps it; no server involved.
  local store = require("agentd.store")
  local conn = {
    root = "/tmp/wsX", status = "ready", store = store.new("default"), received_at = vim.uv.now(),
    waiting = {}, edits = {}, refresh_waiters = {}, restarts = 0,
  }
  store.set_state(conn.store, {
    session = "default", revision = 3,
    todos = { revision = 3, items = { { title = "one", status = "pending" }, { title = "two", status = "done" } } },
    goal = { objective = "obj", status = "paused", turnsUsed = 1, tokensUsed = 10, wallClockMs = 1000, budget = {} },
  })
  client.conns[conn.root] = conn
  local sidebar = require("agentd.sidebar")
  sidebar.open(conn)
  local lines = H.sidebar_lines()
  H.contains(lines, "Goal  paused")
  H.contains(lines, "[ ] one")
  H.contains(lines, "[x] two")
  H.eq("agentd", vim.bo[sidebar.buf].filetype)
  H.eq("nofile", vim.bo[sidebar.buf].buftype)
  H.eq(false, vim.bo[sidebar.buf].modifiable)
  H.eq(2, #vim.api.nvim_tabpage_list_wins(0))
  -- The cursor starts on the first todo.
  H.eq(sidebar.layout.item_lines[1], vim.api.nvim_win_get_cursor(0)[1])
  H.ok(vim.fn.maparg("x", "n", false, true).buffer == 1, "x is buffer-local")
  H.ok(vim.fn.maparg("dd", "n", false, true).buffer == 1, "dd is buffer-local")
  H.eq("goal paused 1 turn 10 tok", agentd.statusline())
  -- A state change re-renders and keeps the cursor on its item.
  vim.api.nvim_win_set_cursor(0, { sidebar.layout.item_lines[2], 0 })
  store.set_state(conn.store, {
    session = "default", revision = 4,
    todos = { revision = 4, items = { { title = "zero", status = "in_progress" }, { title = "one", status = "pending" }, { title = "two", status = "done" } } },
  })
  client._emit(conn)
  H.contains(H.sidebar_lines(), "[~] zero")
  H.contains(vim.api.nvim_get_current_line(), "two")
  H.eq("", agentd.statusline())
  vim.cmd("AgentdToggle")
  H.eq(false, sidebar.is_open())
  H.eq(1, #vim.api.nvim_tabpage_list_wins(0))
  client.conns[conn.root] = nil
end)

test("help file has tags and :help finds them", function()
  local doc = os.getenv("AGENTD_PLUGIN_DIR") .. "/doc"
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp .. "/doc", "p")
  vim.fn.writefile(vim.fn.readfile(doc .. "/agentd.txt"), tmp .. "/doc/agentd.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(tmp .. "/doc"))
  vim.opt.runtimepath:prepend(tmp)
  for _, tag in ipairs({ "agentd", "agentd.txt", ":AgentdToggle", ":AgentdGoal", ":AgentdBudget", ":AgentdTodoAdd",
    "agentd-config", "agentd-sidebar", "agentd-statusline", "agentd.setup()", "agentd.statusline()",
    ":AgentdApproveCheck", ":AgentdTeamAccept", "agentd-consent" }) do
    local ok, err = pcall(vim.cmd.help, tag)
    H.ok(ok, "help " .. tag .. ": " .. tostring(err))
    vim.cmd("helpclose")
  end
end)

test(":checkhealth agentd reports a missing binary and no connection", function()
  config.set({ cmd = { "agentd-surely-missing-binary" } })
  vim.cmd("checkhealth agentd")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  H.contains(text, "OK Neovim 0.1")
  H.contains(text, "configured cmd: agentd-surely-missing-binary")
  H.contains(text, "ERROR `agentd-surely-missing-binary` not found")
  H.contains(text, "no connection yet")
  vim.cmd("bwipe!")
  config.set({})
end)

test("a missing binary leaves the sidebar saying so, without errors", function()
  require("agentd").setup({ cmd = { "agentd-surely-missing-binary" }, autostart = false })
  vim.cmd("AgentdToggle")
  H.wait(function()
    return H.sidebar_text():find("not connected: agentd-surely-missing-binary not found on PATH", 1, true)
  end, "sidebar to say the binary is missing", 5000, H.sidebar_text)
  H.clear_notifications()
  vim.cmd("AgentdGoal anything")
  H.wait(function()
    return H.find_notification("not connected", vim.log.levels.ERROR)
  end, "the command to report the missing connection", 5000, H.notifications_text)
  vim.cmd("AgentdToggle")
  for root in pairs(client.conns) do
    client.conns[root] = nil
  end
  config.set({})
end)
