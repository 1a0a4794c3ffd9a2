-- Runs one test file (AGENTD_TEST_FILE) inside headless Neovim and writes one line per
-- test to AGENTD_TEST_RESULTS ("ok - name" / "not ok - name"), then quits: exit 0
-- when all passed, else cquit. Test files call test(name, fn); helpers come from
-- tests/helpers.lua (global H).
--
-- Like a user's session: the test file is loaded during startup (where init.lua would
-- call setup()), the tests run after VimEnter.
local plugin_dir = assert(os.getenv("AGENTD_PLUGIN_DIR"), "AGENTD_PLUGIN_DIR not set")
local file = assert(os.getenv("AGENTD_TEST_FILE"), "AGENTD_TEST_FILE not set")
local results_path = os.getenv("AGENTD_TEST_RESULTS")

vim.opt.runtimepath:prepend(plugin_dir)
package.path = plugin_dir .. "/tests/?.lua;" .. package.path
vim.o.swapfile = false
vim.o.more = false
vim.o.shortmess = vim.o.shortmess .. "I"
vim.cmd("runtime! plugin/agentd.lua")

_G.H = require("helpers")
local tests = {}
_G.test = function(name, fn)
  table.insert(tests, { name = name, fn = fn })
end

local results = results_path and assert(io.open(results_path, "a")) or nil
local function report(line)
  io.stdout:write(line .. "\n")
  io.stdout:flush()
  if results then
    results:write(line .. "\n")
    results:flush()
  end
end

local function quit(failed)
  pcall(H.finish)
  if results then
    results:close()
  end
  if failed > 0 then
    vim.cmd("cquit 1")
  else
    vim.cmd("qall!")
  end
end

local label = vim.fn.fnamemodify(file, ":t:r")

local function run()
  local failed = 0
  for _, t in ipairs(tests) do
    vim.v.errmsg = ""
    H.begin_test(t.name)
    local ok, err = xpcall(t.fn, debug.traceback)
    if ok then
      -- An error raised in a callback (vim.schedule, a handler) lands in v:errmsg.
      local cb_err = H.callback_errors()
      if cb_err then
        ok, err = false, "error in a callback: " .. cb_err
      end
    end
    local ok_clean, clean_err = pcall(H.end_test)
    if ok and not ok_clean then
      ok, err = false, "cleanup: " .. tostring(clean_err)
    end
    if ok then
      report("ok - " .. label .. ": " .. t.name)
    else
      failed = failed + 1
      report("not ok - " .. label .. ": " .. t.name)
      io.stderr:write("--- " .. t.name .. "\n" .. tostring(err) .. "\n")
      local notes = H.notifications_text()
      if notes ~= "" then
        io.stderr:write("notifications:\n" .. notes .. "\n")
      end
    end
  end
  if #tests == 0 then
    report("not ok - " .. label .. ": no tests defined")
    failed = 1
  end
  quit(failed)
end

local function guarded()
  local ok, err = xpcall(run, debug.traceback)
  if not ok then
    report("not ok - " .. label .. ": harness error")
    io.stderr:write(tostring(err) .. "\n")
    quit(1)
  end
end

local ok_load, load_err = xpcall(dofile, debug.traceback, file)
if not ok_load then
  report("not ok - " .. label .. ": loading failed")
  io.stderr:write(tostring(load_err) .. "\n")
  quit(1)
elseif vim.v.vim_did_enter == 1 then
  guarded()
else
  -- Scheduled: the test file's own VimEnter handlers (setup's autostart) run first.
  vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function()
    vim.schedule(guarded)
  end })
end
