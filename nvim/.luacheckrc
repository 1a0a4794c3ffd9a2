-- luacheck . (from nvim/): Neovim's globals, and the test harness's.
std = "luajit"
globals = { "vim" }
max_line_length = false
files["tests"] = { globals = { "H" }, read_globals = { "test" } }
files["tests/harness.lua"] = { globals = { "H", "test" } }
exclude_files = { ".cache" }
